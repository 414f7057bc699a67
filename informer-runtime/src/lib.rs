//! client-go's informer machinery for Rust, on kube-rs: one list-and-watch per resource type,
//! shared by every consumer; an indexed in-memory cache of the objects; event handlers; typed
//! listers; the work queues controllers drain; and the controllers, managers, leader election
//! and sharding built on them.
//!
//! # Start with a controller
//!
//! A controller author starts with four names, all at the crate root: a [`Manager`] (it owns
//! the [`SharedInformerFactory`] and runs everything), a [`Controller`] of the type to
//! reconcile, the types it owns or watches, and a reconcile function that returns an
//! [`Action`]:
//!
//! ```no_run
//! use std::{sync::Arc, time::Duration};
//!
//! use informer_runtime::{Action, Controller, Manager};
//! use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};
//!
//! async fn reconcile(deployment: Arc<Deployment>, client: Arc<kube::Client>) -> Result<Action, kube::Error> {
//!     // read listers, write through kube::Api with the client
//!     # let _ = (deployment, client);
//!     Ok(Action::requeue(Duration::from_secs(300)))
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let mut manager = Manager::builder(kube::Client::try_default().await?).build()?;
//! let controller = Controller::<Deployment>::new(manager.factory()).owns::<ConfigMap>();
//! let client = Arc::new(manager.client());
//! manager.add_controller(controller, reconcile, |_, _, _| Action::requeue_with_backoff(), client);
//! // starts the informers, waits for the caches, and reconciles until the shutdown signal
//! // (here a token; `tokio::signal::ctrl_c()` in a binary), then stops gracefully
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! manager.run(shutdown.cancelled_owned()).await?;
//! # Ok(())
//! # }
//! ```
//!
//! [`Scope`] narrows what a cache holds, [`Predicate`] which changes reconcile, listers
//! ([`Lister`], [`ScopedLister`]) answer from the cache by [`ObjectKey`]; the
//! [`controller`] module documents the guarantees. The building blocks below the controller
//! (reflector, DeltaFIFO, indexes, work queues) stay in their modules.
//!
//! # Or with informers alone
//!
//! A factory owns one informer per resource type. Ask it for the informers you need, register
//! handlers, start it, wait for the caches, then read from listers:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use informer_runtime::SharedInformerFactory;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! # let server = informer_testserver::TestServer::start().await?;
//! # let client = server.client()?;
//! # let mut settings = ConfigMap::default();
//! # settings.metadata.name = Some("settings".into());
//! # settings.metadata.namespace = Some("default".into());
//! # server.create_typed(&settings)?;
//!
//! let factory = SharedInformerFactory::new(client);
//! let config_maps = factory.informer::<ConfigMap>();
//! config_maps.add_event_handler(config_maps.handler_funcs().added(|cm, _initial| {
//!     println!("added {:?}", cm.metadata.name);
//! }))?;
//!
//! factory.start();
//! let report = factory.wait_for_cache_sync().await;
//! assert!(report.all_synced(), "{report}");
//!
//! let lister = config_maps.lister();
//! assert!(lister.by_namespace("default").get("settings")?.is_some());
//! factory.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! Every typed resource works this way (k8s-openapi types and `#[derive(CustomResource)]`
//! types). For typed accessors by group and version (`informers.apps().v1().deployments()`)
//! and `for_resource(gvr)`, use the generated `Informers` of the `k8s-informers` crate (built-in
//! resources) or of your own crate (`informer-gen`, or `#[derive(Informer)]` with the `derive`
//! feature): each is a typed view of one [`SharedInformerFactory`], and views over the same
//! factory share its informers, its start and its sync.
//!
//! # How data flows
//!
//! ```text
//!   API server
//!       │  list, then watch from the list's resource version          source
//!       ▼
//!   Reflector: relists after 410 Gone, resumes watches, backs off      reflector
//!       │  deltas (added, updated, deleted, replaced, sync)
//!       ▼
//!   DeltaFifo ──────────► Store + indexes                              cache
//!       │  popped in order                     ▲ read by
//!       ▼                                      │
//!   SharedIndexInformer ──► handlers, each     Lister                   informer, lister
//!       ▲                   on its own thread  │
//!       │ one per type          │ keys         │
//!   SharedInformerFactory       ▼              │                        factory
//!                           WorkQueue ──► your workers ──┘              workqueue
//!                               └──► or Controller: reconcile(object)   controller
//! ```
//!
//! # Memory
//!
//! The cache holds each object once, shared as `Arc<K>` with handlers and listers. Lists and
//! watch events are decoded with every list of an object at its exact length (no room left
//! by serde's doubling), and a relist replaces the cache page by page, so it holds about one
//! page more than the cache instead of a second copy of it. Objects a controller only finds,
//! counts or maps to owners can be cached as metadata alone
//! ([`SharedInformerFactory::metadata_informer`]): about a third of a full pod, less than a
//! tenth without `managedFields`. A cache scoped to the objects a controller needs
//! ([`scope`]: namespaces, label and field selectors sent to the server) holds only those: a
//! scope of a tenth of 50 000 pods took a tenth of the memory and of the sync CPU.
//!
//! The runtime leaves the global allocator to the binary. Decoding an object allocates a few
//! hundred times and replacing it frees as often, so the allocator weighs on every watch
//! event: in the project's benchmark (50 000 pods, 2 cores), mimalloc as the global allocator
//! cut the informer's CPU per event from 47 µs to 40 µs and its memory per cached pod from
//! 42.1 KiB to 41.5 KiB against glibc's `malloc`.
//!
//! # Writing a controller
//!
//! Controllers are built in this order; each step uses the ones before it:
//!
//! 1. **One factory** per process (or per namespace scope): [`SharedInformerFactory::new`].
//!    Its informers run on a thread of the factory's own, whatever runtime starts them (half
//!    the CPU per event of running them on a multi-thread runtime).
//! 2. **Informers and indexes** for every type the controller reads:
//!    `factory.informer::<K>()`, which caches what the factory is configured to cache of `K`
//!    (a type's default [`scope::Scope`] with [`factory::Builder::scope`]; `informer_in(&scope)`
//!    for a scope of its own, `unscoped_informer::<K>()` for every object), and
//!    typed indexes for the lookups reconciles make ([`cache::Index`], registered with
//!    [`SharedIndexInformer::add_index`]).
//! 3. **A [`Controller`]** of the type it reconciles, with the types it
//!    [`owns`](controller::Controller::owns) and [`watches`](controller::Controller::watches)
//!    (each in a scope of its own with `new_in`, [`Owns`](controller::Owns) and
//!    [`Watches`](controller::Watches)); any number of
//!    controllers share the factory's informers. [Predicates](predicate) choose which changes
//!    reconcile ([`predicate`](controller::Controller::predicate),
//!    [`Owns::predicate`](controller::Owns::predicate),
//!    [`Watches::predicate`](controller::Watches::predicate)); its
//!    [priority queue](workqueue::PriorityQueue) reconciles live changes before the initial
//!    list and resyncs.
//! 4. **A [`Manager`]** runs them:
//!    [`add_controller`](manager::Manager::add_controller) with a reconcile function, an error
//!    policy and a context, then [`run`](manager::Manager::run) until a shutdown signal. It
//!    starts the informers, starts each controller once the caches it reads synced, serves
//!    `/healthz`, `/readyz` and `/metrics`, and with
//!    [`leader_election`](manager::Builder::leader_election) runs the controllers only on the
//!    leader (warm standby elsewhere); with a [`shard`](manager::Builder::shard) of a
//!    [`sharding`] ring, each replica caches and reconciles only the objects the sharder
//!    assigned to it. A reconcile reads listers (never the API server), writes
//!    through [`kube::Api`] on the manager's [client](manager::Manager::client) (so the next
//!    reconcile of an object waits until the caches have seen its writes), records what
//!    it did with an [`EventRecorder`](events::EventRecorder), cleans up deleted objects
//!    through a [`finalizer`](finalizer::finalizer) (and objects that left its scope, with
//!    [`finalizer_where`](finalizer::finalizer_where) and
//!    [`Controller::finalizer`](controller::Controller::finalizer)), and returns an
//!    [`Action`].
//! 5. **Shutdown** is the manager's: controllers first (running reconciles finish), the lease
//!    released, then the informers. Without a manager, [`Controller::run`](controller::Controller::run)
//!    runs one controller (write through a client made by
//!    [`track_writes`](controller::track_writes)): cancel its token, await it, then
//!    [`SharedInformerFactory::shutdown`].
//!
//! The [`controller`] module documents the guarantees (one reconcile per object at a time,
//! panics caught and retried, deleted objects not reconciled, its own writes seen before
//! the next reconcile of an object, graceful shutdown).
//!
//! # Wire formats
//!
//! A [`KubeListerWatcher`](source::KubeListerWatcher) (and so every factory informer) asks
//! for what [`source::Encoding`] says, set on the lister-watcher or on the factory's
//! [`Builder::encoding`](factory::Builder::encoding):
//!
//! | encoding | built-in types | custom resources | metadata-only informers |
//! |---|---|---|---|
//! | [`Protobuf`](source::Encoding::Protobuf) (the default) | protobuf, by the decoders `k8s-protobuf` generates | JSON | protobuf `PartialObjectMetadata` |
//! | [`Cbor`](source::Encoding::Cbor) | protobuf | CBOR (`application/cbor`; watches `application/cbor-seq`) | CBOR `PartialObjectMetadata` |
//! | [`Json`](source::Encoding::Json) | JSON | JSON | JSON |
//!
//! Whatever was asked, the answer is read as its `Content-Type` says: a server that answers
//! JSON (one without CBOR, before kube-apiserver's `CBORServingAndStorage`) is read as JSON.
//! CBOR is read as kube-apiserver writes it (every string a byte string, keys included, the
//! self-described tag on answers, events and their objects) straight into the caller's
//! types, with JSON's presence rules: a missing field is `None` or its default, unknown fields
//! are passed over. A watch body's items are cut by their heads as chunks arrive, without
//! decoding them twice; an item cut short or malformed is a decode error, never a panic, and
//! the reflector handles it as any other. Fields to
//! [skip](source::KubeListerWatcher::skip_fields) are passed over by their heads, never built.
//! CBOR is opt-in: on the benchmark's custom resource it was no clearer win
//! than run-to-run noise over JSON (`bench/README.md`).
//!
//! # Modules
//!
//! | module | what it holds |
//! |---|---|
//! | [`source`] | the [`ListerWatcher`](source::ListerWatcher) contract and [`KubeListerWatcher`](source::KubeListerWatcher), its implementation on a [`kube::Api`], which reads built-in types in protobuf by default ([`source::Encoding`]) through the decoders `k8s-protobuf` generates (custom resources in JSON, or in CBOR when asked), and skips the fields a [`source::FieldPath`] names as it reads |
//! | [`protobuf`] | Kubernetes' protobuf documents and watch frames, decoded into any `Deserialize` type by the serde decoder ([`protobuf::from_slice`], the reference the generated decoders are tested against), and encoded from JSON (re-exported from `informer-apimachinery`, which the test server shares) |
//! | [`reflector`] | the [`Reflector`](reflector::Reflector): list, watch, relist, backoff |
//! | [`key`] | [`ObjectKey`], the one name of an object in stores, queues, tombstones, handlers and controllers |
//! | [`api_version`] | an `apiVersion` split into group and version as kube-apiserver splits it (from `informer-apimachinery`) |
//! | [`cache`] | tombstones, the read-only [`Store`](cache::Store) and its [`Writer`](cache::Writer), indexes and typed index handles ([`cache::Index`]), the DeltaFIFO, and what a reflector writes to ([`ReflectorStore`](cache::ReflectorStore), [`Relist`](cache::Relist)) |
//! | [`informer`] | [`SharedIndexInformer`], its handlers ([`informer::handler`]), the [`Enqueue`](informer::enqueue::Enqueue) handler that feeds work queues, and statistics |
//! | [`factory`] | [`SharedInformerFactory`]: one informer per type (and per scope of it), started, synced and stopped together |
//! | [`scope`] | scoped caches: a [`Scope`] (namespaces, label and field selectors, transform) per type and per controller, informers shared where scopes are equal, [`ScopedLister`]s that refuse questions outside their scope |
//! | [`leader_election`] | one leader among replicas on a Lease: [`LeaderElector`](leader_election::LeaderElector), its [`Leadership`](leader_election::Leadership) token and term |
//! | [`lister`] | typed [`Lister`]s, namespaced views and [`IndexedLister`](lister::IndexedLister)s over a cache |
//! | [`selector`] | label selectors written as text (`app=web,tier!=db`), parsed into kube's `Selector` for listers; field selectors (`metadata.name=web`) (from `informer-apimachinery`) |
//! | [`workqueue`] | [`WorkQueue`](workqueue::WorkQueue), delaying and rate-limiting queues, rate limiters, and the [`PriorityQueue`](workqueue::PriorityQueue) controllers use, with its [`Priority`](workqueue::Priority) |
//! | [`predicate`] | [`Predicate`]: which changes reconcile (generation, labels, annotations or resource version changed, a label selector, any closure; and/or/not) |
//! | [`controller`] | [`Controller`]: reconcile runners on shared informers, with owned and watched types, retries and graceful shutdown |
//! | [`manager`] | [`Manager`]: runs the factory, controllers and other runnables, with leader election and warm standby, fenced writes, probes, metrics and a graceful shutdown |
//! | [`sharding`] | scale past one replica: [`Shard`](sharding::Shard)s that each hold a Lease and cache and reconcile their share of a [`ControllerRing`](sharding::ControllerRing), the drain hand-over, and a sharder (kubernetes-controller-sharding's protocol) |
//! | [`events`] | [`EventRecorder`](events::EventRecorder): Kubernetes Events recorded without blocking, folded into series (one per related object with `record_about`), with a per-object spam filter, retries and counts |
//! | [`finalizer`] | [`finalizer()`](finalizer::finalizer): add a finalizer, run the cleanup when the object is deleted (or, with [`finalizer_where`](finalizer::finalizer_where), leaves the controller's scope), then remove the finalizer |
//! | [`user_panic`] | what happens when a transform, index function or handler panics |
//! | `metrics` | Prometheus metrics of informers, handlers and queues (feature `metrics`) |
//! | `testing` | a fake lister-watcher for unit tests (feature `testing`) |
//! | `replicas` | N replicas of a sharded manager and their sharder against the embedded API server, for tests of sharded controllers (feature `replicas`) |
//!
//! # Features
//!
//! - `metrics`: the `metrics` module (prometheus-client).
//! - `testing`: the `testing` module, a fake lister-watcher (client-go's `FakeControllerSource`).
//! - `replicas`: the `replicas` module, on `informer-testserver`.
//! - `derive`: `#[derive(Informer)]`, re-exported as `informer_runtime::Informer`.
//!
//! # Conventions
//!
//! - Each module's options are its `Config` ([`reflector::Config`], [`informer::Config`],
//!   [`cache::delta_fifo::Config`], [`reflector::backoff::Config`]), its failures its `Error`,
//!   with a `Result` alias.
//! - Setters that configure something not yet built take `self` and are named after what they
//!   set (`.namespace("prod")`, `.tweak_list_options(..)`, `.response_timeout(..)`); `with_*`
//!   names are constructors (`WorkQueue::with_metrics`); `set_*(&self)` changes a shared
//!   informer before it starts (client-go's `SetTransform`, `SetWatchErrorHandler`).
//! - Resync periods: the factory's default ([`factory::Builder::resync`]), per type
//!   ([`factory::Builder::resync_for`]) and per handler
//!   ([`SharedIndexInformer::add_event_handler_with_resync_period`]); the narrower one wins.
//! - Watch-error handlers have one signature everywhere, `Fn(&str, &reflector::Error)`: the
//!   informer's description and the error it recovered from.
//! - Objects are shared as `Arc<K>`: caches, handlers and listers never deep-copy them.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(hidden)]
#[path = "codegen.rs"]
pub mod __codegen;
pub mod cache;
mod client_layer;
pub mod controller;
mod deadline;
pub mod events;
pub mod factory;
pub mod finalizer;
pub mod informer;
pub mod key;
pub mod leader_election;
pub mod lister;
pub mod manager;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics;
pub mod predicate;
pub mod reflector;
#[cfg(feature = "replicas")]
#[cfg_attr(docsrs, doc(cfg(feature = "replicas")))]
pub mod replicas;
pub mod scope;
pub mod sharding;
pub mod source;
mod stats;
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod user_panic;
pub mod workqueue;

pub use informer_apimachinery::{api_version, protobuf, selector};

pub use controller::{Action, Controller};
pub use factory::SharedInformerFactory;
pub use informer::{SharedIndexInformer, handler::EventHandlerFuncs};
#[cfg(feature = "derive")]
#[cfg_attr(docsrs, doc(cfg(feature = "derive")))]
pub use informer_derive::Informer;
pub use key::ObjectKey;
pub use lister::{Lister, NamespaceLister};
pub use manager::Manager;
pub use predicate::Predicate;
pub use scope::{Scope, ScopedLister};
