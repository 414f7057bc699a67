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
    api::{DeleteParams, Patch, PatchParams, Preconditions},
};
use serde_json::json;

use super::{Outcome, Shared, WorkItem};
use crate::sharding::{
    labels::{SHARDER_IDENTITY, STATE_LABEL},
    lease_state::{LeaseTimes, ShardState, holder},
};

/// How much of its hold on a dead shard's Lease the sharder leaves unused: it moves objects
/// off the shard only until `1 - 1/HOLD_MARGIN_DIVISOR` of the hold passed, so that a clock
/// skew below the rest cannot let the shard take its Lease back while objects still move.
const HOLD_MARGIN_DIVISOR: u32 = 4;

/// The shortest wait before a Lease is checked again, so that a check a moment before a state
/// change does not spin.
const MIN_RECHECK: Duration = Duration::from_millis(50);

impl Shared {
    /// Checks the shard Lease `name` and the ring's membership.
    pub(super) async fn check_lease(&self, name: &str) -> Outcome {
        self.refresh_membership();
        let item = WorkItem::Lease(name.to_owned());
        let Some(lease) = self.lease_of(name) else {
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
        self.release_waiting_objects(&lease);
        if holds(&lease, Timestamp::now()) && !self.has_objects_on(name) {
            let outcome = self.hand_back(&lease).await;
            if outcome == Outcome::Done {
                self.wrote(item, cached_version);
            }
            return outcome;
        }
        let acquiring = self.should_acquire(&lease, state);
        let outcome = if acquiring {
            self.acquire(lease, &times).await
        } else {
            self.act_on_state(lease, state, previous, &times).await
        };
        if acquiring && matches!(outcome, Outcome::After(_)) {
            self.wrote(item, cached_version);
        }
        outcome
    }

    /// Whether the sharder takes `lease` now: an uncertain shard's (Go's rule), a released one
    /// whose shard still has objects (the shard could come back under the same name while
    /// they move), or one whose objects wait for a hold the sharder does not have (any more).
    fn should_acquire(&self, lease: &Lease, state: ShardState) -> bool {
        match state {
            ShardState::Uncertain => true,
            ShardState::Dead | ShardState::Orphaned => {
                let name = lease.metadata.name.as_deref().unwrap_or_default();
                let released = holder(lease).is_empty();
                let requested = self
                    .hold_requests
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(name);
                (released && self.has_objects_on(name)) || (requested && !holds(lease, Timestamp::now()))
            }
            _ => false,
        }
    }

    /// The cached shard Lease named `shard` (a shard is known by its Lease's name, in whatever
    /// namespace).
    pub(super) fn lease_of(&self, shard: &str) -> Option<std::sync::Arc<Lease>> {
        self.leases
            .list_in_scope(&Default::default())
            .into_iter()
            .find(|lease| lease.metadata.name.as_deref() == Some(shard))
    }

    /// Whether an object in the sharder's caches is still labelled for `shard`.
    pub(super) fn has_objects_on(&self, shard: &str) -> bool {
        self.watched.iter().any(|watched| {
            watched.cache.any(&|metadata| {
                metadata
                    .labels
                    .as_ref()
                    .and_then(|labels| labels.get(&self.shard_label))
                    .is_some_and(|assigned| assigned == shard)
            })
        })
    }

    /// Gives back the Lease of a dead shard whose objects all moved, written as a released
    /// Lease: the shard, back under the same name, takes it at once (its old term ended
    /// before the sharder took the Lease) instead of waiting for the hold to run out.
    async fn hand_back(&self, lease: &Lease) -> Outcome {
        let name = lease.metadata.name.clone().unwrap_or_default();
        if !self.may_write() {
            return Outcome::Done;
        }
        let now = MicroTime(Timestamp::now());
        let transitions = lease.spec.as_ref().and_then(|spec| spec.lease_transitions);
        let patch = json!({
            "metadata": {"resourceVersion": lease.metadata.resource_version},
            "spec": {
                "holderIdentity": "",
                "leaseDurationSeconds": 1,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": transitions,
            },
        });
        match self
            .api(lease)
            .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => {
                self.counters.lease_hand_backs.bump();
                tracing::info!(shard = %name, "every object of the dead shard moved; its Lease is given back");
                Outcome::Done
            }
            Err(error) => self.failed(&format!("give back shard Lease {name}"), &error),
        }
    }

    /// Once the sharder holds the Lease of a dead shard whose objects wait for it, checks
    /// every object again: they move now.
    fn release_waiting_objects(&self, lease: &Lease) {
        let name = lease.metadata.name.as_deref().unwrap_or_default();
        if !holds(lease, Timestamp::now()) {
            return;
        }
        let waited = self
            .hold_requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        if waited {
            tracing::debug!(shard = %name, "holding the dead shard's Lease; its objects move");
            self.check_every_object();
        }
    }

    /// Whether objects may move off `shard` at once: it has no Lease, or the sharder holds
    /// its Lease (and will for a while). Otherwise the sharder is asked to take the Lease, and
    /// the objects wait.
    pub(super) fn may_move_off(&self, shard: &str) -> bool {
        let may = self
            .lease_of(shard)
            .is_none_or(|lease| holds(&lease, Timestamp::now()));
        if !may {
            let mut requests = self.hold_requests.lock().unwrap_or_else(|e| e.into_inner());
            if requests.insert(shard.to_owned()) {
                self.check_lease_of(shard, Duration::ZERO);
            }
        }
        may
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
            // taken by `should_acquire`
            ShardState::Uncertain => recheck_in(times.to_expired),
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

    /// The Leases of `lease`'s namespace.
    fn api(&self, lease: &Lease) -> Api<Lease> {
        Api::namespaced(
            self.client.clone(),
            lease.metadata.namespace.as_deref().unwrap_or_default(),
        )
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
            .api(lease)
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(labelled) => Ok(Some(labelled)),
            Err(error) => Err(self.failed(&format!("label shard Lease {name} {state}"), &error)),
        }
    }

    /// Acquires `lease` for the sharder (twice the shard's duration, one more transition),
    /// which makes the shard dead; its objects move while the sharder holds it. A hold that is
    /// renewed keeps its duration.
    async fn acquire(&self, lease: Lease, times: &LeaseTimes) -> Outcome {
        let name = lease.metadata.name.clone().unwrap_or_default();
        tracing::info!(shard = %name, holder = holder(&lease), "taking the shard Lease, so that its objects can move");
        if !self.may_write() {
            return Outcome::Done;
        }
        let renewing = holder(&lease) == SHARDER_IDENTITY;
        let now = MicroTime(Timestamp::now());
        let spec = lease.spec.clone().unwrap_or_default();
        let seconds =
            i32::try_from(times.lease_duration.as_secs_f64().round() as i64).unwrap_or(i32::MAX / 2);
        // a spec-only merge patch, conditional on the version read: the Lease's metadata (the
        // sharder caches it without annotations) is left as it is
        let spec = if renewing {
            json!({"renewTime": now})
        } else {
            json!({
                "holderIdentity": SHARDER_IDENTITY,
                "leaseDurationSeconds": seconds.saturating_mul(2),
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": spec.lease_transitions.unwrap_or(0).saturating_add(1),
            })
        };
        let patch = json!({"metadata": {"resourceVersion": lease.metadata.resource_version}, "spec": spec});
        match self
            .api(&lease)
            .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => {
                self.counters.lease_acquisitions.bump();
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
        match self.api(lease).delete(name, &params).await {
            Ok(_) => {
                self.counters.orphans_deleted.bump();
                tracing::info!(shard = %name, "deleted the orphaned shard Lease");
                Outcome::Done
            }
            Err(error) => self.failed(&format!("delete orphaned shard Lease {name}"), &error),
        }
    }
}

/// Whether the sharder holds `lease` at `now`, with the margin of [`HOLD_MARGIN_DIVISOR`] left.
fn holds(lease: &Lease, now: Timestamp) -> bool {
    if holder(lease) != SHARDER_IDENTITY {
        return false;
    }
    let times = LeaseTimes::of(lease, now);
    let margin = crate::sharding::lease_state::signed(times.lease_duration / HOLD_MARGIN_DIVISOR);
    times.to_expired > margin
}

/// Check again after `delay` (at least [`MIN_RECHECK`]).
fn recheck_in(delay: SignedDuration) -> Outcome {
    let delay = Duration::try_from(delay).unwrap_or(Duration::ZERO);
    Outcome::After(delay.max(MIN_RECHECK))
}
