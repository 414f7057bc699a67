use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};

use super::*;
use futures::future::BoxFuture;

use crate::{
    cache::Indexers,
    informer,
    source::{ListOptions, ListerWatcher},
    testing::FakeControllerSource,
};

/// A client for a server that is never contacted: nothing here starts the factory.
fn client() -> Client {
    let url = "http://127.0.0.1:9".parse().expect("url");
    Client::try_from(kube::Config::new(url)).expect("client")
}

fn custom_pod_informer(_: &InformerContext<'_>) -> SharedIndexInformer<Pod> {
    SharedIndexInformer::from_arc(
        Arc::new(FakeControllerSource::<Pod>::new()),
        informer::Config {
            description: Some("custom pods".into()),
            indexers: Indexers::new(),
            ..informer::Config::default()
        },
    )
}

#[tokio::test]
async fn a_second_constructor_for_a_type_is_an_error_not_ignored() {
    let factory = SharedInformerFactory::new(client());
    let default = factory.unscoped_informer::<Pod>();
    let mut called = false;
    let err = factory
        .informer_for::<Pod>(|context| {
            called = true;
            custom_pod_informer(context)
        })
        .expect_err("the factory already has a pod informer");
    assert!(!called, "the constructor is not called");
    assert!(matches!(err, Error::InformerExists { type_name } if type_name.ends_with("Pod")));
    assert!(
        err.to_string().starts_with("failed to create an informer of "),
        "{err}"
    );
    assert_eq!(
        factory.unscoped_informer::<Pod>().description(),
        default.description()
    );
}

#[tokio::test]
async fn the_default_request_shares_a_custom_informer_created_first() {
    let factory = SharedInformerFactory::new(client());
    let custom = factory
        .informer_for::<Pod>(custom_pod_informer)
        .expect("the first pod informer");
    let shared = factory.unscoped_informer::<Pod>();
    assert_eq!(shared.description(), "custom pods");
    assert_eq!(custom.description(), shared.description());
    // other types are unaffected
    assert_eq!(
        factory.unscoped_informer::<ConfigMap>().description(),
        "configmaps"
    );
    let generic = factory.generic_informer::<Pod>(GroupVersionResource::gvr("", "v1", "pods"));
    assert_eq!(
        generic.informer::<Pod>().expect("typed").description(),
        "custom pods"
    );
}

/// A lister-watcher that records the name of the thread each list runs on.
struct ThreadRecordingSource {
    source: FakeControllerSource<Pod>,
    list_threads: Arc<Mutex<Vec<Option<String>>>>,
}

impl ListerWatcher<Pod> for ThreadRecordingSource {
    fn list(
        &self,
        options: &ListOptions,
    ) -> BoxFuture<'_, Result<kube::core::ObjectList<Pod>, crate::source::Error>> {
        let thread = std::thread::current().name().map(str::to_owned);
        self.list_threads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(thread);
        self.source.list(options)
    }

    fn watch(
        &self,
        options: &ListOptions,
    ) -> BoxFuture<'_, Result<crate::source::WatchStream<Pod>, crate::source::Error>> {
        self.source.watch(options)
    }
}

/// Starts `factory` with a recording pod informer on the calling runtime, waits for its sync
/// and returns the threads its lists ran on.
async fn list_threads_of_started(factory: &SharedInformerFactory) -> Vec<Option<String>> {
    let list_threads = Arc::new(Mutex::new(Vec::new()));
    let source = ThreadRecordingSource {
        source: FakeControllerSource::new(),
        list_threads: Arc::clone(&list_threads),
    };
    let informer = factory
        .informer_for(|_| SharedIndexInformer::new(source, informer::Config::default()))
        .expect("the first pod informer");
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(Duration::from_secs(10)).await;
    assert!(report.all_synced(), "{report}");
    assert!(informer.has_synced());
    factory.shutdown().await;
    assert!(informer.is_stopped());
    list_threads
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_factory_from_a_client_runs_its_informers_on_a_thread_of_its_own() {
    let threads = list_threads_of_started(&SharedInformerFactory::new(client())).await;
    assert_eq!(threads, vec![Some("informers".to_owned())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_caller_runtime_runs_the_informers_on_the_runtime_that_starts_them() {
    let factory = SharedInformerFactory::builder(client())
        .runtime(InformerRuntime::Caller)
        .build();
    let threads = list_threads_of_started(&factory).await;
    assert_eq!(threads.len(), 1);
    assert_ne!(threads[0].as_deref(), Some("informers"));
}

/// The runtime setting holds whatever made the builder: a client made on the factory's thread
/// does not take the informers there against `InformerRuntime::Caller`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_builder_with_its_client_on_the_factorys_thread_runs_the_informers_where_asked() {
    let config = || kube::Config::new("http://127.0.0.1:9".parse().expect("url"));
    let on_caller = SharedInformerFactory::builder_on_own_thread(config())
        .expect("the thread starts")
        .runtime(InformerRuntime::Caller)
        .build();
    let threads = list_threads_of_started(&on_caller).await;
    assert_eq!(threads.len(), 1);
    assert_ne!(threads[0].as_deref(), Some("informers"));
    let on_own_thread = SharedInformerFactory::builder_on_own_thread(config())
        .expect("the thread starts")
        .build();
    let threads = list_threads_of_started(&on_own_thread).await;
    assert_eq!(threads, vec![Some("informers".to_owned())]);
}

#[test]
fn the_informers_stop_when_the_runtime_that_started_them_shuts_down() {
    let caller = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let informer = caller.block_on(async {
        let (factory, informer) = started_with_a_fake_informer();
        assert!(informer.wait_for_sync().await);
        // the factory is dropped without `shutdown`: its informers go on, as tasks would
        drop(factory);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!informer.is_stopped());
        informer
    });
    drop(caller);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !informer.is_stopped() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        informer.is_stopped(),
        "the informer stopped with the caller's runtime"
    );
}

// shutdown_guard

/// A factory (whose client is never used) with a started informer of a fake source.
fn started_with_a_fake_informer() -> (SharedInformerFactory, SharedIndexInformer<Pod>) {
    let factory = SharedInformerFactory::new(client());
    let informer = factory
        .informer_for(|_| {
            SharedIndexInformer::from_arc(
                Arc::new(FakeControllerSource::<Pod>::new()),
                informer::Config::default(),
            )
        })
        .expect("the first pod informer");
    factory.start();
    (factory, informer)
}

/// Waits (on the wall clock, with no runtime needed) until `informer` stopped.
fn stops_within_10s(informer: &SharedIndexInformer<Pod>) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !informer.is_stopped() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    informer.is_stopped()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_task_that_held_the_guard_stops_the_informers() {
    let (informer_tx, informer_rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let (factory, informer) = started_with_a_fake_informer();
        let _shutdown = factory.shutdown_guard();
        assert!(informer.wait_for_sync().await);
        let _ = informer_tx.send(informer);
        std::future::pending::<()>().await;
    });
    let informer = informer_rx.await.expect("the task started its informer");
    assert!(!informer.is_stopped());
    task.abort();
    assert!(task.await.is_err_and(|error| error.is_cancelled()));
    let stopped = tokio::task::spawn_blocking(move || stops_within_10s(&informer))
        .await
        .expect("waited");
    assert!(stopped, "the informer stopped with the task that held the guard");
}

#[test]
fn a_guard_dropped_outside_any_runtime_stops_the_informers() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (guard, informer) = runtime.block_on(async {
        let (factory, informer) = started_with_a_fake_informer();
        assert!(informer.wait_for_sync().await);
        (factory.shutdown_guard(), informer)
    });
    assert!(!informer.is_stopped());
    // the runtime that started the informers runs on: only the guard stops them
    drop(guard);
    assert!(
        stops_within_10s(&informer),
        "the informer stopped once the guard was dropped"
    );
    drop(runtime);
}

/// An informer requested after `start` starts as it is requested (a controller built once the
/// factory runs): its cache syncs and fills without another `start`, and the sync report
/// lists it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_requested_after_start_starts_at_once() {
    let server = informer_testserver::TestServer::start().await.expect("server");
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some("late".into());
    config_map.metadata.namespace = Some("default".into());
    server.create_typed(&config_map).expect("created");
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = factory.unscoped_informer::<Pod>();
    factory.start();
    let config_maps = factory.unscoped_informer::<ConfigMap>();
    let report = tokio::time::timeout(std::time::Duration::from_secs(10), factory.wait_for_cache_sync())
        .await
        .expect("the wait ends");
    assert!(report.all_synced(), "{report}");
    assert!(pods.has_synced() && config_maps.has_synced());
    assert!(report.to_string().starts_with("2/2 informers synced"), "{report}");
    assert!(config_maps.lister().by_namespace("default").get("late").is_some());
    factory.shutdown().await;
}

/// An informer that cannot list says why in the sync report (a 404 from a CRD that is not
/// installed, a 403 from a missing role), instead of only "not synced".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sync_report_says_why_an_informer_has_not_synced() {
    use informer_testserver::Failure;

    let server = informer_testserver::TestServer::start().await.expect("server");
    server.fail_next(
        Failure::new(403)
            .times(usize::MAX)
            .verb("list")
            .resource("configmaps"),
    );
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let config_maps = factory.unscoped_informer::<ConfigMap>();
    factory.start();
    informer_testserver::wait::eventually("a list failed", std::time::Duration::from_secs(10), || {
        config_maps.last_error().is_some()
    })
    .await
    .expect("the list failed");
    let report = factory
        .wait_for_cache_sync_until(tokio::time::sleep(std::time::Duration::from_millis(100)))
        .await;
    assert!(!report.all_synced());
    let text = report.to_string();
    assert!(
        text.contains("not synced: configmaps (retrying after: "),
        "{text}"
    );
    assert!(text.contains("403"), "{text}");
    assert!(report.informers[0].last_error.is_some());
    factory.shutdown().await;
}

/// What the factory's list tweak selects is part of what every cache holds: a scoped lister
/// over a tweaked factory knows its selector, answers `list` with the selected objects, and
/// refuses a `get` that the cache cannot answer (an object outside the tweak) instead of
/// answering `None` for an object that exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tweaked_factorys_scopes_include_the_tweaks_selectors() {
    use std::collections::BTreeMap;

    let server = informer_testserver::TestServer::start().await.expect("server");
    for (name, team) in [("ours", "x"), ("theirs", "y")] {
        let mut config_map = ConfigMap::default();
        config_map.metadata.name = Some(name.into());
        config_map.metadata.namespace = Some("default".into());
        config_map.metadata.labels = Some(BTreeMap::from([("team".to_owned(), team.to_owned())]));
        server.create_typed(&config_map).expect("created");
    }
    let factory = SharedInformerFactory::builder(server.client().expect("client"))
        .tweak_list_options(|options| options.label_selector = Some("team=x".into()))
        .build();
    let informer = factory.informer_in(&Scope::<ConfigMap>::all());
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());
    assert_eq!(informer.scope().selected_labels().to_string(), "team=x");
    let lister = informer.lister();
    let listed: Vec<_> = lister
        .list_in_scope(&Default::default())
        .iter()
        .filter_map(|cm| cm.metadata.name.clone())
        .collect();
    assert_eq!(listed, ["ours"]);
    assert!(
        lister
            .by_namespace("default")
            .get("ours")
            .is_ok_and(|found| found.is_some())
    );
    assert!(
        lister.by_namespace("default").get("theirs").is_err(),
        "an object the cache cannot hold is refused, not reported missing"
    );
    assert_eq!(
        factory.default_scope::<ConfigMap>().selected_labels().to_string(),
        "team=x"
    );
    factory.shutdown().await;
}
