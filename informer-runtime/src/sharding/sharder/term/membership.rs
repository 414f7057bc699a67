//! [`Membership`]: the ring's shards at one moment, the state of each and the hash ring of the
//! available ones, computed from the cached Leases.

use std::{collections::HashMap, sync::Arc, time::Duration};

use k8s_openapi::{api::coordination::v1::Lease, jiff::Timestamp};

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
    /// No shards.
    pub(super) fn empty() -> Self {
        Self {
            states: HashMap::new(),
            available: Vec::new(),
            ring: Arc::new(HashRing::new(Vec::<String>::new())),
        }
    }

    /// The membership `leases` give at `now`; the ring of `previous` is kept (not rebuilt)
    /// when the available shards are the same.
    pub(super) fn from_leases(
        leases: &[Arc<Lease>],
        now: Timestamp,
        orphan_after: Duration,
        virtual_nodes: usize,
        previous: &Self,
    ) -> Self {
        let states: HashMap<String, ShardState> = leases
            .iter()
            .filter_map(|lease| {
                let name = lease.metadata.name.clone()?;
                let times = LeaseTimes::with_orphan_after(lease, now, orphan_after);
                Some((name, ShardState::from_times(lease, &times)))
            })
            .collect();
        let mut available: Vec<String> = states
            .iter()
            .filter(|(_, state)| state.is_available())
            .map(|(name, _)| name.clone())
            .collect();
        available.sort_unstable();
        let ring = if available == previous.available {
            Arc::clone(&previous.ring)
        } else {
            Arc::new(HashRing::with_virtual_nodes(
                virtual_nodes,
                available.iter().cloned(),
            ))
        };
        Self {
            states,
            available,
            ring,
        }
    }

    /// The available shards, sorted.
    pub(super) fn available(&self) -> &[String] {
        &self.available
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
