//! The shared informer factory: one informer per resource type (and per [`Scope`] of it),
//! started together, waited for together, shut down together (client-go's
//! `SharedInformerFactory`, with controller-runtime's per-type cache scopes).

mod guard;
mod thread;
use std::{
    any::{Any, TypeId},
    collections::HashMap,
    fmt,
    future::Future,
    sync::{
        Arc, Mutex, MutexGuard, OnceLock, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use futures::{FutureExt, future::BoxFuture};
use kube::{
    Client, Resource,
    core::{GroupVersionResource, ObjectMeta, PartialObjectMeta},
};
use serde::{Serialize, de::DeserializeOwned};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

pub use guard::ShutdownGuard;

use crate::informer;
use crate::{
    cache::delta_fifo::Transform,
    cache::namespace_indexers,
    factory::thread::InformerThread,
    informer::{InformerStats, SharedIndexInformer},
    lister::GenericLister,
    reflector,
    scope::{Scope, ScopedInformer},
    source::ListOptions,
    source::{ApiScope, Encoding, FieldPath, KubeListerWatcher, TweakListOptions},
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
    /// [`SharedInformerFactory::informer_for`] was asked for a resource the factory is
    /// [restricted](Builder::resource_labels) to some objects of: a custom constructor could
    /// list and watch them all.
    #[error(
        "failed to create a custom informer of {resource}: the factory caches only the objects that `{selector}` selects, and a custom constructor could list them all; use `informer`, `informer_in` or `metadata_informer`, which carry the selector, or a factory without the restriction"
    )]
    Restricted {
        /// The resource, as `plural.group`.
        resource: String,
        /// The factory's label selectors for it, joined by `,`.
        selector: String,
    },
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
    fn last_error(&self) -> Option<String>;
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

    fn last_error(&self) -> Option<String> {
        SharedIndexInformer::last_error(self)
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

struct Options {
    namespace: Option<String>,
    tweak_list_options: Option<TweakListOptions>,
    default_resync: Duration,
    custom_resync: HashMap<TypeId, Duration>,
    metadata_transform: Option<MetadataTransform>,
    transforms: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// The default scope of each type given one (a `Scope<K>`).
    default_scopes: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// Label selectors every informer of a resource carries, by group and plural.
    resource_labels: Vec<ResourceLabels>,
    /// The label and field selectors `tweak_list_options` sets, read once when the factory is
    /// built: every informer holds only what they select, so every scope includes them.
    tweaked: Option<TweakedSelectors>,
    compact_objects: bool,
    watch_error_handler: Option<reflector::WatchErrorHandler>,
    /// Run the informers on the runtime that calls `start` rather than on a thread of the
    /// factory's own.
    on_caller_runtime: bool,
    /// What the informers ask the API server for.
    encoding: Encoding,
    /// Fields every informer skips as it reads objects.
    skip_fields: Arc<[FieldPath]>,
}

/// What a factory's list tweak selects ([`Builder::tweak_list_options`]).
#[derive(Debug, Clone)]
struct TweakedSelectors {
    labels: kube::core::Selector,
    fields: crate::selector::FieldSelector,
}

impl TweakedSelectors {
    /// The selectors `tweak` sets on default list options; `None` if it sets none, or if they
    /// do not parse or the tweak panics (logged: the cache then holds what the tweak lets in,
    /// while scopes do not know it).
    fn read(tweak: &TweakListOptions) -> Option<Self> {
        let options = crate::user_panic::catch(|| {
            let mut options = ListOptions::default();
            tweak(&mut options);
            options
        });
        let options = match options {
            Ok(options) => options,
            Err(panic) => {
                tracing::warn!(%panic, "the factory's list tweak panicked on default list options; scopes do not include its selectors");
                return None;
            }
        };
        let labels = options.label_selector.unwrap_or_default();
        let fields = options.field_selector.unwrap_or_default();
        if labels.is_empty() && fields.is_empty() {
            return None;
        }
        let parsed = crate::selector::parse_label_selector(&labels)
            .and_then(|labels| Ok((labels, crate::selector::parse_field_selector(&fields)?)));
        match parsed {
            Ok((labels, fields)) => Some(Self { labels, fields }),
            Err(error) => {
                tracing::warn!(%error, %labels, %fields, "the factory's list tweak sets selectors that do not parse; scopes do not include them");
                None
            }
        }
    }
}

/// A label selector every informer of one resource carries ([`Builder::resource_labels`]).
struct ResourceLabels {
    group: String,
    plural: String,
    selector: String,
    parsed: kube::core::Selector,
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

    /// The default scope of `K` (controller-runtime's `ByObject`): the namespaces, selectors and
    /// transform of the cache of `K` that [`scoped_informer`](SharedInformerFactory::scoped_informer)
    /// returns and that controllers read for `K` ([`Controller::new`](crate::controller::Controller::new),
    /// `owns::<K>()`, `watches::<K>()`). [`informer::<K>()`](SharedInformerFactory::informer)
    /// still means every `K` (see the [`scope`](crate::scope) module). The last call for a type
    /// wins.
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) -> Result<(), informer_runtime::scope::Error> {
    /// use informer_runtime::{SharedInformerFactory, scope::Scope};
    /// use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    ///
    /// let factory = SharedInformerFactory::builder(client)
    ///     .scope(Scope::<ConfigMap>::all().namespace("source")?.labels("replicate=true")?)
    ///     .scope(Scope::<Secret>::all().labels("app.kubernetes.io/managed-by=replicator")?)
    ///     .build();
    /// let config_maps = factory.scoped_informer::<ConfigMap>();
    /// # let _ = config_maps;
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn scope<K: TypedResource>(mut self, scope: Scope<K>) -> Self {
        self.options
            .default_scopes
            .insert(TypeId::of::<K>(), Arc::new(scope));
        self
    }

    /// Restricts the factory to the objects of the resource `plural` in API group `group`
    /// (empty for the core group) that the label `selector` selects, whatever the Rust type (a
    /// typed informer and its metadata-only one alike), as controller-runtime's cache
    /// `ByObject` label selector does: every informer of the resource the factory hands out
    /// lists and watches with the selector. [`informer`](SharedInformerFactory::informer),
    /// [`metadata_informer`](SharedInformerFactory::metadata_informer), generated accessors
    /// and `for_resource` return the informer of the selected objects; scopes given to
    /// [`informer_in`](SharedInformerFactory::informer_in) (and controllers'
    /// `Controller::new_in`, `Owns::scope`, `Watches::scope`) are narrowed by it, and so is
    /// [`default_scope`](SharedInformerFactory::default_scope).
    /// [`informer_for`](SharedInformerFactory::informer_for), whose constructor could list
    /// anything, refuses the resource. A shard restricts its manager's factory this way to the
    /// objects assigned to it (see
    /// [`sharding::Shard::restrict_factory`](crate::sharding::Shard::restrict_factory)).
    /// Called again for the same resource, both selectors apply.
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) -> Result<(), informer_runtime::scope::Error> {
    /// use informer_runtime::factory::SharedInformerFactory;
    /// use k8s_openapi::api::apps::v1::Deployment;
    ///
    /// let factory = SharedInformerFactory::builder(client)
    ///     .resource_labels("apps", "deployments", "team=payments")?
    ///     .build();
    /// assert_eq!(factory.default_scope::<Deployment>().selected_labels().to_string(), "team=payments");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`scope::Error::Selector`](crate::scope::Error::Selector) if `selector` does not parse.
    pub fn resource_labels(
        mut self,
        group: &str,
        plural: &str,
        selector: &str,
    ) -> Result<Self, crate::scope::Error> {
        let parsed = crate::selector::parse_label_selector(selector)?;
        self.options.resource_labels.push(ResourceLabels {
            group: group.to_string(),
            plural: plural.to_string(),
            selector: selector.to_string(),
            parsed,
        });
        Ok(self)
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

    /// What the factory's informers ask the API server for: [`Encoding::Protobuf`] (the
    /// default: protobuf for built-in types, as client-go's controllers read them, JSON for
    /// custom resources) or [`Encoding::Json`] (see [`Encoding`] for what each costs). Informers made
    /// by [`informer_for`](SharedInformerFactory::informer_for) build their own lister-watcher:
    /// pass it [`InformerContext::encoding`].
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) {
    /// use informer_runtime::{factory::SharedInformerFactory, source::Encoding};
    ///
    /// let factory = SharedInformerFactory::builder(client).encoding(Encoding::Json).build();
    /// # let _ = factory;
    /// # }
    /// ```
    #[must_use]
    pub fn encoding(mut self, encoding: Encoding) -> Self {
        self.options.encoding = encoding;
        self
    }

    /// Fields every informer of the factory skips as it reads objects, without parsing or
    /// allocating them (see [`FieldPath`] and
    /// [`KubeListerWatcher::skip_fields`]): cheaper than a transform that drops them, since
    /// they are never decoded. Where objects are read in protobuf (built-in types and
    /// metadata-only informers, by default) and in JSON (parsed, never built). A path applies
    /// to every type that has the field it names, and skips nothing in the others (over
    /// protobuf a warning names the path and the type). Informers made by
    /// [`informer_for`](SharedInformerFactory::informer_for) build their own lister-watcher:
    /// pass it [`InformerContext::skip_fields`].
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) {
    /// use informer_runtime::{factory::SharedInformerFactory, source::FieldPath};
    ///
    /// let factory = SharedInformerFactory::builder(client)
    ///     .skip_fields([FieldPath::managed_fields(), FieldPath::last_applied_configuration()])
    ///     .build();
    /// # let _ = factory;
    /// # }
    /// ```
    #[must_use]
    pub fn skip_fields(mut self, paths: impl IntoIterator<Item = FieldPath>) -> Self {
        self.options.skip_fields = paths.into_iter().collect();
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

    /// What the factory's informers ask the API server for ([`Builder::encoding`]).
    pub fn encoding(&self) -> Encoding {
        self.factory.inner.options.encoding
    }

    /// The fields the factory's informers skip ([`Builder::skip_fields`]).
    pub fn skip_fields(&self) -> &[FieldPath] {
        &self.factory.inner.options.skip_fields
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
    /// The informer's description: the resource, and the scope of a scoped informer
    /// (`configmaps (namespace source, labels replicate=true)`).
    pub description: String,
    /// Whether its cache synced (and the informer still keeps it up to date).
    pub synced: bool,
    /// Whether the informer stopped: the factory shut down, or it failed.
    pub stopped: bool,
    /// Why it stopped, if it failed (see [`SharedIndexInformer::failure`]).
    pub failure: Option<String>,
    /// The last list or watch error, until a list succeeds (see
    /// [`SharedIndexInformer::last_error`]): why an informer that keeps retrying has not
    /// synced, such as a 404 for a custom resource whose CRD is not installed.
    pub last_error: Option<String>,
}

impl SyncReport {
    /// Whether every informer synced.
    pub fn all_synced(&self) -> bool {
        self.informers.iter().all(|i| i.synced)
    }

    /// Whether every started informer of `K` (its unscoped one and those of its scopes)
    /// synced; `None` if none was started.
    pub fn is_synced<K: 'static>(&self) -> Option<bool> {
        let name = std::any::type_name::<K>();
        let mut of_k = self.informers.iter().filter(|i| i.type_name == name).peekable();
        of_k.peek()?;
        Some(of_k.all(|i| i.synced))
    }
}

impl fmt::Display for SyncReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let synced = self.informers.iter().filter(|i| i.synced).count();
        write!(f, "{synced}/{} informers synced", self.informers.len())?;
        let describe = |i: &InformerSync| match (&i.failure, i.stopped, &i.last_error) {
            (Some(failure), _, _) => format!("{} (failed: {failure})", i.description),
            (None, true, _) => format!("{} (stopped)", i.description),
            (None, false, Some(error)) => format!("{} (retrying after: {error})", i.description),
            (None, false, None) => i.description.clone(),
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

/// The description of an informer of `K`: its resource (`pods`, `pods (metadata)`), and for a
/// scoped one what restricts it: `namespace` (when it is not the factory's), selectors and
/// transform (`configmaps (namespace source, labels replicate=true)`).
fn describe<K: TypedResource>(namespace: Option<&str>, scope: Option<&Scope<K>>) -> String {
    let mut parts = Vec::new();
    if K::metadata_api() {
        parts.push("metadata".to_owned());
    }
    if let Some(namespace) = namespace {
        parts.push(format!("namespace {namespace}"));
    }
    if let Some(scope) = scope {
        if !scope.selected_labels().selects_all() {
            parts.push(format!("labels {}", scope.selected_labels()));
        }
        if !scope.selected_fields().selects_all() {
            parts.push(format!("fields {}", scope.selected_fields()));
        }
        if scope.is_transformed() {
            parts.push("transformed".to_owned());
        }
    }
    let plural = K::plural(&());
    if parts.is_empty() {
        plural.into_owned()
    } else {
        format!("{plural} ({})", parts.join(", "))
    }
}

/// The factory's list tweak followed by a scope's selectors, joined to what the tweak set
/// (both must match).
fn join_tweaks(
    factory: Option<TweakListOptions>,
    selectors: Option<(String, String)>,
) -> Option<TweakListOptions> {
    let Some((labels, fields)) =
        selectors.filter(|(labels, fields)| !labels.is_empty() || !fields.is_empty())
    else {
        return factory;
    };
    Some(Arc::new(move |options: &mut ListOptions| {
        if let Some(factory) = &factory {
            factory(options);
        }
        join_selector(&mut options.label_selector, &labels);
        join_selector(&mut options.field_selector, &fields);
    }))
}

fn join_selector(selector: &mut Option<String>, more: &str) {
    if more.is_empty() {
        return;
    }
    *selector = Some(match selector.take().filter(|s| !s.is_empty()) {
        Some(existing) => format!("{existing},{more}"),
        None => more.to_owned(),
    });
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
                default_scopes: HashMap::new(),
                resource_labels: Vec::new(),
                tweaked: None,
                compact_objects: false,
                watch_error_handler: None,
                on_caller_runtime: false,
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
            factory: self,
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

    /// The informer of any typed resource `K` (a k8s-openapi type or a custom resource),
    /// listing and watching every `K` through the factory's client, namespace and tweaks, with
    /// the namespace index; generated accessors such as `pods()` return this same informer.
    ///
    /// The first request creates it; later requests return the same informer, whoever created
    /// it (including [`informer_for`](Self::informer_for) with a custom constructor). It is
    /// the informer of every `K` whatever the type's default scope
    /// ([`Builder::scope`]): for a scoped cache, use [`informer_in`](Self::informer_in) or
    /// [`scoped_informer`](Self::scoped_informer). On a factory
    /// [restricted](Builder::resource_labels) to some objects of `K`'s resource (a shard's),
    /// it is the informer of those objects only, shared with `informer_in(&Scope::all())`.
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
                "caching every object of a type that has a default scope: `informer::<K>()` (or a generated accessor, or `for_resource`) asks for all of them; use `scoped_informer::<K>()` for the scoped cache"
            );
        }
        let informer = self.new_informer::<K>(self.watched_namespace::<K>(), None);
        // another caller created one meanwhile: share theirs
        self.insert(key, informer).unwrap_or_else(|existing| existing)
    }

    /// The informer of `scope`: every namespace of the scope (or the factory's namespace when
    /// it has none) listed and watched with the scope's selectors, objects transformed by the
    /// scope's transform after the factory's (see the [`scope`](crate::scope) module).
    ///
    /// Informers are shared: a namespace of the scope whose informer the factory already holds
    /// with equal selectors and the same transform (from another scope, or from
    /// [`informer`](Self::informer) for a scope of every object) is not watched twice. New
    /// informers start with the next [`start`](Self::start).
    ///
    /// ```no_run
    /// # async fn example(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use informer_runtime::{SharedInformerFactory, scope::Scope};
    /// use k8s_openapi::api::core::v1::Pod;
    /// use informer_runtime::selector::parse_label_selector;
    ///
    /// let factory = SharedInformerFactory::new(client);
    /// let web = factory.informer_in(&Scope::<Pod>::all().namespace("prod")?.labels("app=web")?);
    /// factory.start();
    /// factory.wait_for_cache_sync().await;
    /// for pod in web.lister().by_namespace("prod").list(&parse_label_selector("app=web,tier=fe")?)? {
    ///     println!("{:?}", pod.metadata.name);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn informer_in<K: TypedResource>(&self, scope: &Scope<K>) -> ScopedInformer<K> {
        let scope = self
            .restrict(scope.clone())
            .within(self.watched_namespace::<K>().map(str::to_owned));
        let namespaces: Vec<Option<String>> = if scope.selected_namespaces().is_empty() {
            vec![None]
        } else {
            scope.selected_namespaces().iter().cloned().map(Some).collect()
        };
        let parts = namespaces
            .into_iter()
            .map(|namespace| {
                let informer = self.informer_of_scope(namespace.as_deref(), &scope);
                (namespace, informer)
            })
            .collect();
        ScopedInformer::new(K::plural(&()).into(), scope, parts)
    }

    /// The informer of `K`'s default scope ([`Builder::scope`]); of every `K` (shared with
    /// [`informer`](Self::informer)) when the type has none.
    pub fn scoped_informer<K: TypedResource>(&self) -> ScopedInformer<K> {
        self.informer_in(&self.default_scope::<K>())
    }

    /// `K`'s default scope ([`Builder::scope`], or [`Scope::all`] when it has none) narrowed by
    /// its resource's [labels](Builder::resource_labels).
    pub fn default_scope<K: TypedResource>(&self) -> Scope<K> {
        self.restrict(self.declared_scope::<K>().unwrap_or_default())
    }

    /// The scope given to [`Builder::scope`] for `K`.
    fn declared_scope<K: TypedResource>(&self) -> Option<Scope<K>> {
        self.inner
            .options
            .default_scopes
            .get(&TypeId::of::<K>())
            .and_then(|scope| scope.downcast_ref::<Scope<K>>())
            .cloned()
    }

    /// `scope` narrowed by the [labels](Builder::resource_labels) of `K`'s resource and the
    /// selectors the [list tweak](Builder::tweak_list_options) sets.
    fn restrict<K: TypedResource>(&self, scope: Scope<K>) -> Scope<K> {
        let options = &self.inner.options;
        let scope = match &options.tweaked {
            Some(tweaked) => scope
                .and_labels(tweaked.labels.clone())
                .field_selector(&tweaked.fields),
            None => scope,
        };
        options
            .resource_labels
            .iter()
            .filter(|rule| rule.group == K::group(&()) && rule.plural == K::plural(&()))
            .fold(scope, |scope, rule| scope.and_labels(rule.parsed.clone()))
    }

    /// The label selectors given to [`Builder::resource_labels`] for the resource `plural` in
    /// `group`, as written.
    pub fn resource_labels(&self, group: &str, plural: &str) -> Vec<&str> {
        self.inner
            .options
            .resource_labels
            .iter()
            .filter(|rule| rule.group == group && rule.plural == plural)
            .map(|rule| rule.selector.as_str())
            .collect()
    }

    /// The factory's namespace if `K` is namespaced (cluster-scoped objects have none).
    fn watched_namespace<K: TypedResource>(&self) -> Option<&str> {
        if <K::Scope as ApiScope>::NAMESPACED {
            self.namespace()
        } else {
            None
        }
    }

    /// The informer of `scope` in `namespace`, shared with any equal one.
    fn informer_of_scope<K: TypedResource>(
        &self,
        namespace: Option<&str>,
        scope: &Scope<K>,
    ) -> SharedIndexInformer<K> {
        let key = if scope.selected_labels().selects_all()
            && scope.selected_fields().selects_all()
            && scope.transform_fn().is_none()
            && namespace == self.watched_namespace::<K>()
        {
            // the unscoped informer, whoever made it
            InformerKey::unscoped::<K>()
        } else {
            InformerKey::scoped::<K>(namespace, scope)
        };
        if let Some(existing) = self.existing::<K>(&key) {
            return existing;
        }
        let informer = self.new_informer::<K>(namespace, Some(scope));
        self.insert(key, informer).unwrap_or_else(|existing| existing)
    }

    /// A new informer of `K` in `namespace` (`None`: every namespace), restricted to `scope`.
    fn new_informer<K: TypedResource>(
        &self,
        namespace: Option<&str>,
        scope: Option<&Scope<K>>,
    ) -> SharedIndexInformer<K> {
        let description = describe::<K>(namespace.filter(|ns| Some(*ns) != self.namespace()), scope);
        let transform = scope.and_then(|scope| scope.transform_fn().cloned());
        let selectors = scope.map(|scope| {
            (
                scope.selected_labels().to_string(),
                scope.selected_fields().to_string(),
            )
        });
        self.create(
            |context| {
                let api = <K::Scope as ApiScope>::api::<K>(context.client().clone(), namespace);
                let tweak = join_tweaks(context.tweak_list_options(), selectors);
                let lister_watcher = KubeListerWatcher::new(api)
                    .shared_tweak_list_options(tweak)
                    .encoding(context.encoding())
                    .skip_fields(context.skip_fields().iter().cloned());
                SharedIndexInformer::new(
                    lister_watcher,
                    informer::Config {
                        resync_period: context.resync_period(),
                        indexers: namespace_indexers(),
                        description: Some(description),
                        ..informer::Config::default()
                    },
                )
            },
            transform,
        )
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
    /// Informers requested after the first call start as they are requested (client-go's
    /// factory waits for another `Start`; controller-runtime's cache starts them, as here).
    /// Does nothing after `shutdown`. Must be called within a tokio runtime with
    /// [`Builder::on_caller_runtime`], or if the thread cannot be started (the informers then
    /// run on the caller's runtime).
    pub fn start(&self) {
        let mut state = self.lock();
        if state.shutting_down {
            return;
        }
        state.start_requested = true;
        for entry in state.informers.values_mut().filter(|e| !e.started) {
            self.start_entry(entry);
        }
    }

    /// Starts the informer of `entry`; called with the state locked. Without the factory's
    /// thread and outside a tokio runtime it cannot: the informer waits for the next `start`.
    fn start_entry(&self, entry: &mut Entry) {
        let run = watch_informer_task(&entry.erased, &self.inner.cancel);
        match self.informers_thread() {
            Some(thread) => drop(self.inner.tasks.spawn_on(run, thread.handle())),
            None => match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(self.inner.tasks.spawn_on(run, &runtime)),
                Err(_) => {
                    tracing::warn!(
                        informer = entry.type_name,
                        "an informer requested outside a tokio runtime, on a factory that runs its informers on the caller's runtime, cannot start; call start() again from within the runtime"
                    );
                    return;
                }
            },
        }
        entry.started = true;
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
                    last_error: i.last_error(),
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
        self.inner.shut_down.store(true, Ordering::Release);
    }

    /// A guard that [shuts the factory down](Self::shutdown) when dropped, unless it was shut
    /// down already: for code that starts a factory and may be dropped before it shuts the
    /// factory down itself, such as a task that can be aborted. Without one, the informers run
    /// on until `shutdown` or until the runtime that started them shuts down, as tasks would
    /// (see [where the informers run](Self#where-the-informers-run)). Dropping the guard stops
    /// the informers at once (later [`start`](Self::start) calls do nothing) and finishes the
    /// shutdown in a task on the current runtime; outside a runtime, it stops the informers'
    /// thread.
    ///
    /// ```no_run
    /// # async fn example(client: kube::Client) {
    /// use informer_runtime::SharedInformerFactory;
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// let task = tokio::spawn(async move {
    ///     let factory = SharedInformerFactory::new(client);
    ///     let _shutdown = factory.shutdown_guard();
    ///     let pods = factory.informer::<Pod>();
    ///     factory.start();
    ///     factory.wait_for_cache_sync().await;
    ///     // ... uses `pods` until the task is aborted
    ///     # let _ = pods;
    ///     std::future::pending::<()>().await;
    /// });
    /// task.abort(); // the informer of pods stops with it
    /// # }
    /// ```
    pub fn shutdown_guard(&self) -> ShutdownGuard {
        let factory = self.clone();
        ShutdownGuard::new(move || factory.shutdown_in_background())
    }

    /// Stops every informer at once, and finishes [`shutdown`](Self::shutdown) in a task of
    /// the current runtime (outside a runtime: stops the informers' thread); does nothing once
    /// `shutdown` has finished.
    fn shutdown_in_background(&self) {
        if self.inner.shut_down.load(Ordering::Acquire) {
            return;
        }
        self.lock().shutting_down = true;
        self.inner.cancel.cancel();
        self.inner.tasks.close();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let factory = self.clone();
                drop(runtime.spawn(async move { factory.shutdown().await }));
            }
            Err(_) => {
                if let Some(thread) = self.inner.thread.get() {
                    thread.stop_now();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
