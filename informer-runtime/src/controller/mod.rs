//! Controllers on shared informers: a reconcile runner with kube-rs's ergonomics on
//! client-go's machinery.
//!
//! A [`Controller`] reconciles objects of one type `K`. It reads the factory's shared informer
//! of `K` (and of the types it [`owns`](Controller::owns) or [`watches`](Controller::watches)),
//! so any number of controllers share one watch per type. Changes that pass the controller's
//! [predicates](#predicates) put the object's [`ObjectKey`] on a rate-limited
//! [priority queue](#priorities); workers take keys off it, most urgent first, and call your
//! reconcile function with the object the cache holds:
//!
//! ```no_run
//! use std::{sync::Arc, time::Duration};
//!
//! use informer_runtime::{Action, Controller, ObjectKey, SharedInformerFactory};
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
//!     .graceful_shutdown_on(shutdown.clone().cancelled_owned());
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
//!   Objects that [leave the controller's scope](#leaving-the-scope) with its declared
//!   finalizer are reconciled until it is removed.
//! - **Live changes first.** The initial list and resyncs wait behind live changes, with a
//!   fair share so they never starve ([Priorities](#priorities)).
//! - **Own writes seen.** The next reconcile of an object starts once the caches have seen
//!   what the previous reconcile of it wrote, or after a timeout (see
//!   [read your own writes](#read-your-own-writes)).
//! - **Graceful shutdown.** When the future passed to
//!   [`graceful_shutdown_on`](Controller::graceful_shutdown_on) resolves (a signal handler,
//!   a `CancellationToken`'s `cancelled_owned()`), no new reconcile
//!   starts, running ones finish (up to [`graceful_shutdown_timeout`](Controller::graceful_shutdown_timeout),
//!   then they are cancelled and `run` says so), the handlers are removed from the informers,
//!   and `run` returns. It also returns, with an error, if an informer it reads stops.
//!
//! # Read your own writes
//!
//! A reconcile reads the cache, and the cache trails the API server. Right after a reconcile
//! wrote, the next reconcile of the same object may still read the cache from before that
//! write and act twice: create a child a second time (and get `409 AlreadyExists`), or undo
//! its own update. Controllers guard against this, which kube-rs does not (client-go's answer
//! is KEP-5647, stale controller mitigation: compare the cache's resource version with the
//! controller's own last write):
//!
//! - **What is recorded.** Each write (POST, PUT, PATCH, or DELETE) a reconcile sends through a
//!   client made by [`track_writes`] (a [`Manager`](crate::manager::Manager)'s
//!   [client](crate::manager::Manager::client) is one) and whose answer is one object: the
//!   object's group, kind, `resourceVersion`, namespace, name and labels. Writes through
//!   another client, or from tasks the reconcile spawns, are not seen (the reconcile's scope is
//!   a task-local); neither are failed writes, nor a [refused](crate::manager::WriteRefused)
//!   one, which is never sent.
//! - **What is waited for.** For each informer the controller reads (its own type, the owned
//!   and watched types) that holds objects of a written type (same group and kind, in any
//!   version) and, for a [scoped](crate::scope) cache, may hold the written object (its
//!   namespace, labels and name as written are in the scope: a cache never sees writes
//!   outside its scope, so it does not wait for them; nor for a write that takes an object out
//!   of a label scope), the newest resource version written. The next reconcile of the same
//!   object starts once each such cache has caught up with it: the informer applied every list
//!   and watch event up to that version to its cache (the version moves when the informer's
//!   queue runs empty, or with a bookmark). Resource versions are compared as integers, which
//!   etcd's revisions are; a version that is not one is not waited for and is counted
//!   ([`ControllerStats::own_writes_skipped`]).
//! - **How it waits.** Not in a worker. The worker that takes a held-back key lets it go and
//!   takes the next one; a small task waits until the caches caught up (woken by each move of
//!   their resource versions, no polling), then puts the key back on the queue. Waiting in the
//!   worker would take one of the [`concurrency`](Controller::concurrency) workers out per
//!   lagging object (all of them, by default) for as long as the wait; requeueing after a fixed
//!   delay would poll, and add up to one delay to every wait. Changes of the object meanwhile
//!   reconcile it once, when the wait ends.
//! - **Bounded.** A wait lasts at most the [timeout](Controller::wait_for_own_writes) (5 s by
//!   default; `None` turns the guard off); then the reconcile goes ahead on the cache as it is,
//!   counted ([`ControllerStats::own_write_timeouts`]) and logged at warn level. A wait ends
//!   when the controller stops (shutdown, or the end of a leadership term).
//! - **Per object.** A reconcile's writes hold back only the next reconcile of the same object,
//!   never other objects, and only within one run of the controller (a manager's leadership
//!   term). A write to an object outside an informer's reach (say, outside its label
//!   selector) brings no watch event: its wait ends with the informer's next event or bookmark,
//!   or at the timeout.
//!
//! [`ControllerStats::own_write_waits`] counts the reconciles held back and
//! [`own_write_wait_time`](ControllerStats::own_write_wait_time) how long they waited.
//! Without a manager, wrap the client reconciles write with:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use informer_runtime::{SharedInformerFactory, controller::{self, Action, Controller}};
//! # use k8s_openapi::api::{core::v1::ConfigMap, apps::v1::Deployment};
//! # struct Context { client: kube::Client }
//! # async fn reconcile(_: Arc<Deployment>, _: Arc<Context>) -> Result<Action, kube::Error> { Ok(Action::await_change()) }
//! # fn error_policy(_: Arc<Deployment>, _: &kube::Error, _: Arc<Context>) -> Action { Action::requeue_with_backoff() }
//! # async fn run(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let factory = SharedInformerFactory::new(client.clone());
//! let context = Arc::new(Context { client: controller::track_writes(client) });
//! Controller::<Deployment>::new(&factory)
//!     .owns::<ConfigMap>()
//!     .wait_for_own_writes(Some(std::time::Duration::from_secs(2)))
//!     .run(reconcile, error_policy, context)
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Shutdown order
//!
//! Stop controllers first, then the factory: send the shutdown signal, await `run`, then
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
//! # Scoped caches
//!
//! A controller reads the factory's cache of each type's default scope
//! ([`Builder::scope`](crate::factory::Builder::scope); every object when the type has none).
//! [`new_in`](Controller::new_in), [`Owns::scope`] and [`Watches::scope`] take a [`Scope`] of
//! their own: "config maps labelled
//! `replicate=true` in namespace `source`", beside every Namespace of the cluster. Only the
//! scope's objects are listed, watched, cached and reconciled, and the informer of every object
//! of the type is not created; controllers with equal scopes share one informer (see
//! [`crate::scope`]).
//!
//! Owned and watched objects enqueue on real changes only; the controller's own objects
//! also on resyncs, so a factory resync period reconciles every object periodically.
//!
//! # Predicates
//!
//! [`predicate`](Controller::predicate) filters the events of the controller's own
//! objects, [`Owns::predicate`] and [`Watches::predicate`] those of a relation (before its mapper runs), with the [`Predicate`]s of the
//! [`predicate`](crate::predicate) module (controller-runtime's `pkg/predicate`): generation,
//! labels, annotations or resource version changed, a label selector, any closure, and their
//! combinations.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use informer_runtime::{controller::{Action, Controller, Owns, Watches}, predicate::Predicate, SharedInformerFactory};
//! # use k8s_openapi::api::{apps::v1::{Deployment, ReplicaSet}, core::v1::ConfigMap};
//! # fn build(factory: &SharedInformerFactory) -> Result<(), informer_runtime::selector::Error> {
//! let controller = Controller::<Deployment>::new(factory)
//!     // our own status writes do not wake us; spec changes and label changes do
//!     .predicate(Predicate::generation_changed().or(Predicate::labels_changed()))
//!     // only children's spec changes
//!     .relation(Owns::<ReplicaSet>::new().predicate(Predicate::generation_changed()))
//!     // only config maps labelled for us
//!     .relation(
//!         Watches::new(|_: &ConfigMap| Vec::<informer_runtime::ObjectKey>::new())
//!             .predicate(Predicate::labels("app.example.com/config")?),
//!     );
//! # let _ = controller; Ok(()) }
//! ```
//!
//! Predicates see the initial list as creates (`is_in_initial_list`), changes as updates,
//! deletions as deletes, and resyncs of the controller's own objects as generic events; the
//! change predicates pass creates, deletes and generic events, so every object is still
//! reconciled at start and at each resync. A predicate that panics is logged and counted
//! ([`ControllerStats::predicate_panics`]) and the event passes; what predicates reject is
//! counted in [`ControllerStats::filtered`]. External triggers ([`reconcile_on`](Controller::reconcile_on))
//! are requests, not events: no predicate applies to them.
//!
//! # Priorities
//!
//! The work queue is a [`PriorityQueue`](crate::workqueue::PriorityQueue) (controller-runtime's
//! default since v0.23): objects of the initial list and of resyncs are queued at
//! [`Priority::LOW`](crate::workqueue::Priority::LOW), live changes (creates, updates, deletes, and the changes of owned and
//! watched objects) at [`Priority::NORMAL`](crate::workqueue::Priority::NORMAL). A change made while a controller works through
//! tens of thousands of listed objects is reconciled next instead of after all of them; the
//! project's benchmark measures it (bench/README.md, "Priority queue"). Every tenth key handed
//! out is the one that waited longest, whatever its priority, so listed objects progress even
//! under a steady stream of changes. A retry ([`Action::requeue_with_backoff`], an error or a
//! panic) and a requested requeue keep the priority the key was taken at.
//!
//! Explicit priorities come with [`Owns::priority`], [`Watches::priority`] and the
//! [`ReconcileRequest`]s of [`reconcile_on`](Controller::reconcile_on) ([`Priority::HIGH`](crate::workqueue::Priority::HIGH)
//! jumps ahead of live changes); [`reconcile_all_on`](Controller::reconcile_all_on)
//! sweeps at low priority. [`priorities(false)`](Controller::priorities) hands keys out
//! in client-go's plain FIFO order.
//!
//! # Leaving the scope
//!
//! A controller that reconciles only some objects (a [label selector predicate](Predicate::label_selector),
//! a [`Scope`] with a label selector, or an informer whose list options select by label) must
//! still clean up an object that
//! leaves that scope while carrying its finalizer, or a later delete of the object waits
//! forever. Declare the finalizer with [`finalizer`](Controller::finalizer) and write the
//! reconcile with [`finalizer::finalizer_where`](crate::finalizer::finalizer_where):
//!
//! - an event the predicates reject still reconciles the object when it carries the finalizer
//!   and is out of scope ([`Predicate::matches`] says no);
//! - a watch restricted by a label selector reports an object whose labels stop matching as
//!   deleted, although it still exists: when its last state carries the finalizer, the
//!   controller reads the object's current state from the API server and reconciles that,
//!   until a reconcile succeeds or the object no longer carries the finalizer;
//! - `finalizer_where`, given the same scope test, runs the cleanup for such an object and
//!   removes the finalizer.
//!
//! Both are counted in [`ControllerStats::out_of_scope`].

mod action;
mod error;
mod filter;
pub(crate) mod functions;
pub(crate) mod gate;
mod out_of_scope;
mod own_writes;
mod queue;
mod relation;
mod relations;
mod run_context;
pub(crate) mod runner;
mod stats;
mod track_writes;
mod worker;
mod write_log;

use std::{
    fmt,
    future::Future,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

pub use action::Action;
pub use error::{Error, Result};
pub use relations::{Owns, ReconcileRequest, Relation, Watches};
pub use run_context::RunContext;
pub use stats::{ControllerStats, OwnWriteWait, ReconcileMetrics, ReconcileOutcome};
pub use track_writes::track_writes;

use gate::Gated;
use out_of_scope::OutOfScope;
use relation::Wiring;
use runner::{Runner, Settings, Trigger};

use crate::{
    factory::{SharedInformerFactory, TypedResource},
    key::ObjectKey,
    predicate::Predicate,
    scope::{Scope, ScopedInformer},
    workqueue::{QueueMetrics, RateLimiter, default_controller_rate_limiter},
};

/// A reconcile runner for objects of `K` on the shared informers of a factory (see the
/// [module documentation](self)).
pub struct Controller<K: TypedResource> {
    factory: SharedInformerFactory,
    informer: ScopedInformer<K>,
    name: String,
    wiring: Vec<Wiring>,
    triggers: Vec<futures::stream::BoxStream<'static, Trigger>>,
    concurrency: usize,
    shutdown_timeout: Duration,
    rate_limiter: Arc<dyn RateLimiter<ObjectKey>>,
    queue_metrics: Option<Arc<dyn QueueMetrics>>,
    priorities: bool,
    predicate: Option<Predicate<K>>,
    finalizer: Option<String>,
    shutdown: Option<futures::future::BoxFuture<'static, ()>>,
    stats: ControllerStats,
    own_writes_timeout: Option<Duration>,
    gate: Option<Arc<Gated>>,
}

impl<K: TypedResource> fmt::Debug for Controller<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("relations", &self.wiring.len())
            .field("concurrency", &self.concurrency)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("own_writes_timeout", &self.own_writes_timeout)
            .field("priorities", &self.priorities)
            .field("predicate", &self.predicate.as_ref().map(Predicate::name))
            .field("finalizer", &self.finalizer)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<K: TypedResource> Controller<K> {
    /// A controller of `K` on `factory`'s shared informer of `K`'s default scope
    /// ([`Builder::scope`](crate::factory::Builder::scope)), or of every `K` when the type has
    /// none (created if the factory has none yet; an informer made with
    /// [`informer_for`](SharedInformerFactory::informer_for) is used as it is). Named after
    /// `K`'s kind, in lowercase.
    pub fn new(factory: &SharedInformerFactory) -> Self {
        Self::new_in(factory, &factory.default_scope::<K>())
    }

    /// A controller of the objects of `K` in `scope` (see [`crate::scope`]): it caches,
    /// watches and reconciles only those, through the factory's shared informer of the scope;
    /// the informer of every `K` is not created. Named after `K`'s kind, in lowercase.
    ///
    /// ```no_run
    /// # async fn example(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use informer_runtime::{SharedInformerFactory, controller::Controller, scope::Scope};
    /// use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    ///
    /// let factory = SharedInformerFactory::new(client);
    /// let replicated = Scope::<ConfigMap>::all().namespace("source")?.labels("replicate=true")?;
    /// let controller = Controller::new_in(&factory, &replicated)
    ///     // every namespace, cluster-wide, beside the scoped config maps
    ///     .watches::<Namespace, _>(|_namespace| Vec::new());
    /// # let _ = controller;
    /// # Ok(())
    /// # }
    /// ```
    pub fn new_in(factory: &SharedInformerFactory, scope: &Scope<K>) -> Self {
        Self {
            factory: factory.clone(),
            informer: factory.informer_in(scope),
            name: K::kind(&()).to_lowercase(),
            wiring: Vec::new(),
            triggers: Vec::new(),
            concurrency: 1,
            shutdown_timeout: Duration::from_secs(30),
            rate_limiter: Arc::new(default_controller_rate_limiter()),
            queue_metrics: None,
            priorities: true,
            predicate: None,
            finalizer: None,
            shutdown: None,
            stats: ControllerStats::default(),
            own_writes_timeout: Some(own_writes::DEFAULT_TIMEOUT),
            gate: None,
        }
    }

    /// Whether the controller runs as a shard ([`shard`](Self::shard)) or behind another gate.
    #[cfg(feature = "metrics")]
    pub(crate) fn is_sharded(&self) -> bool {
        self.gate.is_some()
    }

    /// The scope of the objects the controller reconciles.
    pub(crate) fn scope(&self) -> &Scope<K> {
        self.informer.scope()
    }

    /// Whether the controller may act on the object `key` now or later: a worker is working
    /// on it, or its cache holds it (a sharded controller's drain sweep leaves such objects to
    /// the controller).
    pub(crate) fn busy_probe(&self) -> Arc<dyn Fn(&ObjectKey) -> bool + Send + Sync> {
        let gate = self.gate.clone();
        let lister = self.informer.lister();
        Arc::new(move |key| {
            gate.as_ref().is_some_and(|gate| gate.is_working_on(key)) || lister.cached(key).is_some()
        })
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
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// The rate limiter of retries ([`Action::requeue_with_backoff`] and panics);
    /// [`default_controller_rate_limiter`] by default.
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<ObjectKey> + 'static) -> Self {
        self.rate_limiter = Arc::new(limiter);
        self
    }

    /// How long the next reconcile of an object waits at most for the caches to see what the
    /// previous reconcile of it wrote ([read your own writes](self#read-your-own-writes)):
    /// `Some(timeout)` (5 s by default), or `None` to never wait. After the timeout the
    /// reconcile goes ahead, counted in [`ControllerStats::own_write_timeouts`] and logged.
    pub fn wait_for_own_writes(mut self, timeout: Option<Duration>) -> Self {
        self.own_writes_timeout = timeout;
        self
    }

    /// Whether the work queue hands out the most urgent key first (`true`, the default: the
    /// initial list and resyncs wait behind live changes) or in plain FIFO order (`false`:
    /// client-go's order, priorities ignored). Either way it is a
    /// [`PriorityQueue`](crate::workqueue::PriorityQueue) ([`fifo`](crate::workqueue::PriorityQueue::fifo)
    /// without priorities). See [Priorities](self#priorities).
    pub fn priorities(mut self, priorities: bool) -> Self {
        self.priorities = priorities;
        self
    }

    /// Reconciles the controller's own objects only for the events `predicate` passes (see
    /// [Predicates](self#predicates)); called again, an event must pass every predicate given.
    pub fn predicate(mut self, predicate: Predicate<K>) -> Self {
        self.predicate = Some(match self.predicate.take() {
            Some(earlier) => earlier.and(predicate),
            None => predicate,
        });
        self
    }

    /// Declares the finalizer the controller's reconcile adds to its objects (with
    /// [`finalizer::finalizer_where`](crate::finalizer::finalizer_where)), so that an
    /// object that leaves the controller's scope while carrying it is still reconciled and
    /// can be cleaned up: one whose events the [predicates](Self::predicate) no longer
    /// pass ([`Predicate::matches`] says no), and one a label-selector-restricted informer
    /// reports deleted although it still exists. See [Leaving the scope](self#leaving-the-scope).
    pub fn finalizer(mut self, name: impl Into<String>) -> Self {
        self.finalizer = Some(name.into());
        self
    }

    /// Puts `gate` before every reconcile (as [`shard`](Self::shard) does).
    pub(crate) fn gated(mut self, gate: Arc<dyn gate::Gate>) -> Self {
        self.gate = Some(Gated::new(gate));
        self
    }

    /// Stops the controller gracefully when `signal` resolves, as a
    /// [`Manager::run`](crate::manager::Manager::run)'s shutdown does: a signal handler
    /// (`async { tokio::signal::ctrl_c().await.ok(); }`), or a `CancellationToken`'s
    /// `cancelled_owned()`. Without it, the controller runs until an informer it reads stops.
    pub fn graceful_shutdown_on(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// Reconciles the `K` that controls each changed `Child` (see the
    /// [module documentation](self#relations)), through the factory's shared informer of
    /// `Child`'s default scope (of every `Child` when it has none): the short form of
    /// [`relation`](Self::relation)`(`[`Owns::new()`](Owns::new)`)`.
    pub fn owns<Child: TypedResource>(self) -> Self {
        self.relation(Owns::<Child>::new())
    }

    /// Reconciles the objects `mapper` names for each changed `Other` (the names of the old
    /// and the new state of an update, and of the last known state of a deleted object),
    /// through the factory's shared informer of `Other`'s default scope (of every `Other` when
    /// it has none): the short form of [`relation`](Self::relation)`(`[`Watches::new(mapper)`](Watches::new)`)`.
    pub fn watches<Other, I>(self, mapper: impl Fn(&Other) -> I + Send + Sync + 'static) -> Self
    where
        Other: TypedResource,
        I: IntoIterator<Item = ObjectKey>,
    {
        self.relation(Watches::new(mapper))
    }

    /// Adds a relation: the children it [`Owns`], or the objects it [`Watches`], each with its
    /// scope, predicate and priority.
    ///
    /// ```no_run
    /// # fn build(factory: &informer_runtime::SharedInformerFactory) -> Result<(), Box<dyn std::error::Error>> {
    /// use informer_runtime::{ObjectKey, controller::{Controller, Owns, Watches}, predicate::Predicate};
    /// use k8s_openapi::api::{apps::v1::{Deployment, ReplicaSet}, core::v1::ConfigMap};
    ///
    /// let controller = Controller::<Deployment>::new(factory)
    ///     .relation(Owns::<ReplicaSet>::new().predicate(Predicate::generation_changed()))
    ///     .relation(Watches::new(|_: &ConfigMap| Vec::<ObjectKey>::new()).predicate(Predicate::labels("app=web")?));
    /// # let _ = controller; Ok(()) }
    /// ```
    pub fn relation(mut self, relation: impl Into<Relation<K>>) -> Self {
        let wiring = relation.into().wire(&self.factory);
        self.wiring.extend(wiring);
        self
    }

    /// Reconciles the object each item of `trigger` names (once the caches synced; items
    /// before that wait), at the item's priority: an [`ObjectKey`] at [`Priority::NORMAL`](crate::workqueue::Priority::NORMAL), an
    /// `(ObjectKey, Priority)` at its own (see [`ReconcileRequest`]). Names of objects the cache
    /// does not hold are skipped.
    pub fn reconcile_on<R>(mut self, trigger: impl Stream<Item = R> + Send + 'static) -> Self
    where
        R: Into<ReconcileRequest>,
    {
        let requests = trigger.map(|request| {
            let ReconcileRequest { key, priority } = request.into();
            Trigger::One(key, priority)
        });
        self.triggers.push(requests.boxed());
        self
    }

    /// Reconciles every cached object at each item of `trigger` (a configuration reload, a
    /// periodic sweep), at [`Priority::LOW`](crate::workqueue::Priority::LOW) like a resync.
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
    /// their caches, then reconciles until the [shutdown signal](Self::graceful_shutdown_on)
    /// resolves or an informer it reads stops.
    ///
    /// `reconcile` gets the cached object and `context`; `error_policy` gets the object and
    /// the error of a failed reconcile and chooses the retry.
    ///
    /// # Errors
    ///
    /// [`Error::Register`] if an informer refused a handler or index;
    /// [`Error::InformerStopped`] if an informer stopped; [`Error::ShutdownTimeout`] if
    /// reconciles had to be cancelled at shutdown.
    pub async fn run<Ctx, R, Fut, E, P>(
        mut self,
        reconcile: R,
        error_policy: P,
        context: Arc<Ctx>,
    ) -> Result<()>
    where
        Ctx: Send + Sync + 'static,
        R: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<Action, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
        P: Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
    {
        let stop = CancellationToken::new();
        let signal = self.shutdown.take();
        let runner = self.into_runner(reconcile, error_policy, context);
        let run = runner.run(stop.clone(), None);
        tokio::pin!(run);
        let Some(signal) = signal else {
            return run.await;
        };
        tokio::select! {
            result = &mut run => result,
            () = signal => {
                stop.cancel();
                run.await
            }
        }
    }

    /// The controller with its functions, ready to run any number of times one after another
    /// (a manager runs it once per leadership term).
    pub(crate) fn into_runner<Ctx, R, P>(
        self,
        reconcile: R,
        error_policy: P,
        context: Arc<Ctx>,
    ) -> Runner<K, Ctx, R, P> {
        let out_of_scope = self.finalizer.map(|name| Arc::new(OutOfScope::new(name)));
        let predicate = self.predicate;
        let mut wiring: Vec<Wiring> = self
            .informer
            .parts()
            .map(|part| relation::main(part, predicate.clone(), out_of_scope.clone(), self.gate.clone()))
            .collect();
        wiring.extend(self.wiring);
        Runner {
            settings: Arc::new(Settings {
                factory: self.factory,
                informer: self.informer,
                name: self.name,
                wiring,
                triggers: Mutex::new(self.triggers),
                concurrency: self.concurrency,
                shutdown_timeout: self.shutdown_timeout,
                rate_limiter: self.rate_limiter,
                queue_metrics: self.queue_metrics,
                priorities: self.priorities,
                out_of_scope,
                counters: self.stats.counters,
                own_writes_timeout: self.own_writes_timeout,
                gate: self.gate,
            }),
            reconcile: Arc::new(reconcile),
            error_policy: Arc::new(error_policy),
            context,
        }
    }
}

#[cfg(test)]
mod tests;
