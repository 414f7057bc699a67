//! [`ControllerStats`]: a live view of what a controller did.

use std::{
    fmt,
    sync::{
        Arc, Mutex, OnceLock, PoisonError,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use super::queue::ControllerQueue;

/// How one reconcile ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReconcileOutcome {
    /// The reconcile function returned `Ok`.
    Success,
    /// The reconcile function returned `Err`.
    Error,
    /// The reconcile function (or the error policy) panicked.
    Panic,
}

impl ReconcileOutcome {
    /// The label of this outcome in metrics (`success`, `error`, `panic`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::Panic => "panic",
        }
    }
}

/// Receives a controller's reconciles, for metrics (Prometheus ones with the `metrics`
/// feature: `metrics::ControllerMetrics`).
pub trait ReconcileMetrics: Send + Sync {
    /// A reconcile ended with `outcome` after `duration`.
    fn reconciled(&self, outcome: ReconcileOutcome, duration: Duration);
    /// A worker started (`true`) or finished (`false`) a reconcile.
    fn worker_active(&self, active: bool) {
        let _ = active;
    }
    /// The controller runs with at most `concurrency` reconciles at once.
    fn concurrency(&self, concurrency: usize) {
        let _ = concurrency;
    }
    /// A reconcile held back until the caches saw its object's previous writes went ahead
    /// after `waited`: the caches caught up, or the wait timed out.
    fn own_write_wait(&self, outcome: OwnWriteWait, waited: Duration) {
        let _ = (outcome, waited);
    }
    /// A write could not be waited for (its resource version, or a cache's, is not an
    /// integer).
    fn own_write_skipped(&self) {}
}

/// How a wait for the caches to see a reconcile's own writes ended (see
/// [read your own writes](super#read-your-own-writes)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OwnWriteWait {
    /// The caches have seen the writes.
    CaughtUp,
    /// The timeout passed; the reconcile went ahead on the caches as they were.
    TimedOut,
}

impl OwnWriteWait {
    /// The label of this outcome in metrics (`caught_up`, `timed_out`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::CaughtUp => "caught_up",
            Self::TimedOut => "timed_out",
        }
    }
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) reconciles: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) panics: AtomicU64,
    pub(crate) skipped_missing: AtomicU64,
    pub(crate) filtered: AtomicU64,
    pub(crate) predicate_panics: AtomicU64,
    pub(crate) out_of_scope: AtomicU64,
    pub(crate) in_flight: AtomicUsize,
    pub(crate) reconcile_nanos: AtomicU64,
    pub(crate) own_write_waits: AtomicU64,
    pub(crate) own_write_timeouts: AtomicU64,
    pub(crate) own_writes_skipped: AtomicU64,
    pub(crate) own_write_wait_nanos: AtomicU64,
    pub(crate) drains_acknowledged: AtomicU64,
    pub(crate) not_assigned: AtomicU64,
    /// The queue of the current (or last) run.
    pub(crate) queue: Mutex<Option<ControllerQueue>>,
    pub(crate) metrics: OnceLock<Arc<dyn ReconcileMetrics>>,
}

impl Counters {
    /// Records the end of a wait for the caches to see a reconcile's writes.
    pub(crate) fn own_write_waited(&self, outcome: OwnWriteWait, waited: Duration) {
        let nanos = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        self.own_write_wait_nanos.fetch_add(nanos, Ordering::Relaxed);
        if outcome == OwnWriteWait::TimedOut {
            self.own_write_timeouts.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(metrics) = self.metrics.get() {
            metrics.own_write_wait(outcome, waited);
        }
    }

    /// Records a write that could not be waited for.
    pub(crate) fn own_write_skipped(&self) {
        self.own_writes_skipped.fetch_add(1, Ordering::Relaxed);
        if let Some(metrics) = self.metrics.get() {
            metrics.own_write_skipped();
        }
    }

    /// Makes `queue` the one whose depth the stats report.
    pub(crate) fn set_queue(&self, queue: ControllerQueue) {
        *self.queue.lock().unwrap_or_else(PoisonError::into_inner) = Some(queue);
    }

    /// Records one reconcile.
    pub(crate) fn reconciled(&self, outcome: ReconcileOutcome, duration: Duration) {
        self.reconciles.fetch_add(1, Ordering::Relaxed);
        match outcome {
            ReconcileOutcome::Success => {}
            ReconcileOutcome::Error => drop(self.errors.fetch_add(1, Ordering::Relaxed)),
            ReconcileOutcome::Panic => drop(self.panics.fetch_add(1, Ordering::Relaxed)),
        }
        let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        self.reconcile_nanos.fetch_add(nanos, Ordering::Relaxed);
        if let Some(metrics) = self.metrics.get() {
            metrics.reconciled(outcome, duration);
        }
    }

    /// Marks a reconcile as started or finished.
    pub(crate) fn active(&self, active: bool) {
        if active {
            self.in_flight.fetch_add(1, Ordering::SeqCst);
        } else {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
        if let Some(metrics) = self.metrics.get() {
            metrics.worker_active(active);
        }
    }
}

/// A live view of a controller's activity ([`Controller::stats`](super::Controller::stats)):
/// cheap to clone, readable while it runs and after.
#[derive(Clone, Default)]
pub struct ControllerStats {
    pub(crate) counters: Arc<Counters>,
}

impl fmt::Debug for ControllerStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ControllerStats")
            .field("reconciles", &self.reconciles())
            .field("errors", &self.errors())
            .field("panics", &self.panics())
            .field("skipped_missing", &self.skipped_missing())
            .field("filtered", &self.filtered())
            .field("predicate_panics", &self.predicate_panics())
            .field("out_of_scope", &self.out_of_scope())
            .field("in_flight", &self.in_flight())
            .field("queue_depth", &self.queue_depth())
            .field("own_write_waits", &self.own_write_waits())
            .field("own_write_timeouts", &self.own_write_timeouts())
            .field("own_writes_skipped", &self.own_writes_skipped())
            .field("drains_acknowledged", &self.drains_acknowledged())
            .field("not_assigned", &self.not_assigned())
            .finish()
    }
}

impl ControllerStats {
    /// Reconciles finished so far, whatever their outcome.
    pub fn reconciles(&self) -> u64 {
        self.counters.reconciles.load(Ordering::Relaxed)
    }

    /// Reconciles that returned an error.
    pub fn errors(&self) -> u64 {
        self.counters.errors.load(Ordering::Relaxed)
    }

    /// Reconciles (or error policies) that panicked.
    pub fn panics(&self) -> u64 {
        self.counters.panics.load(Ordering::Relaxed)
    }

    /// Keys taken from the queue whose object was no longer in the cache (deleted), and so
    /// not reconciled.
    pub fn skipped_missing(&self) -> u64 {
        self.counters.skipped_missing.load(Ordering::Relaxed)
    }

    /// Notifications the predicates rejected (of the controller's own objects and of the
    /// objects it owns or watches), so nothing was enqueued for them.
    pub fn filtered(&self) -> u64 {
        self.counters.filtered.load(Ordering::Relaxed)
    }

    /// Predicate evaluations that panicked (the notification passed each time).
    pub fn predicate_panics(&self) -> u64 {
        self.counters.predicate_panics.load(Ordering::Relaxed)
    }

    /// Notifications of objects out of the controller's scope that still carried its
    /// [`finalizer`](super::Controller::finalizer), and so were reconciled for the cleanup.
    pub fn out_of_scope(&self) -> u64 {
        self.counters.out_of_scope.load(Ordering::Relaxed)
    }

    /// Reconciles running now.
    pub fn in_flight(&self) -> usize {
        self.counters.in_flight.load(Ordering::SeqCst)
    }

    /// Keys waiting in the controller's queue (not counting delayed ones); 0 before `run`.
    pub fn queue_depth(&self) -> usize {
        let queue = self.counters.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.as_ref().map_or(0, |queue| queue.len())
    }

    /// The time spent in reconciles so far, all workers together.
    pub fn reconcile_time(&self) -> Duration {
        Duration::from_nanos(self.counters.reconcile_nanos.load(Ordering::Relaxed))
    }

    /// Reconciles held back because a cache the controller reads had not yet seen what the
    /// previous reconcile of the same object wrote (see
    /// [read your own writes](super#read-your-own-writes)).
    pub fn own_write_waits(&self) -> u64 {
        self.counters.own_write_waits.load(Ordering::Relaxed)
    }

    /// Held-back reconciles that went ahead because the caches had not caught up within the
    /// [timeout](super::Controller::wait_for_own_writes).
    pub fn own_write_timeouts(&self) -> u64 {
        self.counters.own_write_timeouts.load(Ordering::Relaxed)
    }

    /// Writes not waited for because their resource version, or the cache's, is not an
    /// integer (resource versions are compared as etcd's revisions are).
    pub fn own_writes_skipped(&self) -> u64 {
        self.counters.own_writes_skipped.load(Ordering::Relaxed)
    }

    /// The time reconciles were held back for the controller's own writes, all together.
    pub fn own_write_wait_time(&self) -> Duration {
        Duration::from_nanos(self.counters.own_write_wait_nanos.load(Ordering::Relaxed))
    }

    /// Objects a sharded controller handed over: the sharder drained them, and the
    /// controller removed the shard and drain labels instead of reconciling (see
    /// [`sharding`](crate::sharding)).
    pub fn drains_acknowledged(&self) -> u64 {
        self.counters.drains_acknowledged.load(Ordering::Relaxed)
    }

    /// Keys of a sharded controller whose object was assigned to another shard (or to none)
    /// when its turn came, and so not reconciled.
    pub fn not_assigned(&self) -> u64 {
        self.counters.not_assigned.load(Ordering::Relaxed)
    }
}
