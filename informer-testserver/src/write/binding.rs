//! `pods/binding` and the legacy `bindings` resource: a `Binding` assigns a pod to a node (what
//! a scheduler does), as kube-apiserver's binding REST does: the pod gets `spec.nodeName`, the
//! Binding's annotations, and a `PodScheduled` condition `True`; a pod already assigned, being
//! deleted or with scheduling gates gives 409 Conflict.

use serde_json::{Value, json};

use super::session::WriteSession;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{UpdateMode, now_rfc3339};
use crate::storage::store::meta_str;

impl WriteSession<'_> {
    /// Binds the pod named by the URL (`url_name`, for `pods/{name}/binding`) or by the
    /// Binding (the legacy `bindings` resource) to the Binding's target node.
    pub(crate) fn bind(
        &mut self,
        pods: &ResourceType,
        ns: &str,
        url_name: Option<&str>,
        binding: &Value,
    ) -> Result<(), ApiError> {
        let kind = binding["kind"].as_str().unwrap_or("Binding");
        if kind != "Binding" {
            return Err(ApiError::bad_request(format!("not a Binding object: {kind}")));
        }
        let name = meta_str(binding, "name").unwrap_or_default();
        if let Some(url_name) = url_name
            && url_name != name
        {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Binding object",
            ));
        }
        let node = target_node(binding)?;
        let pod = self.state.get(pods, Some(ns), name)?;
        if let Some(uid) = meta_str(binding, "uid").filter(|u| !u.is_empty()) {
            let actual = meta_str(&pod, "uid").unwrap_or_default();
            if uid != actual {
                return Err(ApiError::conflict_with(
                    pods,
                    name,
                    &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"),
                ));
            }
        }
        let bound = assigned(pod, name, node, &binding["metadata"]["annotations"])?;
        self.update(pods, Some(ns), name, bound, UpdateMode::Full)?;
        Ok(())
    }
}

/// The target's node name; a target of another kind or without a name is refused as
/// kube-apiserver's validation does (an error that is not a Status: 500).
fn target_node(binding: &Value) -> Result<&str, ApiError> {
    let target = &binding["target"];
    let mut problems = Vec::new();
    let kind = target["kind"].as_str().unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        problems.push(format!(
            "target.kind: Invalid value: {kind:?}: must be empty or 'Node'"
        ));
    }
    let node = target["name"].as_str().unwrap_or_default();
    if node.is_empty() {
        problems.push("target.name: Required value".to_string());
    }
    match problems.len() {
        0 => Ok(node),
        1 => Err(ApiError::new(500, "", problems.remove(0))),
        _ => Err(ApiError::new(500, "", format!("[{}]", problems.join(", ")))),
    }
}

/// The pod assigned to `node`, or the 409 kube-apiserver answers.
fn assigned(mut pod: Value, name: &str, node: &str, annotations: &Value) -> Result<Value, ApiError> {
    let refuse = |why: String| {
        ApiError::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on pods/binding \"{name}\": {why}"),
        )
        .with_details(json!({"name": name, "kind": "pods/binding"}))
    };
    if pod["metadata"]["deletionTimestamp"].is_string() {
        return Err(refuse(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        )));
    }
    if let Some(current) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return Err(refuse(format!(
            "pod {name} is already assigned to node {current:?}"
        )));
    }
    if pod["spec"]["schedulingGates"]
        .as_array()
        .is_some_and(|gates| !gates.is_empty())
    {
        return Err(refuse(format!("pod {name} has non-empty .spec.schedulingGates")));
    }
    pod["spec"]["nodeName"] = json!(node);
    if let Some(annotations) = annotations.as_object() {
        for (key, value) in annotations {
            pod["metadata"]["annotations"][key] = value.clone();
        }
    }
    set_scheduled(&mut pod["status"]);
    Ok(pod)
}

/// The `PodScheduled` condition set to `True` (its transition time changed only when its status
/// does).
fn set_scheduled(status: &mut Value) {
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let Some(conditions) = status["conditions"].as_array_mut() else {
        return;
    };
    let now = now_rfc3339();
    match conditions.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(existing) if existing["status"] == "True" => {}
        Some(existing) => {
            existing["status"] = json!("True");
            existing["lastTransitionTime"] = json!(now);
            existing["lastProbeTime"] = Value::Null;
            if let Some(map) = existing.as_object_mut() {
                map.remove("reason");
                map.remove("message");
            }
        }
        None => conditions.push(json!({
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": null,
            "lastTransitionTime": now,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_need_a_node_name() {
        let err = target_node(&json!({"target": {"kind": "Node"}})).expect_err("no name");
        assert_eq!(
            (err.code, err.message.as_str()),
            (500, "target.name: Required value")
        );
        assert_eq!(
            target_node(&json!({"target": {"name": "n1"}})).expect("named"),
            "n1"
        );
    }

    #[test]
    fn an_assigned_pod_is_not_bound_again() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}});
        let err = assigned(pod, "p", "n2", &Value::Null).expect_err("assigned");
        assert_eq!(
            err.message,
            "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\""
        );
    }
}
