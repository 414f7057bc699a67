//! [`SharderStats`]: what a sharder has done so far.

crate::stats::counters! {
    /// A snapshot of a [`Sharder`](super::Sharder)'s counters, summed over its terms.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    #[non_exhaustive]
    pub struct SharderStats;
    /// The live counters behind [`SharderStats`].
    pub(crate) struct Counters {
        /// Objects labelled for a shard (first assignments, and the reassignment after a drain).
        assigned,
        /// Drain labels added: objects asked to leave a live shard.
        drains,
        /// Objects moved straight to a new shard (their shard was dead or gone, or they are
        /// controlled objects).
        moves,
        /// Objects whose shard and drain labels were taken off because they left the ring (their
        /// namespace or their labels no longer selected).
        unassigned,
        /// Uncertain shard Leases the sharder acquired, declaring their shards dead.
        lease_acquisitions,
        /// Leases of dead shards given back (written as released) once every object of the shard
        /// moved, so that the shard can come back under the same name at once.
        lease_hand_backs,
        /// Orphaned shard Leases deleted.
        orphans_deleted,
        /// Writes answered 409 Conflict (re-checked from the cache).
        conflicts,
        /// Other failures: failed writes, objects whose hash key cannot be computed.
        errors,
        /// Writes not sent because the sharder no longer led (or was stopping).
        writes_skipped,
        /// The shards on the ring now (available shards).
        ring_members,
    }
}
