//! Controllers on shared informers: a reconcile runner with kube-rs's ergonomics on
//! client-go's machinery.
//!
//! A [`Controller`] reconciles objects of one type `K`. It reads the factory's shared informer
//! of `K` (and of the types it [`owns`](Controller::owns) or [`watches`](Controller::watches)),
//! so any number of controllers share one watch per type. Changes put the object's
//! [`ObjectKey`] on a rate-limited work queue; workers take keys off it and call your
//! reconcile function with the object the cache holds:
//!
//! ```no_run
//! use std::{sync::Arc, time::Duration};
//!
//! use informer_runtime::controller::{Action, Controller};
//! use informer_runtime::prelude::*;
//! use k8s_openapi::api::{apps::v1::{Deployment, ReplicaSet}, core::v1::ConfigMap};
//!
//! #[derive(Debug, thiserror::Error)]
//! #[error("failed to reconcile: {0}")]
//! struct Error(#[from] kube::Error);
//!
//! struct Context {
//!     client: kube::Client,
//! }
//!
//! async fn reconcile(deployment: Arc<Deployment>, context: Arc<Context>) -> Result<Action, Error> {
//!     // read listers, write through kube::Api with context.client, record events
//!     # let _ = (deployment, &context.client);
//!     Ok(Action::requeue(Duration::from_secs(300)))
//! }
//!
//! fn error_policy(_: Arc<Deployment>, _: &Error, _: Arc<Context>) -> Action {
//!     Action::requeue_with_backoff()
//! }
//!
//! # async fn run(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let factory = SharedInformerFactory::new(client.clone());
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! let controller = Controller::<Deployment>::new(&factory)
//!     .owns::<ReplicaSet>()
//!     .watches::<ConfigMap, _>(|config_map| {
//!         // the deployments that mount this config map, e.g. from a typed index
//!         # let _ = config_map;
//!         Vec::<ObjectKey>::new()
//!     })
//!     .concurrency(4)
//!     .graceful_shutdown_on(shutdown.clone());
//! let context = Arc::new(Context { client });
//! // starts the factory's informers, waits for their caches, then reconciles until shutdown
//! controller.run(reconcile, error_policy, context).await?;
//! factory.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # What the runner guarantees
//!
//! - **One reconcile per object at a time.** The work queue never hands out a name that is
//!   being processed; changes meanwhile reconcile it once more afterwards.
//! - **Bounded concurrency:** at most [`concurrency`](Controller::concurrency) reconciles run
//!   at once (1 by default, as in controller-runtime).
//! - **Start after sync.** Workers start once every informer the controller reads has synced
//!   and each of its handlers has seen the initial list, so a reconcile never reads a
//!   half-filled cache.
//! - **Requeue as asked.** `Ok(`[`Action::requeue`]`(d))` reconciles again after `d`;
//!   [`Action::await_change`] waits for a change; an `Err` goes to the error policy, whose
//!   action decides; [`Action::requeue_with_backoff`] retries through the rate limiter (5 ms
//!   doubling to 1000 s per object, 10/s overall: client-go's defaults; see
//!   [`rate_limiter`](Controller::rate_limiter)).
//! - **Panics do not kill workers.** A panic in the reconcile function or the error policy is
//!   caught, logged at error level, counted ([`ControllerStats::panics`]) and retried with backoff; the
//!   worker goes on with the next object and the queue is always told the object is done.
//! - **Deleted objects are not reconciled.** The reconcile gets the object the cache holds
//!   when a worker takes its name; a name whose object is gone (deleted, or a name from a
//!   watch mapper that matches nothing) is dropped and counted ([`ControllerStats::skipped_missing`]).
//!   To act on deletion, add a finalizer: the API server then keeps the object, with a
//!   deletion timestamp, until your reconcile has cleaned up and removed the finalizer.
//! - **Graceful shutdown.** When the token passed to
//!   [`graceful_shutdown_on`](Controller::graceful_shutdown_on) fires, no new reconcile
//!   starts, running ones finish (up to [`shutdown_timeout`](Controller::shutdown_timeout),
//!   then they are cancelled and `run` says so), the handlers are removed from the informers,
//!   and `run` returns. It also returns, with an error, if an informer it reads stops.
//!
//! # Shutdown order
//!
//! Stop controllers first, then the factory: cancel the shutdown token, await `run`, then
//! `factory.shutdown()`. Stopping the factory first stops the informers under running
//! controllers, which then end with [`Error::InformerStopped`].
//!
//! # Relations
//!
//! - [`owns::<Child>()`](Controller::owns): a change of a child enqueues its controller owner
//!   (the owner reference with `controller: true` whose group and kind are `K`'s), read from
//!   the child itself, with no scan. The child informer also gets
//!   [`Index::BY_CONTROLLER_UID`](crate::cache::Index::BY_CONTROLLER_UID), so a reconcile
//!   lists an owner's children without a scan:
//!   `replica_sets.lister().by_index(&Index::BY_CONTROLLER_UID, uid)`.
//! - [`watches::<Other>(mapper)`](Controller::watches): a change of another object enqueues
//!   the names `mapper` returns for it (typed indexes make such mappers cheap).
//! - [`reconcile_on(stream)`](Controller::reconcile_on) and
//!   [`reconcile_all_on(stream)`](Controller::reconcile_all_on): external triggers.
//!
//! Owned and watched objects enqueue on real changes only; the controller's own objects
//! also on resyncs, so a factory resync period reconciles every object periodically.

mod action;
mod relation;
mod stats;
mod worker;

use std::{fmt, future::Future, sync::Arc, time::Duration};

use futures::{FutureExt, Stream, StreamExt};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

pub use action::Action;
pub use stats::{ControllerStats, ReconcileMetrics, ReconcileOutcome};

use relation::{ControllerQueue, Relation, Wiring};
use worker::Worker;

use crate::{
    factory::{SharedInformerFactory, TypedResource},
    informer::{self, SharedIndexInformer},
    key::ObjectKey,
    workqueue::{QueueMetrics, RateLimiter, RateLimitingQueue, default_controller_rate_limiter},
};

/// The result of running a controller.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A controller that failed to run or to stop.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A handler or index could not be registered on an informer.
    #[error("failed to start the {controller} controller: {source}")]
    Register {
        /// The controller's name.
        controller: String,
        /// Why the informer refused.
        #[source]
        source: informer::Error,
    },
    /// An informer the controller reads stopped (before it synced, or while the controller
    /// ran): its cache is no longer kept up to date.
    #[error(
        "failed to run the {controller} controller: the {informer} informer stopped; stop controllers before the factory"
    )]
    InformerStopped {
        /// The controller's name.
        controller: String,
        /// The informer's description.
        informer: String,
    },
    /// Reconciles still ran when the shutdown timeout passed; they were cancelled.
    #[error(
        "failed to stop the {controller} controller gracefully: {cancelled} reconciles still ran after {timeout:?} and were cancelled"
    )]
    ShutdownTimeout {
        /// The controller's name.
        controller: String,
        /// How many workers were cancelled.
        cancelled: usize,
        /// The timeout.
        timeout: Duration,
    },
}

/// An external trigger's request.
enum Trigger {
    One(ObjectKey),
    All,
}

/// How often the wait for the caches says which ones it still waits for.
const SYNC_REPORT_INTERVAL: Duration = Duration::from_secs(30);

/// How often the wait for the caches checks them.
const SYNC_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// A reconcile runner for objects of `K` on the shared informers of a factory (see the
/// [module documentation](self)).
pub struct Controller<K: TypedResource> {
    factory: SharedInformerFactory,
    informer: SharedIndexInformer<K>,
    name: String,
    wiring: Vec<Wiring>,
    triggers: Vec<futures::stream::BoxStream<'static, Trigger>>,
    concurrency: usize,
    shutdown_timeout: Duration,
    rate_limiter: Box<dyn RateLimiter<ObjectKey>>,
    queue_metrics: Option<Arc<dyn QueueMetrics>>,
    shutdown: CancellationToken,
    stats: ControllerStats,
}

impl<K: TypedResource> fmt::Debug for Controller<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("relations", &self.wiring.len())
            .field("concurrency", &self.concurrency)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<K: TypedResource> Controller<K> {
    /// A controller of `K` on `factory`'s shared informer of `K` (created if the factory has
    /// none yet; an informer made with [`informer_for`](SharedInformerFactory::informer_for)
    /// is used as it is). Named after `K`'s kind, in lowercase.
    pub fn new(factory: &SharedInformerFactory) -> Self {
        Self {
            factory: factory.clone(),
            informer: factory.informer::<K>(),
            name: K::kind(&()).to_lowercase(),
            wiring: Vec::new(),
            triggers: Vec::new(),
            concurrency: 1,
            shutdown_timeout: Duration::from_secs(30),
            rate_limiter: Box::new(default_controller_rate_limiter()),
            queue_metrics: None,
            shutdown: CancellationToken::new(),
            stats: ControllerStats::default(),
        }
    }

    /// Names the controller in logs and metrics.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Runs at most `concurrency` reconciles at once (at least 1; 1 by default).
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// How long a shutdown waits for running reconciles before it cancels them (30 s by
    /// default, controller-runtime's graceful shutdown timeout).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// The rate limiter of retries ([`Action::requeue_with_backoff`] and panics);
    /// [`default_controller_rate_limiter`] by default.
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<ObjectKey> + 'static) -> Self {
        self.rate_limiter = Box::new(limiter);
        self
    }

    /// Stops the controller gracefully when `token` is cancelled (for example by a signal
    /// handler, or when a replica loses leadership).
    pub fn graceful_shutdown_on(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }

    /// Reconciles the `K` that controls each changed `Child` (see the
    /// [module documentation](self#relations)), through the factory's shared informer of
    /// `Child`.
    pub fn owns<Child: TypedResource>(mut self) -> Self {
        let informer = self.factory.informer::<Child>();
        self.wiring.push(relation::owns::<K, Child>(informer));
        self
    }

    /// Reconciles the objects `mapper` names for each changed `Other` (the names of the old
    /// and the new state of an update, and of the last known state of a deleted object),
    /// through the factory's shared informer of `Other`.
    pub fn watches<Other, I>(mut self, mapper: impl Fn(&Other) -> I + Send + Sync + 'static) -> Self
    where
        Other: TypedResource,
        I: IntoIterator<Item = ObjectKey>,
    {
        let informer = self.factory.informer::<Other>();
        self.wiring.push(relation::watches(informer, mapper));
        self
    }

    /// Reconciles the object named by each item of `trigger` (once the caches synced; items
    /// before that wait). Names of objects the cache does not hold are skipped.
    pub fn reconcile_on(mut self, trigger: impl Stream<Item = ObjectKey> + Send + 'static) -> Self {
        self.triggers.push(trigger.map(Trigger::One).boxed());
        self
    }

    /// Reconciles every cached object at each item of `trigger` (a configuration reload, a
    /// periodic sweep).
    pub fn reconcile_all_on(mut self, trigger: impl Stream<Item = ()> + Send + 'static) -> Self {
        self.triggers.push(trigger.map(|()| Trigger::All).boxed());
        self
    }

    /// Reports the work queue to `metrics` (such as `metrics::WorkQueueMetrics`) and each
    /// reconcile to `reconciles` (such as `metrics::ControllerMetrics`).
    pub fn metrics(mut self, queue: Arc<dyn QueueMetrics>, reconciles: Arc<dyn ReconcileMetrics>) -> Self {
        self.queue_metrics = Some(queue);
        let _ = self.stats.counters.metrics.set(reconciles);
        self
    }

    /// A live view of what the controller does, readable while it runs and after.
    pub fn stats(&self) -> ControllerStats {
        self.stats.clone()
    }

    /// The controller's name.
    pub fn controller_name(&self) -> &str {
        &self.name
    }

    /// Runs the controller: registers its handlers, starts the factory's informers, waits for
    /// their caches, then reconciles until the [shutdown token](Self::graceful_shutdown_on)
    /// fires or an informer it reads stops.
    ///
    /// `reconcile` gets the cached object and `context`; `error_policy` gets the object and
    /// the error of a failed reconcile and chooses the retry.
    ///
    /// # Errors
    ///
    /// [`Error::Register`] if an informer refused a handler or index;
    /// [`Error::InformerStopped`] if an informer stopped; [`Error::ShutdownTimeout`] if
    /// reconciles had to be cancelled at shutdown.
    pub async fn run<Ctx, R, Fut, E, P>(self, reconcile: R, error_policy: P, context: Arc<Ctx>) -> Result<()>
    where
        Ctx: Send + Sync + 'static,
        R: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<Action, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
        P: Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
    {
        let queue: ControllerQueue = Arc::new(match self.queue_metrics.clone() {
            Some(metrics) => RateLimitingQueue::with_metrics(self.rate_limiter, metrics),
            None => RateLimitingQueue::new(self.rate_limiter),
        });
        let _ = self.stats.counters.queue.set(Arc::clone(&queue));
        let running = Running {
            name: self.name,
            queue,
            shutdown: self.shutdown,
            relations: Vec::new(),
        };
        let mut wiring = vec![relation::main(self.informer.clone())];
        wiring.extend(self.wiring);
        let result = running
            .run(RunParts {
                factory: self.factory,
                informer: self.informer,
                wiring,
                triggers: self.triggers,
                concurrency: self.concurrency,
                shutdown_timeout: self.shutdown_timeout,
                counters: Arc::clone(&self.stats.counters),
                reconcile,
                error_policy,
                context,
            })
            .await;
        if let Some(metrics) = self.stats.counters.metrics.get() {
            metrics.concurrency(0);
        }
        result
    }
}

/// What `run` hands to the running controller.
struct RunParts<K, Ctx, R, P> {
    factory: SharedInformerFactory,
    informer: SharedIndexInformer<K>,
    wiring: Vec<Wiring>,
    triggers: Vec<futures::stream::BoxStream<'static, Trigger>>,
    concurrency: usize,
    shutdown_timeout: Duration,
    counters: Arc<stats::Counters>,
    reconcile: R,
    error_policy: P,
    context: Arc<Ctx>,
}

/// A controller between `run` and its return: its queue and registered handlers.
struct Running {
    name: String,
    queue: ControllerQueue,
    shutdown: CancellationToken,
    relations: Vec<Box<dyn Relation>>,
}

impl Running {
    async fn run<K, Ctx, R, Fut, E, P>(mut self, parts: RunParts<K, Ctx, R, P>) -> Result<()>
    where
        K: TypedResource,
        Ctx: Send + Sync + 'static,
        R: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<Action, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
        P: Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
    {
        let result = self.register(parts.wiring);
        if let Err(error) = result {
            self.stop();
            return Err(error);
        }
        parts.factory.start();
        match self.wait_for_sync().await {
            Ok(true) => {}
            Ok(false) => {
                self.stop();
                return Ok(());
            }
            Err(error) => {
                self.stop();
                return Err(error);
            }
        }
        tracing::info!(controller = %self.name, concurrency = parts.concurrency, "caches synced; starting workers");
        let stop = self.shutdown.child_token();
        let mut tasks = JoinSet::new();
        for trigger in parts.triggers {
            tasks.spawn(forward(
                trigger,
                Arc::clone(&self.queue),
                parts.informer.store(),
                stop.clone(),
            ));
        }
        let worker = Arc::new(Worker {
            controller: self.name.clone(),
            store: parts.informer.store(),
            queue: Arc::clone(&self.queue),
            counters: Arc::clone(&parts.counters),
            reconcile: parts.reconcile,
            error_policy: parts.error_policy,
            context: parts.context,
        });
        if let Some(metrics) = parts.counters.metrics.get() {
            metrics.concurrency(parts.concurrency);
        }
        for _ in 0..parts.concurrency {
            tasks.spawn(Arc::clone(&worker).run(stop.clone()));
        }
        let stopped = self.until_stopped_or_shutdown().await;
        stop.cancel();
        self.stop();
        let drained = self.drain(tasks, parts.shutdown_timeout).await;
        stopped.and(drained)
    }

    /// Registers every handler; on failure, the ones registered are removed by `stop`.
    fn register(&mut self, wiring: Vec<Wiring>) -> Result<()> {
        for wire in wiring {
            let relation = wire(&self.queue).map_err(|source| Error::Register {
                controller: self.name.clone(),
                source,
            })?;
            self.relations.push(relation);
        }
        Ok(())
    }

    /// Waits until every handler synced (`Ok(true)`), the shutdown token fired (`Ok(false)`)
    /// or an informer stopped.
    async fn wait_for_sync(&self) -> Result<bool> {
        let mut next_report = tokio::time::Instant::now() + SYNC_REPORT_INTERVAL;
        loop {
            if self.relations.iter().all(|relation| relation.has_synced()) {
                return Ok(true);
            }
            if let Some(stopped) = self.stopped_relation() {
                return Err(stopped);
            }
            if tokio::time::Instant::now() >= next_report {
                self.report_unsynced();
                next_report += SYNC_REPORT_INTERVAL;
            }
            tokio::select! {
                () = self.shutdown.cancelled() => return Ok(false),
                () = tokio::time::sleep(SYNC_POLL_INTERVAL) => {}
            }
        }
    }

    fn report_unsynced(&self) {
        for relation in self.relations.iter().filter(|relation| !relation.has_synced()) {
            tracing::warn!(
                controller = %self.name,
                informer = relation.informer(),
                handler_panics = relation.panics(),
                "still waiting for an informer to sync before starting workers (is the factory started? did a mapper panic?)"
            );
        }
    }

    /// The error for the first informer that stopped, if any.
    fn stopped_relation(&self) -> Option<Error> {
        self.relations
            .iter()
            .find(|relation| relation.until_stopped().now_or_never().is_some())
            .map(|relation| Error::InformerStopped {
                controller: self.name.clone(),
                informer: relation.informer().to_owned(),
            })
    }

    /// Resolves at shutdown (`Ok`) or when an informer stops (`Err`).
    async fn until_stopped_or_shutdown(&self) -> Result<()> {
        if self.relations.is_empty() {
            self.shutdown.cancelled().await;
            return Ok(());
        }
        let any_stopped =
            futures::future::select_all(self.relations.iter().map(|relation| relation.until_stopped()));
        tokio::select! {
            () = self.shutdown.cancelled() => Ok(()),
            _ = any_stopped => Err(self.stopped_relation().unwrap_or_else(|| Error::InformerStopped {
                controller: self.name.clone(),
                informer: "unknown".into(),
            })),
        }
    }

    /// Shuts the queue down and removes the handlers.
    fn stop(&mut self) {
        self.queue.shut_down();
        for relation in self.relations.drain(..) {
            relation.remove();
        }
    }

    /// Waits for the workers and triggers, up to `timeout`; cancels what is left.
    async fn drain(&self, mut tasks: JoinSet<()>, timeout: Duration) -> Result<()> {
        let finished = tokio::time::timeout(timeout, async {
            while let Some(joined) = tasks.join_next().await {
                if let Err(error) = joined {
                    tracing::error!(controller = %self.name, %error, "a worker task failed");
                }
            }
        })
        .await;
        if finished.is_ok() {
            tracing::info!(controller = %self.name, "stopped");
            return Ok(());
        }
        let cancelled = tasks.len();
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        tracing::warn!(controller = %self.name, cancelled, ?timeout, "reconciles still ran at the shutdown timeout; cancelled them");
        Err(Error::ShutdownTimeout {
            controller: self.name.clone(),
            cancelled,
            timeout,
        })
    }
}

/// Feeds a trigger's requests to the queue until `stop` fires or the trigger ends.
async fn forward<K: TypedResource>(
    mut trigger: futures::stream::BoxStream<'static, Trigger>,
    queue: ControllerQueue,
    store: crate::cache::Store<K>,
    stop: CancellationToken,
) {
    loop {
        let next = tokio::select! {
            () = stop.cancelled() => return,
            next = trigger.next() => next,
        };
        match next {
            None => return,
            Some(Trigger::One(name)) => queue.add(name),
            Some(Trigger::All) => store
                .list()
                .iter()
                .for_each(|object| queue.add(ObjectKey::of(object.as_ref()))),
        }
    }
}

#[cfg(test)]
mod tests;
