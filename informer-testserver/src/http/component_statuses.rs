//! `componentstatuses` (core v1, deprecated upstream but still served): read-only, computed on
//! each request. kube-apiserver probes the scheduler, the controller manager and each etcd
//! server; this server has none of them running apart from itself, so it answers as a healthy
//! control plane does: `controller-manager`, `etcd-0` and `scheduler`, each `Healthy`.
//! Writes and watches are `405 MethodNotAllowed`, as the resource's verbs are `get` and `list`.

use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::status::ApiError;

/// The components and the message of their health check.
const COMPONENTS: &[(&str, &str)] = &[
    ("controller-manager", "ok"),
    ("etcd-0", r#"{"health":"true","reason":""}"#),
    ("scheduler", "ok"),
];

fn component(name: &str, message: &str) -> Value {
    json!({
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name},
        "conditions": [{"type": "Healthy", "status": "True", "message": message}],
    })
}

/// The `ComponentStatusList`.
pub(crate) fn list() -> Value {
    let items: Vec<Value> = COMPONENTS
        .iter()
        .map(|(name, message)| component(name, message))
        .collect();
    json!({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items})
}

/// One `ComponentStatus`, or 404 for a component kube-apiserver does not check.
pub(crate) fn get(rt: &ResourceType, name: &str) -> Result<Value, ApiError> {
    COMPONENTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(name, message)| component(name, message))
        .ok_or_else(|| ApiError::not_found(rt, name))
}
