//! [`Runnable`]: what a [`Manager`](super::Manager) runs, on every replica or only on the
//! leader.

use crate::controller::functions::{ErrorPolicyFn, ReconcileFn};
use std::{fmt, future::Future};

use futures::future::BoxFuture;

use crate::{
    controller::{RunContext, runner::Runner},
    factory::TypedResource,
};

/// The error a runnable ends with.
pub type RunnableError = Box<dyn std::error::Error + Send + Sync>;

/// A task the [`Manager`](super::Manager) runs: a controller, a webhook server, a periodic
/// job.
///
/// A runnable that [needs leader election](Runnable::needs_leader_election) (the default) runs
/// only on the leader: once per leadership term, until the term ends (and again in the next
/// term this replica wins). One that does not runs once, on every replica, from the start of
/// the manager to its shutdown. Returning `Ok` early just ends that run; returning `Err` stops
/// the manager, which reports the error.
///
/// Closures are runnables through [`runnable_fn`].
pub trait Runnable: Send + Sync + 'static {
    /// The name in logs, probes and errors.
    fn name(&self) -> &str;

    /// Whether it runs only on the leader (`true`, the default) or on every replica.
    fn needs_leader_election(&self) -> bool {
        true
    }

    /// One run: until `context.stop_token()` is cancelled.
    fn run(&self, context: RunContext) -> BoxFuture<'static, Result<(), RunnableError>>;

    /// Registers the runnable's metrics in the [manager's registry](super::Manager::metrics_registry),
    /// once, when it is [added](super::Manager::add) (feature `metrics`). Nothing by default;
    /// a [`Sharder`](crate::sharding::Sharder) registers its `controller_sharding_*` metrics
    /// and those of its controllers' queues and reconciles.
    #[cfg(feature = "metrics")]
    fn register_metrics(&self, registry: &mut prometheus_client::registry::Registry) {
        let _ = registry;
    }
}

/// A runnable made of a closure: see [`runnable_fn`].
pub struct FnRunnable<F> {
    name: String,
    leader_only: bool,
    run: F,
}

impl<F> fmt::Debug for FnRunnable<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnRunnable")
            .field("name", &self.name)
            .field("leader_only", &self.leader_only)
            .finish_non_exhaustive()
    }
}

impl<F> FnRunnable<F> {
    /// Runs it on every replica, without leader election.
    pub fn on_every_replica(mut self) -> Self {
        self.leader_only = false;
        self
    }
}

/// A runnable named `name` that calls `run` for each run; it runs only on the leader unless
/// made to run [on every replica](FnRunnable::on_every_replica).
///
/// ```
/// use informer_runtime::{controller::RunContext, manager::runnable_fn};
///
/// let sweeper = runnable_fn("sweeper", |context: RunContext| async move {
///     let stop = context.stop_token();
///     let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
///     loop {
///         tokio::select! {
///             () = stop.cancelled() => return Ok(()),
///             _ = tick.tick() => { /* sweep, while context.may_act() */ }
///         }
///     }
/// });
/// # let _ = sweeper;
/// ```
pub fn runnable_fn<F, Fut>(name: impl Into<String>, run: F) -> FnRunnable<F>
where
    F: Fn(RunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), RunnableError>> + Send + 'static,
{
    FnRunnable {
        name: name.into(),
        leader_only: true,
        run,
    }
}

impl<F, Fut> Runnable for FnRunnable<F>
where
    F: Fn(RunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), RunnableError>> + Send + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn needs_leader_election(&self) -> bool {
        self.leader_only
    }

    fn run(&self, context: RunContext) -> BoxFuture<'static, Result<(), RunnableError>> {
        Box::pin((self.run)(context))
    }
}

/// A controller is a runnable on the leader: each run registers its handlers on a fresh
/// queue, reconciles until the term ends, and drains.
impl<K, Ctx, R, P> Runnable for Runner<K, Ctx, R, P>
where
    K: TypedResource,
    Ctx: Send + Sync + 'static,
    R: ReconcileFn<K, Ctx>,
    P: ErrorPolicyFn<K, Ctx, R::Error>,
{
    fn name(&self) -> &str {
        Runner::name(self)
    }

    fn run(&self, context: RunContext) -> BoxFuture<'static, Result<(), RunnableError>> {
        let runner = self.clone();
        Box::pin(async move {
            runner
                .run(context.stop_token(), context.leadership().cloned())
                .await
                .map_err(RunnableError::from)
        })
    }
}
