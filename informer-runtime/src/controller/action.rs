//! [`Action`]: what the controller does with a key after its reconcile.

use std::time::Duration;

/// What to do with an object after its reconcile: the return value of a reconcile function
/// and of an error policy (kube-rs's vocabulary: [`requeue`](Self::requeue) and
/// [`await_change`](Self::await_change)), plus [`requeue_with_backoff`](Self::requeue_with_backoff)
/// for client-go's and controller-runtime's rate-limited retry.
///
/// ```
/// use std::time::Duration;
/// use informer_runtime::controller::Action;
///
/// // reconcile again in five minutes even if nothing changes (a periodic check)
/// let action = Action::requeue(Duration::from_secs(300));
/// assert_eq!(action.requeue_after(), Some(Duration::from_secs(300)));
/// // reconcile again only when the object (or something it owns or watches) changes
/// assert_eq!(Action::await_change().requeue_after(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Action {
    next: Next,
}

/// When the key is reconciled again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Next {
    /// After a fixed delay; the key's failure history is forgotten.
    After(Duration),
    /// Only on a change; the key's failure history is forgotten.
    OnChange,
    /// After the delay the controller's rate limiter gives the key (longer at each retry).
    Backoff,
}

impl Action {
    /// Reconcile the object again after `duration` (and sooner if it changes). Resets the
    /// key's backoff. Huge durations are capped by the work queue (at about 30 years).
    #[must_use]
    pub const fn requeue(duration: Duration) -> Self {
        Self {
            next: Next::After(duration),
        }
    }

    /// Reconcile the object again only when it, or an object it owns or watches, changes.
    /// Resets the key's backoff.
    #[must_use]
    pub const fn await_change() -> Self {
        Self { next: Next::OnChange }
    }

    /// Reconcile the object again after the controller's rate limiter's delay for the key,
    /// which grows with each consecutive retry and resets after a reconcile that returns
    /// another action (client-go's `AddRateLimited`; controller-runtime's handling of an
    /// error). What the controller does after a panic; a good error policy for transient
    /// errors.
    #[must_use]
    pub const fn requeue_with_backoff() -> Self {
        Self { next: Next::Backoff }
    }

    /// The fixed delay after which the object is reconciled again: `None` for
    /// [`await_change`](Self::await_change) and for
    /// [`requeue_with_backoff`](Self::requeue_with_backoff) (whose delay the rate limiter
    /// decides).
    pub const fn requeue_after(&self) -> Option<Duration> {
        match self.next {
            Next::After(duration) => Some(duration),
            Next::OnChange | Next::Backoff => None,
        }
    }

    /// Whether this is [`requeue_with_backoff`](Self::requeue_with_backoff).
    pub const fn is_backoff(&self) -> bool {
        matches!(self.next, Next::Backoff)
    }
}
