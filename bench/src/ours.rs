//! Ours: `SharedInformerFactory::informer::<Pod>()` (namespace index, default config) with
//! handlers that count notifications, or the same informer with streaming lists; over protobuf
//! (the default) or over JSON (`factory::Builder::encoding`).
//!
//! The sync phase ends when the factory reports the cache synced and every handler has seen
//! the initial list; the watch phase when the store holds the last event's resource version
//! and every handler has counted every notification.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use informer_runtime::{
    EventHandlerFuncs, ObjectKey, SharedIndexInformer, SharedInformerFactory,
    cache::{Store, namespace_indexers},
    factory::InformerRuntime,
    informer::{self, Registration},
    reflector::{self, InitialListStrategy},
    source::KubeListerWatcher,
    source::{Encoding, FieldPath},
};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use crate::{
    cpu::Mark,
    outcome::{Outcome, Phase},
    render::Rendered,
    server::Server,
};

/// The longest a phase may take before the run is reported as failed.
const PHASE_TIMEOUT: Duration = Duration::from_secs(900);

/// How often completion is checked.
const POLL: Duration = Duration::from_millis(1);

/// Where the factory runs its informers, and where their connection is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// The default (`SharedInformerFactory::new`): on the factory's thread, with a client made
    /// on the benchmark's multi-thread runtime; the informers open their own connections.
    Default,
    /// The default, but the client served a request on the benchmark's runtime first: the
    /// informers reuse that idle connection, whose task stays on the benchmark's runtime.
    DefaultReusedConnection,
    /// On the runtime that calls `start` (the benchmark's multi-thread runtime), with
    /// `Builder::runtime(InformerRuntime::Caller)`.
    CallerRuntime,
    /// On a thread of their own with a client made there (`builder_on_own_thread`).
    OwnThread,
}

/// What the informer asks for and how it reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reading {
    /// The encoding.
    pub(crate) encoding: Encoding,
    /// Whether `metadata.managedFields` is skipped as objects are read
    /// (`factory::Builder::skip_fields`).
    pub(crate) skip_managed_fields: bool,
}

impl Reading {
    /// Protobuf, the default.
    pub(crate) const PROTOBUF: Self = Self {
        encoding: Encoding::Protobuf,
        skip_managed_fields: false,
    };
    /// JSON.
    pub(crate) const JSON: Self = Self {
        encoding: Encoding::Json,
        skip_managed_fields: false,
    };
    /// Protobuf, `metadata.managedFields` skipped unread.
    pub(crate) const PROTOBUF_SKIPPING_MANAGED_FIELDS: Self = Self {
        encoding: Encoding::Protobuf,
        skip_managed_fields: true,
    };
}

/// How the informer gets its first state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InitialList {
    /// Paged list, then watch (the default).
    Paged,
    /// `sendInitialEvents` streaming list.
    Streaming,
}

/// The informer of pods, as the factory's `unscoped_informer::<Pod>()` builds it, or with streaming
/// lists; in the factory's encoding either way.
pub(crate) fn pod_informer(
    factory: &SharedInformerFactory,
    initial: InitialList,
) -> SharedIndexInformer<Pod> {
    match initial {
        InitialList::Paged => factory.unscoped_informer::<Pod>(),
        InitialList::Streaming => factory
            .informer_for(|context| {
                SharedIndexInformer::new(
                    KubeListerWatcher::new(Api::<Pod>::all(context.client().clone()))
                        .encoding(context.encoding()),
                    informer::Config {
                        resync_period: context.resync_period(),
                        indexers: namespace_indexers(),
                        reflector: reflector::Config {
                            initial_list_strategy: InitialListStrategy::StreamingList,
                            ..reflector::Config::default()
                        },
                        description: Some("pods".into()),
                    },
                )
            })
            .expect("the factory's first pod informer"),
    }
}

async fn wait_until(deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
    true
}

/// Syncs with `handlers` counting handlers, releases the events, and waits until every one
/// is applied and delivered.
pub(crate) async fn run(
    server: &Server,
    rendered: &Rendered,
    handlers: usize,
    initial: InitialList,
    placement: Placement,
    reading: Reading,
) -> Outcome {
    let name = consumer_name(handlers, initial, placement, reading);
    let expected = Expected::of(rendered);
    let client = server.client();
    if placement == Placement::DefaultReusedConnection {
        open_idle_connection(&client).await;
    }
    // Sync phase: from building the factory to every cache and handler synced.
    let start = Mark::now(Some(server.cpu()));
    let factory = factory(server, client, placement, reading);
    let informer = pod_informer(&factory, initial);
    let (counters, registrations) = add_counting_handlers(&informer, handlers);
    factory.start();
    let synced = wait_for_sync(&factory, &registrations)
        .await
        .then(|| Mark::now(Some(server.cpu())));
    let store = informer.store();
    let synced_objects = store.len();
    // Watch phase: the events are released; every one must be applied and delivered.
    server.release();
    let applied = synced.is_some() && wait_for_events(&store, &counters, &expected).await;
    let done = Mark::now(Some(server.cpu()));
    let final_objects = store.len();
    let last_resource_version = store
        .get_by_key(&expected.last_key)
        .and_then(|pod| pod.metadata.resource_version.clone())
        .unwrap_or_default();
    let note = miscounted(&counters, expected.notifications);
    factory.shutdown().await;
    Outcome {
        name,
        sync: synced.map(|synced| Phase::between(&start, &synced)),
        watch: synced
            .filter(|_| applied)
            .map(|synced| Phase::between(&synced, &done)),
        synced_objects,
        final_objects,
        last_resource_version,
        note,
    }
}

/// What the handlers counted, if any counted other than `expected` notifications.
fn miscounted(counters: &[Arc<AtomicU64>], expected: u64) -> Option<String> {
    let delivered: Vec<u64> = counters.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    delivered
        .iter()
        .any(|d| *d != expected)
        .then(|| format!("handlers counted {delivered:?}, expected {expected} each"))
}

/// The prefix of our consumers' names over protobuf, the default, in the tables.
pub(crate) const PROTOBUF_PREFIX: &str = "ours (protobuf, default): ";

/// The prefix of our consumers' names over JSON.
pub(crate) const JSON_PREFIX: &str = "ours (JSON): ";

/// The prefix of our consumers' names over protobuf with `managedFields` skipped.
pub(crate) const SKIPPING_PREFIX: &str = "ours (protobuf, default, managedFields skipped): ";

/// The consumer's name in the tables.
fn consumer_name(handlers: usize, initial: InitialList, placement: Placement, reading: Reading) -> String {
    let mut name = match (reading.encoding, reading.skip_managed_fields) {
        // pods are protobuf with CBOR too
        (Encoding::Protobuf | Encoding::Cbor, false) => PROTOBUF_PREFIX.to_owned(),
        (Encoding::Protobuf | Encoding::Cbor, true) => SKIPPING_PREFIX.to_owned(),
        (Encoding::Json, _) => JSON_PREFIX.to_owned(),
    };
    name.push_str(&match initial {
        InitialList::Paged => format!("factory informer, {handlers} handler(s)"),
        InitialList::Streaming => format!("streaming list, {handlers} handler(s)"),
    });
    name.push_str(match placement {
        Placement::Default => "",
        Placement::DefaultReusedConnection => ", connection opened on the caller's runtime",
        Placement::CallerRuntime => ", on the caller's runtime",
        Placement::OwnThread => ", own thread and client",
    });
    name
}

/// Serves one small request through `client` on the calling runtime, leaving its connection
/// idle in the client's pool for the next request.
async fn open_idle_connection(client: &kube::Client) {
    let request = http::Request::get("/version")
        .body(Vec::new())
        .expect("a valid request");
    // The bench server answers 404; the body is read either way, so the connection is kept.
    let _ = client.request_text(request).await;
    // The client puts the connection back in its pool once it is ready for another request.
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// What the cache and each handler hold once every event is applied and delivered.
struct Expected {
    /// The key of the last event's pod.
    last_key: ObjectKey,
    /// The last event's resource version.
    last_resource_version: String,
    /// Notifications per handler: the initial list and every event.
    notifications: u64,
}

impl Expected {
    fn of(rendered: &Rendered) -> Self {
        Self {
            last_key: ObjectKey::new(&rendered.last_pod.namespace, &rendered.last_pod.name),
            last_resource_version: rendered.last_resource_version.to_string(),
            notifications: (rendered.pods + rendered.events.len()) as u64,
        }
    }
}

/// A factory for `server` (through `client`, unless it makes its own), running its
/// informers where `placement` says, reading as `reading` says.
fn factory(
    server: &Server,
    client: kube::Client,
    placement: Placement,
    reading: Reading,
) -> SharedInformerFactory {
    let builder = match placement {
        Placement::Default | Placement::DefaultReusedConnection => SharedInformerFactory::builder(client),
        Placement::CallerRuntime => SharedInformerFactory::builder(client).runtime(InformerRuntime::Caller),
        Placement::OwnThread => {
            let uri: http::Uri = server.url().parse().expect("the server URL is a valid URI");
            SharedInformerFactory::builder_on_own_thread(kube::Config::new(uri))
                .expect("the informers' thread starts")
        }
    };
    let builder = builder.encoding(reading.encoding);
    if reading.skip_managed_fields {
        builder.skip_fields([FieldPath::managed_fields()]).build()
    } else {
        builder.build()
    }
}

/// `handlers` handlers that count adds and updates, each with its counter.
fn add_counting_handlers(
    informer: &SharedIndexInformer<Pod>,
    handlers: usize,
) -> (Vec<Arc<AtomicU64>>, Vec<Registration<Pod>>) {
    let counters: Vec<Arc<AtomicU64>> = (0..handlers).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let registrations = counters
        .iter()
        .map(|counter| {
            let (added, updated) = (Arc::clone(counter), Arc::clone(counter));
            informer
                .add_event_handler(
                    EventHandlerFuncs::new()
                        .added(move |_, _| {
                            added.fetch_add(1, Ordering::Relaxed);
                        })
                        .updated(move |_, _| {
                            updated.fetch_add(1, Ordering::Relaxed);
                        }),
                )
                .expect("handlers are added before the informer starts")
        })
        .collect();
    (counters, registrations)
}

/// Whether the factory reports its caches synced and every handler has seen the initial list.
async fn wait_for_sync(factory: &SharedInformerFactory, registrations: &[Registration<Pod>]) -> bool {
    let report = factory.wait_for_cache_sync_timeout(PHASE_TIMEOUT).await;
    let deadline = Instant::now() + PHASE_TIMEOUT;
    let handlers_synced = wait_until(deadline, || registrations.iter().all(Registration::has_synced)).await;
    report.all_synced() && handlers_synced
}

/// Whether the store holds the last event's resource version and every handler has counted
/// every notification, within [`PHASE_TIMEOUT`].
async fn wait_for_events(store: &Store<Pod>, counters: &[Arc<AtomicU64>], expected: &Expected) -> bool {
    wait_until(Instant::now() + PHASE_TIMEOUT, || {
        store.get_by_key(&expected.last_key).is_some_and(|pod| {
            pod.metadata.resource_version.as_deref() == Some(expected.last_resource_version.as_str())
        }) && counters
            .iter()
            .all(|c| c.load(Ordering::Relaxed) >= expected.notifications)
    })
    .await
}
