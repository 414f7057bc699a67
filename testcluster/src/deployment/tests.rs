use k8s_openapi::{
    api::apps::v1::{DeploymentSpec, DeploymentStrategy, ReplicaSetStatus, RollingUpdateDeployment},
    apimachinery::pkg::util::intstr::IntOrString,
};

use super::*;

fn int_or_percent(value: &str) -> IntOrString {
    value
        .parse()
        .map_or_else(|_| IntOrString::String(value.to_owned()), IntOrString::Int)
}

fn deployment(replicas: i32, surge: &str, unavailable: &str) -> Deployment {
    Deployment {
        spec: DeploymentSpec {
            replicas: Some(replicas),
            strategy: Some(DeploymentStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateDeployment {
                    max_surge: Some(int_or_percent(surge)),
                    max_unavailable: Some(int_or_percent(unavailable)),
                }),
            }),
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

fn rs(replicas: i32, available: i32) -> ReplicaSet {
    ReplicaSet {
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            ..ReplicaSetSpec::default()
        },
        status: Some(ReplicaSetStatus {
            replicas,
            available_replicas: Some(available),
            ..ReplicaSetStatus::default()
        }),
        ..ReplicaSet::default()
    }
}

// kube: pkg/controller/deployment/util/deployment_util_test.go, TestResolveFenceposts.
#[test]
fn fenceposts_round_surge_up_and_unavailable_down() {
    assert_eq!(rollout::fenceposts(&deployment(10, "25%", "25%")), (3, 2));
    assert_eq!(rollout::fenceposts(&deployment(1, "0", "0")), (0, 1));
    assert_eq!(rollout::fenceposts(&deployment(1, "0%", "0%")), (0, 1));
    assert_eq!(rollout::fenceposts(&deployment(5, "3", "1")), (3, 1));
    assert_eq!(rollout::fenceposts(&deployment(3, "50%", "50%")), (2, 1));
    assert_eq!(rollout::max_unavailable(&deployment(2, "1", "5")), 2);
}

// kube: deployment_util_test.go, TestNewRSNewReplicas.
#[test]
fn the_new_replica_set_grows_within_max_surge() {
    let d = deployment(10, "25%", "25%");
    // 10 old + 0 new: 3 may surge
    assert_eq!(rollout::new_rs_replicas(&d, 0, 10), 3);
    // already at 13 pods: no more
    assert_eq!(rollout::new_rs_replicas(&d, 3, 13), 3);
    // never past spec.replicas
    assert_eq!(rollout::new_rs_replicas(&d, 9, 9), 10);
    let mut recreate = deployment(4, "1", "1");
    recreate.spec.strategy = Some(DeploymentStrategy {
        type_: Some("Recreate".into()),
        rolling_update: None,
    });
    assert_eq!(rollout::new_rs_replicas(&recreate, 0, 4), 4);
}

// kube: pkg/controller/deployment/rolling_test.go, TestDeploymentController_reconcileOldReplicaSets
// and TestDeploymentController_cleanupUnhealthyReplicas (in part).
#[test]
fn old_replica_sets_shrink_within_max_unavailable() {
    let d = deployment(10, "0", "2");
    // 10 old available, new with none: 2 may go
    assert_eq!(
        rollout::scale_down_old(&d, Some(&rs(0, 0)), &[&rs(10, 10)]),
        vec![8]
    );
    // unavailable old replicas go first, then available ones down to 8 available
    assert_eq!(
        rollout::scale_down_old(&d, Some(&rs(2, 2)), &[&rs(10, 7)]),
        vec![6]
    );
    // the new replica set's unavailable pods hold the old ones back
    assert_eq!(
        rollout::scale_down_old(&d, Some(&rs(2, 0)), &[&rs(8, 8)]),
        vec![8]
    );
}

#[test]
fn percentages_scale_as_kube_rounds_them() {
    assert_eq!(
        rollout::scaled(&IntOrString::String("25%".into()), 10, true),
        Some(3)
    );
    assert_eq!(
        rollout::scaled(&IntOrString::String("25%".into()), 10, false),
        Some(2)
    );
    assert_eq!(rollout::scaled(&IntOrString::String("x".into()), 10, false), None);
}

// kube: deployment_util_test.go, TestDeploymentComplete and TestDeploymentProgressing's
// Available condition, through calculate.
#[test]
fn available_condition_follows_min_availability() {
    let d = deployment(4, "1", "1");
    let available = status::calculate(&d, &[&rs(4, 3)], None, None);
    let condition = status::get(&available, status::AVAILABLE)
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (condition.status.as_deref(), condition.reason.as_deref()),
        (Some("True"), Some("MinimumReplicasAvailable"))
    );
    let unavailable = status::calculate(&d, &[&rs(4, 2)], None, None);
    let condition = status::get(&unavailable, status::AVAILABLE)
        .cloned()
        .unwrap_or_default();
    assert_eq!(condition.status.as_deref(), Some("False"));
    assert_eq!(unavailable.unavailable_replicas, Some(2));
}

#[test]
fn new_replica_sets_carry_the_hash_revision_and_replica_annotations() {
    let mut d = deployment(3, "1", "0");
    d.metadata.name = Some("web".into());
    d.spec.template =
        serde_json::from_value(json!({"metadata": {"labels": {"app": "web"}}})).unwrap_or_default();
    let rs = new_replica_set(&d, None, 1, 4);
    let hash = rs.labels()[POD_TEMPLATE_HASH].clone();
    assert_eq!(rs.name_any(), format!("web-{hash}"));
    assert_eq!(rs.annotations()[REVISION], "4");
    assert_eq!(rs.annotations()[DESIRED_REPLICAS], "3");
    assert_eq!(rs.annotations()[MAX_REPLICAS], "4");
    assert_eq!(
        rs.spec
            .selector
            .match_labels
            .as_ref()
            .map(|labels| labels[POD_TEMPLATE_HASH].clone()),
        Some(hash)
    );
    assert!(same_template(&rs, &d.spec.template));
}

fn annotated(replicas: i32, max_replicas: i32) -> ReplicaSet {
    let mut rs = rs(replicas, replicas);
    rs.metadata.annotations = Some([(MAX_REPLICAS.to_owned(), max_replicas.to_string())].into());
    rs
}

// kube: pkg/controller/deployment/sync_test.go, TestScale's "proportional scaling: 5 -> 10"
// and "proportional scaling: 10 -> 5" cases (new replica set newer, listed last).
#[test]
fn scaling_mid_rollout_is_proportional() {
    let (old, new) = (annotated(3, 5), annotated(2, 5));
    assert_eq!(
        rollout::proportional_sizes(&deployment(10, "0", "1"), &[&old, &new]),
        vec![6, 4]
    );
    let (old, new) = (annotated(6, 10), annotated(4, 10));
    assert_eq!(
        rollout::proportional_sizes(&deployment(5, "0", "1"), &[&old, &new]),
        vec![3, 2]
    );
    // the leftover of rounding goes to the largest
    let (old, new) = (annotated(1, 3), annotated(1, 3));
    assert_eq!(
        rollout::proportional_sizes(&deployment(4, "0", "1"), &[&old, &new])
            .iter()
            .sum::<i32>(),
        4
    );
}
