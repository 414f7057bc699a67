//! [`SharderStats`]: what a sharder has done so far.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of a [`Sharder`](super::Sharder)'s counters, summed over its terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SharderStats {
    /// Objects labelled for a shard (first assignments, and the reassignment after a drain).
    pub assigned: u64,
    /// Drain labels added: objects asked to leave a live shard.
    pub drains: u64,
    /// Objects moved straight to a new shard (their shard was dead or gone, or they are
    /// controlled objects).
    pub moves: u64,
    /// Objects whose shard and drain labels were taken off because they left the ring (their
    /// namespace or their labels no longer selected).
    pub unassigned: u64,
    /// Uncertain shard Leases the sharder acquired, declaring their shards dead.
    pub lease_acquisitions: u64,
    /// Leases of dead shards given back (written as released) once every object of the shard
    /// moved, so that the shard can come back under the same name at once.
    pub lease_hand_backs: u64,
    /// Orphaned shard Leases deleted.
    pub orphans_deleted: u64,
    /// Writes answered 409 Conflict (re-checked from the cache).
    pub conflicts: u64,
    /// Other failures: failed writes, objects whose hash key cannot be computed.
    pub errors: u64,
    /// Writes not sent because the sharder no longer led (or was stopping).
    pub writes_skipped: u64,
    /// The shards on the ring now (available shards).
    pub ring_members: u64,
}

/// The live counters behind [`SharderStats`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) assigned: AtomicU64,
    pub(crate) drains: AtomicU64,
    pub(crate) moves: AtomicU64,
    pub(crate) unassigned: AtomicU64,
    pub(crate) lease_acquisitions: AtomicU64,
    pub(crate) lease_hand_backs: AtomicU64,
    pub(crate) orphans_deleted: AtomicU64,
    pub(crate) conflicts: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) writes_skipped: AtomicU64,
    pub(crate) ring_members: AtomicU64,
}

impl Counters {
    /// Adds one to `counter`.
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> SharderStats {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        SharderStats {
            assigned: read(&self.assigned),
            drains: read(&self.drains),
            moves: read(&self.moves),
            unassigned: read(&self.unassigned),
            lease_acquisitions: read(&self.lease_acquisitions),
            lease_hand_backs: read(&self.lease_hand_backs),
            orphans_deleted: read(&self.orphans_deleted),
            conflicts: read(&self.conflicts),
            errors: read(&self.errors),
            writes_skipped: read(&self.writes_skipped),
            ring_members: read(&self.ring_members),
        }
    }
}
