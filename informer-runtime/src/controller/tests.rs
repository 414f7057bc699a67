//! The runner over HTTP against the embedded API server.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::Duration,
};

use informer_testserver::TestServer;
use k8s_openapi::{
    api::core::v1::{ConfigMap, Secret},
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kube::api::ObjectMeta;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::cache::Index;

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), "1".to_owned())])),
        ..ConfigMap::default()
    }
}

fn secret_owned_by(name: &str, owner: &ConfigMap) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: owner.metadata.name.clone().unwrap_or_default(),
                uid: owner.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[derive(Debug, thiserror::Error)]
#[error("failed on purpose")]
struct Failed;

/// The names reconciled, in order, and what each reconcile saw.
#[derive(Default)]
struct Log {
    reconciled: Mutex<Vec<String>>,
}

impl Log {
    fn push(&self, name: &str) {
        self.reconciled.lock().expect("log").push(name.to_owned());
    }

    fn count(&self, name: &str) -> usize {
        self.reconciled
            .lock()
            .expect("log")
            .iter()
            .filter(|n| *n == name)
            .count()
    }
}

fn name_of(cm: &ConfigMap) -> String {
    cm.metadata.name.clone().unwrap_or_default()
}

fn never_retry(_: Arc<ConfigMap>, _: &Failed, _: Arc<Log>) -> Action {
    Action::await_change()
}

async fn record(cm: Arc<ConfigMap>, log: Arc<Log>) -> Result<Action, Failed> {
    log.push(&name_of(&cm));
    Ok(Action::await_change())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_controllers_share_one_informer_and_one_watch() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("a"))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let (first, second) = (Arc::new(Log::default()), Arc::new(Log::default()));
    let one = Controller::<ConfigMap>::new(&factory)
        .name("first")
        .graceful_shutdown_on(shutdown.clone().cancelled_owned())
        .run(record, never_retry, Arc::clone(&first));
    let two = Controller::<ConfigMap>::new(&factory)
        .name("second")
        .graceful_shutdown_on(shutdown.clone().cancelled_owned())
        .run(record, never_retry, Arc::clone(&second));
    let (one, two) = (tokio::spawn(one), tokio::spawn(two));
    eventually("both controllers reconciled a", || {
        first.count("a") == 1 && second.count("a") == 1
    })
    .await;
    server.create_typed(&config_map("b"))?;
    eventually("both controllers reconciled b", || {
        first.count("b") == 1 && second.count("b") == 1
    })
    .await;

    assert_eq!(
        server.request_count("watch", "configmaps"),
        1,
        "{:?}",
        server.requests()
    );
    assert_eq!(server.request_count("list", "configmaps"), 1);
    shutdown.cancel();
    one.await??;
    two.await??;
    assert_eq!(
        factory.unscoped_informer::<ConfigMap>().handler_count(),
        0,
        "stopped controllers remove their handlers"
    );
    factory.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_start_after_the_caches_synced() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for i in 0..50 {
        server.create_typed(&config_map(&format!("cm-{i}")))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let lister = factory.unscoped_informer::<ConfigMap>().lister();
    let seen_at_first = Arc::new(Mutex::new(None));
    let shutdown = CancellationToken::new();
    let controller =
        Controller::<ConfigMap>::new(&factory).graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let seen = Arc::clone(&seen_at_first);
    let run = tokio::spawn(controller.run(
        move |_: Arc<ConfigMap>, _: Arc<()>| {
            let cached = lister.list(&Default::default()).len();
            seen.lock().expect("seen").get_or_insert(cached);
            async { Ok::<_, Failed>(Action::await_change()) }
        },
        |_, _, _| Action::await_change(),
        Arc::new(()),
    ));
    eventually("a reconcile", || seen_at_first.lock().expect("seen").is_some()).await;
    assert_eq!(*seen_at_first.lock().expect("seen"), Some(50));
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

/// `a` panics twice, then fails once, then succeeds; `b` and `c` flow meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panics_and_errors_are_retried_with_backoff_while_other_keys_flow()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for name in ["a", "b", "c"] {
        server.create_typed(&config_map(name))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let controller = Controller::<ConfigMap>::new(&factory)
        .rate_limiter(crate::workqueue::ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1),
        ))
        .graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let stats = controller.stats();
    let log = Arc::new(Log::default());
    let policy_calls = Arc::new(AtomicUsize::new(0));
    let calls = Arc::clone(&policy_calls);
    let run = tokio::spawn(controller.run(
        |cm: Arc<ConfigMap>, log: Arc<Log>| async move {
            let name = name_of(&cm);
            log.push(&name);
            match (name.as_str(), log.count(&name)) {
                ("a", 1 | 2) => panic!("reconcile bug"),
                ("a", 3) => Err(Failed),
                _ => Ok(Action::await_change()),
            }
        },
        move |_, _: &Failed, _| {
            calls.fetch_add(1, Ordering::SeqCst);
            Action::requeue_with_backoff()
        },
        Arc::clone(&log),
    ));
    eventually("a to succeed on its fourth try", || log.count("a") == 4).await;
    assert_eq!((log.count("b"), log.count("c")), (1, 1));
    assert_eq!(stats.panics(), 2);
    assert_eq!(stats.errors(), 1);
    assert_eq!(policy_calls.load(Ordering::SeqCst), 1);
    assert_eq!(stats.reconciles(), 6);
    assert_eq!(stats.in_flight(), 0);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(log.count("a"), 4, "a success forgets the key: no more retries");
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_error_policy_is_caught_and_retried() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("a"))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let controller =
        Controller::<ConfigMap>::new(&factory).graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let stats = controller.stats();
    let log = Arc::new(Log::default());
    let run = tokio::spawn(controller.run(
        |cm: Arc<ConfigMap>, log: Arc<Log>| async move {
            log.push(&name_of(&cm));
            if log.count("a") == 1 {
                Err(Failed)
            } else {
                Ok(Action::await_change())
            }
        },
        |_, _: &Failed, _| panic!("error policy bug"),
        Arc::clone(&log),
    ));
    eventually("a retried after the policy panicked", || log.count("a") == 2).await;
    assert_eq!(stats.panics(), 1);
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeue_reconciles_again_without_a_change() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("a"))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let log = Arc::new(Log::default());
    let run = tokio::spawn(
        Controller::<ConfigMap>::new(&factory)
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(
                |cm: Arc<ConfigMap>, log: Arc<Log>| async move {
                    log.push(&name_of(&cm));
                    Ok::<_, Failed>(Action::requeue(Duration::from_millis(20)))
                },
                |_, _, _| Action::await_change(),
                Arc::clone(&log),
            ),
    );
    eventually("three reconciles of a", || log.count("a") >= 3).await;
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_object_is_not_reconciled() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("a"))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let controller =
        Controller::<ConfigMap>::new(&factory).graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let stats = controller.stats();
    let log = Arc::new(Log::default());
    let run = tokio::spawn(controller.run(record, never_retry, Arc::clone(&log)));
    eventually("a reconciled", || log.count("a") == 1).await;

    server.delete_typed::<ConfigMap>(Some("default"), "a")?;
    eventually("the delete's key taken and skipped", || {
        stats.skipped_missing() == 1
    })
    .await;
    assert_eq!(
        log.count("a"),
        1,
        "no reconcile of an object the cache no longer holds"
    );
    assert_eq!(stats.reconciles(), 1);
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

/// A child's change reaches its controller owner, read from the child's owner reference;
/// the child informer gets the owner index for the reconcile's lookups.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owns_enqueues_the_controller_owner_of_a_changed_child() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    let owner = server.create_typed(&config_map("owner"))?;
    server.create_typed(&config_map("bystander"))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let log = Arc::new(Log::default());
    let run = tokio::spawn(
        Controller::<ConfigMap>::new(&factory)
            .owns::<Secret>()
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(record, never_retry, Arc::clone(&log)),
    );
    eventually("initial reconciles", || {
        log.count("owner") == 1 && log.count("bystander") == 1
    })
    .await;

    server.create_typed(&secret_owned_by("child", &owner))?;
    eventually("the owner reconciled for its new child", || {
        log.count("owner") == 2
    })
    .await;
    let secrets = factory.unscoped_informer::<Secret>().lister();
    let uid = owner.metadata.uid.clone().unwrap_or_default();
    eventually("the child in the owner index", || {
        secrets
            .by_index(&Index::BY_CONTROLLER_UID, &uid)
            .is_ok_and(|children| children.len() == 1)
    })
    .await;
    server.delete_typed::<Secret>(Some("default"), "child")?;
    eventually("the owner reconciled for its deleted child", || {
        log.count("owner") == 3
    })
    .await;
    assert_eq!(log.count("bystander"), 1);
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_and_triggers_enqueue_what_they_name() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for name in ["a", "b"] {
        server.create_typed(&config_map(name))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let (names, trigger) = futures::channel::mpsc::unbounded();
    let (all, everything) = futures::channel::mpsc::unbounded();
    let log = Arc::new(Log::default());
    let run = tokio::spawn(
        Controller::<ConfigMap>::new(&factory)
            .watches::<Secret, _>(|secret| {
                // a secret named `for-x` concerns config map `x`
                let name = secret.metadata.name.as_deref().unwrap_or_default();
                name.strip_prefix("for-")
                    .map(|target| ObjectKey::new("default", target))
            })
            .reconcile_on(trigger)
            .reconcile_all_on(everything)
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(record, never_retry, Arc::clone(&log)),
    );
    eventually("initial reconciles", || {
        log.count("a") == 1 && log.count("b") == 1
    })
    .await;
    let mut secret = Secret::default();
    secret.metadata.name = Some("for-b".into());
    secret.metadata.namespace = Some("default".into());
    server.create_typed(&secret)?;
    eventually("b reconciled for its secret", || log.count("b") == 2).await;
    names.unbounded_send(ObjectKey::new("default", "a"))?;
    eventually("a reconciled on the trigger", || log.count("a") == 2).await;
    all.unbounded_send(())?;
    eventually("both reconciled on the trigger", || {
        log.count("a") == 3 && log.count("b") == 3
    })
    .await;
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

/// At most `concurrency` reconciles at once, never two of one object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_is_bounded_and_one_object_is_never_reconciled_twice_at_once()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for i in 0..12 {
        server.create_typed(&config_map(&format!("cm-{i}")))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    #[derive(Default)]
    struct Tracker {
        running: AtomicUsize,
        most: AtomicUsize,
        per_object: Mutex<HashMap<String, usize>>,
        overlaps: AtomicUsize,
        done: AtomicUsize,
    }
    let tracker = Arc::new(Tracker::default());
    let run = tokio::spawn(
        Controller::<ConfigMap>::new(&factory)
            .concurrency(3)
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(
                |cm: Arc<ConfigMap>, t: Arc<Tracker>| async move {
                    let name = name_of(&cm);
                    let now = t.running.fetch_add(1, Ordering::SeqCst) + 1;
                    t.most.fetch_max(now, Ordering::SeqCst);
                    let same = {
                        let mut per_object = t.per_object.lock().expect("per object");
                        let count = per_object.entry(name.clone()).or_default();
                        *count += 1;
                        *count
                    };
                    if same > 1 {
                        t.overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    *t.per_object.lock().expect("per object").entry(name).or_default() -= 1;
                    t.running.fetch_sub(1, Ordering::SeqCst);
                    t.done.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, Failed>(Action::await_change())
                },
                |_, _, _| Action::await_change(),
                Arc::clone(&tracker),
            ),
    );
    // updates of cm-0 while it is being reconciled
    eventually("the first reconciles", || {
        tracker.running.load(Ordering::SeqCst) > 0
    })
    .await;
    for value in 0..5 {
        let mut cm = server.get("v1", "ConfigMap", Some("default"), "cm-0")?;
        cm["data"]["v"] = serde_json::json!(value.to_string());
        server.update(cm)?;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    eventually("every object reconciled", || {
        tracker.done.load(Ordering::SeqCst) >= 13
    })
    .await;
    assert_eq!(
        tracker.most.load(Ordering::SeqCst),
        3,
        "three workers, all busy at the start"
    );
    assert_eq!(tracker.overlaps.load(Ordering::SeqCst), 0);
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_running_reconciles_finish_and_starts_no_new_ones()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for name in ["a", "b"] {
        server.create_typed(&config_map(name))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let (started, finished) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
    let (s, f) = (Arc::clone(&started), Arc::clone(&finished));
    let run = tokio::spawn(
        Controller::<ConfigMap>::new(&factory)
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(
                move |_: Arc<ConfigMap>, _: Arc<()>| {
                    let (started, finished) = (Arc::clone(&s), Arc::clone(&f));
                    async move {
                        started.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        finished.store(true, Ordering::SeqCst);
                        Ok::<_, Failed>(Action::await_change())
                    }
                },
                |_, _, _| Action::await_change(),
                Arc::new(()),
            ),
    );
    eventually("a reconcile running", || started.load(Ordering::SeqCst) == 1).await;
    shutdown.cancel();
    run.await??;
    assert!(
        finished.load(Ordering::SeqCst),
        "the running reconcile finished before run returned"
    );
    assert_eq!(
        started.load(Ordering::SeqCst),
        1,
        "the second object was not started after shutdown"
    );
    factory.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_cancels_reconciles_that_outlive_the_timeout() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("a"))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let started = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&started);
    let controller = Controller::<ConfigMap>::new(&factory)
        .graceful_shutdown_timeout(Duration::from_millis(50))
        .graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let stats = controller.stats();
    let run = tokio::spawn(controller.run(
        move |_: Arc<ConfigMap>, _: Arc<()>| {
            s.store(true, Ordering::SeqCst);
            async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok::<_, Failed>(Action::await_change())
            }
        },
        |_, _, _| Action::await_change(),
        Arc::new(()),
    ));
    eventually("a reconcile running", || started.load(Ordering::SeqCst)).await;
    shutdown.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), run).await??;
    assert!(
        matches!(result, Err(Error::ShutdownTimeout { cancelled: 1, .. })),
        "{result:?}"
    );
    assert_eq!(
        stats.in_flight(),
        0,
        "a cancelled reconcile no longer counts as running"
    );
    factory.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_ends_with_an_error_when_the_factory_stops_first() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("a"))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let log = Arc::new(Log::default());
    let run = tokio::spawn(Controller::<ConfigMap>::new(&factory).run(record, never_retry, Arc::clone(&log)));
    eventually("a reconciled", || log.count("a") == 1).await;
    factory.shutdown().await;
    let result = tokio::time::timeout(Duration::from_secs(10), run).await??;
    assert!(matches!(result, Err(Error::InformerStopped { .. })), "{result:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_before_the_caches_synced_returns_at_once() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.set_delay(Some(Duration::from_secs(3600)));
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let log = Arc::new(Log::default());
    let run = tokio::spawn(
        Controller::<ConfigMap>::new(&factory)
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(record, never_retry, Arc::clone(&log)),
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), run).await???;
    server.clear_faults();
    factory.shutdown().await;
    Ok(())
}

fn labelled_config_map(namespace: &str, name: &str, replicate: &str) -> ConfigMap {
    let mut cm = config_map(name);
    cm.metadata.namespace = Some(namespace.into());
    cm.metadata.labels = Some(BTreeMap::from([("replicate".to_owned(), replicate.to_owned())]));
    cm
}

fn replicated_scope() -> Scope<ConfigMap> {
    Scope::all()
        .namespace("source")
        .and_then(|scope| scope.labels("replicate=true"))
        .expect("a valid scope")
}

/// The replicator: a controller of the replicated config maps of one namespace,
/// watching every Namespace, caches and reconciles only its config maps; the informer of
/// every config map is never created, and every config map request carries the selector.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_controller_reconciles_only_its_scope() -> Result<(), Box<dyn std::error::Error>> {
    use k8s_openapi::api::core::v1::Namespace;

    let server = TestServer::start().await?;
    server.create_namespace("source")?;
    server.create_namespace("other")?;
    for (namespace, name, replicate) in [
        ("source", "settings", "true"),
        ("source", "scratch", "false"),
        ("other", "copy", "true"),
    ] {
        server.create_typed(&labelled_config_map(namespace, name, replicate))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let log = Arc::new(Log::default());
    let run = tokio::spawn(
        Controller::new_in(&factory, &replicated_scope())
            .watches::<Namespace, _>(|_| Vec::new())
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(record, never_retry, Arc::clone(&log)),
    );
    eventually("settings reconciled", || log.count("settings") == 1).await;
    server.create_typed(&labelled_config_map("source", "late-scratch", "false"))?;
    server.create_typed(&labelled_config_map("other", "late-copy", "true"))?;
    server.create_typed(&labelled_config_map("source", "late", "true"))?;
    eventually("late reconciled", || log.count("late") == 1).await;

    let mut reconciled = log.reconciled.lock().expect("log").clone();
    reconciled.sort();
    assert_eq!(reconciled, ["late", "settings"], "only objects of the scope");
    let descriptions: Vec<String> = factory.stats().into_iter().map(|s| s.description).collect();
    assert_eq!(
        descriptions,
        [
            "configmaps (namespace source, labels replicate=true)",
            "namespaces"
        ],
        "no informer of every config map"
    );
    let unselected: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.resource == "configmaps" && !r.query.contains("labelSelector=replicate%3Dtrue"))
        .map(|r| format!("{} {}", r.verb, r.query))
        .collect();
    assert!(unselected.is_empty(), "{unselected:?}");

    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), run).await???;
    factory.shutdown().await;
    Ok(())
}

/// A factory's default scope is what `Controller::new` and `owns` read; `Owns::scope` takes a
/// scope of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_read_the_default_scope_of_their_types() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_namespace("source")?;
    server.create_namespace("other")?;
    let owner = server.create_typed(&labelled_config_map("source", "settings", "true"))?;
    let mut child = secret_owned_by("child", &owner);
    child.metadata.namespace = Some("source".into());
    server.create_typed(&child)?;
    let factory = SharedInformerFactory::builder(server.client()?)
        .scope(replicated_scope())
        .build();
    let shutdown = CancellationToken::new();
    let log = Arc::new(Log::default());
    let secrets = Scope::<Secret>::all().namespace("source")?;
    let run = tokio::spawn(
        Controller::<ConfigMap>::new(&factory)
            .relation(Owns::new().scope(&secrets))
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(record, never_retry, Arc::clone(&log)),
    );
    eventually("settings reconciled", || log.count("settings") == 1).await;
    let descriptions: Vec<String> = factory.stats().into_iter().map(|s| s.description).collect();
    assert_eq!(
        descriptions,
        [
            "configmaps (namespace source, labels replicate=true)",
            "secrets (namespace source)"
        ]
    );
    // a change of the owned secret enqueues its owner through the scoped child informer
    let mut current = server.get("v1", "Secret", Some("source"), "child")?;
    current["data"] = serde_json::json!({"k": "dg=="});
    server.update(current)?;
    // (at least twice: an update enqueues the owner of the old and of the new state)
    eventually("settings reconciled again", || log.count("settings") >= 2).await;
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), run).await???;
    factory.shutdown().await;
    Ok(())
}

/// Two controllers whose scopes are equal (built apart, selectors written differently) share
/// one informer and one watch; each reconciles the scope's objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_with_equal_scopes_share_one_watch() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_namespace("source")?;
    server.create_namespace("other")?;
    server.create_typed(&labelled_config_map("source", "settings", "true"))?;
    server.create_typed(&labelled_config_map("source", "scratch", "false"))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let shutdown = CancellationToken::new();
    let (first, second) = (Arc::new(Log::default()), Arc::new(Log::default()));
    let other_spelling = Scope::<ConfigMap>::all()
        .labels("replicate==true")?
        .namespace("source")?;
    let one = tokio::spawn(
        Controller::new_in(&factory, &replicated_scope())
            .name("first")
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(record, never_retry, Arc::clone(&first)),
    );
    let two = tokio::spawn(
        Controller::new_in(&factory, &other_spelling)
            .name("second")
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(record, never_retry, Arc::clone(&second)),
    );
    eventually("both controllers reconciled settings", || {
        first.count("settings") == 1 && second.count("settings") == 1
    })
    .await;
    assert_eq!(factory.stats().len(), 1, "one informer for the equal scopes");
    eventually("the watch to open", || {
        server.request_count("watch", "configmaps") >= 1
    })
    .await;
    assert_eq!(server.request_count("watch", "configmaps"), 1, "one watch");
    assert_eq!(first.count("scratch") + second.count("scratch"), 0);
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), one).await???;
    tokio::time::timeout(Duration::from_secs(10), two).await???;
    factory.shutdown().await;
    Ok(())
}

/// The replicator with the guard of its own writes: the controller reads the
/// replicated config maps of `source` and writes copies into `other`, which its scoped cache
/// never holds. The guard does not wait for its scoped cache to see the copies (it never
/// would, so each next reconcile would wait out the timeout): only caches that may hold a
/// write wait for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_controller_is_not_held_back_by_writes_outside_its_scope()
-> Result<(), Box<dyn std::error::Error>> {
    use kube::api::{Api, Patch, PatchParams, PostParams};

    let server = TestServer::start().await?;
    server.create_namespace("source")?;
    server.create_namespace("other")?;
    server.create_typed(&labelled_config_map("source", "settings", "true"))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let copies: Api<ConfigMap> = Api::namespaced(track_writes(server.client()?), "other");
    let shutdown = CancellationToken::new();
    let controller = Controller::new_in(&factory, &replicated_scope())
        .wait_for_own_writes(Some(Duration::from_secs(30)))
        .graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let stats = controller.stats();
    let log = Arc::new(Log::default());
    let run = tokio::spawn(controller.run(
        move |cm: Arc<ConfigMap>, log: Arc<Log>| {
            let copies = copies.clone();
            async move {
                let name = name_of(&cm);
                log.push(&name);
                let copy =
                    Patch::Merge(serde_json::json!({"data": {"copies": log.count(&name).to_string()}}));
                if copies.get_opt(&name).await?.is_some() {
                    copies.patch(&name, &PatchParams::default(), &copy).await?;
                } else {
                    let mut fresh = labelled_config_map("other", &name, "false");
                    fresh.metadata.labels = None;
                    copies.create(&PostParams::default(), &fresh).await?;
                }
                Ok::<_, kube::Error>(Action::requeue(Duration::from_millis(10)))
            }
        },
        |_, _, _| Action::await_change(),
        Arc::clone(&log),
    ));
    eventually("three reconciles, each after writing a copy", || {
        log.count("settings") >= 3
    })
    .await;
    assert_eq!(
        stats.own_write_waits(),
        0,
        "no reconcile waited for a copy it never caches"
    );
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), run).await???;
    factory.shutdown().await;
    Ok(())
}
