//! Counters of an elector's activity.

crate::stats::counters! {
    /// A snapshot of a [`LeaderElector`](super::LeaderElector)'s activity, from
    /// [`LeaderElector::stats`](super::LeaderElector::stats).
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct LeaderElectionStats;
    /// The live counters behind [`LeaderElectionStats`].
    pub(crate) struct Counters {
        /// Terms this replica began (acquisitions of the lease).
        acquisitions,
        /// Successful renewals.
        renewals,
        /// Renewal attempts that failed (error answer, conflict, timeout); the leader retries
        /// until its renew deadline.
        failed_renewals,
        /// Acquisition attempts that failed with an error or a timeout (not counting the rounds
        /// lost to a valid lease of another replica or to a conflict).
        failed_acquisitions,
        /// Terms that ended without a cancel: the renew deadline passed or another replica took
        /// the lease.
        leadership_lost,
        /// Times the lease was given up on cancel.
        releases,
        /// Changes of the lease's holder this replica observed (including its own acquisitions).
        transitions_observed,
    }
}
