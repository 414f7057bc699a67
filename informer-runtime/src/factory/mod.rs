//! The shared informer factory: one informer per resource type, started together, waited for
//! together, shut down together (client-go's `SharedInformerFactory`).

mod thread;
use std::{
    any::{Any, TypeId},
    collections::HashMap,
    fmt,
    future::Future,
    sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError},
    time::Duration,
};

use futures::{FutureExt, future::BoxFuture};
use kube::{
    Client, Resource,
    core::{GroupVersionResource, ObjectMeta, PartialObjectMeta},
};
use serde::{Serialize, de::DeserializeOwned};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::informer;
use crate::{
    cache::delta_fifo::Transform,
    cache::namespace_indexers,
    factory::thread::InformerThread,
    informer::{InformerStats, SharedIndexInformer},
    lister::GenericLister,
    reflector,
    source::ListOptions,
    source::{ApiScope, KubeListerWatcher, TweakListOptions},
};

type MetadataTransform = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;

/// A resource type the factory makes informers of by itself, with its client, namespace and
/// list tweaks ([`SharedInformerFactory::informer`]): any typed resource, such as a k8s-openapi
/// type or a `#[derive(CustomResource)]` type. Implemented for every type that qualifies.
pub trait TypedResource:
    Resource<DynamicType = (), Scope: ApiScope>
    + Clone
    + Serialize
    + DeserializeOwned
    + fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> TypedResource for K where
    K: Resource<DynamicType = (), Scope: ApiScope>
        + Clone
        + Serialize
        + DeserializeOwned
        + fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// The result of a factory operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed factory operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `for_resource` was asked for a resource the factory has no informer for.
    #[error(
        "failed to find an informer for {group}/{version}, Resource={resource}: no informer is generated for this resource (check the group, version and plural)"
    )]
    NoInformerFor {
        /// The API group ("" for core).
        group: String,
        /// The API version.
        version: String,
        /// The plural resource name.
        resource: String,
    },
    /// The informers' own thread could not be started.
    #[error("failed to start the informers' thread: {0}")]
    StartThread(#[source] std::io::Error),
    /// [`SharedInformerFactory::informer_for`] was asked to create an informer of a type the
    /// factory already has one of.
    #[error(
        "failed to create an informer of {type_name}: the factory already has one (created by an earlier request, such as `informer::<K>()` or a generated accessor); request custom informers before anything else asks for the type, or add indexes to the existing one with `add_indexers`"
    )]
    InformerExists {
        /// The resource type.
        type_name: &'static str,
    },
    /// The client for the informers' own thread could not be made from the configuration.
    #[error("failed to create a client on the informers' thread: {0}")]
    Client(#[source] kube::Error),
}

impl Error {
    /// The error for an unknown `gvr`.
    pub fn no_informer_for(gvr: &GroupVersionResource) -> Self {
        Self::NoInformerFor {
            group: gvr.group.clone(),
            version: gvr.version.clone(),
            resource: gvr.resource.clone(),
        }
    }
}

/// The parts of an informer a factory needs without knowing its type.
trait ErasedInformer: Send + Sync {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()>;
    fn wait_for_sync(&self) -> BoxFuture<'static, bool>;
    fn has_synced(&self) -> bool;
    fn is_stopped(&self) -> bool;
    fn failure(&self) -> Option<String>;
    fn description(&self) -> String;
    fn generic_lister(&self) -> GenericLister;
    fn stats(&self) -> InformerStats;
}

impl<K: Resource + Clone + Serialize + Send + Sync + 'static> ErasedInformer for SharedIndexInformer<K> {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()> {
        let informer = self.clone();
        async move { informer.run(cancel).await }.boxed()
    }

    fn wait_for_sync(&self) -> BoxFuture<'static, bool> {
        let informer = self.clone();
        async move { informer.wait_for_sync().await }.boxed()
    }

    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }

    fn is_stopped(&self) -> bool {
        SharedIndexInformer::is_stopped(self)
    }

    fn failure(&self) -> Option<String> {
        SharedIndexInformer::failure(self)
    }

    fn description(&self) -> String {
        SharedIndexInformer::description(self).to_owned()
    }

    fn generic_lister(&self) -> GenericLister {
        GenericLister::new(self.store())
    }

    fn stats(&self) -> InformerStats {
        SharedIndexInformer::stats(self)
    }
}

struct Entry {
    type_name: &'static str,
    typed: Arc<dyn Any + Send + Sync>,
    erased: Arc<dyn ErasedInformer>,
    started: bool,
}

struct State {
    informers: HashMap<TypeId, Entry>,
    /// Creation order, for stable reports.
    order: Vec<TypeId>,
    shutting_down: bool,
}

struct Options {
    namespace: Option<String>,
    tweak_list_options: Option<TweakListOptions>,
    default_resync: Duration,
    custom_resync: HashMap<TypeId, Duration>,
    metadata_transform: Option<MetadataTransform>,
    transforms: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    compact_objects: bool,
    watch_error_handler: Option<reflector::WatchErrorHandler>,
    /// Run the informers on the runtime that calls `start` rather than on a thread of the
    /// factory's own.
    on_caller_runtime: bool,
}

struct Inner {
    client: Client,
    options: Options,
    state: Mutex<State>,
    cancel: CancellationToken,
    tasks: TaskTracker,
    /// Where the informers run: the thread `builder_on_own_thread` made with its client, or
    /// the one the first `start` makes (unless they run on the caller's runtime).
    thread: OnceLock<InformerThread>,
}

/// One informer per resource type, shared by everything that asks for it.
///
/// Informers are created on first request ([`informer::<K>()`](Self::informer), which
/// generated accessors such as `informers.apps().v1().deployments()` call, or
/// [`informer_for`](Self::informer_for) with a custom constructor), started by
/// [`start`](Self::start), waited for by [`wait_for_cache_sync`](Self::wait_for_cache_sync)
/// and stopped by [`shutdown`](Self::shutdown). Options that apply to every informer
/// (namespace, list tweaks, resync, transforms, watch-error handler) are set on the
/// [`builder`](Self::builder).
///
/// ```no_run
/// use std::{sync::Arc, time::Duration};
/// use informer_runtime::{EventHandlerFuncs, SharedInformerFactory};
/// use k8s_openapi::api::core::v1::Pod;
///
/// # async fn example(client: kube::Client) {
/// let factory = SharedInformerFactory::builder(client)
///     .namespace("prod")
///     .resync(Duration::from_secs(600))
///     .build();
/// let pods = factory.informer::<Pod>();
/// pods.add_event_handler(EventHandlerFuncs::new().added(|pod: Arc<Pod>, _| {
///     println!("pod {:?}", pod.metadata.name);
/// }))
/// .expect("not stopped");
///
/// factory.start();
/// let report = factory.wait_for_cache_sync_timeout(Duration::from_secs(30)).await;
/// assert!(report.all_synced(), "{report}");
/// let web = pods.lister().by_namespace("prod").get("web");
/// # let _ = web;
/// factory.shutdown().await;
/// # }
/// ```
///
/// # Where the informers run
///
/// [`start`](Self::start) runs the informers on a thread of the factory's own (a
/// current-thread runtime), not on the caller's runtime: on a multi-thread runtime, handing
/// every event between the HTTP connection, the decoding, the cache and the handlers wakes
/// other threads and frees objects away from where they were decoded, which costs about as
/// much CPU as decoding them. On their own thread the informers use half the CPU per event
/// (measured with `informer-bench`, see the README). Listers, stores, handlers' registrations
/// and the factory's methods work from any thread; handlers run on threads of their own as
/// always. The thread runs until [`shutdown`](Self::shutdown), or until the runtime that
/// called `start` shuts down (as the informers' tasks would on that runtime).
///
/// The client's requests still pass through its request queue on the runtime the client was
/// made on. A connection the informers open is served on their thread; one the client opened
/// earlier for other requests, and reuses for an informer, stays on the runtime that opened
/// it, and each chunk of a watch then crosses threads (still less CPU than on the caller's
/// runtime, but more than on a connection of their own). For a client whose connections all
/// live on the informers' thread, use
/// [`builder_on_own_thread`](Self::builder_on_own_thread); to keep the informers on the
/// caller's runtime (for example under tokio's paused test clock), use
/// [`Builder::on_caller_runtime`].
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: Arc<Inner>,
}

impl fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("SharedInformerFactory")
            .field("namespace", &self.inner.options.namespace)
            .field(
                "informers",
                &state
                    .order
                    .iter()
                    .filter_map(|t| state.informers.get(t))
                    .map(|e| e.type_name)
                    .collect::<Vec<_>>(),
            )
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

/// Builds a [`SharedInformerFactory`] (client-go's `SharedInformerOption`s).
pub struct Builder {
    client: Client,
    options: Options,
    thread: Option<InformerThread>,
}

impl Builder {
    /// Watch only `namespace` (default: all namespaces).
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.options.namespace = Some(namespace.into());
        self
    }

    /// Change every list and watch request, for example to add a label selector.
    #[must_use]
    pub fn tweak_list_options(mut self, tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static) -> Self {
        self.options.tweak_list_options = Some(Arc::new(tweak));
        self
    }

    /// The default resync period of the informers (zero: none).
    #[must_use]
    pub fn resync(mut self, period: Duration) -> Self {
        self.options.default_resync = period;
        self
    }

    /// The resync period of `K`'s informer.
    #[must_use]
    pub fn resync_for<K: 'static>(mut self, period: Duration) -> Self {
        self.options.custom_resync.insert(TypeId::of::<K>(), period);
        self
    }

    /// Applies `transform` to the metadata of every object of every informer before it is
    /// cached, for example to drop `managedFields`.
    #[must_use]
    pub fn transform_metadata(mut self, transform: impl Fn(&mut ObjectMeta) + Send + Sync + 'static) -> Self {
        self.options.metadata_transform = Some(Arc::new(transform));
        self
    }

    /// Applies `transform` to every object of `K`'s informer before it is cached (after
    /// [`transform_metadata`](Self::transform_metadata)).
    #[must_use]
    pub fn transform<K: Send + Sync + 'static>(
        mut self,
        transform: impl Fn(&mut K) + Send + Sync + 'static,
    ) -> Self {
        let transform: Transform<K> = Arc::new(transform);
        self.options
            .transforms
            .insert(TypeId::of::<K>(), Arc::new(transform));
        self
    }

    /// Re-allocates every object once before it is cached (after the transforms), so that its
    /// lists and maps hold exactly their elements, for a deep copy of each object (about a
    /// third more CPU per event on top of decoding it). Objects decoded by
    /// [`KubeListerWatcher`] (every informer of a factory) already have every list at its
    /// exact size: compact them only when a transform leaves lists with room to spare (it
    /// removed elements) or when another lister-watcher decodes them. The copy is made before
    /// the object is shared, so nothing is copied twice.
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) {
    /// use informer_runtime::factory::SharedInformerFactory;
    ///
    /// let factory = SharedInformerFactory::builder(client)
    ///     .transform_metadata(|meta| meta.managed_fields = None)
    ///     .compact_objects(true)
    ///     .build();
    /// # let _ = factory;
    /// # }
    /// ```
    #[must_use]
    pub fn compact_objects(mut self, compact: bool) -> Self {
        self.options.compact_objects = compact;
        self
    }

    /// Reports the errors every informer recovers from, with the informer's description.
    #[must_use]
    pub fn watch_error_handler(
        mut self,
        handler: impl Fn(&str, &reflector::Error) + Send + Sync + 'static,
    ) -> Self {
        self.options.watch_error_handler = Some(Arc::new(handler));
        self
    }

    /// Runs the informers on the runtime that calls [`start`](SharedInformerFactory::start),
    /// each in a task of its own, instead of on a thread of the factory's own: for tests under
    /// tokio's paused clock (the informers' timers then follow it), or to keep every task on
    /// one runtime. At high event rates this costs about twice the CPU per event on a
    /// multi-thread runtime (see [`SharedInformerFactory`]). Ignored by a builder from
    /// [`builder_on_own_thread`](SharedInformerFactory::builder_on_own_thread), whose client
    /// lives on the informers' thread.
    #[must_use]
    pub fn on_caller_runtime(mut self) -> Self {
        self.options.on_caller_runtime = true;
        self
    }

    /// The factory.
    pub fn build(self) -> SharedInformerFactory {
        let thread = OnceLock::new();
        if let Some(own) = self.thread {
            let _ = thread.set(own);
        }
        SharedInformerFactory {
            inner: Arc::new(Inner {
                client: self.client,
                options: self.options,
                state: Mutex::new(State {
                    informers: HashMap::new(),
                    order: Vec::new(),
                    shutting_down: false,
                }),
                cancel: CancellationToken::new(),
                tasks: TaskTracker::new(),
                thread,
            }),
        }
    }
}

/// What an informer constructor gets from the factory.
pub struct InformerContext<'a> {
    factory: &'a SharedInformerFactory,
    resync_period: Duration,
}

impl InformerContext<'_> {
    /// The factory's client.
    pub fn client(&self) -> &Client {
        &self.factory.inner.client
    }

    /// The namespace to watch (`None`: all).
    pub fn namespace(&self) -> Option<&str> {
        self.factory.inner.options.namespace.as_deref()
    }

    /// The list option tweak, if any.
    pub fn tweak_list_options(&self) -> Option<TweakListOptions> {
        self.factory.inner.options.tweak_list_options.clone()
    }

    /// The resync period for this type.
    pub fn resync_period(&self) -> Duration {
        self.resync_period
    }
}

/// Whether each started informer synced, from
/// [`SharedInformerFactory::wait_for_cache_sync`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncReport {
    /// One entry per started informer, in creation order.
    pub informers: Vec<InformerSync>,
}

/// The sync state of one informer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InformerSync {
    /// The Rust type of the informer's objects.
    pub type_name: &'static str,
    /// The informer's description.
    pub description: String,
    /// Whether its cache synced (and the informer still keeps it up to date).
    pub synced: bool,
    /// Whether the informer stopped: the factory shut down, or it failed.
    pub stopped: bool,
    /// Why it stopped, if it failed (see [`SharedIndexInformer::failure`]).
    pub failure: Option<String>,
}

impl SyncReport {
    /// Whether every informer synced.
    pub fn all_synced(&self) -> bool {
        self.informers.iter().all(|i| i.synced)
    }

    /// Whether `K`'s informer synced (`None` if it was not started).
    pub fn is_synced<K: 'static>(&self) -> Option<bool> {
        let name = std::any::type_name::<K>();
        self.informers
            .iter()
            .find(|i| i.type_name == name)
            .map(|i| i.synced)
    }
}

impl fmt::Display for SyncReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let synced = self.informers.iter().filter(|i| i.synced).count();
        write!(f, "{synced}/{} informers synced", self.informers.len())?;
        let describe = |i: &InformerSync| match (&i.failure, i.stopped) {
            (Some(failure), _) => format!("{} (failed: {failure})", i.description),
            (None, true) => format!("{} (stopped)", i.description),
            (None, false) => i.description.clone(),
        };
        let unsynced: Vec<String> = self
            .informers
            .iter()
            .filter(|i| !i.synced)
            .map(describe)
            .collect();
        if !unsynced.is_empty() {
            write!(f, "; not synced: {}", unsynced.join(", "))?;
        }
        Ok(())
    }
}

/// The task of one informer: its run, and an error if it ends while the factory still runs
/// (its cache is then no longer kept up to date; the stats and sync reports say so too).
fn watch_informer_task(
    informer: &Arc<dyn ErasedInformer>,
    cancel: &CancellationToken,
) -> BoxFuture<'static, ()> {
    let run = informer.run(cancel.child_token());
    let (informer, cancel) = (Arc::clone(informer), cancel.clone());
    async move {
        run.await;
        // An informer already run by its owner returns at once here without stopping.
        if !cancel.is_cancelled() && informer.is_stopped() {
            tracing::error!(
                informer = %informer.description(),
                failure = informer.failure().as_deref().unwrap_or("none recorded"),
                "an informer stopped while its factory runs; its cache is no longer kept up to date"
            );
        }
    }
    .boxed()
}

/// An informer reached through its group, version and resource (client-go's
/// `GenericInformer`); it is the same informer the typed accessor returns.
#[derive(Clone)]
pub struct GenericInformer {
    gvr: GroupVersionResource,
    typed: Arc<dyn Any + Send + Sync>,
    erased: Arc<dyn ErasedInformer>,
}

impl fmt::Debug for GenericInformer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericInformer").field("gvr", &self.gvr).finish()
    }
}

impl GenericInformer {
    /// The resource.
    pub fn gvr(&self) -> &GroupVersionResource {
        &self.gvr
    }

    /// Whether the informer's cache synced.
    pub fn has_synced(&self) -> bool {
        self.erased.has_synced()
    }

    /// A lister over the informer's cache.
    pub fn lister(&self) -> GenericLister {
        self.erased.generic_lister()
    }

    /// The typed informer, if its objects are `K`.
    pub fn informer<K: Send + Sync + 'static>(&self) -> Option<SharedIndexInformer<K>> {
        self.typed.downcast_ref::<SharedIndexInformer<K>>().cloned()
    }
}

impl SharedInformerFactory {
    /// A factory over all namespaces without resyncs.
    pub fn new(client: Client) -> Self {
        Self::builder(client).build()
    }

    /// A factory with options.
    pub fn builder(client: Client) -> Builder {
        Builder {
            client,
            options: Options {
                namespace: None,
                tweak_list_options: None,
                default_resync: Duration::ZERO,
                custom_resync: HashMap::new(),
                metadata_transform: None,
                transforms: HashMap::new(),
                compact_objects: false,
                watch_error_handler: None,
                on_caller_runtime: false,
            },
            thread: None,
        }
    }

    /// A factory whose informers run on a thread of their own (a current-thread runtime), as
    /// every factory's do, with a client made there from `config`: every connection of that
    /// client, its request queue included, is served on the informers' thread, so no watch
    /// chunk ever crosses threads (a factory from [`new`](Self::new) serves on its thread
    /// only the connections its informers open; see [`SharedInformerFactory`]). Handlers
    /// still run on their own threads; listers, stores and the factory's methods work from
    /// any thread. [`shutdown`](Self::shutdown), or dropping the factory, stops the thread.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use informer_runtime::factory::SharedInformerFactory;
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// let config = kube::Config::infer().await?;
    /// let factory = SharedInformerFactory::builder_on_own_thread(config)?.build();
    /// let pods = factory.informer::<Pod>();
    /// factory.start();
    /// factory.wait_for_cache_sync().await;
    /// println!("{} pods", pods.store().len());
    /// factory.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder_on_own_thread(config: kube::Config) -> Result<Builder, Error> {
        let thread = InformerThread::start().map_err(Error::StartThread)?;
        let client = {
            // the client's background tasks are spawned on the thread's runtime
            let _runtime = thread.handle().enter();
            Client::try_from(config).map_err(Error::Client)?
        };
        let mut builder = Self::builder(client);
        builder.thread = Some(thread);
        Ok(builder)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The client the informers use.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The namespace the informers watch (`None`: all).
    pub fn namespace(&self) -> Option<&str> {
        self.inner.options.namespace.as_deref()
    }

    /// Creates the informer of `K` with `new_informer`, for a custom lister-watcher, indexers or
    /// options; most code wants [`informer`](Self::informer) instead.
    ///
    /// The factory holds one informer per type. When it already holds one of `K` (from an
    /// earlier call, from [`informer`](Self::informer) or from a generated accessor such as
    /// `pods()`), `new_informer` is not called and the result is
    /// [`Error::InformerExists`]: a constructor is never ignored silently. Call this before
    /// anything else asks for `K`; to add indexes to an existing informer, use
    /// [`SharedIndexInformer::add_indexers`] (it merges, and refuses an index name already
    /// taken).
    ///
    /// # Errors
    ///
    /// [`Error::InformerExists`] as above.
    pub fn informer_for<K>(
        &self,
        new_informer: impl FnOnce(&InformerContext<'_>) -> SharedIndexInformer<K>,
    ) -> Result<SharedIndexInformer<K>>
    where
        K: Resource + Clone + Serialize + Send + Sync + 'static,
    {
        let exists = || Error::InformerExists {
            type_name: std::any::type_name::<K>(),
        };
        if self.existing::<K>().is_some() {
            return Err(exists());
        }
        self.insert(self.create(new_informer)).map_err(|_| exists())
    }

    /// The informer of `K` the factory holds, if any.
    fn existing<K: Send + Sync + 'static>(&self) -> Option<SharedIndexInformer<K>> {
        self.lock()
            .informers
            .get(&TypeId::of::<K>())
            .and_then(|e| e.typed.downcast_ref())
            .cloned()
    }

    /// A new informer of `K` from `new_informer`, with the factory's transforms and handler.
    fn create<K>(
        &self,
        new_informer: impl FnOnce(&InformerContext<'_>) -> SharedIndexInformer<K>,
    ) -> SharedIndexInformer<K>
    where
        K: Resource + Clone + Serialize + Send + Sync + 'static,
    {
        let options = &self.inner.options;
        let resync_period = options
            .custom_resync
            .get(&TypeId::of::<K>())
            .copied()
            .unwrap_or(options.default_resync);
        let informer = new_informer(&InformerContext {
            factory: self,
            resync_period,
        });
        self.configure(&informer);
        informer
    }

    /// Keeps `informer` as the informer of `K`; `Err` with the one kept already when another
    /// caller created one meanwhile.
    fn insert<K>(
        &self,
        informer: SharedIndexInformer<K>,
    ) -> Result<SharedIndexInformer<K>, SharedIndexInformer<K>>
    where
        K: Resource + Clone + Serialize + Send + Sync + 'static,
    {
        let type_id = TypeId::of::<K>();
        let mut state = self.lock();
        if let Some(existing) = state.informers.get(&type_id).and_then(|e| e.typed.downcast_ref()) {
            return Err(SharedIndexInformer::clone(existing));
        }
        state.informers.insert(
            type_id,
            Entry {
                type_name: std::any::type_name::<K>(),
                typed: Arc::new(informer.clone()),
                erased: Arc::new(informer.clone()),
                started: false,
            },
        );
        state.order.push(type_id);
        Ok(informer)
    }

    fn configure<K>(&self, informer: &SharedIndexInformer<K>)
    where
        K: Resource + Clone + Serialize + Send + Sync + 'static,
    {
        let options = &self.inner.options;
        let typed: Option<Transform<K>> = options
            .transforms
            .get(&TypeId::of::<K>())
            .and_then(|t| t.downcast_ref::<Transform<K>>())
            .cloned();
        let metadata = options.metadata_transform.clone();
        let compact = options.compact_objects;
        if typed.is_some() || metadata.is_some() || compact {
            let result = informer.set_transform(move |obj: &mut K| {
                if let Some(metadata) = &metadata {
                    metadata(obj.meta_mut());
                }
                if let Some(typed) = &typed {
                    typed(obj);
                }
                if compact {
                    // a clone allocates every list and map at its length
                    *obj = obj.clone();
                }
            });
            if let Err(err) = result {
                tracing::warn!(error = %err, "the factory's transform was not applied");
            }
        }
        if let Some(handler) = options.watch_error_handler.clone()
            && let Err(err) = informer.set_watch_error_handler(move |informer, e| handler(informer, e))
        {
            tracing::warn!(error = %err, "the factory's watch error handler was not applied");
        }
    }

    /// The informer of any typed resource `K` (a k8s-openapi type or a custom resource),
    /// listing and watching through the factory's client, namespace and tweaks, with the
    /// namespace index; generated accessors such as `pods()` return this same informer.
    ///
    /// The first request creates it; later requests return the same informer, whoever created
    /// it (including [`informer_for`](Self::informer_for) with a custom constructor).
    ///
    /// ```no_run
    /// # async fn example(client: kube::Client) {
    /// use informer_runtime::SharedInformerFactory;
    /// use k8s_openapi::api::{apps::v1::Deployment, core::v1::Node};
    ///
    /// let factory = SharedInformerFactory::new(client);
    /// let deployments = factory.informer::<Deployment>();
    /// let nodes = factory.informer::<Node>();
    /// factory.start();
    /// factory.wait_for_cache_sync().await;
    /// println!("{} nodes", nodes.lister().list(&Default::default()).len());
    /// # let _ = deployments;
    /// # }
    /// ```
    pub fn informer<K: TypedResource>(&self) -> SharedIndexInformer<K> {
        if let Some(existing) = self.existing::<K>() {
            return existing;
        }
        let informer = self.create(|context| {
            let api = <K::Scope as ApiScope>::api::<K>(context.client().clone(), context.namespace());
            let lister_watcher =
                KubeListerWatcher::new(api).shared_tweak_list_options(context.tweak_list_options());
            SharedIndexInformer::new(
                lister_watcher,
                informer::Config {
                    resync_period: context.resync_period(),
                    indexers: namespace_indexers(),
                    description: Some(if K::metadata_api() {
                        format!("{} (metadata)", K::plural(&()))
                    } else {
                        K::plural(&()).into_owned()
                    }),
                    ..informer::Config::default()
                },
            )
        });
        // another caller created one meanwhile: share theirs
        self.insert(informer).unwrap_or_else(|existing| existing)
    }

    /// The shared metadata-only informer of `K` (client-go's `metadatainformer`, kube-rs's
    /// `metadata_watcher`): its cache holds `PartialObjectMeta<K>`, each object's metadata
    /// (name, namespace, labels, annotations, owner references, finalizers, resource version)
    /// and nothing else, from lists and watches that ask the server for metadata only. It is
    /// another informer than [`informer::<K>()`](Self::informer), with a watch of its own.
    ///
    /// Use it for objects a controller only finds, counts or maps to their owners (the
    /// children a controller owns, secrets it only needs the names of): a cached pod then
    /// takes a few KiB instead of tens. Read the full object from the API server when needed.
    ///
    /// ```no_run
    /// # async fn example(client: kube::Client) {
    /// use informer_runtime::factory::SharedInformerFactory;
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// let factory = SharedInformerFactory::new(client);
    /// let pods = factory.metadata_informer::<Pod>();
    /// factory.start();
    /// factory.wait_for_cache_sync().await;
    /// for pod in pods.lister().by_namespace("prod").list(&Default::default()) {
    ///     println!("{:?} {:?}", pod.metadata.name, pod.metadata.labels);
    /// }
    /// # }
    /// ```
    pub fn metadata_informer<K>(&self) -> SharedIndexInformer<PartialObjectMeta<K>>
    where
        K: Resource<DynamicType = (), Scope: ApiScope> + Clone + fmt::Debug + Send + Sync + 'static,
    {
        self.informer::<PartialObjectMeta<K>>()
    }

    /// [`informer::<K>()`](Self::informer) as a [`GenericInformer`] for `gvr` (what generated
    /// `for_resource` functions return).
    pub fn generic_informer<K: TypedResource>(&self, gvr: GroupVersionResource) -> GenericInformer {
        let informer = self.informer::<K>();
        GenericInformer {
            gvr,
            typed: Arc::new(informer.clone()),
            erased: Arc::new(informer),
        }
    }

    /// Starts every informer not started yet, each in a task of its own on the factory's
    /// thread (started by the first call; see [`SharedInformerFactory`]); returns at once.
    /// Call it again after requesting more informers. Does nothing after `shutdown`. Must be
    /// called within a tokio runtime with [`Builder::on_caller_runtime`], or if the thread
    /// cannot be started (the informers then run on the caller's runtime).
    pub fn start(&self) {
        let mut state = self.lock();
        if state.shutting_down {
            return;
        }
        let thread = self.informers_thread();
        for entry in state.informers.values_mut().filter(|e| !e.started) {
            entry.started = true;
            let run = watch_informer_task(&entry.erased, &self.inner.cancel);
            match thread {
                Some(thread) => drop(self.inner.tasks.spawn_on(run, thread.handle())),
                None => drop(self.inner.tasks.spawn(run)),
            }
        }
    }

    /// The thread the informers run on, started on first use; `None` to run them on the
    /// caller's runtime (asked for, or the thread could not be started). Called with the state
    /// locked, so only one thread is ever started.
    fn informers_thread(&self) -> Option<&InformerThread> {
        if let Some(thread) = self.inner.thread.get() {
            return Some(thread);
        }
        if self.inner.options.on_caller_runtime {
            return None;
        }
        let caller = tokio::runtime::Handle::try_current().ok();
        match InformerThread::start_beside(caller.as_ref()) {
            Ok(thread) => Some(self.inner.thread.get_or_init(|| thread)),
            Err(err) => {
                tracing::warn!(error = %err, "failed to start the informers' thread; the informers run on the caller's runtime");
                None
            }
        }
    }

    fn started(&self) -> Vec<(&'static str, Arc<dyn ErasedInformer>)> {
        let state = self.lock();
        state
            .order
            .iter()
            .filter_map(|t| state.informers.get(t))
            .filter(|e| e.started)
            .map(|e| (e.type_name, Arc::clone(&e.erased)))
            .collect()
    }

    /// A snapshot of every informer's activity, in creation order (for metrics and debugging).
    pub fn stats(&self) -> Vec<InformerStats> {
        let state = self.lock();
        state
            .order
            .iter()
            .filter_map(|t| state.informers.get(t))
            .map(|e| e.erased.stats())
            .collect()
    }

    /// Waits until every started informer synced or stopped, or the factory shuts down.
    pub async fn wait_for_cache_sync(&self) -> SyncReport {
        self.wait_for_cache_sync_until(std::future::pending()).await
    }

    /// Waits until every started informer synced, at most `timeout`.
    pub async fn wait_for_cache_sync_timeout(&self, timeout: Duration) -> SyncReport {
        self.wait_for_cache_sync_until(tokio::time::sleep(timeout)).await
    }

    /// Waits until every started informer synced or stopped, `until` completes, or the
    /// factory shuts down; reports each informer's state. Informers requested but never
    /// started are not waited for.
    pub async fn wait_for_cache_sync_until(&self, until: impl Future<Output = ()>) -> SyncReport {
        let informers = self.started();
        let all_synced = futures::future::join_all(informers.iter().map(|(_, i)| i.wait_for_sync()));
        tokio::select! {
            _ = all_synced => {}
            () = until => {}
            () = self.inner.cancel.cancelled() => {}
        }
        SyncReport {
            informers: informers
                .iter()
                .map(|(type_name, i)| InformerSync {
                    type_name,
                    description: i.description(),
                    synced: i.has_synced(),
                    stopped: i.is_stopped(),
                    failure: i.failure(),
                })
                .collect(),
        }
    }

    /// Stops every informer and waits until all their tasks and handler threads finished.
    /// Later `start` calls do nothing. Safe to call more than once, also concurrently.
    pub async fn shutdown(&self) {
        self.lock().shutting_down = true;
        self.inner.cancel.cancel();
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
        if let Some(thread) = self.inner.thread.get() {
            thread.stop().await;
        }
    }
}

#[cfg(test)]
mod tests;
