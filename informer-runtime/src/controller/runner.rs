//! A controller's run: register the handlers on a fresh queue, wait for the caches, run the
//! workers until told to stop, drain. A [`Runner`] holds everything a run needs and can run
//! any number of times one after another, which is how a manager runs a controller once per
//! leadership term.

use super::functions::{ErrorPolicyFn, ReconcileFn};
use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use futures::{FutureExt, StreamExt, stream::BoxStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{
    RunContext,
    error::{Error, Result},
    gate::Gated,
    out_of_scope::OutOfScope,
    own_writes::OwnWrites,
    queue::{self, ControllerQueue},
    relation::{Relation, Target, Wiring},
    stats::Counters,
    worker::Worker,
};
use kube::core::Selector;

use crate::{
    factory::{SharedInformerFactory, TypedResource},
    key::ObjectKey,
    leader_election::Leadership,
    scope::{ScopedInformer, ScopedLister},
    workqueue::{AddOptions, Priority, QueueMetrics, RateLimiter},
};

/// An external trigger's request.
pub(crate) enum Trigger {
    /// Reconcile one object, at a priority.
    One(ObjectKey, Priority),
    /// Reconcile every cached object (at low priority: a sweep, behind live changes).
    All,
}

/// A trigger stream, taken by a run and given back when the run stops.
type TriggerStream = BoxStream<'static, Trigger>;

/// How often the wait for the caches says which ones it still waits for.
const SYNC_REPORT_INTERVAL: Duration = Duration::from_secs(30);

/// How often the wait for the caches checks them.
const SYNC_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// What every run of a controller shares: its configuration and its counters.
pub(crate) struct Settings<K> {
    pub(crate) factory: SharedInformerFactory,
    pub(crate) informer: ScopedInformer<K>,
    pub(crate) name: String,
    pub(crate) wiring: Vec<Wiring>,
    pub(crate) triggers: Mutex<Vec<TriggerStream>>,
    pub(crate) concurrency: usize,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) rate_limiter: Arc<dyn RateLimiter<ObjectKey>>,
    pub(crate) queue_metrics: Option<Arc<dyn QueueMetrics>>,
    /// Whether runs hand out the most urgent key first (else in FIFO order).
    pub(crate) priorities: bool,
    /// The objects that left the scope with the controller's finalizer, if it declared one.
    pub(crate) out_of_scope: Option<Arc<OutOfScope>>,
    pub(crate) counters: Arc<Counters>,
    /// How long a reconcile waits at most for the caches to see its object's last writes;
    /// `None`: it never waits.
    pub(crate) own_writes_timeout: Option<Duration>,
    /// The shard the controller runs in, if sharded.
    pub(crate) gate: Option<Arc<Gated>>,
}

/// A controller with its reconcile, error policy and context: runs until stopped, and again.
pub(crate) struct Runner<K, Ctx, R, P> {
    pub(crate) settings: Arc<Settings<K>>,
    pub(crate) reconcile: Arc<R>,
    pub(crate) error_policy: Arc<P>,
    pub(crate) context: Arc<Ctx>,
}

impl<K, Ctx, R, P> Clone for Runner<K, Ctx, R, P> {
    fn clone(&self) -> Self {
        Self {
            settings: Arc::clone(&self.settings),
            reconcile: Arc::clone(&self.reconcile),
            error_policy: Arc::clone(&self.error_policy),
            context: Arc::clone(&self.context),
        }
    }
}

impl<K, Ctx, R, P> Runner<K, Ctx, R, P>
where
    K: TypedResource,
    Ctx: Send + Sync + 'static,
    R: ReconcileFn<K, Ctx>,
    P: ErrorPolicyFn<K, Ctx, R::Error>,
{
    /// The controller's name.
    pub(crate) fn name(&self) -> &str {
        &self.settings.name
    }

    /// Runs once: until `stop` fires or an informer stops. With `leadership`, no reconcile
    /// starts once it is no longer current, and reconciles see it in their
    /// [`RunContext`].
    pub(crate) async fn run(&self, stop: CancellationToken, leadership: Option<Leadership>) -> Result<()> {
        let settings = &self.settings;
        let queue = queue::new(
            settings.priorities,
            Arc::clone(&settings.rate_limiter),
            settings.queue_metrics.clone(),
        );
        settings.counters.set_queue(Arc::clone(&queue));
        let running = Running {
            name: settings.name.clone(),
            queue,
            shutdown: stop,
            relations: Vec::new(),
        };
        let result = running.run(self, leadership).await;
        if let Some(metrics) = settings.counters.metrics.get() {
            metrics.concurrency(0);
        }
        result
    }

    fn worker(
        &self,
        queue: &ControllerQueue,
        scope: RunContext,
        own_writes: Option<Arc<OwnWrites>>,
    ) -> Worker<K, Ctx, R, P> {
        Worker {
            controller: self.settings.name.clone(),
            cache: self.settings.informer.lister(),
            out_of_scope: self.settings.out_of_scope.clone(),
            client: self.settings.factory.client().clone(),
            queue: Arc::clone(queue),
            counters: Arc::clone(&self.settings.counters),
            reconcile: Arc::clone(&self.reconcile),
            error_policy: Arc::clone(&self.error_policy),
            context: Arc::clone(&self.context),
            scope,
            own_writes,
            gate: self.settings.gate.clone(),
        }
    }
}

/// A controller between the start and the end of one run: its queue and registered handlers.
struct Running {
    name: String,
    queue: ControllerQueue,
    shutdown: CancellationToken,
    relations: Vec<Box<dyn Relation>>,
}

impl Running {
    async fn run<K, Ctx, R, P>(
        mut self,
        runner: &Runner<K, Ctx, R, P>,
        leadership: Option<Leadership>,
    ) -> Result<()>
    where
        K: TypedResource,
        Ctx: Send + Sync + 'static,
        R: ReconcileFn<K, Ctx>,
        P: ErrorPolicyFn<K, Ctx, R::Error>,
    {
        let settings = &runner.settings;
        if let Err(error) = self.register(&settings.wiring, &settings.counters) {
            self.stop();
            return Err(error);
        }
        settings.factory.start();
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
        tracing::info!(controller = %self.name, concurrency = settings.concurrency, "caches synced; starting workers");
        let stop = self.shutdown.child_token();
        let triggers = self.forward_triggers(settings, &stop);
        let own_writes = self.own_writes(settings, &stop);
        let scope = RunContext::new(stop.clone(), leadership);
        let worker = Arc::new(runner.worker(&self.queue, scope, own_writes));
        if let Some(metrics) = settings.counters.metrics.get() {
            metrics.concurrency(settings.concurrency);
        }
        let mut workers = JoinSet::new();
        for _ in 0..settings.concurrency {
            workers.spawn(Arc::clone(&worker).run(stop.clone()));
        }
        let stopped = self.until_stopped_or_shutdown().await;
        stop.cancel();
        self.stop();
        give_back(triggers, settings).await;
        let drained = self.drain(workers, settings.shutdown_timeout).await;
        stopped.and(drained)
    }

    /// The guard of the controller's own writes for this run, unless it is off.
    fn own_writes<K>(&self, settings: &Settings<K>, stop: &CancellationToken) -> Option<Arc<OwnWrites>> {
        let timeout = settings.own_writes_timeout?;
        let caches = self.relations.iter().map(|relation| relation.cache()).collect();
        Some(Arc::new(OwnWrites::new(
            &self.name,
            caches,
            timeout,
            Arc::clone(&settings.counters),
            Arc::clone(&self.queue),
            stop.clone(),
        )))
    }

    /// Registers every handler; on failure, the ones registered are removed by `stop`.
    fn register(&mut self, wiring: &[Wiring], counters: &Arc<Counters>) -> Result<()> {
        let target = Target {
            queue: &self.queue,
            controller: &self.name,
            counters,
        };
        for wire in wiring {
            let relation = wire(&target).map_err(|source| Error::Register {
                controller: self.name.clone(),
                source,
            })?;
            self.relations.push(relation);
        }
        Ok(())
    }

    /// Feeds the controller's triggers to this run's queue until `stop` fires.
    fn forward_triggers<K: TypedResource>(
        &self,
        settings: &Settings<K>,
        stop: &CancellationToken,
    ) -> JoinSet<Option<TriggerStream>> {
        let streams = std::mem::take(&mut *lock(&settings.triggers));
        let mut tasks = JoinSet::new();
        for trigger in streams {
            tasks.spawn(forward(
                trigger,
                Arc::clone(&self.queue),
                settings.informer.lister(),
                stop.clone(),
            ));
        }
        tasks
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

    /// Waits for the workers, up to `timeout`; cancels what is left.
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

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Puts the triggers that have not ended back, for the next run.
async fn give_back<K>(mut tasks: JoinSet<Option<TriggerStream>>, settings: &Settings<K>) {
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Some(stream)) => lock(&settings.triggers).push(stream),
            Ok(None) => {}
            Err(error) => {
                tracing::error!(controller = %settings.name, %error, "a trigger task failed; its trigger is lost")
            }
        }
    }
}

/// Feeds a trigger's requests to the queue until `stop` fires (then gives the trigger back)
/// or the trigger ends.
async fn forward<K: TypedResource>(
    mut trigger: TriggerStream,
    queue: ControllerQueue,
    cache: ScopedLister<K>,
    stop: CancellationToken,
) -> Option<TriggerStream> {
    loop {
        let next = tokio::select! {
            biased;
            () = stop.cancelled() => return Some(trigger),
            next = trigger.next() => next,
        };
        match next {
            None => return None,
            Some(Trigger::One(name, priority)) => {
                queue.add_with_options(name, AddOptions::default().priority(priority))
            }
            Some(Trigger::All) => cache
                .list_in_scope(&Selector::default())
                .iter()
                .for_each(|object| {
                    let low = AddOptions::default().priority(Priority::LOW);
                    queue.add_with_options(ObjectKey::of(object.as_ref()), low);
                }),
        }
    }
}
