//! The shared index informer: one list and watch per resource, an indexed cache, and any
//! number of handlers (client-go's `SharedIndexInformer`).
//!
//! The reflector feeds a [`DeltaFifo`]; the informer pops one key's changes at a time, applies
//! them to its [`Store`] and turns them into notifications for every registered handler,
//! exactly as client-go's `processDeltas` does: a change to a cached key is an update, else an
//! add; an update whose resource version did not change (a resync, or a relist of an unchanged
//! object) reaches only handlers due for a resync.
//!
//! # What listers and handlers see during a relist
//!
//! A relist (the first list, or a list after a 410, a failed watch or watches that keep
//! closing) reaches the cache as it arrives instead of all at once when it ends, so that it
//! costs about one page of memory beyond the cache rather than a second copy of it. This is how
//! it differs from client-go, which applies nothing before the list (or, for a streaming list,
//! the bookmark that ends the initial events) is complete:
//!
//! - **A paged list** (500 objects a page by default): each page's objects are stored as the
//!   page arrives. A handler gets an add for an object the cache did not hold (with
//!   `is_in_initial_list` true during the informer's first list), and an update (old, new) for
//!   one it held; an update that changes nothing (the same resource version) reaches only
//!   handlers due for a resync, as client-go's relists do. Objects that no page listed are
//!   deleted only when the list ends: each handler gets a delete carrying a
//!   [`DeletedFinalStateUnknown`](crate::cache::DeletedFinalStateUnknown) tombstone with the
//!   last state the cache held. Until then, listers see the pages so far at their listed
//!   versions beside the objects of the old state not listed yet (which may include objects
//!   deleted meanwhile): never less than the old state, never an object older than the cache
//!   held before.
//! - **A streaming list** (`sendInitialEvents`, [`InitialListStrategy::StreamingList`]): every
//!   initial event is applied as a page of one object, and deletions among the initial events
//!   delete at once; the bookmark that ends the initial events ends the list as the last page
//!   does. A stream that breaks before that bookmark leaves what it streamed in the cache, and
//!   the stream is retried (or, after three streams without the bookmark, replaced by a paged
//!   list); when one completes, the cache holds exactly that complete snapshot: what only the
//!   broken stream had gets its tombstone then.
//! - **A list that fails midway** (or is cancelled) keeps what its pages applied, each object at
//!   least as new as before, and removes nothing; the next list that completes removes what
//!   vanished. A list that starts over (an expired continuation) counts only the pages of the
//!   list that completes.
//! - **`has_synced`** turns true once the first list has completed and every change it queued
//!   (its pages not yet handled and its tombstones) has been handled, and stays true through
//!   later relists (client-go's semantics): before the first list completes, listers may
//!   already answer from the pages so far, but `has_synced`, [`SharedIndexInformer::wait_for_sync`]
//!   and a handler's [`Registration::has_synced`] say the cache is not complete.
//!
//! # One core for every type
//!
//! The reflector, the queue, the handler threads and the loop that applies changes are
//! compiled once for every object type: they hold type-erased objects (a pointer to the
//! typed object, read back as `Arc<K>` without a copy). A `SharedIndexInformer<K>` adds what
//! depends on `K`: its lister-watcher's decoder, its typed cache (which the core writes through
//! a trait object) and thin adapters that hand its handlers and streams `Arc<K>`. A binary with
//! a hundred informers compiles one pipeline and a hundred decoders, not a hundred pipelines.
//!
//! [`InitialListStrategy::StreamingList`]: crate::reflector::InitialListStrategy::StreamingList

pub mod enqueue;
mod erased_object;
pub mod handler;
pub(crate) mod processor;
mod reclaim;
mod typed_edges;
use std::{
    convert::Infallible,
    fmt,
    marker::PhantomData,
    panic::AssertUnwindSafe,
    pin::Pin,
    sync::{
        Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use futures::{FutureExt, Stream};
use kube::Resource;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::cache::delta_fifo;
use crate::{
    cache::MaybeTombstone,
    cache::delta_fifo::{DeltaFifo, DeltaType, Deltas, KnownObjects, PopError, ProcessError, Transform},
    cache::{Index, Indexers, ReflectorStore, Store, Writer},
    informer::erased_object::ErasedObject,
    informer::handler::{Notification, ResourceEventHandler},
    informer::processor::{ListenerState, Processor, Sink},
    informer::reclaim::{Held, Reclaimer},
    informer::typed_edges::{
        ErasedCache, ErasingListerWatcher, KnownInCache, TypedHandler, typed_notification,
    },
    lister::{IndexedLister, Lister},
    reflector::{self, Reflector, WatchErrorHandler},
    source::ListerWatcher,
    user_panic::{PanicReporter, UserPanicStats, panic_message},
};

/// The result of an informer operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed informer operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Handlers cannot be added once the informer stopped.
    #[error(
        "failed to add an event handler to the {informer} informer: handler was not added to shared informer because it has stopped already"
    )]
    Stopped {
        /// The informer's description.
        informer: String,
    },
    /// Indexers cannot be added once the informer stopped.
    #[error(
        "failed to add indexers to the {informer} informer: indexer was not added because it has stopped already"
    )]
    IndexersAfterStop {
        /// The informer's description.
        informer: String,
    },
    /// The operation is only possible before `run`.
    #[error("failed to {action} on the {informer} informer: informer has already started")]
    AlreadyStarted {
        /// What was attempted.
        action: &'static str,
        /// The informer's description.
        informer: String,
    },
    /// The store refused the indexers.
    #[error(transparent)]
    Indexers(#[from] crate::cache::Error),
}

/// The most changes whose notifications wait before they are sent to the handlers.
const MAX_UNSENT_CHANGES: usize = 256;

/// The most replaced or deleted objects kept to be freed on the informer's thread.
const RECLAIMED_OBJECTS: usize = 4096;

/// Options of a [`SharedIndexInformer`].
pub struct Config<K> {
    /// The default resync period of handlers, and how often the informer checks whether one
    /// is due; zero disables resyncs.
    pub resync_period: Duration,
    /// The indexes of the cache.
    pub indexers: Indexers<K>,
    /// Reflector options; its `resync_period` is set by the informer.
    pub reflector: reflector::Config,
    /// A description for logs and errors, such as `pods`; defaults to the type's name.
    pub description: Option<String>,
}

impl<K> Default for Config<K> {
    fn default() -> Self {
        Self {
            resync_period: Duration::ZERO,
            indexers: Indexers::new(),
            reflector: reflector::Config::default(),
            description: None,
        }
    }
}

struct Lifecycle {
    transform: Option<Transform<ErasedObject>>,
    watch_error_handler: Option<WatchErrorHandler>,
}

/// An informer's core, compiled once for every object type: its objects are
/// [`ErasedObject`]s, its typed parts are at its edges ([`typed_edges`]).
struct Inner {
    description: String,
    cache: Arc<dyn ErasedCache>,
    lister_watcher: Arc<dyn ListerWatcher<ErasedObject>>,
    processor: Processor<ErasedObject>,
    default_handler_resync: Duration,
    reflector_config: reflector::Config,
    /// Held while deltas are applied and while a late handler is registered and replayed, so
    /// the replay and the live notifications neither overlap nor leave a gap.
    block_deltas: Mutex<()>,
    /// Serialises run, add/remove handler and the setters (client-go's `startedLock`).
    lifecycle: Mutex<Lifecycle>,
    started: AtomicBool,
    /// Turns `true` when `run` has built the queue, for waiters.
    queue_ready: tokio::sync::watch::Sender<bool>,
    /// Turns `true` when the informer stops processing, for whatever reason, for waiters.
    stopped: tokio::sync::watch::Sender<bool>,
    /// Why the informer stopped, when it did not stop because it was cancelled.
    failure: OnceLock<String>,
    /// Counts and reports panics of the transform, index functions, watch-error handler and
    /// lister-watcher.
    panics: Arc<PanicReporter>,
    fifo: OnceLock<Arc<DeltaFifo<ErasedObject>>>,
    reflector: OnceLock<Arc<Reflector<ErasedObject>>>,
    /// The resource version the cache has caught up with, published by the queue.
    cache_resource_version: Arc<tokio::sync::watch::Sender<String>>,
}

/// A shared informer with an indexed cache. Cloning gives another handle to the same informer.
///
/// Its list, watch, queue and handler threads are compiled once for every object type (its
/// core holds type-erased objects); what is compiled for `K` is its decoder, its cache and
/// the thin typed views of its handlers and listers.
///
/// ```no_run
/// use std::sync::Arc;
/// use informer_runtime::{
///     EventHandlerFuncs, SharedIndexInformer, cache::namespace_indexers, informer, source::ListerWatcher,
/// };
/// use k8s_openapi::api::core::v1::Pod;
/// use tokio_util::sync::CancellationToken;
///
/// # async fn example(lister_watcher: impl ListerWatcher<Pod>) -> Result<(), Box<dyn std::error::Error>> {
/// let informer = SharedIndexInformer::new(
///     lister_watcher,
///     informer::Config { indexers: namespace_indexers(), ..informer::Config::default() },
/// );
/// let registration = informer.add_event_handler(
///     EventHandlerFuncs::new().added(|pod: Arc<Pod>, _| println!("{:?}", pod.metadata.name)),
/// )?;
/// let cancel = CancellationToken::new();
/// tokio::spawn({
///     let (informer, cancel) = (informer.clone(), cancel.clone());
///     async move { informer.run(cancel).await }
/// });
/// informer.wait_for_sync().await;
/// println!("{} pods in prod", informer.lister().by_namespace("prod").list(&Default::default()).len());
/// # let _ = registration;
/// # Ok(()) }
/// ```
pub struct SharedIndexInformer<K> {
    inner: Arc<Inner>,
    /// The typed cache the core writes (as `inner.cache`).
    cache: Arc<Writer<K>>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            cache: Arc::clone(&self.cache),
        }
    }
}

impl<K> fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndexInformer")
            .field("description", &self.inner.description)
            .field("started", &self.inner.started.load(Ordering::SeqCst))
            .field("stopped", &self.inner.is_stopped())
            .finish()
    }
}

/// The queue and the reflector feeding it, built when the informer starts.
type Pipeline = (Arc<DeltaFifo<ErasedObject>>, Arc<Reflector<ErasedObject>>);

/// The short name of a Rust type, such as `Pod`.
fn short_type_name<K>() -> String {
    let full = std::any::type_name::<K>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base).to_owned()
}

/// Ends the informer as stopped if `run`'s future is dropped before it returned (its task was
/// aborted, or its runtime shut down): nothing may report it synced afterwards.
struct StopOnDrop<'a> {
    inner: &'a Inner,
    armed: bool,
}

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        tracing::warn!(informer = %self.inner.description, "the informer's run was dropped before it returned; the informer stopped");
        if let Some(fifo) = self.inner.fifo.get() {
            fifo.close();
        }
        self.inner.mark_stopped();
        self.inner.processor.close();
    }
}

impl<K: Resource + Clone + Send + Sync + 'static> SharedIndexInformer<K> {
    /// An informer over `lister_watcher`; nothing happens until [`run`](Self::run).
    pub fn new(lister_watcher: impl ListerWatcher<K>, options: Config<K>) -> Self {
        Self::from_arc(Arc::new(lister_watcher), options)
    }

    /// An informer over a shared lister-watcher.
    pub fn from_arc(lister_watcher: Arc<dyn ListerWatcher<K>>, options: Config<K>) -> Self {
        let description = options.description.unwrap_or_else(short_type_name::<K>);
        let panics = Arc::new(PanicReporter::new(description.clone()));
        let cache = Arc::new(Writer::with_panic_reporter(options.indexers, Arc::clone(&panics)));
        let inner = Inner::new(
            description,
            Arc::clone(&cache) as Arc<dyn ErasedCache>,
            Arc::new(ErasingListerWatcher(lister_watcher)),
            options.resync_period,
            options.reflector,
            panics,
        );
        Self {
            inner: Arc::new(inner),
            cache,
        }
    }

    /// The informer's description.
    pub fn description(&self) -> &str {
        &self.inner.description
    }

    /// Sets a function applied to every object before it is cached and delivered (for example
    /// to drop `managedFields`). Only before `run`; the last call wins.
    ///
    /// If it panics, the panic is reported and the object is kept as the transform left it
    /// (see [`user_panic`](crate::user_panic)).
    pub fn set_transform(&self, transform: impl Fn(&mut K) + Send + Sync + 'static) -> Result<(), Error> {
        self.inner
            .set_transform(Arc::new(move |object: &mut ErasedObject| {
                if let Some(object) = object.downcast_mut::<K>() {
                    transform(object);
                }
            }))
    }

    /// Sets the handler of errors the informer recovers from (failed lists and watches, and
    /// panics of its user functions: [`reflector::Error::Panicked`]). Only before `run`; the
    /// last call wins. A panic of the handler itself is logged and counted.
    pub fn set_watch_error_handler(
        &self,
        handler: impl Fn(&str, &reflector::Error) + Send + Sync + 'static,
    ) -> Result<(), Error> {
        self.inner.set_watch_error_handler(Arc::new(handler))
    }

    /// An empty [`EventHandlerFuncs`](handler::EventHandlerFuncs) of the informer's type, for
    /// [`add_event_handler`](Self::add_event_handler): the closures given to it know their
    /// argument types, where `EventHandlerFuncs::new()` leaves them to be annotated (rustc's
    /// E0282 on `|old, new| old.metadata`).
    ///
    /// ```
    /// # fn wire(pods: &informer_runtime::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>) -> Result<(), informer_runtime::informer::Error> {
    /// pods.add_event_handler(pods.handler_funcs().updated(|old, new| {
    ///     println!("{:?} moved from {:?} to {:?}", new.metadata.name, old.spec.as_ref().and_then(|s| s.node_name.clone()), new.spec.as_ref().and_then(|s| s.node_name.clone()));
    /// }))?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn handler_funcs(&self) -> handler::EventHandlerFuncs<K> {
        handler::EventHandlerFuncs::new()
    }

    /// Registers `handler` with the informer's default resync period.
    pub fn add_event_handler(&self, handler: impl ResourceEventHandler<K>) -> Result<Registration<K>, Error> {
        self.add_event_handler_with_resync_period(handler, self.inner.default_handler_resync)
    }

    /// Registers `handler`, asking for resyncs every `resync_period` (zero: none). Periods
    /// below 1 s become 1 s; below the informer's check period they lower it before `run`, and
    /// are raised to it afterwards.
    ///
    /// A handler added while the informer runs first receives every cached object as an
    /// initial-list add, then live notifications, with nothing missed or repeated.
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync_period: Duration,
    ) -> Result<Registration<K>, Error> {
        let handler = TypedHandler::<K, _>::new(handler);
        self.register(Sink::Handler(Box::new(handler)), resync_period)
    }

    /// A stream of notifications, registered like a handler (with the replay of the cache if
    /// the informer runs). Dropping the stream removes the registration.
    pub fn stream(&self) -> Result<NotificationStream<K>, Error> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let registration = self.register(Sink::Stream(sender), Duration::ZERO)?;
        Ok(NotificationStream {
            receiver,
            registration,
        })
    }

    fn register(&self, sink: Sink<ErasedObject>, resync_period: Duration) -> Result<Registration<K>, Error> {
        let state = self.inner.register(sink, resync_period)?;
        Ok(Registration {
            informer: Arc::downgrade(&self.inner),
            state,
            _type: PhantomData,
        })
    }

    /// Removes a registration: its handler gets no further notifications (a call already in
    /// progress finishes). Registrations of other informers and removed ones are ignored.
    pub fn remove_event_handler(&self, registration: &Registration<K>) {
        if std::ptr::eq(registration.informer.as_ptr(), Arc::as_ptr(&self.inner)) {
            self.inner.remove(&registration.state);
        }
    }

    /// The number of registered handlers and streams.
    pub fn handler_count(&self) -> usize {
        self.inner.processor.len()
    }

    /// Adds indexes to the cache, indexing what it holds at once (also while running).
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        self.inner.ensure_indexable()?;
        Ok(self.cache.add_indexers(indexers)?)
    }

    /// Adds the typed index `index` to the cache, indexing what it holds at once (also while
    /// running), and returns a lister of it whose queries cannot fail.
    ///
    /// Registering the same handle again returns another lister of it; a name taken by
    /// another function fails with [`cache::Error::IndexerConflict`](crate::cache::Error)
    /// (wrapped in [`Error::Indexers`]), as [`add_indexers`](Self::add_indexers) does.
    ///
    /// ```
    /// use informer_runtime::{cache::Index, informer::{Config, SharedIndexInformer}, source::ListerWatcher};
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// static BY_APP: Index<Pod> = Index::label("app");
    ///
    /// fn web_pods(lister_watcher: impl ListerWatcher<Pod>) -> Result<(), Box<dyn std::error::Error>> {
    ///     let informer = SharedIndexInformer::new(lister_watcher, Config::default());
    ///     let by_app = informer.add_index(&BY_APP)?;
    ///     // start the informer, wait for its cache, then:
    ///     for pod in by_app.get("web") {
    ///         println!("{:?}", pod.metadata.name);
    ///     }
    ///     // the same query through the informer's lister
    ///     let _web = informer.lister().by_index(&BY_APP, "web")?;
    ///     Ok(())
    /// }
    /// ```
    pub fn add_index(&self, index: &Index<K>) -> Result<IndexedLister<K>, Error> {
        self.inner.ensure_indexable()?;
        self.cache.add_index(index)?;
        Ok(self.lister().index(index)?)
    }

    /// The cache. Read it, never write it: writes would corrupt the notifications.
    pub fn store(&self) -> Store<K> {
        self.cache.store()
    }

    /// A lister over the cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.cache.store())
    }

    /// Whether the first list was fully applied to the cache and the informer still keeps it
    /// up to date: `false` again once the informer stopped, whatever stopped it.
    pub fn has_synced(&self) -> bool {
        self.inner.has_synced()
    }

    /// Waits until the cache synced or the informer stopped, without polling; returns
    /// [`has_synced`](Self::has_synced) (client-go's `WaitForCacheSync`: `false` when the
    /// informer stopped before its cache synced). Before `run` it waits for `run`.
    pub async fn wait_for_sync(&self) -> bool {
        self.inner.wait_for_sync().await
    }

    /// Returns once the informer stopped (at once if it has).
    pub(crate) async fn until_stopped(&self) {
        self.inner.until_stopped().await;
    }

    /// Whether `run` was called.
    pub fn is_started(&self) -> bool {
        self.inner.started.load(Ordering::SeqCst)
    }

    /// Whether the informer stopped processing (`run` returned, failed, or its future was
    /// dropped); an informer never runs twice.
    pub fn is_stopped(&self) -> bool {
        self.inner.is_stopped()
    }

    /// Why the informer stopped, when it was not cancelled: the message of a panic that ended
    /// its run (a bug of this crate: user functions' panics are caught where they happen).
    pub fn failure(&self) -> Option<String> {
        self.inner.failure.get().cloned()
    }

    /// The last list or watch error of the informer's reflector, until a list succeeds: why
    /// an informer that keeps retrying has not synced.
    pub fn last_error(&self) -> Option<String> {
        self.inner
            .reflector
            .get()
            .and_then(|reflector| reflector.last_error())
    }

    /// What the informer has done so far: its reflector's counts, its cache size and each
    /// handler's state (for metrics and debugging).
    pub fn stats(&self) -> InformerStats {
        self.inner.stats()
    }

    /// The resource version of the last list or watch event ("" before `run`).
    pub fn last_sync_resource_version(&self) -> String {
        self.inner
            .reflector
            .get()
            .map(|r| r.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// The resource version the cache has caught up with: every list and watch event the
    /// reflector received up to it has been applied to the cache ("" before the first list).
    /// It moves when the informer's queue runs empty after applying changes, or when a watch
    /// event or bookmark arrives while it is empty; a receiver sees each move.
    pub(crate) fn cache_resource_version(&self) -> tokio::sync::watch::Receiver<String> {
        self.inner.cache_resource_version.subscribe()
    }

    /// Lists, watches and notifies handlers until `cancel` fires, then waits for every handler
    /// thread to finish its current call. Runs at most once.
    ///
    /// Panics in user functions are caught where they happen and the informer goes on (see
    /// [`user_panic`](crate::user_panic)). Should the informer fail all the same, it stops:
    /// the failure is logged and kept in [`failure`](Self::failure) and
    /// [`stats`](Self::stats), and [`has_synced`](Self::has_synced) turns `false`.
    pub async fn run(&self, cancel: CancellationToken) {
        Inner::run(&self.inner, cancel).await;
    }
}

impl Inner {
    fn new(
        description: String,
        cache: Arc<dyn ErasedCache>,
        lister_watcher: Arc<dyn ListerWatcher<ErasedObject>>,
        resync_period: Duration,
        reflector_config: reflector::Config,
        panics: Arc<PanicReporter>,
    ) -> Self {
        Self {
            cache,
            lister_watcher,
            processor: Processor::new(description.clone(), resync_period),
            default_handler_resync: resync_period,
            reflector_config,
            block_deltas: Mutex::new(()),
            lifecycle: Mutex::new(Lifecycle {
                transform: None,
                watch_error_handler: None,
            }),
            started: AtomicBool::new(false),
            queue_ready: tokio::sync::watch::Sender::new(false),
            stopped: tokio::sync::watch::Sender::new(false),
            failure: OnceLock::new(),
            panics,
            fifo: OnceLock::new(),
            reflector: OnceLock::new(),
            cache_resource_version: Arc::new(tokio::sync::watch::Sender::new(String::new())),
            description,
        }
    }

    fn lock_lifecycle(&self) -> MutexGuard<'_, Lifecycle> {
        self.lifecycle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_deltas(&self) -> MutexGuard<'_, ()> {
        self.block_deltas.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_stopped(&self) -> bool {
        *self.stopped.borrow()
    }

    /// Marks the informer stopped: no more handlers, `has_synced` false, waiters released.
    fn mark_stopped(&self) {
        let _lifecycle = self.lock_lifecycle();
        self.stopped.send_replace(true);
    }

    /// Whether the first list was applied and the informer still processes changes.
    fn has_synced(&self) -> bool {
        !self.is_stopped() && self.fifo.get().is_some_and(|fifo| fifo.has_synced())
    }

    fn set_transform(&self, transform: Transform<ErasedObject>) -> Result<(), Error> {
        let mut lifecycle = self.lock_lifecycle();
        self.ensure_not_started("set the transform")?;
        lifecycle.transform = Some(transform);
        Ok(())
    }

    fn set_watch_error_handler(&self, handler: WatchErrorHandler) -> Result<(), Error> {
        let mut lifecycle = self.lock_lifecycle();
        self.ensure_not_started("set the watch error handler")?;
        lifecycle.watch_error_handler = Some(handler);
        Ok(())
    }

    fn ensure_not_started(&self, action: &'static str) -> Result<(), Error> {
        if self.started.load(Ordering::SeqCst) {
            return Err(Error::AlreadyStarted {
                action,
                informer: self.description.clone(),
            });
        }
        Ok(())
    }

    fn ensure_indexable(&self) -> Result<(), Error> {
        if self.is_stopped() {
            return Err(Error::IndexersAfterStop {
                informer: self.description.clone(),
            });
        }
        Ok(())
    }

    fn register(
        &self,
        sink: Sink<ErasedObject>,
        resync_period: Duration,
    ) -> Result<Arc<ListenerState>, Error> {
        let _lifecycle = self.lock_lifecycle();
        if self.is_stopped() {
            return Err(Error::Stopped {
                informer: self.description.clone(),
            });
        }
        let started = self.started.load(Ordering::SeqCst);
        let _deltas = self.lock_deltas();
        let replay = if started { self.cache.objects() } else { Vec::new() };
        Ok(self.processor.add_listener(sink, resync_period, started, replay))
    }

    fn remove(&self, registration: &ListenerState) {
        let _lifecycle = self.lock_lifecycle();
        let _deltas = self.lock_deltas();
        self.processor.remove(registration.id);
    }

    async fn wait_for_sync(&self) -> bool {
        let mut stopped = self.stopped.subscribe();
        let synced = async {
            // Errors mean a sender is gone, which cannot happen while `self` holds the informer.
            let _ = self.queue_ready.subscribe().wait_for(|ready| *ready).await;
            if let Some(fifo) = self.fifo.get() {
                let _ = fifo.synced_receiver().wait_for(|synced| *synced).await;
            }
        };
        tokio::select! {
            () = synced => {}
            _ = stopped.wait_for(|stopped| *stopped) => {}
        }
        self.has_synced()
    }

    async fn until_stopped(&self) {
        let mut stopped = self.stopped.subscribe();
        // An error means the sender is gone, which cannot happen while `self` holds it.
        let _ = stopped.wait_for(|stopped| *stopped).await;
    }

    fn stats(&self) -> InformerStats {
        let synced = self.has_synced();
        InformerStats {
            description: self.description.clone(),
            reflector: self.reflector.get().map(|r| r.stats()).unwrap_or_default(),
            store_size: self.cache.len(),
            synced,
            stopped: self.is_stopped(),
            failure: self.failure.get().cloned(),
            panics: self.panics.stats(),
            handlers: self
                .processor
                .listener_states()
                .iter()
                .map(|state| HandlerStats {
                    id: state.id,
                    backlog: state.backlog.load(Ordering::SeqCst),
                    handled: state.handled.load(Ordering::SeqCst),
                    panics: state.panics.load(Ordering::SeqCst),
                    synced: synced && state.pending_initial.load(Ordering::SeqCst) == 0,
                })
                .collect(),
        }
    }

    async fn run(self: &Arc<Self>, cancel: CancellationToken) {
        let Some((fifo, reflector)) = self.prepare_run() else {
            tracing::warn!(informer = %self.description, "the informer has already been started");
            return;
        };
        tracing::debug!(informer = %self.description, "starting informer");
        let mut stop_on_drop = StopOnDrop {
            inner: self,
            armed: true,
        };
        let running = self.process_until_cancelled(&fifo, &reflector, cancel);
        if let Err(payload) = AssertUnwindSafe(running).catch_unwind().await {
            let message = panic_message(payload.as_ref());
            tracing::error!(informer = %self.description, panic = %message, "the informer failed and stopped");
            let _ = self.failure.set(message);
            fifo.close();
        }
        stop_on_drop.armed = false;
        self.mark_stopped();
        self.processor.stop().await;
        tracing::debug!(informer = %self.description, "stopped informer");
    }

    /// Runs the reflector and applies what it queues until `cancel` fires.
    async fn process_until_cancelled(
        &self,
        fifo: &Arc<DeltaFifo<ErasedObject>>,
        reflector: &Arc<Reflector<ErasedObject>>,
        cancel: CancellationToken,
    ) {
        let close_on_cancel = async {
            cancel.cancelled().await;
            fifo.close();
        };
        let process = async {
            let mut unsent = 0;
            // Replaced objects are freed on the informer's own thread when it has one (see
            // `reclaim`); measured: a third less CPU per event with one handler.
            let current_thread = tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread);
            let mut reclaimer = Reclaimer::new(if current_thread { RECLAIMED_OBJECTS } else { 0 });
            loop {
                let popped = fifo
                    .pop(|deltas, is_in_initial_list| {
                        self.handle_deltas(deltas, is_in_initial_list, &mut reclaimer);
                        Ok::<(), ProcessError<Infallible>>(())
                    })
                    .await;
                if let Err(PopError::Closed) = popped {
                    break;
                }
                // Handlers get what is queued once the queue runs empty (or a batch is full):
                // a burst of changes wakes each handler thread once.
                unsent += 1;
                if unsent >= MAX_UNSENT_CHANGES || fifo.is_empty() {
                    self.processor.flush();
                    unsent = 0;
                }
                reclaimer.reclaim();
            }
        };
        let span = tracing::info_span!("informer", informer = %self.description);
        tokio::join!(
            reflector.run(cancel.clone()),
            close_on_cancel,
            process.instrument(span)
        );
    }

    fn prepare_run(self: &Arc<Self>) -> Option<Pipeline> {
        let lifecycle = self.lock_lifecycle();
        if self.started.load(Ordering::SeqCst) {
            return None;
        }
        let known: Arc<dyn KnownObjects<ErasedObject>> = Arc::new(KnownInCache(Arc::clone(&self.cache)));
        let fifo = Arc::new(
            DeltaFifo::new(delta_fifo::Config {
                known_objects: Some(known),
                emit_delta_type_replaced: true,
                transform: lifecycle.transform.clone(),
            })
            .panic_reporter(Arc::clone(&self.panics))
            .publish_caught_up_to(Arc::clone(&self.cache_resource_version)),
        );
        let config = reflector::Config {
            resync_period: self.processor.resync_check_period(),
            ..self.reflector_config.clone()
        };
        let weak = Arc::downgrade(self);
        let mut reflector = Reflector::new(
            self.description.clone(),
            Arc::clone(&self.lister_watcher),
            Arc::clone(&fifo) as Arc<dyn ReflectorStore<ErasedObject>>,
            config,
        )
        .should_resync(Arc::new(move || {
            weak.upgrade()
                .is_some_and(|inner| inner.processor.should_resync())
        }))
        .panic_reporter(Arc::clone(&self.panics));
        if let Some(handler) = &lifecycle.watch_error_handler {
            let (handler_of_panics, description) = (Arc::clone(handler), self.description.clone());
            self.panics.forward_to(Arc::new(move |panic| {
                handler_of_panics(&description, &reflector::Error::Panicked(panic.clone()));
            }));
            reflector = reflector.watch_error_handler(Arc::clone(handler));
        }
        let reflector = Arc::new(reflector);
        let _ = self.fifo.set(Arc::clone(&fifo));
        let _ = self.reflector.set(Arc::clone(&reflector));
        self.started.store(true, Ordering::SeqCst);
        self.queue_ready.send_replace(true);
        Some((fifo, reflector))
    }

    /// Applies one key's changes to the cache and notifies the handlers (client-go's
    /// `HandleDeltas` with `processDeltas`).
    fn handle_deltas(
        &self,
        deltas: &Deltas<ErasedObject>,
        is_in_initial_list: bool,
        reclaimer: &mut Reclaimer<Held>,
    ) {
        let Some(key) = deltas.key() else {
            return;
        };
        let _deltas = self.lock_deltas();
        let processor = &self.processor;
        for delta in deltas.iter() {
            match (delta.kind, &delta.object) {
                (DeltaType::Deleted, object) => {
                    if let Some(stored) = self.cache.delete_by_key(&key) {
                        reclaimer.hold(&Held::Object(stored));
                    }
                    if let Some(last) = object.object() {
                        reclaimer.hold(&Held::Replaced(Arc::clone(last)));
                    }
                    processor.distribute(&Notification::Delete(object.clone()), false);
                }
                (_, MaybeTombstone::Object(object)) => match self.cache.insert(key.clone(), object) {
                    Some(old) => {
                        let is_sync = old.meta().resource_version == object.meta().resource_version;
                        let old = Arc::new(old);
                        reclaimer.hold(&Held::Replaced(Arc::clone(&old)));
                        reclaimer.hold(&Held::Delivered(Arc::clone(object)));
                        processor.distribute(
                            &Notification::Update {
                                old,
                                new: Arc::clone(object),
                            },
                            is_sync,
                        );
                    }
                    None => {
                        reclaimer.hold(&Held::Delivered(Arc::clone(object)));
                        processor.distribute(
                            &Notification::Add {
                                object: Arc::clone(object),
                                is_in_initial_list,
                            },
                            false,
                        );
                    }
                },
                (kind, MaybeTombstone::Tombstone(tombstone)) => {
                    tracing::error!(informer = %self.description, ?kind, key = %tombstone.key, "a tombstone can only be deleted; skipped");
                }
            }
        }
    }
}

/// A snapshot of an informer's activity, from [`SharedIndexInformer::stats`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InformerStats {
    /// The informer's description.
    pub description: String,
    /// Lists, watches and errors of its reflector.
    pub reflector: reflector::ReflectorStats,
    /// Objects in the cache.
    pub store_size: usize,
    /// Whether the cache synced and the informer still keeps it up to date.
    pub synced: bool,
    /// Whether the informer stopped processing changes (cancelled, failed, or dropped).
    pub stopped: bool,
    /// Why the informer stopped, if it failed (see [`SharedIndexInformer::failure`]).
    pub failure: Option<String>,
    /// Panics caught in the informer's user functions (transform, index functions,
    /// watch-error handler, lister-watcher); handlers' panics are in [`HandlerStats`].
    pub panics: UserPanicStats,
    /// Every registered handler or stream.
    pub handlers: Vec<HandlerStats>,
}

/// A snapshot of one registration's activity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HandlerStats {
    /// The registration's number within its informer.
    pub id: u64,
    /// Notifications waiting for the handler.
    pub backlog: usize,
    /// Notifications handled.
    pub handled: u64,
    /// Calls that panicked.
    pub panics: u64,
    /// Whether it handled its initial list.
    pub synced: bool,
}

/// The handle of a registered handler or stream (client-go's `ResourceEventHandlerRegistration`).
pub struct Registration<K> {
    informer: Weak<Inner>,
    state: Arc<ListenerState>,
    _type: PhantomData<fn() -> K>,
}

impl<K> fmt::Debug for Registration<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("id", &self.state.id)
            .field("backlog", &self.backlog())
            .finish()
    }
}

impl<K: Resource + Clone + Send + Sync + 'static> Registration<K> {
    /// Whether the informer has synced (and still runs) and this handler has handled every
    /// object of the initial list (or of its replay). A handler that panicked on one of them
    /// never syncs.
    pub fn has_synced(&self) -> bool {
        let Some(informer) = self.informer.upgrade() else {
            return false;
        };
        informer.has_synced() && self.state.pending_initial.load(Ordering::SeqCst) == 0
    }

    /// Whether the registration is still registered with its informer.
    pub fn is_registered(&self) -> bool {
        !self.state.removed.load(Ordering::SeqCst)
            && self
                .informer
                .upgrade()
                .is_some_and(|informer| !informer.is_stopped())
    }

    /// Removes the registration (same as [`SharedIndexInformer::remove_event_handler`]).
    pub fn remove(&self) {
        if let Some(inner) = self.informer.upgrade() {
            inner.remove(&self.state);
        }
    }
}

impl<K> Registration<K> {
    /// How far this handler got through the notifications distributed to it.
    pub(crate) fn delivery(&self) -> Arc<processor::ListenerState> {
        Arc::clone(&self.state)
    }

    /// Notifications buffered for this handler and not yet taken.
    pub fn backlog(&self) -> usize {
        self.state.backlog.load(Ordering::SeqCst)
    }

    /// Notifications handled so far.
    pub fn handled(&self) -> u64 {
        self.state.handled.load(Ordering::SeqCst)
    }

    /// Handler calls that panicked so far.
    pub fn panics(&self) -> u64 {
        self.state.panics.load(Ordering::SeqCst)
    }
}

/// Notifications as a [`Stream`], for async consumers. Dropping it removes the registration.
pub struct NotificationStream<K: Resource + Clone + Send + Sync + 'static> {
    receiver: mpsc::UnboundedReceiver<Notification<ErasedObject>>,
    registration: Registration<K>,
}

impl<K: Resource + Clone + Send + Sync + 'static> NotificationStream<K> {
    /// The registration behind the stream.
    pub fn registration(&self) -> &Registration<K> {
        &self.registration
    }
}

impl<K: Resource + Clone + Send + Sync + 'static> Stream for NotificationStream<K> {
    type Item = Notification<K>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Notification<K>>> {
        loop {
            let Poll::Ready(notification) = self.receiver.poll_recv(cx) else {
                return Poll::Pending;
            };
            let Some(notification) = notification else {
                return Poll::Ready(None);
            };
            let state = &self.registration.state;
            state.taken();
            state.handled.fetch_add(1, Ordering::SeqCst);
            if matches!(
                notification,
                Notification::Add {
                    is_in_initial_list: true,
                    ..
                }
            ) {
                state.pending_initial.fetch_sub(1, Ordering::SeqCst);
            }
            // an object of another type is reported and left out (it cannot happen)
            if let Some(notification) = typed_notification(notification) {
                return Poll::Ready(Some(notification));
            }
        }
    }
}

impl<K: Resource + Clone + Send + Sync + 'static> Drop for NotificationStream<K> {
    fn drop(&mut self) {
        self.registration.remove();
    }
}

#[cfg(test)]
mod tests;
