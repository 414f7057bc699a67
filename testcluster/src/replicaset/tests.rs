use k8s_openapi::{
    api::{
        apps::v1::ReplicaSetSpec,
        core::v1::{PodCondition, PodStatus, PodTemplateSpec},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};

use super::*;
use crate::clock;

fn rs(min_ready_seconds: i32) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            generation: Some(3),
            ..ObjectMeta::default()
        },
        spec: ReplicaSetSpec {
            min_ready_seconds: Some(min_ready_seconds),
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(
                        [
                            ("app".to_owned(), "web".to_owned()),
                            ("tier".to_owned(), "fe".to_owned()),
                        ]
                        .into(),
                    ),
                    ..ObjectMeta::default()
                }),
                spec: None,
            }),
            ..ReplicaSetSpec::default()
        },
        status: None,
    }
}

fn pod(labels: &[(&str, &str)], ready: bool) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: ObjectMeta {
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        spec: None,
        status: Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                last_transition_time: Some(clock::now()),
                ..PodCondition::default()
            }]),
            ..PodStatus::default()
        }),
    })
}

// kube: pkg/controller/replicaset/replica_set_utils_test.go, TestCalculateStatus.
#[test]
fn status_counts_fully_labeled_ready_and_available_pods() {
    let pods = [
        pod(&[("app", "web"), ("tier", "fe")], true),
        pod(&[("app", "web")], true),
        pod(&[("app", "web"), ("tier", "fe")], false),
    ];
    let (status, wait) = calculate_status(&rs(0), &pods);
    assert_eq!(status.replicas, 3);
    assert_eq!(status.fully_labeled_replicas, Some(2));
    assert_eq!(status.ready_replicas, Some(2));
    assert_eq!(status.available_replicas, Some(2));
    assert_eq!(status.observed_generation, Some(3));
    assert_eq!(wait, None);
}

#[test]
fn pods_ready_for_less_than_min_ready_seconds_are_not_available_yet() {
    let pods = [pod(&[("app", "web")], true)];
    let (status, wait) = calculate_status(&rs(60), &pods);
    assert_eq!(status.ready_replicas, Some(1));
    assert_eq!(status.available_replicas, Some(0));
    assert!(wait.is_some_and(|wait| wait <= Duration::from_secs(60)));
}
