//! The shard Leases: keep the state label current, acquire uncertain Leases (declaring their
//! shards dead), delete orphaned ones, and check each again at its next state change (the Go
//! sharder's shardlease controller).

use std::time::Duration;

use k8s_openapi::{
    api::coordination::v1::Lease,
    apimachinery::pkg::apis::meta::v1::MicroTime,
    jiff::{SignedDuration, Timestamp},
};
use kube::{
    Api,
    api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions},
};
use serde_json::json;

use super::{Outcome, Shared, WorkItem};
use crate::{
    key::ObjectKey,
    sharding::{
        labels::{SHARDER_IDENTITY, STATE_LABEL},
        lease_state::{LeaseTimes, ShardState},
        sharder::stats::Counters,
    },
};

/// The shortest wait before a Lease is checked again, so that a check a moment before a state
/// change does not spin.
const MIN_RECHECK: Duration = Duration::from_millis(50);

impl Shared {
    /// Checks the shard Lease `name` and the ring's membership.
    pub(super) async fn check_lease(&self, name: &str) -> Outcome {
        self.refresh_membership();
        let key = ObjectKey::new(&self.lease_namespace, name);
        let item = WorkItem::Lease(name.to_owned());
        let Ok(Some(lease)) = self.leases.get_by_key(&key) else {
            self.forget_write(&item);
            return Outcome::Done;
        };
        let cached_version = lease.metadata.resource_version.clone();
        if self.awaits_own_write(&item, cached_version.as_ref()) {
            return Outcome::Done;
        }
        let times = LeaseTimes::with_orphan_after(&lease, Timestamp::now(), self.options.orphan_after);
        let state = ShardState::from_times(&lease, &times);
        let previous = lease
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(STATE_LABEL))
            .map_or(ShardState::Unknown, |label| ShardState::from_label(label));
        let mut lease = Lease::clone(&lease);
        if previous != state {
            match self.label_state(&lease, state).await {
                Ok(Some(labelled)) => {
                    self.wrote(item.clone(), cached_version.clone());
                    lease = labelled;
                }
                Ok(None) => return Outcome::Done,
                Err(outcome) => return outcome,
            }
        }
        let outcome = self.act_on_state(lease, state, previous, &times).await;
        if state == ShardState::Uncertain && matches!(outcome, Outcome::After(_)) {
            // acquired
            self.wrote(item, cached_version);
        }
        outcome
    }

    async fn act_on_state(
        &self,
        lease: Lease,
        state: ShardState,
        previous: ShardState,
        times: &LeaseTimes,
    ) -> Outcome {
        let name = lease.metadata.name.clone().unwrap_or_default();
        match state {
            ShardState::Ready => {
                if previous != ShardState::Ready {
                    tracing::info!(shard = %name, "shard is available");
                }
                recheck_in(times.to_expired)
            }
            ShardState::Expired => {
                tracing::info!(shard = %name, "shard Lease expired");
                recheck_in(times.to_uncertain)
            }
            ShardState::Uncertain => self.acquire(lease, times).await,
            ShardState::Dead => {
                if previous != ShardState::Dead {
                    tracing::info!(shard = %name, "shard is dead");
                }
                recheck_in(times.to_orphaned)
            }
            ShardState::Orphaned => self.delete_orphan(&lease).await,
            ShardState::Unknown => Outcome::Done,
        }
    }

    fn api(&self) -> Api<Lease> {
        Api::namespaced(self.client.clone(), &self.lease_namespace)
    }

    /// Writes `state` into the state label of `lease` (if its resourceVersion is still the
    /// one read); the labelled Lease, `None` when not leading any more.
    async fn label_state(&self, lease: &Lease, state: ShardState) -> Result<Option<Lease>, Outcome> {
        if !self.may_write() {
            return Ok(None);
        }
        let name = lease.metadata.name.as_deref().unwrap_or_default();
        let patch = json!({
            "metadata": {
                "resourceVersion": lease.metadata.resource_version,
                "labels": {STATE_LABEL: state.as_str()},
            }
        });
        match self
            .api()
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(labelled) => Ok(Some(labelled)),
            Err(error) => Err(self.failed(&format!("label shard Lease {name} {state}"), &error)),
        }
    }

    /// Acquires the uncertain `lease` for the sharder (twice the shard's duration, one more
    /// transition), which makes the shard dead; its objects move once the watch delivers it.
    async fn acquire(&self, mut lease: Lease, times: &LeaseTimes) -> Outcome {
        let name = lease.metadata.name.clone().unwrap_or_default();
        tracing::info!(shard = %name, "shard Lease expired one lease duration ago; acquiring it");
        if !self.may_write() {
            return Outcome::Done;
        }
        let now = MicroTime(Timestamp::now());
        let spec = lease.spec.get_or_insert_with(Default::default);
        let seconds =
            i32::try_from(times.lease_duration.as_secs_f64().round() as i64).unwrap_or(i32::MAX / 2);
        spec.holder_identity = Some(SHARDER_IDENTITY.to_owned());
        spec.lease_duration_seconds = Some(seconds.saturating_mul(2));
        spec.acquire_time = Some(now.clone());
        spec.renew_time = Some(now);
        spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        match self.api().replace(&name, &PostParams::default(), &lease).await {
            Ok(_) => {
                Counters::bump(&self.counters.lease_acquisitions);
                recheck_in(SignedDuration::try_from(times.lease_duration).unwrap_or(SignedDuration::MAX))
            }
            Err(error) => self.failed(&format!("acquire shard Lease {name}"), &error),
        }
    }

    /// Deletes the orphaned `lease` (if unchanged since read).
    async fn delete_orphan(&self, lease: &Lease) -> Outcome {
        let name = lease.metadata.name.as_deref().unwrap_or_default();
        if !self.may_write() {
            return Outcome::Done;
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                resource_version: lease.metadata.resource_version.clone(),
                uid: None,
            }),
            ..DeleteParams::default()
        };
        match self.api().delete(name, &params).await {
            Ok(_) => {
                Counters::bump(&self.counters.orphans_deleted);
                tracing::info!(shard = %name, "deleted the orphaned shard Lease");
                Outcome::Done
            }
            Err(error) => self.failed(&format!("delete orphaned shard Lease {name}"), &error),
        }
    }
}

/// Check again after `delay` (at least [`MIN_RECHECK`]).
fn recheck_in(delay: SignedDuration) -> Outcome {
    let delay = Duration::try_from(delay).unwrap_or(Duration::ZERO);
    Outcome::After(delay.max(MIN_RECHECK))
}
