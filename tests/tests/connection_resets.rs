//! Connection resets and read timeouts on watches, over real HTTP through a [`ResetProxy`]:
//! like client-go, the reflector takes a reset or a timeout for the end of the watch and
//! re-watches from the last resource version, with no relist and no notification for objects
//! that did not change.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use informer_runtime::{
    ObjectKey, cache::MaybeTombstone, factory::SharedInformerFactory, informer::SharedIndexInformer,
    informer::handler::ResourceEventHandler,
};
use informer_tests::{eventually, pod};
use informer_testserver::{RequestRecord, ResetProxy, TestServer};
use k8s_openapi::api::core::v1::Pod;

const WAIT: Duration = Duration::from_secs(20);

/// The label every change sets.
const STEP: &str = "step";

/// Records every notification as a line; an update with the same resource version on both
/// sides (a relist's or resync's re-delivery) is recorded as `unchanged`.
#[derive(Default, Clone)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    fn lines(&self) -> Vec<String> {
        self.0.lock().expect("lock").clone()
    }

    fn push(&self, line: String) {
        self.0.lock().expect("lock").push(line);
    }
}

fn name(p: &Pod) -> String {
    p.metadata.name.clone().unwrap_or_default()
}

fn step(p: &Pod) -> String {
    p.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(STEP))
        .cloned()
        .unwrap_or_default()
}

impl ResourceEventHandler<Pod> for Recorder {
    fn on_add(&self, object: Arc<Pod>, _is_in_initial_list: bool) {
        self.push(format!("add {} step {}", name(&object), step(&object)));
    }

    fn on_update(&self, old: Arc<Pod>, new: Arc<Pod>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            self.push(format!("unchanged {}", name(&new)));
        } else {
            self.push(format!(
                "update {} step {}->{}",
                name(&new),
                step(&old),
                step(&new)
            ));
        }
    }

    fn on_delete(&self, object: MaybeTombstone<Pod>) {
        self.push(format!("delete {}", object.key()));
    }
}

/// A reported error: whether it is a probable end of the connection, and its chain (`{:?}`).
type Reported = (bool, String);

/// A test server with pods `p0..` in namespace `a`, a proxy in front of it and a factory
/// whose client goes through the proxy, synced, with a recording handler.
struct Fixture {
    server: TestServer,
    proxy: ResetProxy,
    factory: SharedInformerFactory,
    pods: SharedIndexInformer<Pod>,
    recorder: Recorder,
    /// The notifications the changes made so far call for, in order.
    expected: Mutex<Vec<String>>,
    /// Every error reported to the watch-error handler.
    reported: Arc<Mutex<Vec<Reported>>>,
}

impl Fixture {
    /// Starts everything with `count` pods; `configure` adjusts the client's configuration.
    async fn start(count: usize, configure: impl FnOnce(&mut kube::Config)) -> Self {
        let server = TestServer::start().await.expect("server starts");
        server.create_namespace("a").expect("namespace");
        for i in 0..count {
            let mut p = pod("a", &format!("p{i}"), &[(STEP, "0")]);
            // big enough that a watch event spans several TCP reads
            p.metadata.annotations = Some([("padding".to_owned(), "x".repeat(1000))].into());
            server.create_typed(&p).expect("created");
        }
        let proxy = ResetProxy::start(server.addr()).await.expect("proxy starts");
        let mut config = proxy.config().expect("config");
        configure(&mut config);
        let reported: Arc<Mutex<Vec<Reported>>> = Arc::default();
        let sink = Arc::clone(&reported);
        let factory = SharedInformerFactory::builder(kube::Client::try_from(config).expect("client"))
            .watch_error_handler(move |_, error| {
                let probable_eof = error.api_error().is_some_and(|source| source.is_probable_eof());
                sink.lock()
                    .expect("lock")
                    .push((probable_eof, format!("{error:?}")));
            })
            .build();
        let pods = factory.unscoped_informer::<Pod>();
        let recorder = Recorder::default();
        let registration = pods.add_event_handler(recorder.clone()).expect("added");
        factory.start();
        assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
        eventually("handler synced", WAIT, || registration.has_synced()).await;
        let mut initial = recorder.lines();
        initial.sort();
        let seeded: Vec<String> = (0..count).map(|i| format!("add p{i} step 0")).collect();
        assert_eq!(initial, seeded);
        recorder.0.lock().expect("lock").clear();
        Self {
            server,
            proxy,
            factory,
            pods,
            recorder,
            expected: Mutex::default(),
            reported,
        }
    }

    /// Sets pod `name`'s step label to `to`; returns the new resource version.
    fn change(&self, name: &str, to: &str) -> String {
        let object = self.server.get("v1", "Pod", Some("a"), name).expect("pod exists");
        let mut p: Pod = serde_json::from_value(object).expect("a pod");
        let from = step(&p);
        p.metadata
            .labels
            .get_or_insert_default()
            .insert(STEP.into(), to.into());
        let updated = self.server.update_typed(&p).expect("updated");
        self.expected
            .lock()
            .expect("lock")
            .push(format!("update {name} step {from}->{to}"));
        updated.metadata.resource_version.expect("a resource version")
    }

    /// Waits until the handler got as many notifications as the changes call for, then checks
    /// they are exactly those: none missing, none repeated, no `unchanged` re-delivery.
    async fn wait_for_changes(&self, what: &str) {
        let expected = self.expected.lock().expect("lock").clone();
        eventually(what, WAIT, || self.recorder.lines().len() >= expected.len()).await;
        assert_eq!(
            self.recorder.lines(),
            expected,
            "{what}: reported errors: {:#?}",
            self.reported()
        );
    }

    /// The watch requests of pods the server received, oldest first.
    fn watches(&self) -> Vec<RequestRecord> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.verb == "watch" && r.resource == "pods")
            .collect()
    }

    fn reported(&self) -> Vec<Reported> {
        self.reported.lock().expect("lock").clone()
    }

    /// One list in all, and the reflector saw no relist.
    fn assert_no_relist(&self) {
        assert_eq!(
            self.server.request_count("list", "pods"),
            1,
            "exactly one list request: a reset or a timeout must not lead to a relist; reported errors: {:#?}",
            self.reported()
        );
        let stats = self.pods.stats().reflector;
        assert_eq!((stats.lists, stats.relists), (1, 0), "{stats:?}");
    }

    /// Every watch started where the previous one stopped or later: resource versions never
    /// go back, and none asks for "any version" again.
    fn assert_watches_resume(&self) {
        let versions: Vec<u64> = self
            .watches()
            .iter()
            .map(|watch| {
                resource_version(watch)
                    .and_then(|rv| rv.parse().ok())
                    .unwrap_or_else(|| panic!("a watch from a resource version: {watch:?}"))
            })
            .collect();
        assert!(versions.iter().all(|&rv| rv > 0), "{versions:?}");
        assert!(
            versions.is_sorted(),
            "resource versions never go back: {versions:?}"
        );
    }

    async fn shutdown(self) {
        self.factory.shutdown().await;
        self.proxy.shutdown().await;
        self.server.shutdown().await;
    }
}

/// The `resourceVersion` a request asked for.
fn resource_version(request: &RequestRecord) -> Option<String> {
    request
        .query
        .split('&')
        .find_map(|pair| pair.strip_prefix("resourceVersion="))
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resets_in_the_middle_of_watches_resume_from_the_last_resource_version_without_a_relist() {
    let fx = Fixture::start(4, |_| {}).await;

    // Between changes: each watch delivers a change, then its connection is reset.
    for round in 1..=3 {
        let changed_at = fx.change("p0", &round.to_string());
        fx.wait_for_changes("the change before a reset").await;
        let watches = fx.watches().len();
        assert_eq!(fx.proxy.reset_watches(), 1, "one open watch to reset");
        eventually("the watch re-opened", WAIT, || fx.watches().len() > watches).await;
        fx.assert_no_relist();
        let resumed = fx.watches().pop().expect("a watch");
        assert_eq!(
            resource_version(&resumed).as_deref(),
            Some(changed_at.as_str()),
            "re-watched from the last resource version: {resumed:?}"
        );
    }

    // While changing: every watch is cut inside an event once 3000 bytes of it went through.
    let resets_before = fx.proxy.stats().resets;
    fx.proxy.reset_watches_after_bytes(3000);
    for burst in 0..3 {
        for i in 0..4 {
            fx.change(&format!("p{i}"), &format!("b{burst}"));
        }
        fx.wait_for_changes("a burst of changes while watches are cut")
            .await;
    }
    fx.proxy.clear_faults();
    let stats = fx.proxy.stats();
    assert!(
        stats.resets >= resets_before + 3,
        "watches were cut while changes streamed: {stats:?}"
    );

    fx.change("p1", "last");
    fx.wait_for_changes("a change after the resets").await;
    fx.assert_no_relist();
    fx.assert_watches_resume();
    assert!(
        fx.reported().is_empty(),
        "a reset ends a watch like a close, it is no error: {:#?}",
        fx.reported()
    );
    let cached = fx
        .pods
        .store()
        .get_by_key(&ObjectKey::new("a", "p1"))
        .expect("cached");
    assert_eq!(step(&cached), "last");
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_while_a_watch_is_opened_backs_off_and_rewatches_without_a_relist() {
    let fx = Fixture::start(2, |_| {}).await;
    let changed_at = fx.change("p0", "1");
    fx.wait_for_changes("a change on the first watch").await;

    let before = fx.proxy.stats();
    fx.proxy.reset_next_watch_requests(2);
    assert_eq!(fx.proxy.reset_watches(), 1);
    eventually("two openings reset, the third watch at the server", WAIT, || {
        fx.proxy.stats().watch_requests >= before.watch_requests + 3 && fx.watches().len() >= 2
    })
    .await;
    let stats = fx.proxy.stats();
    assert_eq!(
        (stats.watch_requests, stats.resets),
        (before.watch_requests + 3, before.resets + 3),
        "{stats:?}"
    );
    let watches = fx.watches();
    assert_eq!(watches.len(), 2, "the reset openings never reached the server");
    assert_eq!(
        resource_version(&watches[1]).as_deref(),
        Some(changed_at.as_str())
    );

    fx.change("p1", "2");
    fx.wait_for_changes("a change on the re-opened watch").await;
    fx.assert_no_relist();
    let reported = fx.reported();
    assert_eq!(
        reported.len(),
        2,
        "each failed opening is reported: {reported:#?}"
    );
    assert!(
        reported.iter().all(|(probable_eof, _)| *probable_eof),
        "{reported:#?}"
    );
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_timeout_ends_the_watch_and_it_is_reopened_without_a_relist() {
    let read_timeout = Duration::from_millis(1500);
    let fx = Fixture::start(1, |config| config.read_timeout = Some(read_timeout)).await;
    fx.change("p0", "1");
    fx.wait_for_changes("a change on the first watch").await;

    // Nothing more happens: each watch times out on the client and is opened again.
    let watches = fx.watches().len();
    eventually("two watches ended by the read timeout", WAIT, || {
        fx.watches().len() >= watches + 2
    })
    .await;
    fx.change("p0", "2");
    fx.wait_for_changes("a change after the timeouts").await;
    fx.assert_no_relist();
    fx.assert_watches_resume();
    assert!(
        fx.reported().is_empty(),
        "a read timeout ends a watch like a close: {:#?}",
        fx.reported()
    );
    assert_eq!(fx.proxy.stats().resets, 0);
    fx.shutdown().await;
}
