//! Graceful deletion of pods bound to a node of the simulated kubelet, as kube-apiserver's pod
//! strategy decides it: the grace period is the request's `gracePeriodSeconds`, else the pod's
//! `spec.terminationGracePeriodSeconds`, else 30 seconds; a pod without a node, or in phase
//! `Succeeded` or `Failed`, is deleted at once, and so is any pod for a grace period of 0.
//!
//! A graceful deletion only marks the pod: `deletionTimestamp` is now plus the grace period,
//! `deletionGracePeriodSeconds` the grace period, and the kubelet removes the pod once its
//! containers have stopped (a delete with grace period 0). Deleting a pod already marked again
//! may shorten its grace period, never lengthen it; shortening it to 0 removes the pod, or,
//! while finalizers hold it, leaves it for the update that removes the last one.
//!
//! Without a kubelet (no simulated node), and for pods bound to another node, deletion stays
//! immediate: nothing would ever finish it.

use serde_json::{Value, json};

use super::plugin::{Cascade, Plugin};
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{State, with_type};
use crate::storage::store::metadata_mut;

/// The grace period of a pod whose spec names none (kube-apiserver's default).
const DEFAULT_GRACE_PERIOD_SECONDS: i64 = 30;

/// Takes over the deletion of pods on simulated nodes whose grace period is not 0.
pub(crate) struct GracefulPodDeletion;

impl Plugin for GracefulPodDeletion {
    fn deleting(
        &self,
        writes: &mut dyn Cascade,
        rt: &ResourceType,
        old: &Value,
        options: &Value,
    ) -> Result<Option<Value>, ApiError> {
        if !(rt.group.is_empty() && rt.plural == "pods") {
            return Ok(None);
        }
        let node = old["spec"]["nodeName"].as_str().unwrap_or_default();
        let state = writes.state();
        if node.is_empty() || !state.simulated_nodes.contains(node) {
            return Ok(None);
        }
        let grace = grace_period(old, options);
        if grace == 0 {
            return Ok(finish_now(state, rt, old));
        }
        let now = jiff::Timestamp::now().as_second();
        let mut new = old.clone();
        match (
            old["metadata"]["deletionTimestamp"].as_str(),
            old["metadata"]["deletionGracePeriodSeconds"].as_i64(),
        ) {
            (Some(marked), Some(current)) => {
                if grace >= current {
                    return Ok(Some(with_type(old.clone(), rt)));
                }
                let marked = marked
                    .parse::<jiff::Timestamp>()
                    .map(|t| t.as_second())
                    .unwrap_or(now + current);
                let meta = metadata_mut(&mut new);
                meta.insert(
                    "deletionTimestamp".into(),
                    json!(rfc3339(marked - current + grace)),
                );
                meta.insert("deletionGracePeriodSeconds".into(), json!(grace));
            }
            _ => {
                let meta = metadata_mut(&mut new);
                meta.insert("deletionTimestamp".into(), json!(rfc3339(now + grace)));
                meta.insert("deletionGracePeriodSeconds".into(), json!(grace));
                if let Some(generation) = meta.get("generation").and_then(Value::as_i64)
                    && generation > 0
                {
                    meta.insert("generation".into(), json!(generation + 1));
                }
            }
        }
        let stored = state.store.put(rt, new);
        Ok(Some(with_type(stored, rt)))
    }
}

/// A deletion with no grace period of a pod whose finalizers hold it: its grace period drops
/// to 0 (so the update removing the last finalizer removes it); `None` leaves the deletion to
/// the write path (a pod without finalizers is removed at once).
fn finish_now(state: &mut State, rt: &ResourceType, old: &Value) -> Option<Value> {
    let held = old["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    let graceful = old["metadata"]["deletionGracePeriodSeconds"]
        .as_i64()
        .is_some_and(|g| g > 0);
    if !(held && graceful) {
        return None;
    }
    let mut new = old.clone();
    let meta = metadata_mut(&mut new);
    meta.insert(
        "deletionTimestamp".into(),
        json!(rfc3339(jiff::Timestamp::now().as_second())),
    );
    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
    Some(with_type(state.store.put(rt, new), rt))
}

/// The grace period kube-apiserver's pod strategy gives the deletion of `pod` with these
/// `DeleteOptions` (a negative one counts as 1 second).
pub(crate) fn grace_period(pod: &Value, options: &Value) -> i64 {
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    if pod["spec"]["nodeName"].as_str().unwrap_or_default().is_empty()
        || matches!(phase, "Succeeded" | "Failed")
    {
        return 0;
    }
    let period = options["gracePeriodSeconds"]
        .as_i64()
        .or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(DEFAULT_GRACE_PERIOD_SECONDS);
    if period < 0 { 1 } else { period }
}

fn rfc3339(second: i64) -> String {
    jiff::Timestamp::from_second(second)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grace_period_follows_the_pod_strategy() {
        let bound = json!({"spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 5}});
        assert_eq!(grace_period(&bound, &Value::Null), 5);
        assert_eq!(grace_period(&bound, &json!({"gracePeriodSeconds": 2})), 2);
        assert_eq!(grace_period(&bound, &json!({"gracePeriodSeconds": -3})), 1);
        assert_eq!(
            grace_period(&json!({"spec": {"nodeName": "n1"}}), &Value::Null),
            30
        );
        let unbound = json!({"spec": {"terminationGracePeriodSeconds": 5}});
        assert_eq!(grace_period(&unbound, &Value::Null), 0);
        let done = json!({"spec": {"nodeName": "n1"}, "status": {"phase": "Succeeded"}});
        assert_eq!(grace_period(&done, &json!({"gracePeriodSeconds": 9})), 0);
    }
}
