//! Informers end to end over real HTTP: the test API server, `kube::Client`, the factory.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use informer_runtime::{
    EventHandlerFuncs, ObjectKey, SharedIndexInformer, SharedInformerFactory,
    cache::{MaybeTombstone, namespace_indexers},
    informer,
    informer::handler::ResourceEventHandler,
    reflector::{self, InitialListStrategy},
    source::KubeListerWatcher,
};
use informer_tests::{create_namespaces, eventually, pod};
use informer_testserver::{Failure, TestServer};
use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{ConfigMap, Node, Pod},
};
use kube::{Api, api::ObjectMeta, core::Selector};

const WAIT: Duration = Duration::from_secs(10);

/// Records every notification as a line.
#[derive(Default, Clone)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    fn lines(&self) -> Vec<String> {
        self.0.lock().expect("lock").clone()
    }

    fn has(&self, line: &str) -> bool {
        self.lines().iter().any(|l| l == line)
    }

    fn push(&self, line: String) {
        self.0.lock().expect("lock").push(line);
    }
}

fn label(p: &Pod, key: &str) -> String {
    p.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .cloned()
        .unwrap_or_default()
}

impl ResourceEventHandler<Pod> for Recorder {
    fn on_add(&self, object: Arc<Pod>, is_in_initial_list: bool) {
        let name = object.metadata.name.clone().unwrap_or_default();
        self.push(format!("add {name} initial={is_in_initial_list}"));
    }

    fn on_update(&self, old: Arc<Pod>, new: Arc<Pod>) {
        let name = new.metadata.name.clone().unwrap_or_default();
        if old.metadata.resource_version == new.metadata.resource_version {
            self.push(format!("resync {name}"));
        } else {
            self.push(format!(
                "update {name} tier {}->{}",
                label(&old, "tier"),
                label(&new, "tier")
            ));
        }
    }

    fn on_delete(&self, object: MaybeTombstone<Pod>) {
        let kind = if object.is_tombstone() {
            "tombstone"
        } else {
            "delete"
        };
        self.push(format!("{kind} {}", object.key()));
    }
}

/// A pod to seed: namespace, name, labels.
type PodSeed<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

async fn server_with_pods(pods: &[PodSeed<'_>]) -> TestServer {
    let server = TestServer::start().await.expect("server starts");
    create_namespaces(&server, pods.iter().map(|(namespace, _, _)| *namespace));
    for (namespace, name, labels) in pods {
        server
            .create_typed(&pod(namespace, name, labels))
            .expect("created");
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initial_sync_then_adds_updates_and_deletes_reach_handlers() {
    let server = server_with_pods(&[
        ("a", "web-1", &[("tier", "front")]),
        ("b", "db-1", &[("tier", "back")]),
    ])
    .await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = factory.unscoped_informer::<Pod>();
    let recorder = Recorder::default();
    let registration = pods.add_event_handler(recorder.clone()).expect("added");
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(WAIT).await;
    assert!(report.all_synced(), "{report}");
    eventually("handler synced", WAIT, || registration.has_synced()).await;
    let mut initial = recorder.lines();
    initial.sort();
    assert_eq!(initial, ["add db-1 initial=true", "add web-1 initial=true"]);

    let client = server.client().expect("client");
    let api: Api<Pod> = Api::namespaced(client, "a");
    api.create(&Default::default(), &pod("a", "web-2", &[("tier", "front")]))
        .await
        .expect("create over HTTP");
    let mut changed = api.get("web-1").await.expect("get");
    changed
        .metadata
        .labels
        .get_or_insert_default()
        .insert("tier".into(), "edge".into());
    api.replace("web-1", &Default::default(), &changed)
        .await
        .expect("update");
    api.delete("web-2", &Default::default()).await.expect("delete");

    eventually("live events", WAIT, || recorder.has("delete a/web-2")).await;
    let live: Vec<String> = recorder.lines().into_iter().skip(2).collect();
    assert_eq!(
        live,
        [
            "add web-2 initial=false",
            "update web-1 tier front->edge",
            "delete a/web-2"
        ]
    );

    let lister = pods.lister();
    assert_eq!(
        lister
            .by_namespace("a")
            .get("web-1")
            .map(|p| label(&p, "tier"))
            .as_deref(),
        Some("edge")
    );
    assert!(lister.by_namespace("a").get("web-2").is_none());
    assert_eq!(lister.list(&Selector::default()).len(), 2);
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_handler_gets_the_cache_replayed() {
    let server = server_with_pods(&[("a", "p1", &[]), ("a", "p2", &[])]).await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = factory.unscoped_informer::<Pod>();
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());

    let recorder = Recorder::default();
    let registration = pods.add_event_handler(recorder.clone()).expect("added");
    eventually("replay handled", WAIT, || registration.has_synced()).await;
    server.create_typed(&pod("a", "p3", &[])).expect("created");
    eventually("live add", WAIT, || recorder.lines().len() == 3).await;
    let lines = recorder.lines();
    let mut replay = lines[..2].to_vec();
    replay.sort();
    assert_eq!(replay, ["add p1 initial=true", "add p2 initial=true"]);
    assert_eq!(lines[2], "add p3 initial=false");
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_leads_to_a_relist_with_tombstones() {
    let server = server_with_pods(&[("a", "keep", &[]), ("a", "gone", &[])]).await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = factory.unscoped_informer::<Pod>();
    let recorder = Recorder::default();
    pods.add_event_handler(recorder.clone()).expect("added");
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
    let lists_before = server.request_count("list", "pods");

    // The re-opened watch is throttled once (the reflector backs off and retries the watch);
    // meanwhile an object is deleted and the history compacted, so the retry gets 410.
    server.fail_next(
        Failure::new(429)
            .verb("watch")
            .resource("pods")
            .times(1)
            .retry_after(1),
    );
    server.drop_watches();
    server.delete_typed::<Pod>(Some("a"), "gone").expect("deleted");
    server.compact();

    eventually("tombstone", WAIT, || recorder.has("tombstone a/gone")).await;
    assert!(pods.store().get_by_key(&ObjectKey::new("a", "gone")).is_none());
    assert!(pods.store().get_by_key(&ObjectKey::new("a", "keep")).is_some());
    assert_eq!(
        server.request_count("list", "pods"),
        lists_before + 1,
        "exactly one relist"
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_watch_resumes_without_relist() {
    let server = server_with_pods(&[("a", "p1", &[])]).await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = factory.unscoped_informer::<Pod>();
    let recorder = Recorder::default();
    pods.add_event_handler(recorder.clone()).expect("added");
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
    // A watch that closes within a second without any event counts as failed (client-go's
    // "very short watch") and leads to a relist: let this one deliver an event first.
    server.create_typed(&pod("a", "p0", &[])).expect("created");
    eventually("event on the first watch", WAIT, || {
        recorder.has("add p0 initial=false")
    })
    .await;
    let watches_before = server.request_count("watch", "pods");

    server.drop_watches();
    eventually("watch re-opened", WAIT, || {
        server.request_count("watch", "pods") > watches_before
    })
    .await;
    server.create_typed(&pod("a", "p2", &[])).expect("created");
    eventually("add after the drop", WAIT, || {
        recorder.has("add p2 initial=false")
    })
    .await;
    assert_eq!(server.request_count("list", "pods"), 1, "no relist");
    assert!(
        !recorder.lines().iter().any(|l| l.starts_with("resync")),
        "a relist would re-deliver p1"
    );
    let resumed = server
        .requests()
        .into_iter()
        .rfind(|r| r.verb == "watch")
        .expect("a watch");
    assert!(
        resumed.query.contains("resourceVersion=") && !resumed.query.contains("resourceVersion=0&"),
        "{resumed:?}"
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarks_advance_the_resource_version() {
    let server = TestServer::builder()
        .bookmark_interval(Duration::from_millis(50))
        .start()
        .await
        .expect("server");
    server.create_namespace("a").expect("namespace");
    server.create_typed(&pod("a", "p1", &[])).expect("created");
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = factory.unscoped_informer::<Pod>();
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());

    // Writes to another resource move the global version; only a bookmark tells the pods watch.
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some("cm".into()),
            namespace: Some("a".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    server.create_typed(&config_map).expect("created");
    let latest = server.resource_version().to_string();
    eventually("bookmark", WAIT, || pods.last_sync_resource_version() == latest).await;
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_syncs_without_a_list_request() {
    let server = server_with_pods(&[("a", "p1", &[]), ("b", "p2", &[])]).await;
    let client = server.client().expect("client");
    let informer = SharedIndexInformer::new(
        KubeListerWatcher::new(Api::<Pod>::all(client)),
        informer::Config {
            indexers: namespace_indexers(),
            reflector: reflector::Config {
                initial_list_strategy: InitialListStrategy::StreamingList,
                ..reflector::Config::default()
            },
            ..informer::Config::default()
        },
    );
    let cancel = tokio_util::sync::CancellationToken::new();
    let task = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    tokio::time::timeout(WAIT, informer.wait_for_sync())
        .await
        .expect("synced");
    assert_eq!(informer.store().len(), 2);
    assert_eq!(server.request_count("list", "pods"), 0);
    server.create_typed(&pod("a", "p3", &[])).expect("created");
    eventually("live event on the same watch", WAIT, || {
        informer.store().len() == 3
    })
    .await;
    assert_eq!(server.request_count("watch", "pods"), 1);
    cancel.cancel();
    task.await.expect("run returns");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_and_selector_scoped_factory_sees_only_its_objects() {
    let server = server_with_pods(&[
        ("a", "web-1", &[("app", "web")]),
        ("a", "db-1", &[("app", "db")]),
        ("b", "web-2", &[("app", "web")]),
    ])
    .await;
    let factory = SharedInformerFactory::builder(server.client().expect("client"))
        .namespace("a")
        .tweak_list_options(|options| options.label_selector = Some("app=web".into()))
        .build();
    let pods = factory.unscoped_informer::<Pod>();
    let recorder = Recorder::default();
    pods.add_event_handler(recorder.clone()).expect("added");
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
    assert_eq!(pods.store().list_keys(), ["a/web-1"]);

    server
        .create_typed(&pod("b", "web-3", &[("app", "web")]))
        .expect("other namespace");
    server
        .create_typed(&pod("a", "web-4", &[("app", "web")]))
        .expect("in scope");
    eventually("in-scope add", WAIT, || recorder.has("add web-4 initial=false")).await;
    // Leaving the selector is a deletion for this informer.
    let mut moved = pod("a", "web-1", &[("app", "cache")]);
    moved.metadata.resource_version = None;
    let api: Api<Pod> = Api::namespaced(server.client().expect("client"), "a");
    let current = api.get("web-1").await.expect("get");
    moved.metadata.resource_version = current.metadata.resource_version;
    api.replace("web-1", &Default::default(), &moved)
        .await
        .expect("update");
    eventually("leaving the selector deletes", WAIT, || {
        recorder.has("delete a/web-1")
    })
    .await;
    let mut keys = pods.store().list_keys();
    keys.sort();
    assert_eq!(keys, ["a/web-4"]);
    assert!(
        !recorder
            .lines()
            .iter()
            .any(|l| l.contains("web-3") || l.contains("db-1"))
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn factory_waits_for_every_informer_and_reports_each() {
    let server = server_with_pods(&[("a", "p1", &[])]).await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = factory.unscoped_informer::<Pod>();
    let nodes = factory.unscoped_informer::<Node>();
    let deployments = factory.unscoped_informer::<Deployment>();
    // One informer per type: a handler added through a second request lands on the first.
    factory
        .unscoped_informer::<Pod>()
        .add_event_handler(EventHandlerFuncs::new())
        .expect("added");
    assert_eq!(pods.handler_count(), 1, "one informer per type");
    factory.start();
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(WAIT).await;
    assert!(report.all_synced(), "{report}");
    assert_eq!(report.informers.len(), 3);
    assert_eq!(report.is_synced::<Node>(), Some(true));
    assert_eq!(
        server.request_count("list", "pods"),
        1,
        "one informer and one list per type"
    );

    // An informer requested later is started by a second start; a forbidden one never syncs,
    // and the wait honours its deadline instead of hanging.
    server.fail_next(Failure::new(403).verb("list").resource("configmaps").times(1000));
    let config_maps = factory.unscoped_informer::<ConfigMap>();
    factory.start();
    let report = factory
        .wait_for_cache_sync_timeout(Duration::from_millis(300))
        .await;
    assert!(!report.all_synced());
    assert_eq!(report.is_synced::<ConfigMap>(), Some(false));
    assert_eq!(report.is_synced::<Pod>(), Some(true));
    assert!(report.to_string().contains("not synced: configmaps"), "{report}");
    let _ = (nodes, deployments, config_maps);
    factory.shutdown().await;
    server.shutdown().await;
}

/// Counts live handler instances, to show that shutdown ends every handler thread.
struct Alive(Arc<AtomicUsize>);

impl ResourceEventHandler<Pod> for Alive {}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_leaves_no_running_task() {
    let server = server_with_pods(&[("a", "p1", &[])]).await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let alive = Arc::new(AtomicUsize::new(0));
    let pods = factory.unscoped_informer::<Pod>();
    for _ in 0..3 {
        alive.fetch_add(1, Ordering::SeqCst);
        pods.add_event_handler(Alive(Arc::clone(&alive))).expect("added");
    }
    let nodes = factory.unscoped_informer::<Node>();
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
    eventually("both watches open", WAIT, || server.watch_count() >= 2).await;

    tokio::time::timeout(WAIT, factory.shutdown())
        .await
        .expect("shutdown completes");
    assert!(pods.is_stopped() && nodes.is_stopped());
    assert_eq!(alive.load(Ordering::SeqCst), 0, "every handler thread ended");
    eventually("watches closed", WAIT, || server.watch_count() == 0).await;
    factory.start();
    assert!(
        pods.add_event_handler(EventHandlerFuncs::new()).is_err(),
        "the informers stay stopped"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_informer_over_a_custom_resource() {
    use informer_testserver::ResourceType;
    use kube::core::DynamicObject;

    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("shop").expect("namespace");
    let widgets = ResourceType::new("example.com", "v1", "Widget", "widgets", true);
    server.register(widgets.clone());
    let widget = |name: &str, size: u32| {
        serde_json::json!({
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": name, "namespace": "shop"},
            "spec": {"size": size},
        })
    };
    server.create(widget("small", 1)).expect("created");

    let informer = SharedIndexInformer::new(
        KubeListerWatcher::dynamic(server.client().expect("client"), &widgets.api_resource(), None),
        informer::Config {
            indexers: namespace_indexers(),
            description: Some("widgets.example.com".into()),
            ..informer::Config::default()
        },
    );
    let cancel = tokio_util::sync::CancellationToken::new();
    let task = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    tokio::time::timeout(WAIT, informer.wait_for_sync())
        .await
        .expect("synced");
    server.create(widget("large", 9)).expect("created");
    eventually("live add", WAIT, || informer.store().len() == 2).await;
    let large: Arc<DynamicObject> = informer
        .lister()
        .by_namespace("shop")
        .get("large")
        .expect("cached");
    assert_eq!(large.data["spec"]["size"], 9);
    assert_eq!(large.types.as_ref().map(|t| t.kind.as_str()), Some("Widget"));
    cancel.cancel();
    task.await.expect("run returns");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_watch_line_is_reported_and_recovered_from() {
    let server = server_with_pods(&[("a", "p1", &[])]).await;
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&errors);
    let factory = SharedInformerFactory::builder(server.client().expect("client"))
        .watch_error_handler(move |informer, error| {
            sink.lock().expect("lock").push(format!("{informer}: {error}"))
        })
        .build();
    let pods = factory.unscoped_informer::<Pod>();
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
    eventually("watch open", WAIT, || server.watch_count() == 1).await;

    server.send_malformed_watch_line();
    eventually("decode error reported", WAIT, || {
        !errors.lock().expect("lock").is_empty()
    })
    .await;
    let reported = errors.lock().expect("lock")[0].clone();
    assert!(
        reported.starts_with("pods: failed to watch pods: failed to decode"),
        "{reported}"
    );

    // The informer recovers: later changes still arrive.
    server.create_typed(&pod("a", "p2", &[])).expect("created");
    eventually("recovered", Duration::from_secs(20), || {
        pods.store().get_by_key(&ObjectKey::new("a", "p2")).is_some()
    })
    .await;
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_list_is_reported_and_retried_with_backoff() {
    let server = server_with_pods(&[("a", "p1", &[])]).await;
    server.fail_next(Failure::new(403).verb("list").resource("pods").times(3));
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&errors);
    let factory = SharedInformerFactory::builder(server.client().expect("client"))
        .watch_error_handler(move |_, error| sink.lock().expect("lock").push(error.to_string()))
        .build();
    let pods = factory.unscoped_informer::<Pod>();
    let started = tokio::time::Instant::now();
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(Duration::from_secs(30)).await;
    assert!(report.all_synced(), "{report}");
    // Three refusals, then success: at least 0.8 + 1.6 + 3.2 s of backoff in between.
    assert!(
        started.elapsed() >= Duration::from_millis(5600),
        "backed off: {:?}",
        started.elapsed()
    );
    assert_eq!(server.request_count("list", "pods"), 4);
    let errors = errors.lock().expect("lock").clone();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("failed to list pods: the API server answered 403 Forbidden")),
        "{errors:?}"
    );
    assert_eq!(pods.store().len(), 1);
    factory.shutdown().await;
    server.shutdown().await;
}

fn ports_of(pod: &Pod) -> &Vec<k8s_openapi::api::core::v1::ContainerPort> {
    pod.spec.as_ref().expect("a spec").containers[0]
        .ports
        .as_ref()
        .expect("ports")
}

/// Listed and watched objects are cached with every list at its exact capacity (serde's
/// doubling would leave room for four ports where there are three, eight for five), with or
/// without `compact_objects`, and with the same content either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_objects_hold_their_lists_at_length() {
    let server = TestServer::start().await.expect("server starts");
    let with_ports = |count: i32| {
        let mut pod = pod("default", "ports", &[("app", "web")]);
        let ports = (0..count)
            .map(|i| k8s_openapi::api::core::v1::ContainerPort {
                container_port: 8080 + i,
                ..Default::default()
            })
            .collect();
        pod.spec.as_mut().expect("a spec").containers[0].ports = Some(ports);
        pod
    };
    server.create_typed(&with_ports(3)).expect("created");
    let api: Api<Pod> = Api::namespaced(server.client().expect("client"), "default");

    let mut cached = Vec::new();
    for (compact, ports) in [(false, 5), (true, 6)] {
        let factory = SharedInformerFactory::builder(server.client().expect("client"))
            .compact_objects(compact)
            .build();
        let informer = factory.unscoped_informer::<Pod>();
        factory.start();
        assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
        let listed = informer
            .store()
            .get_by_key(&ObjectKey::new("default", "ports"))
            .expect("cached");
        assert_eq!(ports_of(&listed).capacity(), ports_of(&listed).len(), "listed");

        let mut changed = (*listed).clone();
        changed.spec = with_ports(ports).spec;
        api.replace("ports", &Default::default(), &changed)
            .await
            .expect("replaced");
        let watched = || {
            informer
                .store()
                .get_by_key(&ObjectKey::new("default", "ports"))
                .filter(|pod| ports_of(pod).len() == ports as usize)
        };
        eventually("the watched change", WAIT, || watched().is_some()).await;
        let watched = watched().expect("cached");
        assert_eq!(ports_of(&watched).capacity(), ports as usize, "watched");
        cached.push(listed);
        factory.shutdown().await;
    }
    assert_eq!(ports_of(&cached[0]).len(), 3);
    assert_eq!(ports_of(&cached[1]).len(), 5);
}

/// A factory on a thread of its own syncs, follows changes, serves its cache to other threads
/// and stops the thread on shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn factory_on_its_own_thread_syncs_follows_changes_and_shuts_down() {
    let server = server_with_pods(&[("default", "a", &[]), ("other", "b", &[])]).await;
    let config = kube::Config::new(server.url().parse().expect("a URL"));
    let factory = SharedInformerFactory::builder_on_own_thread(config)
        .expect("the thread starts")
        .build();
    let pods = factory.unscoped_informer::<Pod>();
    let recorder = Recorder::default();
    pods.add_event_handler(recorder.clone()).expect("registered");
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
    assert_eq!(pods.store().len(), 2);
    server.create_typed(&pod("default", "c", &[])).expect("created");
    eventually("the new pod is cached", WAIT, || {
        pods.store().get_by_key(&ObjectKey::new("default", "c")).is_some()
            && recorder.has("add c initial=false")
    })
    .await;
    tokio::time::timeout(WAIT, factory.shutdown())
        .await
        .expect("shutdown returns");
    eventually("the watch is closed", WAIT, || server.watch_count() == 0).await;
}
