//! The `scale` subresource: an `autoscaling/v1` `Scale` view of a workload's replicas, as
//! `kubectl scale` and horizontal pod autoscalers read and write it. Built-in Deployments,
//! ReplicaSets, StatefulSets and ReplicationControllers serve it, and custom resources whose
//! CRD version declares `subresources.scale` (with their own paths).
//!
//! A read gives the desired replicas (`spec.replicas`), the observed ones (`status.replicas`)
//! and the pods' label selector as a string; an update or patch of the `Scale` changes the
//! desired replicas of the object and nothing else.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::Selector;
use serde_json::{Value, json};

use crate::registry::{ResourceType, ScaleSubresource};
use crate::status::{ApiError, FieldCause};
use crate::storage::state::{State, UpdateMode};
use crate::storage::store::meta_str;
use crate::write::patch_document::{self, PatchType};
use crate::write::session::WriteSession;

/// The value at a path such as `.spec.replicas`.
fn at<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    path.trim_start_matches('.')
        .split('.')
        .try_fold(object, |value, field| value.get(field))
}

/// Sets the value at a path such as `.spec.replicas`, creating the objects on the way.
fn set_at(object: &mut Value, path: &str, value: Value) {
    let mut current = object;
    for field in path.trim_start_matches('.').split('.') {
        if !current.is_object() {
            *current = json!({});
        }
        current = &mut current[field];
    }
    *current = value;
}

/// A selector as the `Scale`'s string: a string as it is, a `LabelSelector` or a map of
/// labels formatted as a label selector query.
fn selector_string(selector: &Value) -> Option<String> {
    if let Some(text) = selector.as_str() {
        return Some(text.to_owned());
    }
    if selector.get("matchLabels").is_some() || selector.get("matchExpressions").is_some() {
        let parsed: LabelSelector = serde_json::from_value(selector.clone()).ok()?;
        return Selector::try_from(parsed).ok().map(|s| s.to_string());
    }
    let labels = selector.as_object()?;
    let pairs = labels
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()));
    Some(Selector::from_iter(pairs).to_string())
}

fn scale_of(rt: &ResourceType) -> Result<&ScaleSubresource, ApiError> {
    rt.scale_subresource.as_ref().ok_or_else(ApiError::unknown_path)
}

/// Whether `rt` is a built-in type, whose `spec.replicas` kube-apiserver defaults to 1.
fn defaults_replicas(rt: &ResourceType) -> bool {
    matches!(rt.group.as_str(), "" | "apps")
}

/// The `Scale` of `object`.
fn to_scale(rt: &ResourceType, object: &Value) -> Result<Value, ApiError> {
    let scale = scale_of(rt)?;
    let replicas = match at(object, &scale.spec_replicas_path) {
        Some(value) => value.clone(),
        None if defaults_replicas(rt) => json!(1),
        None => {
            return Err(ApiError::new(
                500,
                "InternalError",
                format!(
                    "Internal error occurred: the spec replicas field {:?} does not exist",
                    scale.spec_replicas_path
                ),
            ));
        }
    };
    let observed = at(object, &scale.status_replicas_path)
        .cloned()
        .unwrap_or(json!(0));
    let mut status = json!({"replicas": observed});
    if let Some(selector) = scale
        .label_selector_path
        .as_deref()
        .and_then(|path| at(object, path))
        .and_then(selector_string)
    {
        status["selector"] = json!(selector);
    }
    let meta = &object["metadata"];
    let mut metadata = json!({});
    for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(value) = meta.get(field) {
            metadata[field] = value.clone();
        }
    }
    Ok(json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": replicas},
        "status": status,
    }))
}

/// The desired replicas of a written `Scale`: an integer of at least 0.
fn desired_replicas(rt: &ResourceType, name: &str, scale: &Value) -> Result<i64, ApiError> {
    let replicas = &scale["spec"]["replicas"];
    let invalid = |value: String, problem: &str| {
        let scale_type = ResourceType::new("autoscaling", "v1", "Scale", "scales", rt.namespaced);
        ApiError::invalid_causes(
            &scale_type,
            name,
            &[FieldCause::invalid("spec.replicas", &value, problem)],
        )
    };
    match replicas.as_i64() {
        Some(n) if n >= 0 => Ok(n),
        Some(n) => Err(invalid(n.to_string(), "must be greater than or equal to 0")),
        None if replicas.is_null() => Ok(0),
        None => Err(invalid(replicas.to_string(), "must be an integer")),
    }
}

/// The `Scale` of an object.
pub(crate) fn get_scale(
    state: &State,
    rt: &ResourceType,
    ns: Option<&str>,
    name: &str,
) -> Result<Value, ApiError> {
    to_scale(rt, &state.get(rt, ns, name)?)
}

impl WriteSession<'_> {
    /// Writes the desired replicas of `scale` to the object (409 when the `Scale` carries
    /// another resourceVersion) and returns the new `Scale`.
    pub(crate) fn update_scale(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        scale: &Value,
    ) -> Result<Value, ApiError> {
        let spec_path = scale_of(rt)?.spec_replicas_path.clone();
        let mut object = self.state.get(rt, ns, name)?;
        let replicas = desired_replicas(rt, name, scale)?;
        if let Some(rv) = meta_str(scale, "resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != meta_str(&object, "resourceVersion")
        {
            return Err(ApiError::conflict(rt, name));
        }
        set_at(&mut object, &spec_path, json!(replicas));
        let updated = self.update(rt, ns, name, object, UpdateMode::Main)?;
        to_scale(rt, &updated)
    }

    /// Patches the object's `Scale` and writes the result as [`update_scale`](Self::update_scale).
    pub(crate) fn patch_scale(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &Value,
    ) -> Result<Value, ApiError> {
        let mut scale = get_scale(self.state, rt, ns, name)?;
        match patch_type {
            PatchType::Json => patch_document::json_patch(&mut scale, body)
                .map_err(|e| ApiError::new(422, "Invalid", e.to_string()))?,
            _ if body.is_object() => patch_document::merge(&mut scale, body),
            _ => return Err(ApiError::bad_request("the patch must be a JSON object")),
        }
        self.update_scale(rt, ns, name, &scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_of_every_shape_become_strings() {
        let label_selector = json!({"matchLabels": {"app": "web"}, "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["a", "b"]}
        ]});
        let text = selector_string(&label_selector).expect("a selector");
        assert!(
            text.contains("app=web") && text.contains("tier in (a,b)"),
            "{text}"
        );
        assert_eq!(
            selector_string(&json!({"app": "web"})).as_deref(),
            Some("app=web")
        );
        assert_eq!(selector_string(&json!("x=y")).as_deref(), Some("x=y"));
    }

    #[test]
    fn paths_read_and_write_nested_fields() {
        let mut object = json!({"spec": {}});
        set_at(&mut object, ".spec.replicas", json!(3));
        set_at(&mut object, ".status.count", json!(2));
        assert_eq!(at(&object, ".spec.replicas"), Some(&json!(3)));
        assert_eq!(at(&object, ".status.count"), Some(&json!(2)));
        assert_eq!(at(&object, ".status.missing"), None);
    }
}
