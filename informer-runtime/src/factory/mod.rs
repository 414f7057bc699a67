//! The shared informer factory: one informer per resource type (and per [`Scope`] of it),
//! started together, waited for together, shut down together (client-go's
//! `SharedInformerFactory`, with controller-runtime's per-type cache scopes).

mod builder;
mod context;
mod erased;
mod error;
mod generic;
mod guard;
mod lifecycle;
mod options;
mod scoped;
mod sync_report;
mod thread;
mod typed_resource;
use std::{
    any::{Any, TypeId},
    collections::HashMap,
    fmt,
    sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, atomic::AtomicBool},
    time::Duration,
};

use kube::{
    Client, Resource,
    core::{GroupVersionResource, PartialObjectMeta},
};
use serde::Serialize;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

pub use builder::Builder;
pub use context::InformerContext;
pub use error::{Error, Result};
pub use generic::GenericInformer;
pub use guard::ShutdownGuard;
pub use sync_report::{InformerSync, SyncReport};
pub use typed_resource::TypedResource;

use erased::ErasedInformer;
pub use options::InformerRuntime;

use options::{Options, TweakedSelectors};

use crate::{
    cache::delta_fifo::Transform,
    factory::thread::InformerThread,
    informer::SharedIndexInformer,
    scope::Scope,
    source::{ApiScope, Encoding},
};

struct Entry {
    type_name: &'static str,
    typed: Arc<dyn Any + Send + Sync>,
    erased: Arc<dyn ErasedInformer>,
    started: bool,
}

/// What tells a factory's informers apart: the type, and the scope of one informer (its
/// namespace, selectors and transform). The unscoped informer of a type (which watches the
/// factory's namespace, or every namespace) has no namespace, selectors or transform in its
/// key: a scope equal to it maps to this key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct InformerKey {
    type_id: TypeId,
    namespace: Option<String>,
    labels: String,
    fields: String,
    transform: Option<usize>,
}

impl InformerKey {
    /// The key of `K`'s unscoped informer (whatever namespace the factory watches).
    fn unscoped<K: 'static>() -> Self {
        Self {
            type_id: TypeId::of::<K>(),
            namespace: None,
            labels: String::new(),
            fields: String::new(),
            transform: None,
        }
    }

    /// The key of the informer of `scope` in `namespace` (`None`: every namespace).
    fn scoped<K: 'static>(namespace: Option<&str>, scope: &Scope<K>) -> Self {
        Self {
            type_id: TypeId::of::<K>(),
            namespace: namespace.map(str::to_owned),
            labels: scope.selected_labels().to_string(),
            fields: scope.selected_fields().to_string(),
            transform: scope.transform_id(),
        }
    }
}

struct State {
    informers: HashMap<InformerKey, Entry>,
    /// Creation order, for stable reports.
    order: Vec<InformerKey>,
    /// Whether `start` was called: informers requested since start at once.
    start_requested: bool,
    shutting_down: bool,
}

struct Inner {
    client: Client,
    options: Options,
    state: Mutex<State>,
    cancel: CancellationToken,
    tasks: TaskTracker,
    /// Set once [`SharedInformerFactory::shutdown`] has finished.
    shut_down: AtomicBool,
    /// Where the informers run: the thread `builder_on_own_thread` made with its client, or
    /// the one the first `start` makes (unless they run on the caller's runtime).
    thread: OnceLock<InformerThread>,
}

/// One informer per resource type, shared by everything that asks for it.
///
/// Informers are created on first request ([`unscoped_informer::<K>()`](Self::unscoped_informer), which
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
/// let pods = factory.unscoped_informer::<Pod>();
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
/// [`Builder::runtime`] with [`InformerRuntime::Caller`].
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

impl Builder {
    /// The factory.
    pub fn build(mut self) -> SharedInformerFactory {
        self.options.tweaked = self
            .options
            .tweak_list_options
            .as_ref()
            .and_then(TweakedSelectors::read);
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
                    start_requested: false,
                    shutting_down: false,
                }),
                cancel: CancellationToken::new(),
                tasks: TaskTracker::new(),
                shut_down: AtomicBool::new(false),
                thread,
            }),
        }
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
                default_scopes: HashMap::new(),
                resource_labels: Vec::new(),
                tweaked: None,
                compact_objects: false,
                watch_error_handler: None,
                runtime: InformerRuntime::default(),
                encoding: Encoding::default(),
                skip_fields: Arc::new([]),
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
    /// let pods = factory.unscoped_informer::<Pod>();
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
        K: Resource<DynamicType: Default> + Clone + Serialize + Send + Sync + 'static,
    {
        let dynamic_type = K::DynamicType::default();
        let (group, plural) = (K::group(&dynamic_type), K::plural(&dynamic_type));
        let restriction = self.resource_labels(&group, &plural);
        if !restriction.is_empty() {
            return Err(Error::Restricted {
                resource: if group.is_empty() {
                    plural.into_owned()
                } else {
                    format!("{plural}.{group}")
                },
                selector: restriction.join(","),
            });
        }
        let exists = || Error::InformerExists {
            type_name: std::any::type_name::<K>(),
        };
        let key = InformerKey::unscoped::<K>();
        if self.existing::<K>(&key).is_some() {
            return Err(exists());
        }
        self.insert(key, self.create(new_informer, None))
            .map_err(|_| exists())
    }

    /// The informer under `key`, if the factory holds one.
    fn existing<K: Send + Sync + 'static>(&self, key: &InformerKey) -> Option<SharedIndexInformer<K>> {
        self.lock()
            .informers
            .get(key)
            .and_then(|e| e.typed.downcast_ref())
            .cloned()
    }

    /// A new informer of `K` from `new_informer`, with the factory's transforms (then
    /// `scope_transform`) and handler.
    fn create<K>(
        &self,
        new_informer: impl FnOnce(&InformerContext<'_>) -> SharedIndexInformer<K>,
        scope_transform: Option<Transform<K>>,
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
            client: &self.inner.client,
            options: &self.inner.options,
            resync_period,
        });
        self.configure(&informer, scope_transform);
        informer
    }

    /// Keeps `informer` under `key`; `Err` with the one kept already when another caller
    /// created one meanwhile.
    fn insert<K>(
        &self,
        key: InformerKey,
        informer: SharedIndexInformer<K>,
    ) -> Result<SharedIndexInformer<K>, SharedIndexInformer<K>>
    where
        K: Resource + Clone + Serialize + Send + Sync + 'static,
    {
        let mut state = self.lock();
        if let Some(existing) = state.informers.get(&key).and_then(|e| e.typed.downcast_ref()) {
            return Err(SharedIndexInformer::clone(existing));
        }
        let mut entry = Entry {
            type_name: std::any::type_name::<K>(),
            typed: Arc::new(informer.clone()),
            erased: Arc::new(informer.clone()),
            started: false,
        };
        // requested after `start` (by a controller that runs later, say): it starts now, as
        // controller-runtime's cache starts an informer asked for once it runs
        if state.start_requested && !state.shutting_down {
            self.start_entry(&mut entry);
        }
        state.informers.insert(key.clone(), entry);
        state.order.push(key);
        Ok(informer)
    }

    fn configure<K>(&self, informer: &SharedIndexInformer<K>, scope_transform: Option<Transform<K>>)
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
        if typed.is_some() || metadata.is_some() || scope_transform.is_some() || compact {
            let result = informer.set_transform(move |obj: &mut K| {
                if let Some(metadata) = &metadata {
                    metadata(obj.meta_mut());
                }
                if let Some(typed) = &typed {
                    typed(obj);
                }
                if let Some(scoped) = &scope_transform {
                    scoped(obj);
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

    /// The informer of every object of `K` the factory watches (its namespace, its list tweak),
    /// whatever `K`'s configured scope: the explicit form of
    /// [`informer_in(&Scope::all())`](Self::informer_in), as one [`SharedIndexInformer`] (with
    /// the namespace index) for code that needs the informer itself (a custom lister-watcher's
    /// peers, `add_indexers`, the store). Generated accessors such as `pods()` return this same
    /// informer. Most code wants [`informer::<K>()`](Self::informer), the configured scope.
    ///
    /// The first request creates it; later requests return the same informer, whoever created
    /// it (including [`informer_for`](Self::informer_for) with a custom constructor). On a
    /// factory [restricted](Builder::resource_labels) to some objects of `K`'s resource (a
    /// shard's), it is the informer of those objects only.
    ///
    /// ```no_run
    /// # async fn example(client: kube::Client) {
    /// use informer_runtime::SharedInformerFactory;
    /// use k8s_openapi::api::{apps::v1::Deployment, core::v1::Node};
    ///
    /// let factory = SharedInformerFactory::new(client);
    /// let deployments = factory.unscoped_informer::<Deployment>();
    /// let nodes = factory.unscoped_informer::<Node>();
    /// factory.start();
    /// factory.wait_for_cache_sync().await;
    /// println!("{} nodes", nodes.lister().list(&Default::default()).len());
    /// # let _ = deployments;
    /// # }
    /// ```
    pub fn unscoped_informer<K: TypedResource>(&self) -> SharedIndexInformer<K> {
        let restricted = self.restrict(Scope::all());
        if !restricted.is_everything() {
            return self.informer_of_scope(self.watched_namespace::<K>(), &restricted);
        }
        let key = InformerKey::unscoped::<K>();
        if let Some(existing) = self.existing::<K>(&key) {
            return existing;
        }
        if let Some(default) = self.declared_scope::<K>().filter(|scope| !scope.is_everything()) {
            tracing::warn!(
                resource = %K::plural(&()),
                default_scope = %default,
                "caching every object of a type that has a default scope: `unscoped_informer::<K>()` (or a generated accessor, or `for_resource`) asks for all of them; `informer::<K>()` is the scoped cache"
            );
        }
        let informer = self.new_informer::<K>(self.watched_namespace::<K>(), None);
        // another caller created one meanwhile: share theirs
        self.insert(key, informer).unwrap_or_else(|existing| existing)
    }

    /// The shared metadata-only informer of `K` (client-go's `metadatainformer`, kube-rs's
    /// `metadata_watcher`): its cache holds `PartialObjectMeta<K>`, each object's metadata
    /// (name, namespace, labels, annotations, owner references, finalizers, resource version)
    /// and nothing else, from lists and watches that ask the server for metadata only. It is
    /// another informer than [`unscoped_informer::<K>()`](Self::unscoped_informer), with a watch of its own.
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
        self.unscoped_informer::<PartialObjectMeta<K>>()
    }

    /// [`unscoped_informer::<K>()`](Self::unscoped_informer) as a [`GenericInformer`] for `gvr` (what generated
    /// `for_resource` functions return).
    pub fn generic_informer<K: TypedResource>(&self, gvr: GroupVersionResource) -> GenericInformer {
        let informer = self.unscoped_informer::<K>();
        GenericInformer {
            gvr,
            typed: Arc::new(informer.clone()),
            erased: Arc::new(informer),
        }
    }
}

#[cfg(test)]
mod tests;
