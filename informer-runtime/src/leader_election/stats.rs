//! Counters of an elector's activity.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of a [`LeaderElector`](super::LeaderElector)'s activity, from
/// [`LeaderElector::stats`](super::LeaderElector::stats).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderElectionStats {
    /// Terms this replica began (acquisitions of the lease).
    pub acquisitions: u64,
    /// Successful renewals.
    pub renewals: u64,
    /// Renewal attempts that failed (error answer, conflict, timeout); the leader retries
    /// until its renew deadline.
    pub failed_renewals: u64,
    /// Acquisition attempts that failed with an error or a timeout (not counting the rounds
    /// lost to a valid lease of another replica or to a conflict).
    pub failed_acquisitions: u64,
    /// Terms that ended without a cancel: the renew deadline passed or another replica took
    /// the lease.
    pub leadership_lost: u64,
    /// Times the lease was given up on cancel.
    pub releases: u64,
    /// Changes of the lease's holder this replica observed (including its own acquisitions).
    pub transitions_observed: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) acquisitions: AtomicU64,
    pub(crate) renewals: AtomicU64,
    pub(crate) failed_renewals: AtomicU64,
    pub(crate) failed_acquisitions: AtomicU64,
    pub(crate) leadership_lost: AtomicU64,
    pub(crate) releases: AtomicU64,
    pub(crate) transitions_observed: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> LeaderElectionStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        LeaderElectionStats {
            acquisitions: get(&self.acquisitions),
            renewals: get(&self.renewals),
            failed_renewals: get(&self.failed_renewals),
            failed_acquisitions: get(&self.failed_acquisitions),
            leadership_lost: get(&self.leadership_lost),
            releases: get(&self.releases),
            transitions_observed: get(&self.transitions_observed),
        }
    }
}
