//! The guard of a controller's own writes: resource version comparison and the guard's
//! bookkeeping here; over HTTP, a controller that creates a child when its cache shows none,
//! with the child watch lagging: two creates without the guard, one with it.

use std::{
    collections::BTreeMap,
    sync::atomic::{AtomicBool, AtomicU64, AtomicUsize},
};

use informer_testserver::{TestServer, wait::eventually};
use k8s_openapi::{
    api::core::v1::{ConfigMap, Secret},
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kube::api::{Api, ObjectMeta, PostParams};

use super::*;
use crate::{
    controller::{Action, Controller, ControllerStats, track_writes},
    controller::{queue, write_log::Place},
    factory::SharedInformerFactory,
    lister::Lister,
    manager::Manager,
    workqueue::{Priority, default_controller_rate_limiter},
};

// --- resource versions ---

#[test]
fn resource_versions_compare_as_integers() {
    assert_eq!(seen("10", 9), Seen::Yes);
    assert_eq!(seen("10", 10), Seen::Yes);
    assert_eq!(seen("10", 11), Seen::No);
    // As strings, "9" would sort after "10".
    assert_eq!(seen("9", 10), Seen::No);
    assert_eq!(seen("18446744073709551615", u64::MAX), Seen::Yes);
}

#[test]
fn a_cache_that_has_not_listed_has_seen_nothing() {
    assert_eq!(seen("", 1), Seen::No);
}

#[test]
fn a_cache_version_that_is_not_an_integer_cannot_be_compared() {
    assert_eq!(seen("abc", 1), Seen::Unknown);
    assert_eq!(seen("-3", 1), Seen::Unknown);
    assert_eq!(seen("1.5", 1), Seen::Unknown);
}

#[test]
fn only_integers_parse() {
    assert_eq!(parse("42"), Some(42));
    assert_eq!(parse("0"), Some(0));
    assert_eq!(parse(""), None);
    assert_eq!(parse("-1"), None);
    assert_eq!(parse("12a"), None);
    assert_eq!(parse("18446744073709551616"), None, "beyond u64");
}

// --- the guard's bookkeeping, on a real queue and caches' version channels ---

struct Guarded {
    guard: Arc<OwnWrites>,
    config_maps: watch::Sender<String>,
    queue: ControllerQueue,
    counters: Arc<Counters>,
    stop: CancellationToken,
}

/// A guard over one cache, of config maps, at resource version 5.
fn guarded(timeout: Duration) -> Guarded {
    let config_maps = watch::Sender::new("5".to_owned());
    let caches = vec![CacheProgress::new(
        "",
        "ConfigMap",
        "configmaps",
        config_maps.subscribe(),
    )];
    let (guard, queue, counters, stop) = guard_over(caches, timeout);
    Guarded {
        guard,
        config_maps,
        queue,
        counters,
        stop,
    }
}

/// A guard over `caches` with its own queue, counters and stop token.
fn guard_over(
    caches: Vec<CacheProgress>,
    timeout: Duration,
) -> (Arc<OwnWrites>, ControllerQueue, Arc<Counters>, CancellationToken) {
    let queue = queue::new(true, Arc::new(default_controller_rate_limiter()), None);
    let counters = Arc::new(Counters::default());
    let stop = CancellationToken::new();
    let guard = Arc::new(OwnWrites::new(
        "test",
        caches,
        timeout,
        Arc::clone(&counters),
        Arc::clone(&queue),
        stop.clone(),
    ));
    (guard, queue, counters, stop)
}

fn write(api_version: &str, kind: &str, resource_version: &str) -> WrittenObject {
    WrittenObject {
        api_version: api_version.into(),
        kind: kind.into(),
        resource_version: resource_version.into(),
        place: Place::default(),
    }
}

fn key() -> ObjectKey {
    ObjectKey::new("default", "parent")
}

fn count(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

#[tokio::test]
async fn a_key_is_held_until_the_cache_has_seen_its_write_then_put_back() {
    let g = guarded(Duration::from_secs(60));
    g.guard.record(&key(), vec![write("v1", "ConfigMap", "7")]);
    assert!(
        !g.guard.admit(&key(), Priority::NORMAL),
        "the cache is at 5, the write at 7"
    );
    assert!(
        !g.guard.admit(&key(), Priority::NORMAL),
        "taken again while held: still held"
    );
    assert_eq!(count(&g.counters.own_write_waits), 1, "one wait, not two");
    g.config_maps.send_replace("6".into());
    g.config_maps.send_replace("7".into());
    assert_eq!(
        g.queue.get().await.map(|(key, _)| key),
        Some(key()),
        "put back once the cache saw 7"
    );
    assert!(g.guard.admit(&key(), Priority::NORMAL));
    assert_eq!(count(&g.counters.own_write_timeouts), 0);
}

#[tokio::test(start_paused = true)]
async fn a_wait_that_times_out_lets_the_reconcile_go_ahead_and_counts() {
    let g = guarded(Duration::from_millis(100));
    g.guard.record(&key(), vec![write("v1", "ConfigMap", "7")]);
    assert!(!g.guard.admit(&key(), Priority::NORMAL));
    assert_eq!(
        g.queue.get().await.map(|(key, _)| key),
        Some(key()),
        "put back at the timeout"
    );
    assert_eq!(count(&g.counters.own_write_timeouts), 1);
    assert!(
        g.guard.admit(&key(), Priority::NORMAL),
        "the cache is still at 5, but the wait is over"
    );
    assert!(g.guard.admit(&key(), Priority::NORMAL), "and its record is gone");
}

#[tokio::test]
async fn a_wait_ends_when_the_run_stops_without_putting_the_key_back() {
    let g = guarded(Duration::from_secs(3600));
    g.guard.record(&key(), vec![write("v1", "ConfigMap", "7")]);
    assert!(!g.guard.admit(&key(), Priority::NORMAL));
    assert_eq!(Arc::strong_count(&g.guard), 2, "the waiting task holds the guard");
    g.stop.cancel();
    eventually("the waiting task to end", Duration::from_secs(5), || {
        Arc::strong_count(&g.guard) == 1
    })
    .await
    .expect("the wait ended");
    assert_eq!(g.queue.len(), 0);
    assert_eq!(count(&g.counters.own_write_timeouts), 0);
}

#[tokio::test]
async fn writes_the_cache_has_seen_or_of_types_the_controller_does_not_read_hold_nothing() {
    let g = guarded(Duration::from_secs(60));
    g.guard.record(
        &key(),
        vec![
            write("v1", "ConfigMap", "4"),
            write("v1", "Secret", "9"),
            write("apps/v1", "ConfigMap", "9"),
        ],
    );
    assert!(g.guard.admit(&key(), Priority::NORMAL));
    assert_eq!(count(&g.counters.own_write_waits), 0);
}

#[tokio::test]
async fn the_newest_write_of_a_type_is_the_one_waited_for() {
    let g = guarded(Duration::from_secs(60));
    g.guard.record(
        &key(),
        vec![write("v1", "ConfigMap", "9"), write("v1", "ConfigMap", "7")],
    );
    assert!(!g.guard.admit(&key(), Priority::NORMAL));
    g.config_maps.send_replace("8".into());
    g.config_maps.send_replace("9".into());
    assert_eq!(g.queue.get().await.map(|(key, _)| key), Some(key()));
    assert!(g.guard.admit(&key(), Priority::NORMAL));
}

#[tokio::test]
async fn a_write_whose_resource_version_is_not_an_integer_is_counted_and_not_waited_for() {
    let g = guarded(Duration::from_secs(60));
    g.guard.record(&key(), vec![write("v1", "ConfigMap", "opaque-7")]);
    assert!(g.guard.admit(&key(), Priority::NORMAL));
    assert_eq!(count(&g.counters.own_writes_skipped), 1);

    g.config_maps.send_replace("opaque".into());
    g.guard.record(&key(), vec![write("v1", "ConfigMap", "7")]);
    assert!(
        g.guard.admit(&key(), Priority::NORMAL),
        "a cache version that is not an integer: no wait"
    );
    assert_eq!(count(&g.counters.own_writes_skipped), 2);
}

#[tokio::test]
async fn a_reconcile_that_writes_nothing_leaves_no_record() {
    let g = guarded(Duration::from_secs(60));
    g.guard.record(&key(), Vec::new());
    assert!(g.guard.lock().by_key.is_empty());
    assert!(g.guard.admit(&key(), Priority::NORMAL));
}

#[tokio::test]
async fn records_the_caches_have_seen_are_swept() {
    let g = guarded(Duration::from_secs(60));
    for name in 0..MIN_SWEEP - 1 {
        let key = ObjectKey::new("default", &name.to_string());
        g.guard.record(&key, vec![write("v1", "ConfigMap", "7")]);
    }
    assert_eq!(g.guard.lock().by_key.len(), MIN_SWEEP - 1);
    g.config_maps.send_replace("7".into());
    g.guard.record(
        &ObjectKey::new("default", "late"),
        vec![write("v1", "ConfigMap", "8")],
    );
    let records = g.guard.lock();
    assert_eq!(
        records.by_key.len(),
        1,
        "only the write the cache has not seen stays"
    );
    assert!(records.by_key.contains_key(&ObjectKey::new("default", "late")));
}

// --- over HTTP: a controller that creates a child when its cache shows none ---

const NAMESPACE: &str = "default";
const CHILD: &str = "parent-child";

/// How long the config map watch holds each event back: the child informer's cache trails
/// the server by this much. Long enough that the reconcile after the create comes before the
/// event even on a loaded machine (else the cache has caught up and nothing is held back),
/// and well under the guard's 5 s timeout.
const LAG: Duration = Duration::from_secs(2);

fn parent() -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some("parent".into()),
            namespace: Some(NAMESPACE.into()),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

fn child_of(parent: &Secret) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(CHILD.into()),
            namespace: Some(NAMESPACE.into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Secret".into(),
                name: parent.metadata.name.clone().unwrap_or_default(),
                uid: parent.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("from".to_owned(), "parent".to_owned())])),
        ..ConfigMap::default()
    }
}

/// What the child-creating controller did.
struct Creator {
    config_maps: Api<ConfigMap>,
    children: Lister<ConfigMap>,
    creates: AtomicUsize,
    already_exists: AtomicUsize,
    saw_child: AtomicBool,
}

impl Creator {
    fn new(client: kube::Client, children: Lister<ConfigMap>) -> Arc<Self> {
        Arc::new(Self {
            config_maps: Api::namespaced(client, NAMESPACE),
            children,
            creates: AtomicUsize::new(0),
            already_exists: AtomicUsize::new(0),
            saw_child: AtomicBool::new(false),
        })
    }
}

/// Creates the child when the cache shows none, and looks again at once.
async fn create_child(parent: Arc<Secret>, creator: Arc<Creator>) -> Result<Action, kube::Error> {
    if creator.children.by_namespace(NAMESPACE).get(CHILD).is_some() {
        creator.saw_child.store(true, Ordering::SeqCst);
        return Ok(Action::await_change());
    }
    creator.creates.fetch_add(1, Ordering::SeqCst);
    match creator
        .config_maps
        .create(&PostParams::default(), &child_of(&parent))
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {
            creator.already_exists.fetch_add(1, Ordering::SeqCst);
        }
        Err(error) => return Err(error),
    }
    Ok(Action::requeue(Duration::from_millis(1)))
}

fn retry(_: Arc<Secret>, _: &kube::Error, _: Arc<Creator>) -> Action {
    Action::requeue_with_backoff()
}

/// Runs the child-creating controller, with `guard` as its own-writes timeout, until a
/// reconcile has seen the child in its cache; returns what it did.
/// Waits until `count` watches are open (the secrets' and the config maps' informers).
async fn watches_open(server: &TestServer, count: usize) -> Result<(), Box<dyn std::error::Error>> {
    eventually("the informers watch", Duration::from_secs(20), || {
        server.watch_count() >= count
    })
    .await?;
    Ok(())
}

async fn run_creator(
    guard: Option<Duration>,
) -> Result<(Arc<Creator>, ControllerStats), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.set_watch_lag("configmaps", Some(LAG));
    let factory = SharedInformerFactory::new(server.client()?);
    let creator = Creator::new(
        track_writes(server.client()?),
        factory.unscoped_informer::<ConfigMap>().lister(),
    );
    let shutdown = CancellationToken::new();
    let controller = Controller::<Secret>::new(&factory)
        .owns::<ConfigMap>()
        .wait_for_own_writes(guard)
        .graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let stats = controller.stats();
    let running = tokio::spawn(controller.run(create_child, retry, Arc::clone(&creator)));
    // the child's event must come through the lagging watch, not a watch opened after it
    // (whose replay is not held back)
    watches_open(&server, 2).await?;
    server.create_typed(&parent())?;
    eventually("a reconcile to see the child", Duration::from_secs(20), || {
        creator.saw_child.load(Ordering::SeqCst)
    })
    .await?;
    shutdown.cancel();
    running.await??;
    factory.shutdown().await;
    Ok((creator, stats))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_guard_a_stale_cache_creates_the_child_twice() -> Result<(), Box<dyn std::error::Error>> {
    let (creator, stats) = run_creator(None).await?;
    assert!(
        creator.creates.load(Ordering::SeqCst) >= 2,
        "the reconcile after the create read a cache without the child"
    );
    assert!(creator.already_exists.load(Ordering::SeqCst) >= 1);
    assert_eq!(stats.own_write_waits(), 0);
    eprintln!(
        "without the guard: {} creates, {} answered AlreadyExists (watch lag {LAG:?})",
        creator.creates.load(Ordering::SeqCst),
        creator.already_exists.load(Ordering::SeqCst)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_guard_the_child_is_created_once() -> Result<(), Box<dyn std::error::Error>> {
    let (creator, stats) = run_creator(Some(DEFAULT_TIMEOUT)).await?;
    assert_eq!(creator.creates.load(Ordering::SeqCst), 1);
    assert_eq!(creator.already_exists.load(Ordering::SeqCst), 0);
    assert!(stats.own_write_waits() >= 1);
    assert_eq!(stats.own_write_timeouts(), 0);
    eprintln!(
        "the guard held {} reconcile(s) back for {:?} in all (watch lag {LAG:?})",
        stats.own_write_waits(),
        stats.own_write_wait_time()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guard_that_times_out_counts_and_lets_the_reconcile_act_on_its_cache()
-> Result<(), Box<dyn std::error::Error>> {
    let (creator, stats) = run_creator(Some(Duration::from_millis(50))).await?;
    assert!(stats.own_write_timeouts() >= 1);
    assert!(
        creator.already_exists.load(Ordering::SeqCst) >= 1,
        "after the timeout the reconcile acted on a cache without the child"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managers_client_tracks_writes_so_its_controllers_create_the_child_once()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    // Four times the lag, and a timeout well above it: under a loaded test run the manager's
    // controller may take its next reconcile late, after a shorter lag had passed.
    server.set_watch_lag("configmaps", Some(LAG * 4));
    let mut manager = Manager::builder(server.client()?).build()?;
    let creator = Creator::new(
        manager.client(),
        manager.factory().unscoped_informer::<ConfigMap>().lister(),
    );
    let controller = Controller::<Secret>::new(manager.factory())
        .owns::<ConfigMap>()
        .wait_for_own_writes(Some(LAG * 10));
    let stats = controller.stats();
    manager.add_controller(controller, create_child, retry, Arc::clone(&creator));
    let shutdown = CancellationToken::new();
    let running = tokio::spawn({
        let shutdown = shutdown.clone();
        async move { manager.run(shutdown.cancelled_owned()).await }
    });
    watches_open(&server, 2).await?;
    server.create_typed(&parent())?;
    eventually("a reconcile to see the child", Duration::from_secs(40), || {
        creator.saw_child.load(Ordering::SeqCst)
    })
    .await?;
    shutdown.cancel();
    running.await??;
    assert_eq!(creator.creates.load(Ordering::SeqCst), 1);
    assert_eq!(creator.already_exists.load(Ordering::SeqCst), 0);
    assert!(stats.own_write_waits() >= 1);
    Ok(())
}

/// Scoped caches of one type: a write is waited for only by the caches that may hold it (its
/// namespace and labels as written), so a controller writing objects of its type outside its
/// scope is not held back by caches that will never see them.
#[tokio::test]
async fn only_the_scoped_caches_that_may_hold_a_write_wait_for_it() {
    use crate::scope::Scope;

    let source = watch::Sender::new("5".to_owned());
    let other = watch::Sender::new("5".to_owned());
    let replicated = Scope::<ConfigMap>::all()
        .namespace("source")
        .and_then(|scope| scope.labels("replicate=true"))
        .expect("a valid scope");
    let in_other = Scope::<ConfigMap>::all()
        .namespace("other")
        .expect("a valid scope");
    let cache = |sender: &watch::Sender<String>, scope: &Scope<ConfigMap>| {
        CacheProgress::new("", "ConfigMap", "configmaps", sender.subscribe())
            .holding(Arc::new(scope.selection().clone()))
    };
    let (guard, _queue, counters, stop) = guard_over(
        vec![cache(&source, &replicated), cache(&other, &in_other)],
        Duration::from_secs(60),
    );
    let at = |namespace: &str, labels: &[(&str, &str)]| WrittenObject {
        place: Place {
            namespace: Some(namespace.into()),
            name: Some("copy".into()),
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        },
        ..write("v1", "ConfigMap", "9")
    };
    let (elsewhere, in_other_namespace, replicated_write) = (
        ObjectKey::new("source", "a"),
        ObjectKey::new("source", "b"),
        ObjectKey::new("source", "c"),
    );
    guard.record(
        &elsewhere,
        vec![at("elsewhere", &[("replicate", "true")]), at("source", &[])],
    );
    assert!(
        guard.admit(&elsewhere, Priority::NORMAL),
        "no cache holds a copy elsewhere or an unlabelled one"
    );
    guard.record(&in_other_namespace, vec![at("other", &[])]);
    assert!(
        !guard.admit(&in_other_namespace, Priority::NORMAL),
        "the cache of namespace other waits for it"
    );
    guard.record(&replicated_write, vec![at("source", &[("replicate", "true")])]);
    assert!(
        !guard.admit(&replicated_write, Priority::NORMAL),
        "the replicated cache waits for a replicated write"
    );
    assert_eq!(count(&counters.own_write_waits), 2);
    stop.cancel();
    drop((source, other));
}
