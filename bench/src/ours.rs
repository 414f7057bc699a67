//! Ours: `SharedInformerFactory::informer::<Pod>()` (namespace index, default config) with
//! handlers that count notifications, or the same informer with streaming lists.
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
    EventHandlerFuncs, KubeListerWatcher, SharedIndexInformer, SharedInformerFactory,
    cache::namespace_indexers,
    informer::{self, Registration},
    reflector::{self, InitialListStrategy},
};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use crate::{
    cpu::Mark,
    render::Rendered,
    report::{Outcome, Phase},
    server::Server,
};

/// The longest a phase may take before the run is reported as failed.
const PHASE_TIMEOUT: Duration = Duration::from_secs(900);

/// How often completion is checked.
const POLL: Duration = Duration::from_millis(1);

/// Where the factory runs its informers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// On the runtime that calls `start` (the benchmark's multi-thread runtime).
    CallerRuntime,
    /// On a thread of their own (`builder_on_own_thread`).
    OwnThread,
}

/// How the informer gets its first state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InitialList {
    /// Paged list, then watch (the default).
    Paged,
    /// `sendInitialEvents` streaming list.
    Streaming,
}

/// The informer of pods, as the factory's `informer::<Pod>()` builds it, or with streaming
/// lists.
pub(crate) fn pod_informer(
    factory: &SharedInformerFactory,
    initial: InitialList,
) -> SharedIndexInformer<Pod> {
    match initial {
        InitialList::Paged => factory.informer::<Pod>(),
        InitialList::Streaming => factory
            .informer_for(|context| {
                SharedIndexInformer::new(
                    KubeListerWatcher::new(Api::<Pod>::all(context.client().clone())),
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
) -> Outcome {
    let mut name = match initial {
        InitialList::Paged => format!("ours: factory informer, {handlers} handler(s)"),
        InitialList::Streaming => format!("ours: streaming list, {handlers} handler(s)"),
    };
    if placement == Placement::OwnThread {
        name.push_str(", on its own thread");
    }
    let last_rv = rendered.last_resource_version.to_string();
    let last_key = rendered.last_pod.key();
    let expected = (rendered.pods + rendered.events.len()) as u64;
    let start = Mark::now(Some(server.cpu()));
    let factory = match placement {
        Placement::CallerRuntime => SharedInformerFactory::new(server.client()),
        Placement::OwnThread => {
            let uri: http::Uri = server.url().parse().expect("the server URL is a valid URI");
            SharedInformerFactory::builder_on_own_thread(kube::Config::new(uri))
                .expect("the informers' thread starts")
                .build()
        }
    };
    let informer = pod_informer(&factory, initial);
    let counters: Vec<Arc<AtomicU64>> = (0..handlers).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let registrations: Vec<Registration<Pod>> = counters
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
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(PHASE_TIMEOUT).await;
    let deadline = Instant::now() + PHASE_TIMEOUT;
    let handlers_synced = wait_until(deadline, || registrations.iter().all(Registration::has_synced)).await;
    let synced = (report.all_synced() && handlers_synced).then(|| Mark::now(Some(server.cpu())));
    let store = informer.store();
    let synced_objects = store.len();
    server.release();
    let applied = synced.is_some()
        && wait_until(Instant::now() + PHASE_TIMEOUT, || {
            store
                .get_by_key(&last_key)
                .is_some_and(|pod| pod.metadata.resource_version.as_deref() == Some(last_rv.as_str()))
                && counters.iter().all(|c| c.load(Ordering::Relaxed) >= expected)
        })
        .await;
    let done = Mark::now(Some(server.cpu()));
    let final_objects = store.len();
    let last_resource_version = store
        .get_by_key(&last_key)
        .and_then(|pod| pod.metadata.resource_version.clone())
        .unwrap_or_default();
    let delivered: Vec<u64> = counters.iter().map(|c| c.load(Ordering::Relaxed)).collect();
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
        note: delivered
            .iter()
            .any(|d| *d != expected)
            .then(|| format!("handlers counted {delivered:?}, expected {expected} each")),
    }
}
