//! `POST /api/v1/namespaces/{ns}/bindings`: a `Binding` assigns a pod to a node, as a scheduler
//! does, and is not stored. The pod gets `spec.nodeName`, the binding's annotations and a
//! `PodScheduled=True` condition; a pod already assigned, or being deleted, is a `409`. The
//! answer is a `Status` `Success` with code 201.

use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::state::{State, UpdateMode, now_rfc3339};
use crate::status::{ApiError, FieldCause};

/// Whether `rt` is the core `bindings` resource.
pub(crate) fn is_bindings(rt: &ResourceType) -> bool {
    rt.group.is_empty() && rt.plural == "bindings"
}

/// The field errors of a binding: a node target with a name.
fn binding_errors(binding: &Value) -> Vec<FieldCause> {
    let mut errors = Vec::new();
    let kind = binding["target"]["kind"].as_str().unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        errors.push(FieldCause {
            field: "target.kind".into(),
            cause_type: "Unsupported value".into(),
            detail: format!("{kind:?}: supported values: \"Node\", \"<empty>\""),
        });
    }
    if binding["target"]["name"].as_str().is_none_or(str::is_empty) {
        errors.push(FieldCause {
            field: "target.name".into(),
            cause_type: "Required value".into(),
            detail: String::new(),
        });
    }
    errors
}

impl State {
    /// Binds the pod the `binding` names (in `ns`) to its target node.
    pub(crate) fn bind_pod(
        &mut self,
        rt: &ResourceType,
        ns: &str,
        binding: &Value,
    ) -> Result<Value, ApiError> {
        let name = binding["metadata"]["name"].as_str().unwrap_or_default();
        let errors = binding_errors(binding);
        if !errors.is_empty() {
            return Err(ApiError::invalid_causes(rt, name, &errors));
        }
        let pods = self
            .registry
            .get("", "v1", "pods")
            .cloned()
            .ok_or_else(ApiError::unknown_path)?;
        let mut pod = self.get(&pods, Some(ns), name)?;
        let conflict = |why: String| {
            ApiError::new(
                409,
                "Conflict",
                format!("Operation cannot be fulfilled on pods/binding \"{name}\": {why}"),
            )
        };
        if pod["metadata"]["deletionTimestamp"].is_string() {
            return Err(conflict(format!(
                "pod {name} is being deleted, cannot be assigned to a host"
            )));
        }
        if let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
            return Err(conflict(format!(
                "pod {name} is already assigned to node {node:?}"
            )));
        }
        for field in ["uid", "resourceVersion"] {
            let wanted = binding["metadata"][field].as_str().unwrap_or_default();
            if !wanted.is_empty() && pod["metadata"][field].as_str() != Some(wanted) {
                return Err(ApiError::conflict(&pods, name));
            }
        }
        pod["spec"]["nodeName"] = binding["target"]["name"].clone();
        if let Some(annotations) = binding["metadata"]["annotations"].as_object() {
            if !pod["metadata"]["annotations"].is_object() {
                pod["metadata"]["annotations"] = json!({});
            }
            for (key, value) in annotations {
                pod["metadata"]["annotations"][key] = value.clone();
            }
        }
        schedule(&mut pod);
        self.update(&pods, Some(ns), name, pod, UpdateMode::Full)?;
        Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}))
    }
}

/// Sets the pod's `PodScheduled` condition to `True`.
fn schedule(pod: &mut Value) {
    let scheduled = json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now_rfc3339()});
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    let mut conditions: Vec<Value> = pod["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c["type"] != "PodScheduled")
        .collect();
    conditions.push(scheduled);
    pod["status"]["conditions"] = Value::Array(conditions);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binding_targets_a_named_node() {
        assert!(binding_errors(&json!({"target": {"kind": "Node", "name": "n1"}})).is_empty());
        assert!(binding_errors(&json!({"target": {"name": "n1"}})).is_empty());
        let errors = binding_errors(&json!({"target": {"kind": "Pod"}}));
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["target.kind", "target.name"]);
    }
}
