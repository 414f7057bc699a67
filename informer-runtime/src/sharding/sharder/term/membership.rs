//! The ring's membership: the state of each shard and the hash ring of the available ones,
//! recomputed from the cached Leases.

use std::{collections::HashMap, sync::Arc};

use k8s_openapi::jiff::Timestamp;

use super::Shared;
use crate::sharding::{
    hash_ring::HashRing,
    lease_state::{LeaseTimes, ShardState},
};

/// The shards of the ring at one moment.
#[derive(Debug)]
pub(super) struct Membership {
    /// The state of each shard that has a Lease.
    states: HashMap<String, ShardState>,
    /// The available shards, sorted (the ring's members).
    available: Vec<String>,
    ring: Arc<HashRing>,
}

impl Membership {
    pub(super) fn empty() -> Self {
        Self {
            states: HashMap::new(),
            available: Vec::new(),
            ring: Arc::new(HashRing::new(Vec::<String>::new())),
        }
    }

    /// The state of `shard` ([`ShardState::Unknown`] without a Lease).
    pub(super) fn state(&self, shard: &str) -> ShardState {
        self.states.get(shard).copied().unwrap_or(ShardState::Unknown)
    }

    /// The shard `key` belongs to; `None` when no shard is available.
    pub(super) fn lookup(&self, key: &str) -> Option<&str> {
        self.ring.lookup(key)
    }
}

impl Shared {
    /// The membership as last computed.
    pub(super) fn membership(&self) -> Arc<Membership> {
        Arc::clone(&self.membership.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Recomputes the membership from the cached Leases; when the available shards changed,
    /// queues every object to be checked against the new ring.
    pub(super) fn refresh_membership(&self) {
        let now = Timestamp::now();
        let mut states = HashMap::new();
        for lease in self.leases.list_in_scope(&Default::default()) {
            let Some(name) = lease.metadata.name.clone() else {
                continue;
            };
            let times = LeaseTimes::with_orphan_after(&lease, now, self.options.orphan_after);
            states.insert(name, ShardState::from_times(&lease, &times));
        }
        let mut available: Vec<String> = states
            .iter()
            .filter(|(_, state)| state.is_available())
            .map(|(name, _)| name.clone())
            .collect();
        available.sort_unstable();
        let mut membership = self.membership.write().unwrap_or_else(|e| e.into_inner());
        let changed = available != membership.available;
        let ring = if changed {
            Arc::new(HashRing::with_virtual_nodes(
                self.options.virtual_nodes,
                available.iter().cloned(),
            ))
        } else {
            Arc::clone(&membership.ring)
        };
        *membership = Arc::new(Membership {
            states,
            available,
            ring,
        });
        drop(membership);
        if changed {
            let members = self.membership();
            self.counters.ring_members.store(
                members.available.len() as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
            tracing::info!(shards = ?members.available, "the ring's available shards changed; checking every object");
            self.enqueue_objects();
        }
    }
}
