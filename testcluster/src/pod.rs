//! Pods as the workload controllers see them: active, ready, available; the pod a template
//! makes; and the order in which surplus pods are deleted.

use std::{cmp::Ordering, collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::core::v1::{Pod, PodCondition, PodTemplateSpec},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};

use crate::clock;

/// Whether the pod counts towards its controller's replicas: not finished and not being
/// deleted (kube's `IsPodActive`).
pub(crate) fn is_active(pod: &Pod) -> bool {
    !matches!(phase(pod), "Succeeded" | "Failed") && pod.metadata.deletion_timestamp.is_none()
}

/// The pod's phase, `""` when unset.
pub(crate) fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|status| status.phase.as_deref())
        .unwrap_or_default()
}

/// The pod's `Ready` condition, if it has one.
fn ready_condition(pod: &Pod) -> Option<&PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|condition| condition.type_ == "Ready")
}

/// Whether the pod's `Ready` condition is `True`.
pub(crate) fn is_ready(pod: &Pod) -> bool {
    ready_condition(pod).is_some_and(|condition| condition.status == "True")
}

/// Whether the pod has been ready for at least `min_ready_seconds` (kube's
/// `IsPodAvailable`): `Ok(())` when it is, `Err(Some(left))` when it will be after `left`,
/// `Err(None)` when it is not ready.
pub(crate) fn availability(pod: &Pod, min_ready_seconds: i32) -> Result<(), Option<Duration>> {
    let condition = ready_condition(pod)
        .filter(|condition| condition.status == "True")
        .ok_or(None)?;
    if min_ready_seconds <= 0 {
        return Ok(());
    }
    let Some(since) = condition.last_transition_time.as_ref() else {
        return Ok(());
    };
    match clock::remaining(since, clock::seconds(i64::from(min_ready_seconds))) {
        None => Ok(()),
        Some(left) => Err(Some(left)),
    }
}

/// The sum of restarts of the pod's containers.
fn restarts(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|status| status.restart_count)
        .sum()
}

fn phase_rank(pod: &Pod) -> u8 {
    match phase(pod) {
        "Pending" | "" => 0,
        "Unknown" => 1,
        "Running" => 2,
        _ => 3,
    }
}

/// kube's `ActivePods` order: the pods to delete first come first (unscheduled before
/// scheduled, pending before running, not ready before ready, ready for less time before
/// longer, more restarts before fewer, newer before older).
pub(crate) fn deletion_order(a: &Pod, b: &Pod) -> Ordering {
    let scheduled = |pod: &Pod| {
        pod.spec
            .as_ref()
            .and_then(|spec| spec.node_name.as_ref())
            .is_some()
    };
    let ready_since = |pod: &Pod| {
        ready_condition(pod)
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| t.0)
    };
    scheduled(a)
        .cmp(&scheduled(b))
        .then(phase_rank(a).cmp(&phase_rank(b)))
        .then(is_ready(a).cmp(&is_ready(b)))
        .then_with(
            || match (is_ready(a) && is_ready(b), ready_since(a), ready_since(b)) {
                (true, Some(a), Some(b)) => b.cmp(&a),
                _ => Ordering::Equal,
            },
        )
        .then(restarts(b).cmp(&restarts(a)))
        .then_with(|| {
            let created = |pod: &Pod| pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(b).cmp(&created(a))
        })
}

/// The pod `template` makes for the controller `owner`: named `<generate_name>xxxxx` by the
/// API server, with the template's labels and annotations plus `extra_labels`, the owner
/// reference, and the template's spec.
pub(crate) fn from_template(
    template: &PodTemplateSpec,
    namespace: &str,
    generate_name: String,
    owner: OwnerReference,
    extra_labels: BTreeMap<String, String>,
) -> Pod {
    let template_meta = template.metadata.as_ref();
    let mut labels = template_meta
        .and_then(|meta| meta.labels.clone())
        .unwrap_or_default();
    labels.extend(extra_labels);
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(generate_name),
            namespace: Some(namespace.to_owned()),
            labels: Some(labels),
            annotations: template_meta.and_then(|meta| meta.annotations.clone()),
            finalizers: template_meta.and_then(|meta| meta.finalizers.clone()),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: template.spec.clone(),
        status: None,
    }
}

/// The prefix of the names of the pods a controller named `owner` creates (kube's
/// `getPodsPrefix`: `<owner>-`, shortened so that the server's suffix fits).
pub(crate) fn generate_name(owner: &str) -> String {
    let mut prefix = format!("{owner}-");
    if prefix.len() > 58 {
        prefix.truncate(58);
    }
    prefix
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{PodSpec, PodStatus};

    use super::*;

    fn pod(node: Option<&str>, phase: &str, ready: bool) -> Pod {
        Pod {
            spec: Some(PodSpec {
                node_name: node.map(Into::into),
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                phase: Some(phase.into()),
                conditions: Some(vec![PodCondition {
                    type_: "Ready".into(),
                    status: if ready { "True" } else { "False" }.into(),
                    ..PodCondition::default()
                }]),
                ..PodStatus::default()
            }),
            ..Pod::default()
        }
    }

    // kube: pkg/controller/controller_utils_test.go, TestSortingActivePods (in part).
    #[test]
    fn deletes_unscheduled_pending_and_unready_pods_first() {
        let mut pods = [
            pod(Some("node"), "Running", true),
            pod(Some("node"), "Running", false),
            pod(Some("node"), "Pending", false),
            pod(None, "Pending", false),
        ];
        pods.sort_by(deletion_order);
        assert!(pods[0].spec.as_ref().is_some_and(|spec| spec.node_name.is_none()));
        assert_eq!(phase(&pods[1]), "Pending");
        assert!(!is_ready(&pods[2]));
        assert!(is_ready(&pods[3]));
    }

    #[test]
    fn finished_and_terminating_pods_are_not_active() {
        assert!(is_active(&pod(None, "Running", true)));
        assert!(!is_active(&pod(None, "Succeeded", false)));
        let mut deleting = pod(None, "Running", true);
        deleting.metadata.deletion_timestamp = Some(clock::now());
        assert!(!is_active(&deleting));
    }

    #[test]
    fn names_leave_room_for_the_suffix() {
        assert_eq!(generate_name("web"), "web-");
        assert_eq!(generate_name(&"x".repeat(70)).len(), 58);
    }
}
