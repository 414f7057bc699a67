//! `pods/ephemeralcontainers`: reading gives the pod; a replace or patch changes
//! `spec.ephemeralContainers` and nothing else (other changes of the body are dropped, as
//! kube-apiserver's strategy drops them). Ephemeral containers may be added, never removed or
//! changed: that is the 422 kube-apiserver answers, as is a new one without a name or image, or
//! named like another container of the pod.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::body::precondition_of;
use super::patch_document::{self, PatchType};
use super::session::WriteSession;
use super::strategic_merge;
use crate::registry::ResourceType;
use crate::status::{ApiError, FieldCause};
use crate::storage::state::{State, UpdateMode};
use crate::storage::store::meta_str;

impl WriteSession<'_> {
    /// Writes the ephemeral containers of `wanted` (a pod) to the pod `name`, under
    /// `wanted`'s resourceVersion if it has one; the updated pod.
    pub(crate) fn update_ephemeral_containers(
        &mut self,
        pods: &ResourceType,
        ns: &str,
        name: &str,
        wanted: &Value,
    ) -> Result<Value, ApiError> {
        let old = self.state.get(pods, Some(ns), name)?;
        let new = with_ephemeral_containers_of(&old, wanted)?;
        self.update(pods, Some(ns), name, new, UpdateMode::Full)
    }
}

/// The pod `name` with a patch of `patch_type` applied (without its resourceVersion, so a
/// patch without one is no precondition).
pub(crate) fn patched_pod(
    state: &State,
    pods: &ResourceType,
    ns: &str,
    name: &str,
    patch_type: PatchType,
    patch: &Value,
) -> Result<Value, ApiError> {
    let mut pod = state.get(pods, Some(ns), name)?;
    if let Some(map) = pod["metadata"].as_object_mut() {
        map.remove("resourceVersion");
    }
    match patch_type {
        PatchType::Json => patch_document::json_patch(&mut pod, patch)
            .map_err(|e| ApiError::new(422, "Invalid", e.to_string()))?,
        _ if !patch.is_object() => {
            return Err(ApiError::bad_request("the patch must be a JSON object"));
        }
        PatchType::Strategic => {
            let root = strategic_merge::root_type("", "v1", "Pod")?;
            strategic_merge::apply(&mut pod, patch, root)?;
        }
        PatchType::Merge => patch_document::merge(&mut pod, patch),
        PatchType::Apply => {
            return Err(ApiError::unsupported_media_type("application/apply-patch+yaml"));
        }
    }
    Ok(pod)
}

/// `old` with the ephemeral containers (and resourceVersion precondition) of `wanted`, or the
/// 422 of a removed or changed one.
fn with_ephemeral_containers_of(old: &Value, wanted: &Value) -> Result<Value, ApiError> {
    let name = meta_str(old, "name").unwrap_or_default();
    let empty = Vec::new();
    let before = old["spec"]["ephemeralContainers"].as_array().unwrap_or(&empty);
    let after = wanted["spec"]["ephemeralContainers"].as_array().unwrap_or(&empty);
    let mut causes = Vec::new();
    for existing in before {
        let container = existing["name"].as_str().unwrap_or_default();
        let forbidden = |what: &str| FieldCause {
            field: "spec.ephemeralContainers".into(),
            cause_type: "Forbidden".into(),
            detail: format!("existing ephemeral containers {container:?} may not be {what}\n"),
        };
        match after.iter().find(|c| c["name"] == existing["name"]) {
            None => causes.push(forbidden("removed")),
            Some(now) if now != existing => causes.push(forbidden("changed")),
            Some(_) => {}
        }
    }
    causes.extend(new_container_problems(old, after));
    if !causes.is_empty() {
        return Err(ApiError::invalid_causes(&pods_type(), name, &causes));
    }
    let mut new = old.clone();
    new["spec"]["ephemeralContainers"] = json!(after);
    if after.is_empty()
        && let Some(spec) = new["spec"].as_object_mut()
    {
        spec.remove("ephemeralContainers");
    }
    precondition_of(&mut new, wanted);
    Ok(new)
}

/// Names and images of the ephemeral containers: required, and unique among all containers.
fn new_container_problems(old: &Value, after: &[Value]) -> Vec<FieldCause> {
    let mut names: HashSet<String> = ["containers", "initContainers"]
        .iter()
        .filter_map(|list| old["spec"][list].as_array())
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    let mut causes = Vec::new();
    for (i, container) in after.iter().enumerate() {
        let field = |f: &str| format!("spec.ephemeralContainers[{i}].{f}");
        let name = container["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            causes.push(required(field("name")));
        } else if !names.insert(name.to_string()) {
            causes.push(FieldCause {
                field: field("name"),
                cause_type: "Duplicate value".into(),
                detail: format!("{name:?}"),
            });
        }
        if container["image"].as_str().is_none_or(str::is_empty) {
            causes.push(required(field("image")));
        }
    }
    causes
}

fn required(field: String) -> FieldCause {
    FieldCause {
        field,
        cause_type: "Required value".into(),
        detail: String::new(),
    }
}

fn pods_type() -> ResourceType {
    ResourceType::new("", "v1", "Pod", "pods", true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ephemeral: Value) -> Value {
        json!({"metadata": {"name": "p", "resourceVersion": "5"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "ephemeralContainers": ephemeral}})
    }

    #[test]
    fn only_ephemeral_containers_change() {
        let old = pod(json!([]));
        let mut wanted = pod(json!([{"name": "debug", "image": "busybox"}]));
        wanted["spec"]["containers"][0]["image"] = json!("other");
        let new = with_ephemeral_containers_of(&old, &wanted).expect("added");
        assert_eq!(new["spec"]["containers"][0]["image"], "i");
        assert_eq!(new["spec"]["ephemeralContainers"][0]["name"], "debug");
    }

    #[test]
    fn removing_or_changing_one_is_invalid() {
        let old = pod(json!([{"name": "debug", "image": "busybox"}]));
        let err = with_ephemeral_containers_of(&old, &pod(json!([]))).expect_err("removed");
        assert_eq!(err.code, 422);
        assert!(
            err.message
                .contains("existing ephemeral containers \"debug\" may not be removed")
        );
        let changed = pod(json!([{"name": "debug", "image": "alpine"}]));
        let err = with_ephemeral_containers_of(&old, &changed).expect_err("changed");
        assert!(err.message.contains("may not be changed"));
        let clash = pod(json!([{"name": "c", "image": "alpine"}]));
        let err = with_ephemeral_containers_of(&pod(json!([])), &clash).expect_err("duplicate");
        assert!(
            err.message
                .contains("spec.ephemeralContainers[0].name: Duplicate value: \"c\"")
        );
    }
}
