//! Ports of client-go's `shared_informer_test.go` and `controller_test.go`, on the fake source.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use crate::reflector;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Pod, PodSpec};
use kube::api::ObjectMeta;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::key::ObjectKey;
use crate::{
    cache::{IndexFunc, namespace_indexers},
    informer::handler::EventHandlerFuncs,
    testing::FakeControllerSource,
};

fn pod(name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    }
}

fn labelled(name: &str, labels: &[(&str, &str)]) -> Pod {
    let mut p = pod(name);
    p.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    );
    p
}

fn name_of(p: &Pod) -> String {
    p.metadata.name.clone().unwrap_or_default()
}

/// Waits in real time (handlers run on threads) while letting the runtime make progress;
/// virtual time does not move meanwhile.
async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    // A liveness deadline, not a timing assertion: generous for loaded 2-core machines.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::task::yield_now().await;
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Moves virtual time on in small steps, letting handler threads work in between, until
/// `condition` holds (backoffs are virtual, handlers real).
async fn advance_until(what: &str, mut condition: impl FnMut() -> bool) {
    for _ in 0..600 {
        if condition() {
            return;
        }
        tokio::time::advance(Duration::from_millis(100)).await;
        settle().await;
    }
    assert!(condition(), "still waiting for {what} after 60 s of virtual time");
}

/// Lets handler threads drain for a short real time, then returns.
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
        std::thread::sleep(Duration::from_micros(400));
    }
}

/// client-go's `testListener`: records the names of added and updated objects.
#[derive(Default)]
struct TestListener {
    names: Mutex<BTreeSet<String>>,
    events: Mutex<Vec<String>>,
}

impl TestListener {
    fn names(&self) -> BTreeSet<String> {
        self.names.lock().expect("lock").clone()
    }

    fn events(&self) -> Vec<String> {
        self.events.lock().expect("lock").clone()
    }

    fn reset(&self) {
        self.names.lock().expect("lock").clear();
        self.events.lock().expect("lock").clear();
    }

    /// client-go's `ok()`: the received names equal `expected`, and still do a little later.
    async fn expect(&self, expected: &[&str]) {
        let expected: BTreeSet<String> = expected.iter().map(|s| (*s).to_owned()).collect();
        eventually(&format!("names {expected:?}"), || self.names() == expected).await;
        settle().await;
        assert_eq!(self.names(), expected, "received more than expected");
    }
}

impl ResourceEventHandler<Pod> for Arc<TestListener> {
    fn on_add(&self, object: Arc<Pod>, is_in_initial_list: bool) {
        self.names.lock().expect("lock").insert(name_of(&object));
        self.events
            .lock()
            .expect("lock")
            .push(format!("add {} {is_in_initial_list}", name_of(&object)));
    }

    fn on_update(&self, _old: Arc<Pod>, new: Arc<Pod>) {
        self.names.lock().expect("lock").insert(name_of(&new));
        self.events
            .lock()
            .expect("lock")
            .push(format!("update {}", name_of(&new)));
    }

    fn on_delete(&self, object: MaybeTombstone<Pod>) {
        let tombstone = if object.is_tombstone() { " (tombstone)" } else { "" };
        self.events
            .lock()
            .expect("lock")
            .push(format!("delete {}{tombstone}", object.key()));
    }
}

type Source = Arc<FakeControllerSource<Pod>>;

fn informer(source: &Source, resync: Duration) -> SharedIndexInformer<Pod> {
    SharedIndexInformer::from_arc(
        Arc::clone(source) as Arc<dyn ListerWatcher<Pod>>,
        Config {
            resync_period: resync,
            ..Config::default()
        },
    )
}

struct Running {
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    async fn stop(self) {
        self.cancel.cancel();
        self.task.await.expect("run returns");
    }
}

fn run(informer: &SharedIndexInformer<Pod>) -> Running {
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    Running { cancel, task }
}

async fn synced(informer: &SharedIndexInformer<Pod>) {
    eventually("informer sync", || informer.has_synced()).await;
}

// TestIndexer
#[tokio::test(start_paused = true)]
async fn indexer_indexes_and_accepts_indexers_while_running() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(labelled("pod1", &[("a", "a-val"), ("b", "b-val")]));
    source.add(labelled("pod2", &[("b", "b-val")]));
    let label_keys: IndexFunc<Pod> = Arc::new(|p: &Pod| {
        p.metadata
            .labels
            .iter()
            .flatten()
            .map(|(k, _)| k.clone())
            .collect()
    });
    let i = SharedIndexInformer::from_arc(
        Arc::clone(&source) as Arc<dyn ListerWatcher<Pod>>,
        Config {
            resync_period: Duration::from_secs(1),
            indexers: [("labels".to_owned(), Arc::clone(&label_keys))].into(),
            ..Config::default()
        },
    );
    let running = run(&i);
    synced(&i).await;
    let by = |index: &str, value: &str| -> Vec<String> {
        let mut names: Vec<String> = i
            .store()
            .by_index(index, value)
            .unwrap_or_default()
            .iter()
            .map(|p| name_of(p))
            .collect();
        names.sort();
        names
    };
    assert_eq!(by("labels", "a"), ["pod1"]);
    source.add(labelled("pod3", &[("a", "a-val")]));
    eventually("pod3 indexed", || by("labels", "a") == ["pod1", "pod3"]).await;
    i.add_indexers([("labels-again".to_owned(), label_keys)].into())
        .expect("no conflict");
    assert_eq!(by("labels-again", "a"), ["pod1", "pod3"]);
    for index in ["labels", "labels-again"] {
        let values: BTreeSet<String> = i.store().list_index_func_values(index).into_iter().collect();
        assert_eq!(values, BTreeSet::from(["a".to_owned(), "b".to_owned()]));
    }
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn add_index_registers_typed_indexes_before_and_while_running() {
    static BY_APP: crate::cache::Index<Pod> = crate::cache::Index::label("app");
    static BY_NODE: crate::cache::Index<Pod> = crate::cache::Index::new("by-node", |pod| {
        pod.spec
            .iter()
            .filter_map(|spec| spec.node_name.clone())
            .collect()
    });
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(labelled("pod1", &[("app", "web")]));
    let i = informer(&source, Duration::ZERO);
    let by_app = i.add_index(&BY_APP).expect("before run");
    let running = run(&i);
    synced(&i).await;
    assert_eq!(by_app.keys("web"), ["pod1"]);
    source.add(labelled("pod2", &[("app", "web")]));
    eventually("pod2 indexed", || by_app.get("web").len() == 2).await;

    let mut on_node = labelled("pod3", &[("app", "db")]);
    on_node.spec = Some(PodSpec {
        node_name: Some("node-1".into()),
        ..PodSpec::default()
    });
    source.add(on_node);
    eventually("pod3 cached", || i.store().len() == 3).await;
    let by_node = i
        .add_index(&BY_NODE)
        .expect("while running: indexes the cache at once");
    assert_eq!(by_node.keys("node-1"), ["pod3"]);
    assert_eq!(
        i.lister().by_index(&BY_NODE, "node-1").expect("registered").len(),
        1
    );
    i.add_index(&BY_APP).expect("the same handle again");
    let taken = i
        .add_index(&crate::cache::Index::new("by-node", |_| Vec::new()))
        .expect_err("another function under a taken name");
    assert!(
        matches!(
            taken,
            Error::Indexers(crate::cache::Error::IndexerConflict { .. })
        ),
        "{taken}"
    );
    running.stop().await;
    assert!(matches!(
        i.add_index(&crate::cache::Index::BY_CONTROLLER_UID),
        Err(Error::IndexersAfterStop { .. })
    ));
}

// TestListenerResyncPeriods
#[tokio::test(start_paused = true)]
async fn listener_resync_periods() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    source.add(pod("pod2"));
    let i = informer(&source, Duration::from_secs(1));
    let listeners: Vec<Arc<TestListener>> = (0..3).map(|_| Arc::default()).collect();
    for (listener, period) in listeners.iter().zip([0, 2, 3]) {
        i.add_event_handler_with_resync_period(Arc::clone(listener), Duration::from_secs(period))
            .expect("added");
    }
    let running = run(&i);
    synced(&i).await;
    for listener in &listeners {
        listener.expect(&["pod1", "pod2"]).await;
        listener.reset();
    }
    tokio::time::advance(Duration::from_secs(2)).await;
    listeners[1].expect(&["pod1", "pod2"]).await;
    listeners[0].expect(&[]).await;
    listeners[2].expect(&[]).await;
    listeners[1].reset();
    tokio::time::advance(Duration::from_secs(1)).await;
    listeners[2].expect(&["pod1", "pod2"]).await;
    listeners[0].expect(&[]).await;
    listeners[1].expect(&[]).await;
    running.stop().await;
}

// TestSharedInformerInitializationRace
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_added_while_run_starts() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    let i = informer(&source, Duration::ZERO);
    let listener = Arc::new(TestListener::default());
    let adder = {
        let (i, listener) = (i.clone(), Arc::clone(&listener));
        tokio::spawn(async move { i.add_event_handler(listener).expect("added") })
    };
    let running = run(&i);
    let registration = adder.await.expect("task");
    listener.expect(&["pod1"]).await;
    eventually("registration synced", || registration.has_synced()).await;
    running.stop().await;
}

// TestSharedInformerWatchDisruption
#[tokio::test(start_paused = true)]
async fn watch_disruption_relists_and_resyncs_only_syncing_listeners() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    source.add(pod("pod2"));
    let i = informer(&source, Duration::from_secs(1));
    let no_resync = Arc::new(TestListener::default());
    let resync = Arc::new(TestListener::default());
    i.add_event_handler_with_resync_period(Arc::clone(&no_resync), Duration::ZERO)
        .expect("added");
    i.add_event_handler_with_resync_period(Arc::clone(&resync), Duration::from_secs(1))
        .expect("added");
    let running = run(&i);
    synced(&i).await;
    no_resync.expect(&["pod1", "pod2"]).await;
    resync.expect(&["pod1", "pod2"]).await;

    // Changes the watch never delivers.
    source.add_drop_watch(pod("pod3"));
    let mut changed = pod("pod2");
    changed.spec = Some(PodSpec {
        node_name: Some("node-1".into()),
        ..PodSpec::default()
    });
    source.modify_drop_watch(changed);
    no_resync.expect(&["pod1", "pod2"]).await;
    no_resync.reset();
    resync.reset();

    // The resync check marks only the resyncing listener; the resync itself is harmless.
    tokio::time::advance(Duration::from_secs(1)).await;
    settle().await;
    resync.reset();

    // Reset the watch: the reflector gets 410, backs off, relists.
    source.reset_watch();
    settle().await;
    tokio::time::advance(Duration::from_millis(1601)).await;
    no_resync.expect(&["pod2", "pod3"]).await;
    resync.expect(&["pod1", "pod2", "pod3"]).await;
    running.stop().await;
}

// TestSharedInformerErrorHandling
#[tokio::test(start_paused = true)]
async fn watch_error_handler_sees_list_errors() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    source.set_list_error(Some(
        kube::core::Status::failure("Access Denied", "Forbidden").with_code(403),
    ));
    let i = informer(&source, Duration::ZERO);
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&errors);
    i.set_watch_error_handler(move |_, e| sink.lock().expect("lock").push(e.to_string()))
        .expect("before run");
    let running = run(&i);
    eventually("an error", || !errors.lock().expect("lock").is_empty()).await;
    assert!(errors.lock().expect("lock")[0].contains("Access Denied"));
    assert!(!i.has_synced());
    running.stop().await;
}

// TestSharedInformerStartRace
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setters_race_with_run() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::ZERO);
    let setter = {
        let i = i.clone();
        std::thread::spawn(move || {
            let mut refused = 0;
            for _ in 0..1000 {
                let a = i.set_transform(|_: &mut Pod| {});
                let b = i.set_watch_error_handler(|_, _| {});
                refused += usize::from(a.is_err()) + usize::from(b.is_err());
            }
            refused
        })
    };
    let running = run(&i);
    let refused = tokio::task::spawn_blocking(move || setter.join().expect("thread"))
        .await
        .expect("join");
    running.stop().await;
    assert!(
        i.set_transform(|_: &mut Pod| {})
            .is_err_and(|e| e.to_string().contains("already started"))
    );
    let _ = refused;
}

// TestSharedInformerTransformer
#[tokio::test(start_paused = true)]
async fn transform_applies_before_handlers() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    source.add(pod("pod2"));
    let i = informer(&source, Duration::ZERO);
    i.set_transform(|p: &mut Pod| p.metadata.name = p.metadata.name.as_ref().map(|n| n.to_uppercase()))
        .expect("set");
    let listener = Arc::new(TestListener::default());
    i.add_event_handler(Arc::clone(&listener)).expect("added");
    let running = run(&i);
    listener.expect(&["POD1", "POD2"]).await;
    running.stop().await;
}

// TestSharedInformerRemoveHandler
#[tokio::test(start_paused = true)]
async fn remove_handler() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::ZERO);
    let first = i.add_event_handler(EventHandlerFuncs::new()).expect("added");
    let second = i.add_event_handler(EventHandlerFuncs::new()).expect("added");
    assert_eq!(i.handler_count(), 2);
    i.remove_event_handler(&second);
    assert_eq!(i.handler_count(), 1);
    i.remove_event_handler(&first);
    assert_eq!(i.handler_count(), 0);
}

// TestSharedInformerRemoveForeignHandler
#[tokio::test(start_paused = true)]
async fn remove_foreign_handler_is_a_no_op() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let a = informer(&source, Duration::ZERO);
    let b = informer(&source, Duration::ZERO);
    let first = a.add_event_handler(EventHandlerFuncs::new()).expect("added");
    let second = a.add_event_handler(EventHandlerFuncs::new()).expect("added");
    b.remove_event_handler(&first);
    b.remove_event_handler(&second);
    assert_eq!(a.handler_count(), 2);
    assert!(first.is_registered() && second.is_registered());
    a.remove_event_handler(&first);
    assert_eq!(a.handler_count(), 1);
    a.remove_event_handler(&second);
    assert_eq!(a.handler_count(), 0);
}

// TestSharedInformerMultipleRegistration
#[tokio::test(start_paused = true)]
async fn same_handler_registered_twice() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::ZERO);
    let handler = Arc::new(TestListener::default());
    let first = i.add_event_handler(Arc::clone(&handler)).expect("added");
    let second = i.add_event_handler(Arc::clone(&handler)).expect("added");
    assert_eq!(i.handler_count(), 2);
    i.remove_event_handler(&first);
    assert!(!first.is_registered() && second.is_registered());
    assert_eq!(i.handler_count(), 1);
    i.remove_event_handler(&second);
    assert_eq!(i.handler_count(), 0);
}

// TestRemovingRemovedSharedInformer
#[tokio::test(start_paused = true)]
async fn removing_a_removed_handler() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::ZERO);
    let registration = i.add_event_handler(EventHandlerFuncs::new()).expect("added");
    i.remove_event_handler(&registration);
    i.remove_event_handler(&registration);
    assert!(!registration.is_registered());
    assert_eq!(i.handler_count(), 0);
}

// TestSharedInformerHandlerAbuse, scaled for a 2-core machine (3000 events instead of 10 000;
// each registration replays the whole cache, so the work grows with both).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_abuse() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::from_secs(1));
    let running = run(&i);
    let cancel = CancellationToken::new();
    let abusers: Vec<_> = (0..100u64)
        .map(|seed| {
            let (i, cancel) = (i.clone(), cancel.clone());
            tokio::spawn(async move {
                let mut rng = fastrand::Rng::with_seed(seed);
                let mut registrations = Vec::new();
                // Bounded, paced abuse: every registration replays the whole cache.
                for _ in 0..20 {
                    if cancel.is_cancelled() {
                        break;
                    }
                    if registrations.is_empty() || rng.bool() {
                        match i.add_event_handler_with_resync_period(
                            EventHandlerFuncs::new(),
                            Duration::from_secs(1),
                        ) {
                            Ok(r) => registrations.push(r),
                            Err(e) => {
                                assert!(e.to_string().contains("stopped already"), "{e}");
                                break;
                            }
                        }
                    } else {
                        let r = registrations.swap_remove(rng.usize(..registrations.len()));
                        i.remove_event_handler(&r);
                    }
                    tokio::time::sleep(Duration::from_millis(rng.u64(1..5))).await;
                }
            })
        })
        .collect();
    let mut rng = fastrand::Rng::with_seed(1);
    let mut live: Vec<String> = Vec::new();
    for n in 0..3_000 {
        match rng.u8(..3) {
            0 => {
                let name = format!("pod-{n}");
                source.add(pod(&name));
                live.push(name);
            }
            1 if !live.is_empty() => {
                source.modify(pod(&live[rng.usize(..live.len())]));
            }
            _ if !live.is_empty() => {
                let name = live.swap_remove(rng.usize(..live.len()));
                source.delete(pod(&name));
            }
            _ => {}
        }
    }
    eventually("cache caught up", || i.store().len() == live.len()).await;
    running.stop().await;
    cancel.cancel();
    for abuser in abusers {
        abuser.await.expect("no panic");
    }
    let refused = i
        .add_event_handler(EventHandlerFuncs::new())
        .expect_err("stopped");
    assert!(refused.to_string().contains("stopped already"));
}

// TestStateSharedInformer
#[tokio::test(start_paused = true)]
async fn started_and_stopped_states() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    let i = informer(&source, Duration::ZERO);
    assert!(!i.is_started() && !i.is_stopped());
    let listener = Arc::new(TestListener::default());
    i.add_event_handler(Arc::clone(&listener)).expect("added");
    let running = run(&i);
    listener.expect(&["pod1"]).await;
    assert!(i.is_started() && !i.is_stopped());
    running.stop().await;
    assert!(
        i.is_stopped() && i.is_started(),
        "a stopped informer is still started"
    );
}

// TestAddOnStoppedSharedInformer and TestRemoveOnStoppedSharedInformer
#[tokio::test(start_paused = true)]
async fn add_and_remove_after_stop() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::ZERO);
    let registration = i.add_event_handler(EventHandlerFuncs::new()).expect("added");
    run(&i).stop().await;
    let err = i
        .add_event_handler_with_resync_period(EventHandlerFuncs::new(), Duration::ZERO)
        .expect_err("stopped");
    assert!(
        err.to_string()
            .ends_with("was not added to shared informer because it has stopped already"),
        "{err}"
    );
    i.remove_event_handler(&registration);
    assert!(i.add_indexers(namespace_indexers()).is_err());
}

// TestRemoveWhileActive
#[tokio::test(start_paused = true)]
async fn removed_handler_gets_nothing_more() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::ZERO);
    let listener = Arc::new(TestListener::default());
    let registration = i.add_event_handler(Arc::clone(&listener)).expect("added");
    let running = run(&i);
    source.add(pod("pod1"));
    listener.expect(&["pod1"]).await;
    i.remove_event_handler(&registration);
    assert!(!registration.is_registered());
    source.add(pod("pod2"));
    eventually("pod2 cached", || {
        i.store().get_by_key(&ObjectKey::new("", "pod2")).is_some()
    })
    .await;
    listener.expect(&["pod1"]).await;
    running.stop().await;
}

/// A handler whose adds block until released.
struct Gate {
    open: Mutex<bool>,
    changed: std::sync::Condvar,
}

impl Gate {
    fn closed() -> Arc<Self> {
        Arc::new(Self {
            open: Mutex::new(false),
            changed: std::sync::Condvar::new(),
        })
    }

    fn open(&self) {
        *self.open.lock().expect("lock") = true;
        self.changed.notify_all();
    }

    fn wait(&self) {
        let mut open = self.open.lock().expect("lock");
        while !*open {
            open = self.changed.wait(open).expect("lock");
        }
    }
}

struct GatedListener {
    gate: Arc<Gate>,
    listener: Arc<TestListener>,
}

impl ResourceEventHandler<Pod> for GatedListener {
    fn on_add(&self, object: Arc<Pod>, is_in_initial_list: bool) {
        self.gate.wait();
        self.listener.on_add(object, is_in_initial_list);
    }
}

// TestAddWhileActive
#[tokio::test(start_paused = true)]
async fn handler_added_while_running_gets_the_cache_then_live_events() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::ZERO);
    let first = Arc::new(TestListener::default());
    let first_registration = i.add_event_handler(Arc::clone(&first)).expect("added");
    assert!(!first_registration.has_synced());
    let running = run(&i);
    source.add(pod("pod1"));
    first.expect(&["pod1"]).await;
    eventually("first synced", || first_registration.has_synced()).await;

    let gate = Gate::closed();
    let second = Arc::new(TestListener::default());
    let second_registration = i
        .add_event_handler(GatedListener {
            gate: Arc::clone(&gate),
            listener: Arc::clone(&second),
        })
        .expect("added");
    assert!(!second_registration.has_synced(), "the replay is not handled yet");
    gate.open();
    source.add(pod("pod2"));
    second.expect(&["pod1", "pod2"]).await;
    eventually("second synced", || second_registration.has_synced()).await;
    assert_eq!(second.events(), ["add pod1 true", "add pod2 false"]);
    first.expect(&["pod1", "pod2"]).await;
    running.stop().await;
}

/// Counts how many handler instances are alive, to detect leaked handler threads.
struct Alive(Arc<AtomicUsize>);

impl Alive {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(Arc::clone(count))
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ResourceEventHandler<Pod> for Alive {}

// TestShutdown: no handler thread outlives the informer, whether handlers were added before
// or after sync, and also when the informer never ran.
#[tokio::test(start_paused = true)]
async fn shutdown_leaves_no_handler_thread() {
    let alive = Arc::new(AtomicUsize::new(0));
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    let i = informer(&source, Duration::ZERO);
    i.add_event_handler(Alive::new(&alive)).expect("added");
    let running = run(&i);
    synced(&i).await;
    i.add_event_handler(Alive::new(&alive)).expect("added");
    running.stop().await;
    assert_eq!(
        alive.load(Ordering::SeqCst),
        0,
        "handler threads finished before run returned"
    );

    let never_run = informer(&source, Duration::ZERO);
    never_run.add_event_handler(Alive::new(&alive)).expect("added");
    drop(never_run);
    eventually("handler of a dropped informer released", || {
        alive.load(Ordering::SeqCst) == 0
    })
    .await;
}

struct Panicking;

impl ResourceEventHandler<Pod> for Panicking {
    fn on_add(&self, _: Arc<Pod>, _: bool) {
        panic!("intentional panic in a handler");
    }
}

// TestEventPanics
#[tokio::test(start_paused = true)]
async fn panicking_handler_is_isolated_and_never_syncs() {
    let source: Source = Arc::new(FakeControllerSource::new());
    for n in 0..5 {
        source.add(pod(&format!("pod{n}")));
    }
    let i = informer(&source, Duration::ZERO);
    let panicking = [
        i.add_event_handler(Panicking).expect("added"),
        i.add_event_handler(Panicking).expect("added"),
    ];
    let healthy = Arc::new(TestListener::default());
    let healthy_registration = i.add_event_handler(Arc::clone(&healthy)).expect("added");
    let running = run(&i);
    synced(&i).await;
    healthy.expect(&["pod0", "pod1", "pod2", "pod3", "pod4"]).await;
    for registration in &panicking {
        eventually("5 panics", || registration.panics() == 5).await;
        assert!(
            !registration.has_synced(),
            "a handler that panicked on the initial list never syncs"
        );
    }
    eventually("healthy handler synced", || healthy_registration.has_synced()).await;
    source.add(pod("pod5"));
    for registration in &panicking {
        eventually("the handler keeps receiving", || registration.panics() == 6).await;
    }
    running.stop().await;
}

// TestUpdate (controller_test.go): concurrent add-then-modify; the handler only ever sees
// forward transitions and deletes the pod once it sees the final state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_only_move_forward() {
    const FROM: &str = "from";
    const TO: &str = "to";
    let check = |p: &Pod| {
        p.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("check"))
            .cloned()
            .unwrap_or_default()
    };
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::from_millis(100));
    let deletions = Arc::new(AtomicUsize::new(0));
    let bad = Arc::new(Mutex::new(Vec::new()));
    let handler = {
        let (source, deletions, bad) = (Arc::clone(&source), Arc::clone(&deletions), Arc::clone(&bad));
        EventHandlerFuncs::new()
            .updated(move |old: Arc<Pod>, new: Arc<Pod>| {
                let transition = (check(&old), check(&new));
                if !matches!(
                    (transition.0.as_str(), transition.1.as_str()),
                    (FROM, TO) | (TO, TO) | (FROM, FROM)
                ) {
                    bad.lock().expect("lock").push(transition);
                }
                if new
                    .metadata
                    .labels
                    .as_ref()
                    .is_some_and(|l| l.contains_key("final"))
                {
                    source.delete((*new).clone());
                }
            })
            .deleted(move |_| {
                deletions.fetch_add(1, Ordering::SeqCst);
            })
    };
    i.add_event_handler(handler).expect("added");
    let running = run(&i);
    let writers: Vec<_> = (0..3)
        .map(|n| {
            let source = Arc::clone(&source);
            std::thread::spawn(move || {
                let name = format!("a-{n}-0");
                source.add(labelled(&name, &[("check", FROM)]));
                source.modify(labelled(&name, &[("check", TO), ("final", "true")]));
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("writer");
    }
    eventually("three deletions", || deletions.load(Ordering::SeqCst) == 3).await;
    assert!(
        bad.lock().expect("lock").is_empty(),
        "{:?}",
        bad.lock().expect("lock")
    );
    running.stop().await;
}

// TestTransformingInformer (controller_test.go)
#[tokio::test(start_paused = true)]
async fn transforming_informer_events_and_store() {
    fn with_generation(name: &str, generation: i64) -> Pod {
        let mut p = pod(name);
        p.metadata.generation = Some(generation);
        p.spec = Some(PodSpec {
            hostname: Some("old".into()),
            subdomain: Some("sub".into()),
            ..PodSpec::default()
        });
        p
    }
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(with_generation("pod1", 1));
    source.modify(with_generation("pod1", 2));
    let i = informer(&source, Duration::ZERO);
    i.set_transform(|p: &mut Pod| {
        let spec = p.spec.get_or_insert_with(PodSpec::default);
        spec.hostname = Some("new-hostname".into());
        spec.subdomain = None;
        spec.node_name = Some("nodename".into());
        p.metadata.resource_version = None;
    })
    .expect("set");
    let events = Arc::new(Mutex::new(Vec::new()));
    let record = |events: &Arc<Mutex<Vec<String>>>| Arc::clone(events);
    let (a, u, d) = (record(&events), record(&events), record(&events));
    let transformed = |p: &Pod| {
        p.spec.as_ref().is_some_and(|s| {
            s.hostname.as_deref() == Some("new-hostname")
                && s.subdomain.is_none()
                && s.node_name.as_deref() == Some("nodename")
        }) && p.metadata.resource_version.is_none()
    };
    i.add_event_handler(
        EventHandlerFuncs::new()
            .added(move |p: Arc<Pod>, _| {
                assert!(transformed(&p));
                a.lock().expect("lock").push(format!(
                    "added {} gen {}",
                    name_of(&p),
                    p.metadata.generation.unwrap_or(0)
                ));
            })
            .updated(move |old: Arc<Pod>, new: Arc<Pod>| {
                u.lock().expect("lock").push(format!(
                    "modified {} gen {}->{}",
                    name_of(&new),
                    old.metadata.generation.unwrap_or(0),
                    new.metadata.generation.unwrap_or(0)
                ));
            })
            .deleted(move |p| {
                let generation = p.object().and_then(|p| p.metadata.generation).unwrap_or(0);
                d.lock()
                    .expect("lock")
                    .push(format!("deleted {} gen {generation}", p.key()));
            }),
    )
    .expect("added");
    let running = run(&i);
    synced(&i).await;
    eventually("first event", || events.lock().expect("lock").len() == 1).await;
    // Like the Go test, wait for each event before the next change (changes of one key that
    // are queued together are delivered together).
    let changes: [Box<dyn Fn()>; 4] = [
        Box::new(|| drop(source.add(with_generation("pod2", 1)))),
        Box::new(|| drop(source.add(with_generation("pod3", 1)))),
        Box::new(|| drop(source.modify(with_generation("pod2", 2)))),
        Box::new(|| drop(source.delete(with_generation("pod1", 2)))),
    ];
    for (n, change) in changes.iter().enumerate() {
        change();
        eventually("the event", || events.lock().expect("lock").len() == n + 2).await;
    }
    assert_eq!(
        *events.lock().expect("lock"),
        [
            "added pod1 gen 2",
            "added pod2 gen 1",
            "added pod3 gen 1",
            "modified pod2 gen 1->2",
            "deleted pod1 gen 2"
        ]
    );
    let mut store: Vec<(String, i64, bool)> = i
        .store()
        .list()
        .iter()
        .map(|p| (name_of(p), p.metadata.generation.unwrap_or(0), transformed(p)))
        .collect();
    store.sort();
    assert_eq!(store, [("pod2".into(), 2, true), ("pod3".into(), 1, true)]);
    running.stop().await;
}

// TestResetWatch (controller_test.go)
#[tokio::test(start_paused = true)]
async fn reset_watch_relists_into_updates_and_adds() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod-1"));
    let i = informer(&source, Duration::ZERO);
    let listener = Arc::new(TestListener::default());
    i.add_event_handler(Arc::clone(&listener)).expect("added");
    let running = run(&i);
    listener.expect(&["pod-1"]).await;
    assert_eq!(listener.events(), ["add pod-1 true"]);
    listener.reset();

    let mut modified = pod("pod-1");
    modified.metadata.labels = Some(BTreeMap::from([("changed".to_owned(), "yes".to_owned())]));
    source.modify_drop_watch(modified);
    source.add_drop_watch(pod("pod-2"));
    source.reset_watch();
    advance_until("the relist", || listener.names().len() == 2).await;
    listener.expect(&["pod-1", "pod-2"]).await;
    let mut events = listener.events();
    events.sort();
    assert_eq!(events, ["add pod-2 false", "update pod-1"]);
    running.stop().await;
}

// A deletion missed by the watch arrives as a tombstone after the relist.
#[tokio::test(start_paused = true)]
async fn missed_delete_arrives_as_a_tombstone() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("keep"));
    let gone = source.add(pod("gone"));
    let i = informer(&source, Duration::ZERO);
    let listener = Arc::new(TestListener::default());
    i.add_event_handler(Arc::clone(&listener)).expect("added");
    let running = run(&i);
    listener.expect(&["gone", "keep"]).await;
    source.delete_drop_watch(gone);
    source.reset_watch();
    advance_until("tombstone", || {
        listener.events().contains(&"delete gone (tombstone)".to_owned())
    })
    .await;
    assert!(i.store().get_by_key(&ObjectKey::new("", "gone")).is_none());
    running.stop().await;
}

// A handler added while objects churn sees every object exactly once as an add (replay or
// live), and afterwards only updates and deletes of what it saw.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_handler_replay_has_no_gap_or_duplicate() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::ZERO);
    let running = run(&i);
    let writer = {
        let source = Arc::clone(&source);
        std::thread::spawn(move || {
            for n in 0..2000 {
                source.add(pod(&format!("p{n}")));
                if n % 3 == 0 {
                    source.delete(pod(&format!("p{}", n / 2)));
                }
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(2)).await;
    let seen: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let problems: Arc<Mutex<Vec<String>>> = Arc::default();
    let (s1, s2, p1, p2) = (
        Arc::clone(&seen),
        Arc::clone(&seen),
        Arc::clone(&problems),
        Arc::clone(&problems),
    );
    i.add_event_handler(
        EventHandlerFuncs::new()
            .added(move |p: Arc<Pod>, _| {
                let mut seen = s1.lock().expect("lock");
                let count = seen.entry(name_of(&p)).or_default();
                *count += 1;
                if *count > 1 {
                    p1.lock()
                        .expect("lock")
                        .push(format!("duplicate add {}", name_of(&p)));
                }
            })
            .deleted(move |p| {
                let name = p.key().to_string();
                if s2.lock().expect("lock").remove(&name).is_none() {
                    p2.lock().expect("lock").push(format!("delete of unseen {name}"));
                }
            }),
    )
    .expect("added");
    writer.join().expect("writer");
    let expected: BTreeSet<String> = source.objects().iter().map(name_of).collect();
    eventually("handler state equals the source", || {
        seen.lock()
            .expect("lock")
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>()
            == expected
    })
    .await;
    assert!(
        problems.lock().expect("lock").is_empty(),
        "{:?}",
        problems.lock().expect("lock")
    );
    running.stop().await;
}

// A blocked handler builds a backlog without holding up the cache or other handlers.
#[tokio::test(start_paused = true)]
async fn slow_handler_does_not_stall_others() {
    let source: Source = Arc::new(FakeControllerSource::new());
    let i = informer(&source, Duration::ZERO);
    let gate = Gate::closed();
    let stuck = i
        .add_event_handler(GatedListener {
            gate: Arc::clone(&gate),
            listener: Arc::default(),
        })
        .expect("added");
    let healthy = Arc::new(TestListener::default());
    i.add_event_handler(Arc::clone(&healthy)).expect("added");
    let running = run(&i);
    for n in 0..100 {
        source.add(pod(&format!("p{n}")));
    }
    eventually("healthy handler got everything", || healthy.names().len() == 100).await;
    assert_eq!(i.store().len(), 100);
    eventually("one add in progress, 99 waiting", || stuck.backlog() == 99).await;
    gate.open();
    eventually("backlog drained", || {
        stuck.backlog() == 0 && stuck.handled() == 100
    })
    .await;
    running.stop().await;
}

// Async consumers: a stream registered late gets the replay, then live notifications.
#[tokio::test(start_paused = true)]
async fn notification_stream() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("a"));
    let i = informer(&source, Duration::ZERO);
    let running = run(&i);
    synced(&i).await;
    let mut stream = i.stream().expect("running");
    assert!(!stream.registration().has_synced());
    match stream.next().await {
        Some(Notification::Add {
            object,
            is_in_initial_list: true,
        }) => assert_eq!(name_of(&object), "a"),
        other => panic!("expected the replay, got {other:?}"),
    }
    assert!(stream.registration().has_synced());
    source.delete(pod("a"));
    match stream.next().await {
        Some(Notification::Delete(MaybeTombstone::Object(object))) => assert_eq!(name_of(&object), "a"),
        other => panic!("expected a delete, got {other:?}"),
    }
    assert_eq!(i.handler_count(), 1);
    drop(stream);
    assert_eq!(i.handler_count(), 0, "dropping the stream removes it");
    running.stop().await;
}

#[test]
fn description_defaults_to_the_type_name() {
    let source: Source = Arc::new(FakeControllerSource::new());
    assert_eq!(informer(&source, Duration::ZERO).description(), "Pod");
}

// Counters behind metrics: lists, relists, watches, errors, cache size, handler state.
#[tokio::test(start_paused = true)]
async fn stats_count_lists_watches_and_handlers() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    let i = informer(&source, Duration::ZERO);
    let listener = Arc::new(TestListener::default());
    i.add_event_handler(Arc::clone(&listener)).expect("added");
    let before = i.stats();
    assert_eq!(
        (before.reflector.lists, before.store_size, before.synced),
        (0, 0, false)
    );
    let running = run(&i);
    listener.expect(&["pod1"]).await;
    // `handled` counts after the call returns, a moment after the listener recorded the name.
    eventually("handled", || i.stats().handlers[0].handled == 1).await;
    let synced = i.stats();
    assert_eq!(synced.reflector.lists, 1);
    assert_eq!(synced.reflector.relists, 0);
    assert_eq!(synced.reflector.watches, 1);
    assert_eq!(synced.store_size, 1);
    assert!(synced.synced);
    assert_eq!(synced.handlers.len(), 1);
    assert_eq!((synced.handlers[0].handled, synced.handlers[0].backlog), (1, 0));
    assert!(synced.handlers[0].synced);

    // A change the watch misses, then a reset watch: a very short watch, backoff, 410 (the
    // informer's version is older than the history), backoff, relist.
    source.add_drop_watch(pod("pod2"));
    source.reset_watch();
    advance_until("relist", || i.stats().reflector.relists == 1).await;
    let after = i.stats();
    assert_eq!(after.reflector.lists, 2);
    assert_eq!(
        after.reflector.watch_errors, 2,
        "the watch closed at once, then the 410 ended the next one"
    );
    assert_eq!(
        after.reflector.last_resource_version,
        source.resource_version().to_string()
    );
    running.stop().await;
}

/// How many references the replaced object of each update had while the handler ran.
async fn references_to_replaced_objects() -> Vec<usize> {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    let i = informer(&source, Duration::ZERO);
    let counts = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&counts);
    i.add_event_handler(EventHandlerFuncs::new().updated(move |old, _| {
        sink.lock().expect("lock").push(Arc::strong_count(&old));
    }))
    .expect("added");
    let running = run(&i);
    synced(&i).await;
    // one change at a time, so that no queued change of the same key holds an object too
    for n in 1..=3 {
        source.modify(pod("pod1"));
        eventually("the update", || counts.lock().expect("lock").len() == n).await;
    }
    running.stop().await;
    counts.lock().expect("lock").clone()
}

/// On a current-thread runtime the informer keeps replaced objects until the handlers let go,
/// so they are freed on its thread (where they were decoded), not on a handler thread: a
/// handler never holds the last reference. (It may see one more: the first replaced object can
/// also still be held for the add notification it came in, when that notification's handler
/// call had not been reclaimed yet.)
#[tokio::test(flavor = "current_thread")]
async fn replaced_objects_are_freed_by_the_informer_on_a_current_thread_runtime() {
    let counts = references_to_replaced_objects().await;
    assert_eq!(counts.len(), 3);
    assert!(counts.iter().all(|&count| count >= 2), "{counts:?}");
}

/// On a multi-thread runtime the handler holds the only reference and frees the object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_objects_are_left_to_the_handlers_on_a_multi_thread_runtime() {
    assert_eq!(references_to_replaced_objects().await, [1, 1, 1]);
}

/// Records what the watch-error handler is given: `Panicked` errors as "function key".
fn record_panics(i: &SharedIndexInformer<Pod>) -> Arc<Mutex<Vec<String>>> {
    let panics = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&panics);
    i.set_watch_error_handler(move |_, err| {
        if let reflector::Error::Panicked(panic) = err {
            let key = panic.key.as_ref().map_or("", ObjectKey::as_str);
            sink.lock()
                .expect("lock")
                .push(format!("{} {key}", panic.function));
        }
    })
    .expect("before run");
    panics
}

// A panicking transform must not freeze the informer (which used to keep saying it synced):
// the object is kept as the transform left it, the panic is reported, later changes go on.
#[tokio::test(start_paused = true)]
async fn a_panicking_transform_is_reported_and_the_informer_goes_on() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("good"));
    source.add(labelled("bad", &[("transform", "panics")]));
    let i = informer(&source, Duration::ZERO);
    i.set_transform(|p: &mut Pod| {
        p.metadata.annotations = Some(BTreeMap::from([("transformed".into(), "yes".into())]));
        if p.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("transform"))
        {
            panic!("transform bug");
        }
    })
    .expect("set");
    let panics = record_panics(&i);
    let listener = Arc::new(TestListener::default());
    i.add_event_handler(Arc::clone(&listener)).expect("added");
    let running = run(&i);
    listener.expect(&["bad", "good"]).await;
    assert!(i.has_synced());
    let bad = i
        .store()
        .get_by_key(&ObjectKey::new("", "bad"))
        .expect("the object whose transform panicked is cached");
    assert!(
        bad.metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key("transformed")),
        "kept as the transform left it"
    );

    source.modify(labelled("bad", &[("transform", "panics"), ("v", "2")]));
    source.add(pod("later"));
    eventually("later changes", || {
        i.store().get_by_key(&ObjectKey::new("", "later")).is_some()
            && i.store()
                .get_by_key(&ObjectKey::new("", "bad"))
                .is_some_and(|p| p.metadata.labels.as_ref().is_some_and(|l| l.contains_key("v")))
    })
    .await;
    assert_eq!(i.stats().panics.transform, 2);
    assert_eq!(*panics.lock().expect("lock"), ["transform bad", "transform bad"]);
    assert!(!i.is_stopped() && i.failure().is_none());
    running.stop().await;
}

// A panicking index function leaves that object out of that index only; the informer goes on.
#[tokio::test(start_paused = true)]
async fn a_panicking_index_function_leaves_the_object_out_of_that_index() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(labelled("a", &[("app", "web")]));
    source.add(labelled("bad", &[("app", "web"), ("index", "panics")]));
    let mut indexers = namespace_indexers();
    let by_app: IndexFunc<Pod> = Arc::new(|p: &Pod| {
        let labels = p.metadata.labels.clone().unwrap_or_default();
        assert!(!labels.contains_key("index"), "index function bug");
        labels.get("app").cloned().into_iter().collect()
    });
    indexers.insert("by-app".into(), by_app);
    let i = SharedIndexInformer::from_arc(
        Arc::clone(&source) as Arc<dyn ListerWatcher<Pod>>,
        Config {
            indexers,
            ..Config::default()
        },
    );
    let panics = record_panics(&i);
    let running = run(&i);
    synced(&i).await;
    let names = |index: &str, value: &str| -> BTreeSet<String> {
        let found = i.store().by_index(index, value).expect("index exists");
        found.iter().map(|p| name_of(p)).collect()
    };
    assert_eq!(names("by-app", "web"), BTreeSet::from(["a".to_owned()]));
    assert_eq!(
        names("namespace", ""),
        BTreeSet::from(["a".to_owned(), "bad".to_owned()])
    );

    // `bad` is mended, `a` breaks: each index entry follows (an old value that cannot be
    // computed is found by a scan).
    source.modify(labelled("bad", &[("app", "web")]));
    source.modify(labelled("a", &[("app", "web"), ("index", "panics")]));
    source.add(labelled("later", &[("app", "web")]));
    eventually("later changes", || {
        i.store().get_by_key(&ObjectKey::new("", "later")).is_some()
    })
    .await;
    assert_eq!(
        names("by-app", "web"),
        BTreeSet::from(["bad".to_owned(), "later".to_owned()])
    );
    source.modify(labelled("a", &[("app", "db")]));
    eventually("a indexed again", || names("by-app", "db").len() == 1).await;
    assert_eq!(
        names("by-app", "web"),
        BTreeSet::from(["bad".to_owned(), "later".to_owned()])
    );
    assert_eq!(i.stats().panics.index_functions, 4);
    assert_eq!(
        *panics.lock().expect("lock"),
        [
            "index function \"by-app\" bad",
            "index function \"by-app\" bad",
            "index function \"by-app\" a",
            "index function \"by-app\" a",
        ]
    );
    assert!(i.has_synced());
    running.stop().await;
}

/// Panics on its first list, then lists and watches `source`.
struct PanicsOnFirstList {
    source: Source,
    lists: AtomicUsize,
}

impl ListerWatcher<Pod> for PanicsOnFirstList {
    fn list(
        &self,
        options: &crate::source::ListOptions,
    ) -> futures::future::BoxFuture<'_, Result<kube::core::ObjectList<Pod>, crate::source::Error>> {
        assert!(
            self.lists.fetch_add(1, Ordering::SeqCst) > 0,
            "lister-watcher bug"
        );
        self.source.list(options)
    }

    fn watch(
        &self,
        options: &crate::source::ListOptions,
    ) -> futures::future::BoxFuture<'_, Result<crate::source::WatchStream<Pod>, crate::source::Error>> {
        self.source.watch(options)
    }
}

#[tokio::test(start_paused = true)]
async fn a_panicking_lister_watcher_is_reported_and_listed_again() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    let i = SharedIndexInformer::new(
        PanicsOnFirstList {
            source: Arc::clone(&source),
            lists: AtomicUsize::new(0),
        },
        Config::default(),
    );
    let panics = record_panics(&i);
    let running = run(&i);
    assert!(
        tokio::time::timeout(Duration::from_secs(60), i.wait_for_sync())
            .await
            .expect("synced after a backoff")
    );
    assert_eq!(i.stats().panics.lister_watcher, 1);
    assert_eq!(*panics.lock().expect("lock"), ["lister-watcher "]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_panicking_watch_error_handler_is_counted_and_the_informer_goes_on() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    source.set_list_error(Some(
        kube::core::Status::failure("boom", "InternalError").with_code(500),
    ));
    let i = informer(&source, Duration::ZERO);
    i.set_watch_error_handler(|_, _| panic!("watch-error handler bug"))
        .expect("before run");
    let running = run(&i);
    eventually("a handler panic", || i.stats().panics.watch_error_handler > 0).await;
    source.set_list_error(None);
    assert!(
        tokio::time::timeout(Duration::from_secs(60), i.wait_for_sync())
            .await
            .expect("synced after the list error")
    );
    running.stop().await;
}

// client-go's WaitForCacheSync returns false when the stop channel closes: waiting for an
// informer that stops before it synced must end.
#[tokio::test(start_paused = true)]
async fn wait_for_sync_ends_with_false_when_the_informer_stops_before_it_synced() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.set_list_error(Some(
        kube::core::Status::failure("Access Denied", "Forbidden").with_code(403),
    ));
    let i = informer(&source, Duration::ZERO);
    let running = run(&i);
    let waiter = tokio::spawn({
        let i = i.clone();
        async move { i.wait_for_sync().await }
    });
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!waiter.is_finished(), "still waiting while the informer runs");
    running.stop().await;
    let synced = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the wait ends when the informer stops")
        .expect("no panic");
    assert!(!synced);
    assert!(!i.wait_for_sync().await, "a later wait ends at once");
}

// Nothing says "synced" once the informer no longer processes changes, whatever stopped it:
// here its task is aborted (as when its runtime shuts down).
#[tokio::test(start_paused = true)]
async fn an_informer_whose_task_ends_is_stopped_and_not_synced() {
    let alive = Arc::new(AtomicUsize::new(0));
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    let i = informer(&source, Duration::ZERO);
    let registration = i.add_event_handler(Alive::new(&alive)).expect("added");
    let running = run(&i);
    synced(&i).await;
    eventually("handler synced", || registration.has_synced()).await;
    running.task.abort();
    assert!(running.task.await.expect_err("aborted").is_cancelled());
    assert!(i.is_stopped());
    assert!(!i.has_synced() && !registration.has_synced());
    let stats = i.stats();
    assert!(stats.stopped && !stats.synced, "{stats:?}");
    assert!(!i.wait_for_sync().await);
    eventually("handler thread released", || alive.load(Ordering::SeqCst) == 0).await;
    assert!(i.add_event_handler(EventHandlerFuncs::new()).is_err());
}

// Durations given by users saturate: the longest periods mean "practically never" and panic
// nowhere (resync deadlines, the watch timeout, the internal-error retry window).
#[tokio::test(start_paused = true)]
async fn huge_durations_saturate_instead_of_panicking() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    let i = SharedIndexInformer::from_arc(
        Arc::clone(&source) as Arc<dyn ListerWatcher<Pod>>,
        Config {
            resync_period: Duration::MAX,
            reflector: reflector::Config {
                min_watch_timeout: Duration::MAX,
                max_internal_error_retry_duration: Duration::MAX,
                ..reflector::Config::default()
            },
            ..Config::default()
        },
    );
    let listener = Arc::new(TestListener::default());
    i.add_event_handler_with_resync_period(Arc::clone(&listener), Duration::MAX)
        .expect("added");
    let running = run(&i);
    listener.expect(&["pod1"]).await;
    i.add_event_handler_with_resync_period(EventHandlerFuncs::new(), Duration::MAX)
        .expect("added while running");
    source.add(pod("pod2"));
    listener.expect(&["pod1", "pod2"]).await;
    let watch = source.watch_requests().pop().expect("a watch");
    assert_eq!(
        watch.timeout_seconds,
        Some(u32::MAX),
        "the longest timeout a request can carry"
    );
    assert!(!i.is_stopped());
    running.stop().await;
}

/// Streams scripted watches (the first that closes before its end bookmark, then one fed by
/// the test), and refuses lists.
struct ScriptedStreams {
    streams: Mutex<std::collections::VecDeque<crate::source::WatchStream<Pod>>>,
    watches: AtomicUsize,
}

impl ListerWatcher<Pod> for ScriptedStreams {
    fn list(
        &self,
        _: &crate::source::ListOptions,
    ) -> futures::future::BoxFuture<'_, Result<kube::core::ObjectList<Pod>, crate::source::Error>> {
        Box::pin(async {
            Err(crate::source::Error::status(
                500,
                "InternalError",
                "no list in this test",
            ))
        })
    }

    fn watch(
        &self,
        _: &crate::source::ListOptions,
    ) -> futures::future::BoxFuture<'_, Result<crate::source::WatchStream<Pod>, crate::source::Error>> {
        self.watches.fetch_add(1, Ordering::SeqCst);
        let next = self.streams.lock().expect("lock").pop_front();
        Box::pin(async move { Ok(next.unwrap_or_else(|| futures::stream::pending().boxed())) })
    }
}

fn at(name: &str, resource_version: &str) -> Pod {
    let mut p = pod(name);
    p.metadata.resource_version = Some(resource_version.into());
    p
}

/// What handlers see of a streaming list that breaks before its end bookmark and is retried:
/// the broken stream's objects as initial adds, the informer not synced, then, once a stream
/// completes, updates to the completed snapshot and tombstones for what it lacks, and only then
/// `has_synced`. The cache ends as the completed snapshot.
#[tokio::test(start_paused = true)]
async fn a_broken_streaming_list_retried_ends_in_the_completed_snapshot() {
    use kube::core::WatchEvent;

    let (events, retried) = futures::channel::mpsc::unbounded::<WatchEvent<Pod>>();
    let broken = futures::stream::iter([WatchEvent::Added(at("a", "5")), WatchEvent::Added(at("b", "5"))])
        .map(Ok)
        .boxed();
    let source = Arc::new(ScriptedStreams {
        streams: Mutex::new([broken, retried.map(Ok).boxed()].into()),
        watches: AtomicUsize::new(0),
    });
    let i = SharedIndexInformer::from_arc(
        Arc::clone(&source) as Arc<dyn ListerWatcher<Pod>>,
        Config {
            reflector: reflector::Config {
                initial_list_strategy: reflector::InitialListStrategy::StreamingList,
                ..reflector::Config::default()
            },
            ..Config::default()
        },
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = |seen: &Arc<Mutex<Vec<String>>>, line: String| seen.lock().expect("lock").push(line);
    let registration = i
        .add_event_handler(
            EventHandlerFuncs::new()
                .added({
                    let seen = Arc::clone(&seen);
                    move |p: Arc<Pod>, initial| {
                        log(
                            &seen,
                            format!("add {}@{} initial={initial}", name_of(&p), rv_of(&p)),
                        )
                    }
                })
                .updated({
                    let seen = Arc::clone(&seen);
                    move |old: Arc<Pod>, new: Arc<Pod>| {
                        log(
                            &seen,
                            format!("update {}@{} -> @{}", name_of(&new), rv_of(&old), rv_of(&new)),
                        );
                    }
                })
                .deleted({
                    let seen = Arc::clone(&seen);
                    move |gone| {
                        log(
                            &seen,
                            format!("delete {} tombstone={}", gone.key(), gone.is_tombstone()),
                        )
                    }
                }),
        )
        .expect("added");
    let running = run(&i);

    eventually("the retried stream and the broken stream's adds", || {
        source.watches.load(Ordering::SeqCst) == 2 && seen.lock().expect("lock").len() == 2
    })
    .await;
    assert_eq!(
        *seen.lock().expect("lock"),
        ["add a@5 initial=true", "add b@5 initial=true"]
    );
    assert!(i.store().get_by_key(&ObjectKey::new("", "b")).is_some());
    assert!(!i.has_synced(), "no stream completed");
    assert!(!registration.has_synced());

    events
        .unbounded_send(WatchEvent::Added(at("a", "6")))
        .expect("sent");
    events
        .unbounded_send(crate::testing::bookmark("7", true))
        .expect("sent");
    synced(&i).await;
    eventually("the handler's sync", || registration.has_synced()).await;
    eventually("the update and the tombstone", || {
        seen.lock().expect("lock").len() == 4
    })
    .await;
    assert_eq!(
        *seen.lock().expect("lock"),
        [
            "add a@5 initial=true",
            "add b@5 initial=true",
            "update a@5 -> @6",
            "delete b tombstone=true",
        ]
    );
    let cached: Vec<String> = i
        .store()
        .list()
        .iter()
        .map(|p| format!("{}@{}", name_of(p), rv_of(p)))
        .collect();
    assert_eq!(cached, ["a@6"], "exactly the completed snapshot");
    running.stop().await;
}

fn rv_of(p: &Pod) -> String {
    p.metadata.resource_version.clone().unwrap_or_default()
}

/// The closures of `handler_funcs()` take the informer's type without annotations (with
/// `EventHandlerFuncs::new()`, `|old, new| old.metadata` is rustc's E0282), and get the events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_funcs_closures_know_the_informers_type() {
    let source: Source = Arc::new(FakeControllerSource::new());
    source.add(pod("pod1"));
    let i = informer(&source, Duration::ZERO);
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let (added, updated) = (Arc::clone(&seen), Arc::clone(&seen));
    i.add_event_handler(
        i.handler_funcs()
            .added(move |pod, _initial| added.lock().expect("lock").push(format!("add {}", name_of(&pod))))
            .updated(move |old, new| {
                let labels = |p: &Pod| p.metadata.labels.clone().unwrap_or_default().len();
                updated.lock().expect("lock").push(format!(
                    "update {} labels {} -> {}",
                    name_of(&new),
                    labels(&old),
                    labels(&new)
                ));
            }),
    )
    .expect("added");
    let running = run(&i);
    synced(&i).await;
    source.modify(labelled("pod1", &[("app", "web")]));
    eventually("update seen", || seen.lock().expect("lock").len() == 2).await;
    assert_eq!(
        *seen.lock().expect("lock"),
        ["add pod1", "update pod1 labels 0 -> 1"]
    );
    running.stop().await;
}
