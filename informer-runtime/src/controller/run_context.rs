//! [`RunContext`]: what a running reconcile or manager runnable may ask about the run it
//! belongs to.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::write_log::WriteLog;
use crate::{key::ObjectKey, leader_election::Leadership};

tokio::task_local! {
    static CURRENT: RunContext;
}

/// The run a reconcile or a [`Runnable`](crate::manager::Runnable) belongs to: the token
/// cancelled when that run stops, and the leadership term it acts in when a
/// [`Manager`](crate::manager::Manager) runs it under leader election.
///
/// A runnable gets it as the argument of [`Runnable::run`](crate::manager::Runnable::run).
/// Workers set it around each reconcile (and its error policy); read it with
/// [`RunContext::current`] from anywhere inside the reconcile, so a reconcile's signature
/// stays `(object, context)`:
///
/// ```
/// use std::sync::Arc;
///
/// use informer_runtime::controller::{Action, RunContext};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// async fn slow_work() {}
///
/// async fn reconcile(config_map: Arc<ConfigMap>, _: Arc<()>) -> Result<Action, kube::Error> {
///     let token = RunContext::current().map(|run| run.stop_token()).unwrap_or_default();
///     tokio::select! {
///         () = token.cancelled() => return Ok(Action::await_change()), // shutdown or term ended
///         () = slow_work() => {}
///     }
///     # let _ = config_map;
///     Ok(Action::await_change())
/// }
/// ```
#[derive(Debug, Clone)]
pub struct RunContext {
    token: CancellationToken,
    leadership: Option<Leadership>,
    /// The writes of the one reconcile this scope is for (a run's scope has none).
    writes: Option<Arc<WriteLog>>,
}

impl RunContext {
    pub(crate) fn new(token: CancellationToken, leadership: Option<Leadership>) -> Self {
        Self {
            token,
            leadership,
            writes: None,
        }
    }

    /// This run's scope for one reconcile of `key`, with an empty log of its writes.
    pub(crate) fn for_reconcile(&self, key: ObjectKey) -> (Self, Arc<WriteLog>) {
        let writes = Arc::new(WriteLog::new(key));
        let scope = Self {
            token: self.token.clone(),
            leadership: self.leadership.clone(),
            writes: Some(Arc::clone(&writes)),
        };
        (scope, writes)
    }

    /// The write log of the reconcile running on this task, if any.
    pub(crate) fn current_writes() -> Option<Arc<WriteLog>> {
        CURRENT.try_with(|scope| scope.writes.clone()).ok().flatten()
    }

    /// The run of the reconcile running on this task; `None` outside a reconcile.
    pub fn current() -> Option<Self> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// Cancelled when the run stops: at shutdown, or when the leadership term it runs in
    /// ends. Return soon after; a reconcile's writes through a
    /// [`Manager`](crate::manager::Manager)'s client are refused already.
    pub fn stop_token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// The leadership the run acts under: `Some` when a manager that elects a leader runs it
    /// (a controller, or a runnable that needs leader election), `None` otherwise.
    pub fn leadership(&self) -> Option<&Leadership> {
        self.leadership.as_ref()
    }

    /// Whether the run may still act: it has not stopped, and its leadership (if
    /// any) is [current](Leadership::is_current).
    pub fn may_act(&self) -> bool {
        !self.token.is_cancelled() && self.leadership.as_ref().is_none_or(Leadership::is_current)
    }

    /// Runs `future` with this scope as the current one.
    pub(crate) async fn enter<F: Future>(self, future: F) -> F::Output {
        CURRENT.scope(self, future).await
    }
}
