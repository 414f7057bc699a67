//! A deployment's status from its replica sets, and its `Available` and `Progressing`
//! conditions (kube's `calculateStatus` and `syncRolloutStatus`).

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet};
use kube::ResourceExt;

use super::rollout;
use crate::clock;

/// The `Available` condition.
pub(crate) const AVAILABLE: &str = "Available";
/// The `Progressing` condition.
pub(crate) const PROGRESSING: &str = "Progressing";
/// `Progressing` reason: a new replica set was created.
pub(crate) const NEW_RS_CREATED: &str = "NewReplicaSetCreated";
/// `Progressing` reason: the new replica set was found.
pub(crate) const FOUND_NEW_RS: &str = "FoundNewReplicaSet";
/// `Progressing` reason: the rollout made progress.
pub(crate) const RS_UPDATED: &str = "ReplicaSetUpdated";
/// `Progressing` reason: the rollout completed.
pub(crate) const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
/// `Progressing` reason: no progress within `progressDeadlineSeconds`.
pub(crate) const DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// `Progressing` reason: the deployment is paused.
pub(crate) const PAUSED: &str = "DeploymentPaused";
/// `Progressing` reason: the deployment was resumed.
pub(crate) const RESUMED: &str = "DeploymentResumed";

/// A condition of `type_`, updated and transitioned now.
pub(crate) fn condition(type_: &str, status: &str, reason: &str, message: String) -> DeploymentCondition {
    DeploymentCondition {
        type_: Some(type_.to_owned()),
        status: Some(status.to_owned()),
        reason: Some(reason.to_owned()),
        message: Some(message),
        last_update_time: Some(clock::now()),
        last_transition_time: Some(clock::now()),
    }
}

/// The condition of `type_`, if any.
pub(crate) fn get<'a>(status: &'a DeploymentStatus, type_: &str) -> Option<&'a DeploymentCondition> {
    status
        .conditions
        .as_deref()?
        .iter()
        .find(|condition| condition.type_.as_deref() == Some(type_))
}

/// kube's `SetDeploymentCondition`: nothing changes when the condition has the same status and
/// reason already; otherwise it replaces the old one, keeping its transition time when the
/// status stays.
pub(crate) fn set(status: &mut DeploymentStatus, mut new: DeploymentCondition) {
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    if let Some(old) = conditions.iter().find(|c| c.type_ == new.type_) {
        if old.status == new.status && old.reason == new.reason {
            return;
        }
        if old.status == new.status {
            new.last_transition_time.clone_from(&old.last_transition_time);
        }
    }
    conditions.retain(|c| c.type_ != new.type_);
    conditions.push(new);
}

/// The counts of the replica sets (kube's `calculateStatus`), with `conditions` carried over
/// and `Available` set.
pub(crate) fn calculate(
    deployment: &Deployment,
    all: &[&ReplicaSet],
    new: Option<&ReplicaSet>,
    conditions: Option<Vec<DeploymentCondition>>,
) -> DeploymentStatus {
    let sum = |field: fn(&ReplicaSet) -> i32| all.iter().map(|rs| field(rs)).sum::<i32>();
    let total = sum(|rs| rs.status.as_ref().map_or(0, |status| status.replicas));
    let available = sum(rollout::rs_available);
    let mut status = DeploymentStatus {
        replicas: Some(total),
        updated_replicas: Some(
            new.and_then(|rs| rs.status.as_ref())
                .map_or(0, |status| status.replicas),
        ),
        ready_replicas: Some(sum(|rs| {
            rs.status
                .as_ref()
                .and_then(|status| status.ready_replicas)
                .unwrap_or(0)
        })),
        available_replicas: Some(available),
        unavailable_replicas: Some((total - available).max(0)),
        observed_generation: deployment.metadata.generation,
        collision_count: deployment
            .status
            .as_ref()
            .and_then(|status| status.collision_count),
        conditions,
        ..DeploymentStatus::default()
    };
    let (reason, state, message) =
        if available >= rollout::replicas(deployment) - rollout::max_unavailable(deployment) {
            (
                "MinimumReplicasAvailable",
                "True",
                "Deployment has minimum availability.",
            )
        } else {
            (
                "MinimumReplicasUnavailable",
                "False",
                "Deployment does not have minimum availability.",
            )
        };
    set(
        &mut status,
        condition(AVAILABLE, state, reason, message.to_owned()),
    );
    status
}

/// `spec.progressDeadlineSeconds`, 600 when unset (the API's default).
pub(crate) fn progress_deadline(deployment: &Deployment) -> Duration {
    clock::seconds(i64::from(
        deployment.spec.progress_deadline_seconds.unwrap_or(600),
    ))
}

/// kube's `DeploymentComplete`: every replica updated and available, the newest spec seen.
pub(crate) fn is_complete(deployment: &Deployment, status: &DeploymentStatus) -> bool {
    let desired = rollout::replicas(deployment);
    status.updated_replicas == Some(desired)
        && status.replicas == Some(desired)
        && status.available_replicas == Some(desired)
        && status.observed_generation >= deployment.metadata.generation
}

/// kube's `DeploymentProgressing`: more updated, ready or available replicas, or fewer old
/// ones, than the status had.
fn is_progressing(deployment: &Deployment, new: &DeploymentStatus) -> bool {
    let old = deployment.status.clone().unwrap_or_default();
    let n = |value: Option<i32>| value.unwrap_or(0);
    let old_old = n(old.replicas) - n(old.updated_replicas);
    let new_old = n(new.replicas) - n(new.updated_replicas);
    n(new.updated_replicas) > n(old.updated_replicas)
        || new_old < old_old
        || n(new.ready_replicas) > n(old.ready_replicas)
        || n(new.available_replicas) > n(old.available_replicas)
}

/// kube's `DeploymentTimedOut`: no progress since the `Progressing` condition's last update
/// for longer than the deadline.
fn is_timed_out(deployment: &Deployment, status: &DeploymentStatus) -> bool {
    let Some(condition) = get(status, PROGRESSING) else {
        return false;
    };
    match condition.reason.as_deref() {
        Some(NEW_RS_AVAILABLE) => false,
        Some(DEADLINE_EXCEEDED) => true,
        _ => condition
            .last_update_time
            .as_ref()
            .is_some_and(|since| clock::remaining(since, progress_deadline(deployment)).is_none()),
    }
}

/// Sets the `Progressing` condition as kube's `syncRolloutStatus` does: the rollout
/// completed, progressed, or ran out of time; nothing once it completed.
pub(crate) fn set_progressing(
    deployment: &Deployment,
    new_rs: Option<&ReplicaSet>,
    status: &mut DeploymentStatus,
) {
    let current = get(status, PROGRESSING).cloned();
    let completed_before = status.replicas == status.updated_replicas
        && current.as_ref().and_then(|c| c.reason.as_deref()) == Some(NEW_RS_AVAILABLE);
    if deployment.spec.paused == Some(true) || completed_before {
        return;
    }
    let name = new_rs.map(ResourceExt::name_any).unwrap_or_default();
    if is_complete(deployment, status) {
        let message = format!("ReplicaSet {name:?} has successfully progressed.");
        set(status, condition(PROGRESSING, "True", NEW_RS_AVAILABLE, message));
    } else if is_progressing(deployment, status) {
        let mut progress = condition(
            PROGRESSING,
            "True",
            RS_UPDATED,
            format!("ReplicaSet {name:?} is progressing."),
        );
        if let Some(current) = current.filter(|c| c.status.as_deref() == Some("True")) {
            progress.last_transition_time = current.last_transition_time;
        }
        // refreshed even with the same reason: the last update is when progress was seen
        if let Some(conditions) = status.conditions.as_mut() {
            conditions.retain(|c| c.type_.as_deref() != Some(PROGRESSING));
        }
        set(status, progress);
    } else if is_timed_out(deployment, status) {
        let message = format!("ReplicaSet {name:?} has timed out progressing.");
        set(
            status,
            condition(PROGRESSING, "False", DEADLINE_EXCEEDED, message),
        );
    }
}

/// When a deployment still progressing must be looked at again to time it out (kube's
/// `requeueStuckDeployment`).
pub(crate) fn deadline_check(deployment: &Deployment, status: &DeploymentStatus) -> Option<Duration> {
    let current = get(status, PROGRESSING)?;
    if current.status.as_deref() != Some("True")
        || current.reason.as_deref() == Some(NEW_RS_AVAILABLE)
        || is_complete(deployment, status)
    {
        return None;
    }
    let since = current.last_update_time.as_ref()?;
    let left = clock::remaining(since, progress_deadline(deployment)).unwrap_or_default();
    Some(left + Duration::from_secs(1))
}
