//! The defaults of the `apps` workloads: replicas, update strategies, history, and their pod
//! templates'.

use serde_json::{Value, json};

use super::fields::{default, is_unset, items, object, set_object, text};
use super::pod::template;
use super::storage::claim_spec;

/// A Deployment: one replica, a rolling update of 25 % surge and 25 % unavailable, ten old
/// ReplicaSets kept, a ten-minute progress deadline.
pub(super) fn deployment(deployment: &mut Value) {
    let Some(spec) = object(deployment, "spec") else {
        return;
    };
    default(spec, "replicas", || json!(1));
    let surge = [("maxUnavailable", json!("25%")), ("maxSurge", json!("25%"))];
    rolling_strategy(spec, "strategy", surge);
    default(spec, "revisionHistoryLimit", || json!(10));
    default(spec, "progressDeadlineSeconds", || json!(600));
    if let Some(pod) = object(spec, "template") {
        template(pod);
    }
}

/// The update strategy at `spec[field]`: `RollingUpdate` unless it names another type, with
/// `defaults` in its `rollingUpdate`.
fn rolling_strategy(spec: &mut Value, field: &str, defaults: [(&str, Value); 2]) {
    let Some(strategy) = object(spec, field) else {
        return;
    };
    default(strategy, "type", || json!("RollingUpdate"));
    if text(strategy, "type") != "RollingUpdate" {
        return;
    }
    if let Some(rolling) = object(strategy, "rollingUpdate") {
        for (field, value) in defaults {
            default(rolling, field, || value);
        }
    }
}

/// A ReplicaSet: one replica.
pub(super) fn replica_set(replica_set: &mut Value) {
    let Some(spec) = object(replica_set, "spec") else {
        return;
    };
    default(spec, "replicas", || json!(1));
    if let Some(pod) = object(spec, "template") {
        template(pod);
    }
}

/// A StatefulSet: one replica, pods in order, rolling updates from ordinal 0, ten revisions
/// kept, claims retained.
pub(super) fn stateful_set(stateful_set: &mut Value) {
    let Some(spec) = object(stateful_set, "spec") else {
        return;
    };
    default(spec, "replicas", || json!(1));
    default(spec, "podManagementPolicy", || json!("OrderedReady"));
    if let Some(strategy) = object(spec, "updateStrategy") {
        // Only a strategy without a type gets a `rollingUpdate`; a `RollingUpdate` without one
        // keeps none.
        if is_unset(strategy, "type") || text(strategy, "type").is_empty() {
            strategy["type"] = json!("RollingUpdate");
            default(strategy, "rollingUpdate", || json!({}));
        }
        if text(strategy, "type") == "RollingUpdate"
            && let Some(rolling) = set_object(strategy, "rollingUpdate")
        {
            default(rolling, "partition", || json!(0));
        }
    }
    default(spec, "revisionHistoryLimit", || json!(10));
    if let Some(policy) = object(spec, "persistentVolumeClaimRetentionPolicy") {
        default(policy, "whenDeleted", || json!("Retain"));
        default(policy, "whenScaled", || json!("Retain"));
    }
    for claim in items(spec, "volumeClaimTemplates") {
        if let Some(template_spec) = object(claim, "spec") {
            claim_spec(template_spec);
        }
        if let Some(status) = object(claim, "status") {
            default(status, "phase", || json!("Pending"));
        }
    }
    if let Some(pod) = object(spec, "template") {
        template(pod);
    }
}

/// A DaemonSet: rolling updates of one pod at a time, ten revisions kept.
pub(super) fn daemon_set(daemon_set: &mut Value) {
    let Some(spec) = object(daemon_set, "spec") else {
        return;
    };
    let one_at_a_time = [("maxUnavailable", json!(1)), ("maxSurge", json!(0))];
    rolling_strategy(spec, "updateStrategy", one_at_a_time);
    default(spec, "revisionHistoryLimit", || json!(10));
    if let Some(pod) = object(spec, "template") {
        template(pod);
    }
}
