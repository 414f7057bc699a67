//! The objects: assign unassigned ones, drain ring objects off live shards, move the others
//! (the Go sharder's webhook and resync in one check).

use serde_json::json;

use super::{Outcome, Shared, Watched, WorkItem};
use crate::{key::ObjectKey, sharding::metadata_access::CachedMetadata};

/// How soon an object waiting for the sharder's hold on its dead shard's Lease is checked again
/// at the latest (every object is checked as soon as the sharder's cache shows the hold).
const HOLD_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// How soon after moving an object off a dead shard the shard's Lease is checked (for all of
/// its objects moved, and its Lease given back): one check for a burst of moves.
const HAND_BACK_CHECK: std::time::Duration = std::time::Duration::from_millis(200);

/// What an object needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// Label it for its shard: it has none.
    Assign,
    /// Ask its live shard to let it go.
    Drain,
    /// Label it for its new shard at once: its shard is dead or gone, or it is controlled.
    Move,
    /// Take its labels off: it left the ring, and its shard let it go or is not available.
    Unassign,
}

impl Change {
    fn verb(self) -> &'static str {
        match self {
            Self::Assign => "assign",
            Self::Drain => "drain",
            Self::Move => "move",
            Self::Unassign => "unassign",
        }
    }
}

impl Shared {
    /// Checks the object `key` of the watched resource at index `resource`.
    pub(super) async fn check_object(&self, resource: usize, key: &ObjectKey) -> Outcome {
        let Some(watched) = self.watched.get(resource) else {
            return Outcome::Done;
        };
        let item = WorkItem::Object {
            resource,
            key: key.clone(),
        };
        let Some(object) = watched.cache.get(key) else {
            self.forget_write(&item);
            return Outcome::Done;
        };
        if self.awaits_own_write(&item, object.metadata().resource_version.as_ref()) {
            return Outcome::Done;
        }
        if !self.in_ring(watched, object.as_ref()) {
            return self.leave_ring(watched, &item, object.as_ref()).await;
        }
        let Some(hash_key) = self.hash_key(watched, object.as_ref()) else {
            return Outcome::Done;
        };
        let membership = self.membership();
        let Some(desired) = membership.lookup(&hash_key) else {
            return Outcome::Done;
        };
        let (current, drained) = self.placement(object.as_ref());
        let change = match current {
            Some(current) if current == desired => return Outcome::Done,
            None => Change::Assign,
            Some(current) if !watched.controlled && membership.state(current).is_available() => {
                if drained {
                    // waiting for the shard to let it go
                    return Outcome::Done;
                }
                Change::Drain
            }
            Some(current) if !watched.controlled && !self.may_move_off(current) => {
                // the shard could come back while its objects move: wait for the sharder's hold
                return Outcome::After(HOLD_WAIT);
            }
            Some(_) => Change::Move,
        };
        tracing::debug!(resource = %watched.resource, object = %key, from = ?current, to = desired, "{}", change.verb());
        let from = current.cloned();
        let outcome = self.write(watched, &item, object.as_ref(), change, desired).await;
        if change == Change::Move
            && let Some(from) = from
        {
            // once the dead shard's last object moved, its Lease is given back
            self.check_lease_of(&from, HAND_BACK_CHECK);
        }
        outcome
    }

    /// Whether the object is in the ring: in a namespace the ring selects, and selected by
    /// its resource's object selector.
    fn in_ring(&self, watched: &Watched, object: &dyn CachedMetadata) -> bool {
        let metadata = object.metadata();
        let namespace_labels = metadata
            .namespace
            .as_deref()
            .and_then(|namespace| self.namespace_labels(namespace));
        self.ring
            .holds_object(&watched.resource, metadata, namespace_labels.as_ref())
    }

    /// The shard the object is labelled for (`None` without a label, or an empty one), and
    /// whether it carries the drain label.
    fn placement<'a>(&self, object: &'a dyn CachedMetadata) -> (Option<&'a String>, bool) {
        let labels = object.metadata().labels.as_ref();
        let current = labels
            .and_then(|labels| labels.get(&self.shard_label))
            .filter(|shard| !shard.is_empty());
        let drained = labels.is_some_and(|labels| labels.contains_key(&self.drain_label));
        (current, drained)
    }

    /// An object outside the ring: one that carries a shard label is drained first when it is
    /// a ring resource's object on an available shard (its shard stops reconciling it and
    /// takes the labels off), and unassigned at once otherwise (no shard reconciles an object
    /// outside the ring, so none can take it over while its old shard still acts).
    async fn leave_ring(&self, watched: &Watched, item: &WorkItem, object: &dyn CachedMetadata) -> Outcome {
        let (Some(current), drained) = self.placement(object) else {
            return Outcome::Done;
        };
        let live = !watched.controlled && self.membership().state(current).is_available();
        let change = match (live, drained) {
            (true, true) => return Outcome::Done,
            (true, false) => Change::Drain,
            (false, _) => Change::Unassign,
        };
        tracing::debug!(resource = %watched.resource, object = ?item, from = current, "{} (outside the ring)", change.verb());
        self.write(watched, item, object, change, "").await
    }

    /// The object's hash key; `None` when it is not assigned (a controlled object without a
    /// controller) or its key cannot be computed (logged and counted).
    fn hash_key(&self, watched: &Watched, object: &dyn CachedMetadata) -> Option<String> {
        self.ring
            .hash_key(&watched.resource, object.metadata())
            .unwrap_or_else(|error| {
                self.counters.errors.bump();
                tracing::warn!(%error, "object left unassigned");
                None
            })
    }

    async fn write(
        &self,
        watched: &Watched,
        item: &WorkItem,
        object: &dyn CachedMetadata,
        change: Change,
        desired: &str,
    ) -> Outcome {
        let WorkItem::Object { key, .. } = item else {
            return Outcome::Done;
        };
        if !self.may_write() {
            return Outcome::Done;
        }
        let resource_version = &object.metadata().resource_version;
        let labels = match change {
            Change::Drain => json!({&self.drain_label: "true"}),
            Change::Assign | Change::Move => json!({&self.shard_label: desired, &self.drain_label: null}),
            Change::Unassign => json!({&self.shard_label: null, &self.drain_label: null}),
        };
        let patch = json!({"metadata": {"resourceVersion": resource_version, "labels": labels}});
        let result = watched
            .resource
            .access
            .merge_patch(self.client.clone(), key, patch)
            .await;
        if let Err(error) = result {
            let what = format!("{} {} {key}", change.verb(), watched.resource);
            return self.failed(&what, &error);
        }
        let counter = match change {
            Change::Assign => &self.counters.assigned,
            Change::Drain => &self.counters.drains,
            Change::Move => &self.counters.moves,
            Change::Unassign => &self.counters.unassigned,
        };
        counter.bump();
        self.wrote(item.clone(), resource_version.clone());
        Outcome::Done
    }
}
