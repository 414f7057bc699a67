//! `pods/resize`: reading gives the pod; a replace or patch changes the `resources` and
//! `resizePolicy` of the pod's containers (and of its restartable init containers, the
//! sidecars) and nothing else, as kube-apiserver's resize strategy keeps the rest. Containers
//! may not be added or removed, and only `cpu` and `memory` may change: kube-apiserver's 422.
//! No kubelet acts on a resize here: the pod's status does not change.

use serde_json::Value;

use super::body::precondition_of;
use super::session::WriteSession;
use crate::registry::ResourceType;
use crate::status::{ApiError, FieldCause};
use crate::storage::state::UpdateMode;
use crate::storage::store::meta_str;

/// The fields of a container a resize may change.
const RESIZED_FIELDS: [&str; 2] = ["resources", "resizePolicy"];
/// The resources a resize may change.
const RESIZABLE: [&str; 2] = ["cpu", "memory"];

impl WriteSession<'_> {
    /// Writes the container resources of `wanted` (a pod) to the pod `name`, under `wanted`'s
    /// resourceVersion if it has one; the updated pod.
    pub(crate) fn resize(
        &mut self,
        pods: &ResourceType,
        ns: &str,
        name: &str,
        wanted: &Value,
    ) -> Result<Value, ApiError> {
        let old = self.state.get(pods, Some(ns), name)?;
        let new = resized(pods, &old, wanted)?;
        self.update(pods, Some(ns), name, new, UpdateMode::Full)
    }
}

/// `old` with the resources of `wanted`'s containers (and `wanted`'s resourceVersion
/// precondition), or the 422 of a resize that changes more.
fn resized(pods: &ResourceType, old: &Value, wanted: &Value) -> Result<Value, ApiError> {
    let mut new = old.clone();
    let mut causes = Vec::new();
    for list in ["containers", "initContainers"] {
        let empty = Vec::new();
        let before = old["spec"][list].as_array().unwrap_or(&empty);
        let after = wanted["spec"][list].as_array().unwrap_or(&empty);
        let names = |containers: &[Value]| -> Vec<String> {
            containers
                .iter()
                .map(|c| c["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        };
        if names(before) != names(after) {
            causes.push(forbidden(
                format!("spec.{list}"),
                "pod updates may not add or remove containers",
            ));
            continue;
        }
        for (i, (was, now)) in before.iter().zip(after).enumerate() {
            let sidecar = list == "containers" || was["restartPolicy"] == "Always";
            if !sidecar {
                continue;
            }
            causes.extend(unresizable_changes(
                &format!("spec.{list}[{i}].resources"),
                was,
                now,
            ));
            for field in RESIZED_FIELDS {
                match now.get(field) {
                    Some(value) => new["spec"][list][i][field] = value.clone(),
                    None => {
                        if let Some(container) = new["spec"][list][i].as_object_mut() {
                            container.remove(field);
                        }
                    }
                }
            }
        }
    }
    if !causes.is_empty() {
        let name = meta_str(old, "name").unwrap_or_default();
        return Err(ApiError::invalid_causes(pods, name, &causes));
    }
    precondition_of(&mut new, wanted);
    Ok(new)
}

/// The changes of a container's requests and limits other than `cpu` and `memory`.
fn unresizable_changes(field: &str, was: &Value, now: &Value) -> Vec<FieldCause> {
    let mut causes = Vec::new();
    for kind in ["requests", "limits"] {
        let resources = |c: &Value| c["resources"][kind].as_object().cloned().unwrap_or_default();
        let (before, after) = (resources(was), resources(now));
        let names = before
            .keys()
            .chain(after.keys())
            .filter(|n| !RESIZABLE.contains(&n.as_str()));
        if names.into_iter().any(|n| before.get(n) != after.get(n)) {
            causes.push(forbidden(
                format!("{field}.{kind}"),
                "only cpu and memory resources are mutable",
            ));
        }
    }
    causes
}

fn forbidden(field: String, detail: &str) -> FieldCause {
    FieldCause {
        field,
        cause_type: "Forbidden".into(),
        detail: detail.into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pods() -> ResourceType {
        ResourceType::new("", "v1", "Pod", "pods", true)
    }

    fn pod(cpu: &str, image: &str) -> Value {
        json!({"metadata": {"name": "p", "resourceVersion": "5"},
            "spec": {"containers": [{"name": "c", "image": image,
                "resources": {"requests": {"cpu": cpu}, "limits": {"nvidia.com/gpu": "1"}}}]}})
    }

    #[test]
    fn only_resources_change() {
        let new = resized(&pods(), &pod("1", "i"), &pod("2", "other")).expect("resized");
        assert_eq!(new["spec"]["containers"][0]["resources"]["requests"]["cpu"], "2");
        assert_eq!(new["spec"]["containers"][0]["image"], "i");
        assert_eq!(new["metadata"]["resourceVersion"], "5");
    }

    #[test]
    fn other_resources_and_containers_are_refused() {
        let mut gpu = pod("1", "i");
        gpu["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = json!("2");
        let err = resized(&pods(), &pod("1", "i"), &gpu).expect_err("gpu");
        assert_eq!(err.code, 422);
        assert!(
            err.message.contains(
                "spec.containers[0].resources.limits: Forbidden: only cpu and memory resources are mutable"
            ),
            "{}",
            err.message
        );
        let mut more = pod("1", "i");
        more["spec"]["containers"]
            .as_array_mut()
            .expect("list")
            .push(json!({"name": "d", "image": "i"}));
        let err = resized(&pods(), &pod("1", "i"), &more).expect_err("added");
        assert!(
            err.message
                .contains("pod updates may not add or remove containers"),
            "{}",
            err.message
        );
    }
}
