//! What a replica holds while it leads: the term and the token cancelled when it ends.

use std::fmt;
use std::sync::{Arc, Mutex};

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// One term of leadership: who holds the lease, and the lease's `leaseTransitions` when the
/// term began.
///
/// Each acquisition increments `leaseTransitions` (renewals do not), so terms of one lease are
/// ordered by `transitions` and no two terms share it: use the term as a fencing token in logs,
/// in annotations written by the leader, or in tests.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Term {
    /// `spec.leaseTransitions` written when the term began.
    pub transitions: i32,
    /// The holder identity of the leader.
    pub holder: String,
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "term {} of {}", self.transitions, self.holder)
    }
}

/// This replica's leadership, from [`LeaderElector::leading`](super::LeaderElector::leading):
/// the [`Term`] and a [`CancellationToken`] cancelled the moment the leadership ends (lost,
/// released, the elector cancelled or dropped).
///
/// Hand the token to whatever must only run on the leader, and stop when it is cancelled:
///
/// ```
/// # async fn reconcile_all() {}
/// use informer_runtime::leader_election::Leadership;
///
/// async fn run_while_leading(leadership: Leadership) {
///     let token = leadership.token();
///     tokio::select! {
///         _ = token.cancelled() => tracing::info!("{} ended", leadership.term()),
///         _ = reconcile_all() => {}
///     }
/// }
/// ```
///
/// Clones share the token.
#[derive(Debug, Clone)]
pub struct Leadership {
    inner: Arc<Inner>,
    /// The resourceVersion of the Lease write that began the term, if it took the Lease
    /// over from another holder (or from none).
    taken_over_at: Option<Arc<str>>,
}

#[derive(Debug)]
struct Inner {
    term: Term,
    token: CancellationToken,
    /// The start of the last successful renewal plus the renew deadline: past it, the leader
    /// must assume another replica may take over.
    valid_until: Mutex<Instant>,
}

impl Leadership {
    pub(crate) fn new(term: Term, valid_until: Instant) -> Self {
        Self {
            inner: Arc::new(Inner {
                term,
                token: CancellationToken::new(),
                valid_until: Mutex::new(valid_until),
            }),
            taken_over_at: None,
        }
    }

    /// The leadership, begun by a Lease write at resourceVersion `version` that took the
    /// Lease over from another holder or from none.
    pub(crate) fn taken_over_at(mut self, version: Option<String>) -> Self {
        self.taken_over_at = version.map(Arc::from);
        self
    }

    /// The resourceVersion of the Lease write that began the term, when that write took the
    /// Lease over from another holder (or from none, or created it): every change the API
    /// server made before the term began has a lower one. `None` when the Lease named this
    /// replica already (a term lost and won back with nobody holding the Lease in between).
    pub(crate) fn taken_over_version(&self) -> Option<&str> {
        self.taken_over_at.as_deref()
    }

    /// The term this leadership is.
    pub fn term(&self) -> &Term {
        &self.inner.term
    }

    /// The token cancelled when this leadership ends. Cancelling it does not give up the
    /// lease: cancel the elector's run for that.
    pub fn token(&self) -> CancellationToken {
        self.inner.token.clone()
    }

    /// Waits until the leadership ended.
    pub async fn lost(&self) {
        self.inner.token.cancelled().await;
    }

    /// Whether this leadership still holds: its token is not cancelled and the renew deadline
    /// since the last successful renewal has not passed. The second check does not depend on
    /// the elector's task being scheduled in time, so a leader that checks before each action
    /// does not act past its deadline even when its process is starved.
    pub fn is_current(&self) -> bool {
        !self.inner.token.is_cancelled() && Instant::now() < self.valid_until()
    }

    /// Until when, at the latest, the leadership holds without another renewal.
    pub fn valid_until(&self) -> Instant {
        *self.inner.valid_until.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn extend(&self, valid_until: Instant) {
        *self.inner.valid_until.lock().unwrap_or_else(|e| e.into_inner()) = valid_until;
    }

    pub(crate) fn end(&self) {
        self.inner.token.cancel();
    }
}
