//! The arithmetic of a rollout, kept apart from the API: how far `maxSurge` and
//! `maxUnavailable` reach, how many replicas the new replica set gets, and how many each old
//! one gives up (kube's `deployment/util` and `rolling.go`).

use k8s_openapi::{
    api::apps::v1::{Deployment, ReplicaSet},
    apimachinery::pkg::util::intstr::IntOrString,
};

/// `spec.replicas` of the deployment, 1 when unset (the API's default).
pub(crate) fn replicas(deployment: &Deployment) -> i32 {
    deployment.spec.replicas.unwrap_or(1)
}

/// `spec.replicas` of a replica set, 0 when unset.
pub(crate) fn rs_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(0)
}

/// `status.availableReplicas` of a replica set.
pub(crate) fn rs_available(rs: &ReplicaSet) -> i32 {
    rs.status
        .as_ref()
        .and_then(|status| status.available_replicas)
        .unwrap_or(0)
}

/// Whether the deployment rolls out with `Recreate` (otherwise `RollingUpdate`, the default).
pub(crate) fn is_recreate(deployment: &Deployment) -> bool {
    let strategy = deployment.spec.strategy.as_ref();
    strategy.and_then(|strategy| strategy.type_.as_deref()) == Some("Recreate")
}

/// kube's `GetScaledValueFromIntOrPercent`: an int as it is, `"25%"` of `total` rounded up or
/// down; `None` for a string that is not a percentage.
pub(crate) fn scaled(value: &IntOrString, total: i32, round_up: bool) -> Option<i32> {
    match value {
        IntOrString::Int(value) => Some(*value),
        IntOrString::String(text) => {
            let percent: i64 = text.strip_suffix('%')?.parse().ok()?;
            let product = percent * i64::from(total);
            let value = if round_up {
                (product + 99).div_euclid(100)
            } else {
                product.div_euclid(100)
            };
            i32::try_from(value).ok()
        }
    }
}

/// kube's `ResolveFenceposts`: `maxSurge` rounded up and `maxUnavailable` rounded down
/// against `spec.replicas` (25 % each by default); both zero makes `maxUnavailable` 1.
pub(crate) fn fenceposts(deployment: &Deployment) -> (i32, i32) {
    let default = || IntOrString::String("25%".to_owned());
    let rolling = deployment
        .spec
        .strategy
        .as_ref()
        .and_then(|strategy| strategy.rolling_update.as_ref());
    let surge = rolling.and_then(|r| r.max_surge.clone()).unwrap_or_else(default);
    let unavailable = rolling
        .and_then(|r| r.max_unavailable.clone())
        .unwrap_or_else(default);
    let desired = replicas(deployment);
    let surge = scaled(&surge, desired, true).unwrap_or(0);
    let unavailable = scaled(&unavailable, desired, false).unwrap_or(0);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

/// kube's `MaxUnavailable`: 0 for `Recreate` and for no replicas, never more than
/// `spec.replicas`.
pub(crate) fn max_unavailable(deployment: &Deployment) -> i32 {
    let desired = replicas(deployment);
    if is_recreate(deployment) || desired == 0 {
        return 0;
    }
    fenceposts(deployment).1.min(desired)
}

/// kube's `MaxSurge`: 0 for `Recreate`.
pub(crate) fn max_surge(deployment: &Deployment) -> i32 {
    if is_recreate(deployment) {
        0
    } else {
        fenceposts(deployment).0
    }
}

/// kube's `NewRSNewReplicas`: the replicas of the new replica set, which has `new_replicas`
/// now, when the replica sets have `all_replicas` together.
pub(crate) fn new_rs_replicas(deployment: &Deployment, new_replicas: i32, all_replicas: i32) -> i32 {
    let desired = replicas(deployment);
    if is_recreate(deployment) {
        return desired;
    }
    let max_total = desired + max_surge(deployment);
    if all_replicas >= max_total {
        return new_replicas;
    }
    let scale_up = (max_total - all_replicas).min(desired - new_replicas);
    new_replicas + scale_up
}

/// How a rolling update scales the old replica sets down (kube's `reconcileOldReplicaSets`):
/// the new replicas of each of `old` (oldest first), where it changes.
pub(crate) fn scale_down_old(
    deployment: &Deployment,
    new: Option<&ReplicaSet>,
    old: &[&ReplicaSet],
) -> Vec<i32> {
    let mut targets: Vec<i32> = old.iter().map(|rs| rs_replicas(rs)).collect();
    let old_total: i32 = targets.iter().sum();
    if old_total == 0 {
        return targets;
    }
    let new_spec = new.map_or(0, rs_replicas);
    let all_total = old_total + new_spec;
    let min_available = replicas(deployment) - max_unavailable(deployment);
    let new_unavailable = new.map_or(0, |rs| rs_replicas(rs) - rs_available(rs));
    let max_scaled_down = all_total - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return targets;
    }
    // first the replicas that are not available anyway (kube's `cleanupUnhealthyReplicas`)
    let mut cleaned = 0;
    for (target, rs) in targets.iter_mut().zip(old) {
        let unhealthy = (*target - rs_available(rs)).max(0);
        let count = unhealthy.min(max_scaled_down - cleaned);
        *target -= count;
        cleaned += count;
    }
    // then available ones, as far as availability allows (`scaleDownOldReplicaSetsForRollingUpdate`)
    let available: i32 = old.iter().map(|rs| rs_available(rs)).sum::<i32>() + new.map_or(0, rs_available);
    let mut left = available - min_available;
    for target in &mut targets {
        if left <= 0 {
            break;
        }
        let count = (*target).min(left);
        *target -= count;
        left -= count;
    }
    targets
}

/// kube's proportional scaling (`scale` in `sync.go`): the sizes of the `active` replica sets
/// (oldest first) when the deployment's size changes during a rollout. What the deployment
/// may run now (`spec.replicas` plus `maxSurge`) minus what they ask for is spread over them
/// in proportion to the size each had for the deployment's size when last scaled (its
/// `max-replicas` annotation), the largest first; the rest goes to the largest.
pub(crate) fn proportional_sizes(deployment: &Deployment, active: &[&ReplicaSet]) -> Vec<i32> {
    let desired = replicas(deployment);
    let allowed = if desired > 0 {
        desired + max_surge(deployment)
    } else {
        0
    };
    let mut sizes: Vec<i32> = active.iter().map(|rs| rs_replicas(rs)).collect();
    let to_add = allowed - sizes.iter().sum::<i32>();
    if to_add == 0 {
        return sizes;
    }
    let mut order: Vec<usize> = (0..active.len()).collect();
    // larger first; among equals the newer first when growing, the older when shrinking
    order.sort_by(|&a, &b| {
        let by_age = if to_add > 0 { b.cmp(&a) } else { a.cmp(&b) };
        sizes[b].cmp(&sizes[a]).then(by_age)
    });
    let mut added = 0;
    for &index in &order {
        let share = proportion(deployment, active[index], to_add, added);
        sizes[index] += share;
        added += share;
    }
    if let Some(&largest) = order.first() {
        sizes[largest] = (sizes[largest] + to_add - added).max(0);
    }
    sizes
}

/// kube's `GetProportion`: the replicas `rs` gains or loses, within what is left to add.
fn proportion(deployment: &Deployment, rs: &ReplicaSet, to_add: i32, added: i32) -> i32 {
    let current = rs_replicas(rs);
    if current == 0 || to_add == added {
        return 0;
    }
    let fraction = fraction(deployment, rs);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// kube's `getReplicaSetFraction`: the size `rs` would have for the deployment's size now,
/// scaled from the size it was made for, minus its size.
fn fraction(deployment: &Deployment, rs: &ReplicaSet) -> i32 {
    let current = rs_replicas(rs);
    let desired = replicas(deployment);
    if desired == 0 {
        return -current;
    }
    let now = desired + max_surge(deployment);
    let annotated = rs
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get("deployment.kubernetes.io/max-replicas"))
        .and_then(|value| value.parse::<i32>().ok())
        .unwrap_or_else(|| deployment.status.as_ref().and_then(|s| s.replicas).unwrap_or(0));
    if annotated <= 0 {
        return 0;
    }
    let scaled = f64::from(current) * f64::from(now) / f64::from(annotated);
    // kube's integer.RoundToInt32: half away from zero
    #[allow(clippy::cast_possible_truncation)]
    let rounded = scaled.round() as i32;
    rounded - current
}
