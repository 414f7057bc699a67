//! The status of a new object. A client's create cannot set the status of a kind that has a
//! status subresource: kube-apiserver's strategies (`PrepareForCreate`) replace it with the
//! kind's zero status, and drop a custom resource's `status` whole. Only the status
//! subresource writes it afterwards.
//!
//! A built-in status is a Go struct that is never nil, so a new object reads back with
//! `status: {}`, plus the fields its Go type writes even when zero (a ReplicaSet's
//! `replicas: 0`, a Service's `loadBalancer: {}`).

use serde_json::{Value, json};

use crate::registry::ResourceType;

/// Whether a create keeps the status its body gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GivenStatus {
    /// A client's create: the status is reset, as kube-apiserver does.
    Reset,
    /// The server's own components and in-process fixtures: the given status is kept, over
    /// the kind's zero status.
    Kept,
}

/// Sets the status of `object`, a new object of kind `rt` (built in when `builtin`), as its
/// create leaves it; `now` is the time of the create.
pub(crate) fn set_new_status(
    rt: &ResourceType,
    builtin: bool,
    object: &mut Value,
    given: GivenStatus,
    now: &str,
) {
    if !rt.status_subresource {
        return;
    }
    let zero = match builtin {
        true => match zero_status(rt, now) {
            Some(zero) => Some(zero),
            None => return,
        },
        false => None,
    };
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let given = match given {
        GivenStatus::Kept => map.remove("status").filter(|status| !status.is_null()),
        GivenStatus::Reset => None,
    };
    let status = match (given, zero) {
        (Some(Value::Object(mut given)), Some(Value::Object(zero))) => {
            for (field, value) in zero {
                given.entry(field).or_insert(value);
            }
            Value::Object(given)
        }
        (Some(given), _) => given,
        (None, Some(zero)) => zero,
        (None, None) => {
            map.remove("status");
            return;
        }
    };
    map.insert("status".into(), status);
}

/// The status a new object of built-in kind `rt` gets; `None` for a kind whose create keeps
/// the given status.
fn zero_status(rt: &ResourceType, now: &str) -> Option<Value> {
    let zero = match (rt.group.as_str(), rt.version.as_str(), rt.kind.as_str()) {
        ("", "v1", "Node") => return None,
        ("", "v1", "Namespace") => json!({"phase": "Active"}),
        ("", "v1", "PersistentVolume") => json!({"phase": "Pending", "lastPhaseTransitionTime": now}),
        ("", "v1", "Service") | ("networking.k8s.io", "v1", "Ingress") => json!({"loadBalancer": {}}),
        ("", "v1", "ReplicationController") | ("apps", "v1", "ReplicaSet") => json!({"replicas": 0}),
        ("apps", "v1", "StatefulSet") => json!({"replicas": 0, "availableReplicas": 0}),
        ("apps", "v1", "DaemonSet") => json!({
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        }),
        ("policy", "v1", "PodDisruptionBudget") => json!({
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        }),
        ("autoscaling", "v1", "HorizontalPodAutoscaler") => {
            json!({"currentReplicas": 0, "desiredReplicas": 0})
        }
        ("autoscaling", _, "HorizontalPodAutoscaler") => json!({"desiredReplicas": 0}),
        ("storage.k8s.io", "v1", "VolumeAttachment") => json!({"attached": false}),
        _ => json!({}),
    };
    Some(zero)
}
