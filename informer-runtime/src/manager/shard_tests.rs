//! A sharded manager against the test API server over HTTP: its labelled shard Lease, a cache
//! and controllers restricted to the shard's objects, and the drain hand-over.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use informer_testserver::{
    TestServer,
    wait::{eventually, eventually_async},
};
use k8s_openapi::api::{coordination::v1::Lease, core::v1::ConfigMap};
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::{
    controller::Action,
    predicate::{Event, Predicate},
    sharding::{
        ControllerRing, RingResource,
        labels::{RING_LABEL, drain_label, shard_label},
    },
};

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

const RING: &str = "configmaps";
const WAIT: Duration = Duration::from_secs(10);

fn shard(name: &str) -> std::result::Result<Shard, Box<dyn std::error::Error>> {
    let ring = ControllerRing::new(RING)?.resource(RingResource::of::<ConfigMap>())?;
    Ok(Shard::new(ring, name, "default")?
        .lease_duration(Duration::from_millis(800))
        .renew_deadline(Duration::from_millis(500))
        .retry_period(Duration::from_millis(100)))
}

fn config_map(name: &str, shard: Option<&str>) -> ConfigMap {
    let labels = shard.map(|shard| BTreeMap::from([(shard_label(RING), shard.to_owned())]));
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            labels,
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// Records the config maps each reconcile saw; reconciles again only on a change.
#[derive(Default)]
struct Seen {
    names: Mutex<Vec<String>>,
    reconciles: AtomicUsize,
}

impl Seen {
    fn count(&self, name: &str) -> usize {
        let names = self
            .names
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        names.iter().filter(|seen| *seen == name).count()
    }
}

async fn record(config_map: Arc<ConfigMap>, seen: Arc<Seen>) -> std::result::Result<Action, kube::Error> {
    let name = config_map.metadata.name.clone().unwrap_or_default();
    seen.names
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(name);
    seen.reconciles.fetch_add(1, Ordering::SeqCst);
    Ok(Action::await_change())
}

fn retry(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<Seen>) -> Action {
    Action::requeue(Duration::from_millis(50))
}

/// A started shard: what its controller saw, the controller's stats, the manager's factory
/// and its run.
type StartedShard = (
    Arc<Seen>,
    controller::ControllerStats,
    SharedInformerFactory,
    tokio::task::JoinHandle<Result<()>>,
);

/// A sharded manager of one recording controller (whose predicate passes creates only),
/// started: what it saw, its controller's stats and its run.
fn start_shard(
    server: &TestServer,
    name: &str,
    shutdown: &CancellationToken,
) -> std::result::Result<StartedShard, Box<dyn std::error::Error>> {
    let mut manager = Manager::builder(server.named_client(name)?)
        .shard(shard(name)?)
        .build()?;
    let seen = Arc::new(Seen::default());
    let creates_only = Predicate::new("creates only", |event: &Event<'_, ConfigMap>| {
        matches!(event, Event::Create { .. })
    });
    let controller = Controller::<ConfigMap>::new(manager.factory()).predicate(creates_only);
    let stats = controller.stats();
    let factory = manager.factory().clone();
    manager.add_controller(controller, record, retry, Arc::clone(&seen));
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    Ok((seen, stats, factory, run))
}

// kubernetes-controller-sharding: pkg/shard/lease/lease_test.go (the Lease's name, holder and
// ring label), and a release on a graceful shutdown.
#[tokio::test]
async fn shard_lease_is_named_after_the_shard_labelled_with_the_ring_and_released_at_shutdown() -> TestResult
{
    let server = TestServer::start().await?;
    let shutdown = CancellationToken::new();
    let (_, _, _, run) = start_shard(&server, "shard-a", &shutdown)?;
    let leases: Api<Lease> = Api::namespaced(server.client()?, "default");
    eventually_async("shard-a holds its Lease", WAIT, async || {
        let holder = leases
            .get_opt("shard-a")
            .await
            .ok()
            .flatten()
            .and_then(|lease| lease.spec?.holder_identity);
        holder.as_deref() == Some("shard-a")
    })
    .await?;
    let labels = leases.get("shard-a").await?.metadata.labels.unwrap_or_default();
    assert_eq!(labels.get(RING_LABEL).map(String::as_str), Some(RING));
    shutdown.cancel();
    run.await??;
    let released = leases.get("shard-a").await?;
    let holder = released
        .spec
        .and_then(|spec| spec.holder_identity)
        .unwrap_or_default();
    assert_eq!(
        holder, "",
        "a gracefully stopped shard releases its Lease so the sharder moves its objects at once"
    );
    Ok(())
}

// kubernetes-controller-sharding: pkg/shard/controller/reconciler_test.go, "the object is
// assigned to another shard: should ignore the request", over a cache that never holds it.
#[tokio::test]
async fn shard_caches_and_reconciles_only_the_objects_assigned_to_it() -> TestResult {
    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    for (name, assigned) in [
        ("mine-1", Some("shard-a")),
        ("theirs", Some("shard-b")),
        ("unassigned", None),
    ] {
        api.create(&PostParams::default(), &config_map(name, assigned))
            .await?;
    }
    let shutdown = CancellationToken::new();
    let (seen, _, factory, run) = start_shard(&server, "shard-a", &shutdown)?;
    eventually("mine-1 reconciled", WAIT, || seen.count("mine-1") == 1).await?;
    // one more of ours, created later: once it is seen, the others had their chance
    api.create(&PostParams::default(), &config_map("mine-2", Some("shard-a")))
        .await?;
    eventually("mine-2 reconciled", WAIT, || seen.count("mine-2") == 1).await?;
    assert_eq!(seen.count("theirs") + seen.count("unassigned"), 0);
    let cached = factory
        .informer::<ConfigMap>()
        .lister()
        .list_in_scope(&Default::default());
    let mut names: Vec<_> = cached.iter().filter_map(|cm| cm.metadata.name.clone()).collect();
    names.sort();
    assert_eq!(
        names,
        ["mine-1", "mine-2"],
        "the shard's cache holds only its own objects"
    );
    shutdown.cancel();
    run.await??;
    Ok(())
}

// kubernetes-controller-sharding: pkg/shard/controller/reconciler_test.go, "the object is
// drained: should remove the shard and drain label", and predicate_test.go, "main predicate
// returns false: should handle assigned and drained objects".
#[tokio::test]
async fn drained_object_is_handed_over_without_a_reconcile_whatever_the_predicates_say() -> TestResult {
    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    api.create(&PostParams::default(), &config_map("moving", Some("shard-a")))
        .await?;
    let shutdown = CancellationToken::new();
    let (seen, stats, factory, run) = start_shard(&server, "shard-a", &shutdown)?;
    eventually("moving reconciled", WAIT, || seen.count("moving") == 1).await?;
    // the sharder drains it: an update the controller's predicate (creates only) rejects
    let drain = serde_json::json!({"metadata": {"labels": {drain_label(RING): "true"}}});
    api.patch("moving", &PatchParams::default(), &Patch::Merge(&drain))
        .await?;
    eventually_async("the shard removed the shard and drain labels", WAIT, async || {
        let labels = api
            .get("moving")
            .await
            .ok()
            .and_then(|cm| cm.metadata.labels)
            .unwrap_or_default();
        !labels.contains_key(&shard_label(RING)) && !labels.contains_key(&drain_label(RING))
    })
    .await?;
    // The worker counts its acknowledgement once the API server's answer reaches it, which
    // may be after the labels are seen gone.
    eventually("the acknowledgement counted", WAIT, || {
        stats.drains_acknowledged() >= 1
    })
    .await?;
    assert_eq!(stats.drains_acknowledged(), 1);
    assert_eq!(seen.count("moving"), 1, "a drained object is not reconciled");
    let informer = factory.informer::<ConfigMap>();
    eventually("the handed-over object left the cache", WAIT, || {
        informer.lister().list_in_scope(&Default::default()).is_empty()
    })
    .await?;
    shutdown.cancel();
    run.await??;
    Ok(())
}

#[tokio::test]
async fn a_shard_refuses_leader_election_and_a_factory_that_caches_everything() -> TestResult {
    let server = TestServer::start().await?;
    let both = Manager::builder(server.client()?)
        .shard(shard("shard-a")?)
        .leader_election(leader_election::Config::new("leader", "default", "shard-a"))
        .build();
    assert!(matches!(both, Err(Error::ShardAndLeaderElection)));
    let unrestricted = Manager::builder(server.client()?)
        .shard(shard("shard-a")?)
        .factory(SharedInformerFactory::new(server.client()?))
        .build();
    match unrestricted {
        Err(Error::UnrestrictedFactory { shard, resources }) => {
            assert_eq!(shard, "shard-a");
            assert_eq!(resources, ["configmaps"]);
        }
        other => panic!("expected UnrestrictedFactory, got {other:?}"),
    }
    let restricted = shard("shard-a")?
        .restrict_factory(SharedInformerFactory::builder(server.client()?))
        .build();
    Manager::builder(server.client()?)
        .shard(shard("shard-a")?)
        .factory(restricted)
        .build()?;
    Ok(())
}

#[tokio::test]
async fn a_sharded_controllers_owned_objects_are_cached_only_for_its_shard() -> TestResult {
    use k8s_openapi::api::core::v1::Secret;

    let server = TestServer::start().await?;
    let ring = ControllerRing::new(RING)?.resource(RingResource::of::<ConfigMap>().controls::<Secret>())?;
    let shard = Shard::new(ring, "shard-a", "default")?;
    let secrets: Api<Secret> = Api::namespaced(server.client()?, "default");
    for (name, assigned) in [("ours", "shard-a"), ("theirs", "shard-b")] {
        let secret = Secret {
            metadata: config_map(name, Some(assigned)).metadata,
            ..Secret::default()
        };
        secrets.create(&PostParams::default(), &secret).await?;
    }
    let mut manager = Manager::builder(server.client()?).shard(shard).build()?;
    let controller = Controller::<ConfigMap>::new(manager.factory()).owns::<Secret>();
    let factory = manager.factory().clone();
    manager.add_controller(controller, record, retry, Arc::new(Seen::default()));
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    let informer = factory.informer::<Secret>();
    eventually("the secret cache synced", WAIT, || informer.has_synced()).await?;
    let cached: Vec<_> = informer
        .lister()
        .list_in_scope(&Default::default())
        .iter()
        .filter_map(|secret| secret.metadata.name.clone())
        .collect();
    assert_eq!(
        cached,
        ["ours"],
        "owned objects are restricted to the shard like the controller's own"
    );
    shutdown.cancel();
    run.await??;
    Ok(())
}

/// A sharder is a runnable: on a leader-elected manager it runs on the leader and assigns the
/// ring's objects to the live shards.
#[tokio::test]
async fn a_sharder_runs_on_the_leader_of_a_manager() -> TestResult {
    use crate::sharding::Sharder;

    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    api.create(&PostParams::default(), &config_map("unassigned", None))
        .await?;
    let shutdown = CancellationToken::new();
    let (seen, _, _, shard_run) = start_shard(&server, "shard-a", &shutdown)?;
    let election = leader_election::Config::new("sharder", "default", "sharder-0")
        .lease_duration(Duration::from_millis(800))
        .renew_deadline(Duration::from_millis(500))
        .retry_period(Duration::from_millis(100));
    let mut manager = Manager::builder(server.named_client("sharder-0")?)
        .leader_election(election)
        .probe_address(([127, 0, 0, 1], 0).into())
        .build()?;
    let address = manager.probe_address().ok_or("no probe address")?;
    let ring = ControllerRing::new(RING)?.resource(RingResource::of::<ConfigMap>())?;
    let sharder = Sharder::new(manager.client(), ring)?;
    let stats = sharder.clone();
    manager.add(sharder);
    let sharder_run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    eventually(
        "the sharder assigned the object and the shard reconciled it",
        WAIT,
        || seen.count("unassigned") == 1,
    )
    .await?;
    eventually("the assignment counted", WAIT, || stats.stats().assigned == 1).await?;
    if cfg!(feature = "metrics") {
        // the manager registered the sharder's metrics and its controllers' when it was added
        let (status, metrics) = super::tests::probe(address, "/metrics").await?;
        assert_eq!(status, 200);
        for line in [
            format!("controller_sharding_assignments_total{{controllerring=\"{RING}\"}} 1"),
            format!(
                "controller_runtime_reconcile_total{{controller=\"sharder {RING} configmaps\",result=\"success\"}}"
            ),
            format!(
                "controller_runtime_reconcile_total{{controller=\"sharder {RING} leases\",result=\"success\"}}"
            ),
            format!("workqueue_adds_total{{name=\"sharder {RING} configmaps\"}}"),
        ] {
            assert!(metrics.contains(&line), "missing {line:?} in\n{metrics}");
        }
    }
    shutdown.cancel();
    shard_run.await??;
    sharder_run.await??;
    Ok(())
}

/// Every informer of a ring resource that a sharded manager's factory hands out carries the
/// shard's selector: the unscoped one, a scoped one (scope and shard compose), the
/// metadata-only one and a controller's; a custom constructor is refused.
#[tokio::test]
async fn every_informer_of_a_ring_resource_on_a_sharded_factory_holds_only_the_shards_objects() -> TestResult
{
    use crate::{factory, informer::SharedIndexInformer, scope::Scope};

    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    for (name, assigned, app) in [
        ("ours", "shard-a", "web"),
        ("ours-db", "shard-a", "db"),
        ("theirs", "shard-b", "web"),
    ] {
        let mut object = config_map(name, Some(assigned));
        if let Some(labels) = object.metadata.labels.as_mut() {
            labels.insert("app".into(), app.into());
        }
        api.create(&PostParams::default(), &object).await?;
    }
    let mut manager = Manager::builder(server.client()?)
        .shard(shard("shard-a")?)
        .build()?;
    let web = Scope::<ConfigMap>::all().labels("app=web")?;
    let controller = Controller::new_in(manager.factory(), &web);
    manager.add_controller(controller, record, retry, Arc::new(Seen::default()));
    let factory = manager.factory().clone();
    let everything = factory.unscoped_informer::<ConfigMap>();
    let scoped = factory.informer_in(&web);
    let metadata = factory.metadata_informer::<ConfigMap>();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    eventually("every cache synced", WAIT, || {
        everything.has_synced() && scoped.has_synced() && metadata.has_synced()
    })
    .await?;
    let names = |mut names: Vec<String>| {
        names.sort();
        names
    };
    let all = names(
        everything
            .lister()
            .list(&Default::default())
            .iter()
            .filter_map(|cm| cm.metadata.name.clone())
            .collect(),
    );
    assert_eq!(
        all,
        ["ours", "ours-db"],
        "`unscoped_informer::<K>()` caches the shard's objects only"
    );
    let web_names = names(
        scoped
            .lister()
            .list_in_scope(&Default::default())
            .iter()
            .filter_map(|cm| cm.metadata.name.clone())
            .collect(),
    );
    assert_eq!(web_names, ["ours"], "a scope and the shard compose");
    let metadata_names = names(
        metadata
            .lister()
            .list(&Default::default())
            .iter()
            .filter_map(|cm| cm.metadata.name.clone())
            .collect(),
    );
    assert_eq!(metadata_names, ["ours", "ours-db"]);
    let described: Vec<String> = factory
        .stats()
        .into_iter()
        .map(|stats| stats.description)
        .collect();
    assert!(
        described
            .iter()
            .all(|description| description.contains("shard.alpha.sharding.timebertt.dev/configmaps=shard-a")),
        "{described:?}"
    );
    let custom = factory.informer_for(|_| -> SharedIndexInformer<ConfigMap> {
        unreachable!("a restricted resource's constructor is never called")
    });
    match custom {
        Err(factory::Error::Restricted { resource, selector }) => {
            assert_eq!(resource, "configmaps");
            assert_eq!(selector, "shard.alpha.sharding.timebertt.dev/configmaps=shard-a");
        }
        other => panic!("expected Restricted, got {:?}", other.map(|_| ())),
    }
    shutdown.cancel();
    run.await??;
    Ok(())
}

/// No object of the ring stays drained while its shard runs: a controller that reconciles a
/// labelled subset acknowledges the drains of its objects, and the shard lets go of the
/// others (outside the controller's scope, or of a ring resource no controller reconciles)
/// without reconciling them.
#[tokio::test]
async fn drains_outside_every_controllers_scope_are_acknowledged_by_the_shard() -> TestResult {
    use k8s_openapi::api::core::v1::Secret;

    use crate::scope::Scope;

    let server = TestServer::start().await?;
    let client = server.client()?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for (name, app) in [("web", "web"), ("db", "db")] {
        let mut object = config_map(name, Some("shard-a"));
        if let Some(labels) = object.metadata.labels.as_mut() {
            labels.insert("app".into(), app.into());
        }
        api.create(&PostParams::default(), &object).await?;
    }
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let secret = Secret {
        metadata: config_map("lonely", Some("shard-a")).metadata,
        ..Secret::default()
    };
    secrets.create(&PostParams::default(), &secret).await?;
    let ring = ControllerRing::new(RING)?
        .resource(RingResource::of::<ConfigMap>())?
        .resource(RingResource::of::<Secret>())?;
    let shard = Shard::new(ring, "shard-a", "default")?;
    let mut manager = Manager::builder(server.client()?).shard(shard).build()?;
    let web = Scope::<ConfigMap>::all().labels("app=web")?;
    let controller = Controller::new_in(manager.factory(), &web);
    let stats = controller.stats();
    let seen = Arc::new(Seen::default());
    manager.add_controller(controller, record, retry, Arc::clone(&seen));
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    eventually("web reconciled", WAIT, || seen.count("web") == 1).await?;
    let drain = serde_json::json!({"metadata": {"labels": {drain_label(RING): "true"}}});
    for name in ["web", "db"] {
        api.patch(name, &PatchParams::default(), &Patch::Merge(&drain))
            .await?;
    }
    secrets
        .patch("lonely", &PatchParams::default(), &Patch::Merge(&drain))
        .await?;
    let released = |labels: Option<BTreeMap<String, String>>| {
        let labels = labels.unwrap_or_default();
        !labels.contains_key(&shard_label(RING)) && !labels.contains_key(&drain_label(RING))
    };
    eventually_async("every drain acknowledged", WAIT, async || {
        let mut all = true;
        for name in ["web", "db"] {
            all &= released(api.get(name).await.ok().and_then(|cm| cm.metadata.labels));
        }
        all && released(secrets.get("lonely").await.ok().and_then(|s| s.metadata.labels))
    })
    .await?;
    // The worker counts its acknowledgement once the API server's answer reaches it, which
    // may be after the labels are seen gone.
    eventually("the controller let go of its own object", WAIT, || {
        stats.drains_acknowledged() >= 1
    })
    .await?;
    assert_eq!(
        stats.drains_acknowledged(),
        1,
        "the controller let go of its own object once"
    );
    assert_eq!(
        seen.count("db"),
        0,
        "an object outside the scope is never reconciled"
    );
    assert_eq!(seen.count("web"), 1, "a drained object is not reconciled");
    shutdown.cancel();
    run.await??;
    Ok(())
}

/// What the blocking reconcile shares with its test.
#[derive(Default)]
struct Blocking {
    started: AtomicUsize,
    release: tokio::sync::Notify,
}

async fn block_until_released(
    _: Arc<ConfigMap>,
    blocking: Arc<Blocking>,
) -> std::result::Result<Action, kube::Error> {
    blocking.started.fetch_add(1, Ordering::SeqCst);
    blocking.release.notified().await;
    Ok(Action::await_change())
}

/// An object that leaves a controller's scope while it is being reconciled, and is drained
/// then, is let go only once the reconcile ended: the shard never hands over an object a
/// reconcile of its own still works on.
#[tokio::test]
async fn a_drain_is_not_acknowledged_while_a_reconcile_that_lost_the_object_runs() -> TestResult {
    use crate::scope::Scope;

    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    let mut object = config_map("slow", Some("shard-a"));
    if let Some(labels) = object.metadata.labels.as_mut() {
        labels.insert("app".into(), "web".into());
    }
    api.create(&PostParams::default(), &object).await?;
    let mut manager = Manager::builder(server.client()?)
        .shard(shard("shard-a")?)
        .build()?;
    let web = Scope::<ConfigMap>::all().labels("app=web")?;
    let blocking = Arc::new(Blocking::default());
    let controller = Controller::new_in(manager.factory(), &web);
    manager.add_controller(
        controller,
        block_until_released,
        |_, _, _| Action::requeue_with_backoff(),
        Arc::clone(&blocking),
    );
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    eventually("the reconcile started", WAIT, || {
        blocking.started.load(Ordering::SeqCst) == 1
    })
    .await?;
    // it leaves the controller's scope, and the sharder drains it
    let leave_and_drain =
        serde_json::json!({"metadata": {"labels": {"app": "db", drain_label(RING): "true"}}});
    api.patch("slow", &PatchParams::default(), &Patch::Merge(&leave_and_drain))
        .await?;
    let still_drained = async || {
        let labels = api
            .get("slow")
            .await
            .ok()
            .and_then(|cm| cm.metadata.labels)
            .unwrap_or_default();
        labels.contains_key(&drain_label(RING))
            && labels.get(&shard_label(RING)).map(String::as_str) == Some("shard-a")
    };
    // long enough for the sweep to have acted many times (it checks at once, then backs off
    // from 5 ms): the object stays with the shard while the reconcile runs
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        still_drained().await,
        "the drain was acknowledged while a reconcile of the object ran"
    );
    blocking.release.notify_one();
    eventually_async(
        "the drain acknowledged once the reconcile ended",
        WAIT,
        async || !still_drained().await,
    )
    .await?;
    assert_eq!(
        blocking.started.load(Ordering::SeqCst),
        1,
        "an object outside the scope is not reconciled again"
    );
    shutdown.cancel();
    run.await??;
    Ok(())
}

/// A shard whose Lease the sharder took (declaring it dead), moved an object off and gave back,
/// takes its Lease back in the same process with its caches, which may still show the object
/// labelled for it (the label change lags behind). Its new term is fenced: the object the
/// term's list no longer holds is not reconciled, the others are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_back_in_a_new_term_leaves_objects_that_moved_while_its_cache_lags() -> TestResult {
    use k8s_openapi::{apimachinery::pkg::apis::meta::v1::MicroTime, jiff::Timestamp};

    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    for name in ["moved", "stays"] {
        api.create(&PostParams::default(), &config_map(name, Some("shard-a")))
            .await?;
    }
    let mut manager = Manager::builder(server.named_client("shard-a")?)
        .shard(shard("shard-a")?)
        .build()?;
    let seen = Arc::new(Seen::default());
    manager.add_controller(
        Controller::<ConfigMap>::new(manager.factory()),
        record,
        retry,
        Arc::clone(&seen),
    );
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    eventually("both reconciled in the first term", WAIT, || {
        seen.count("moved") == 1 && seen.count("stays") == 1
    })
    .await?;
    // shard-a's cache sees config map changes 3 s late from now on
    server.set_watch_lag("configmaps", Some(Duration::from_secs(3)));
    // As the sharder: take the shard's Lease (its term ends at its next renewal), move
    // "moved" to shard-b, and give the Lease back once the shard stopped.
    let leases: Api<Lease> = Api::namespaced(server.named_client("sharder")?, "default");
    let lease = leases.get("shard-a").await?;
    let transitions = lease
        .spec
        .as_ref()
        .and_then(|spec| spec.lease_transitions)
        .unwrap_or(0);
    let now = MicroTime(Timestamp::now());
    let taken = serde_json::json!({"spec": {
        "holderIdentity": "shardlease-controller", "leaseDurationSeconds": 2,
        "acquireTime": now, "renewTime": now, "leaseTransitions": transitions + 1,
    }});
    leases
        .patch("shard-a", &PatchParams::default(), &Patch::Merge(&taken))
        .await?;
    let moved = serde_json::json!({"metadata": {"labels": {shard_label(RING): "shard-b"}}});
    api.patch("moved", &PatchParams::default(), &Patch::Merge(&moved))
        .await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let now = MicroTime(Timestamp::now());
    let given_back = serde_json::json!({"spec": {
        "holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": now, "renewTime": now,
    }});
    leases
        .patch("shard-a", &PatchParams::default(), &Patch::Merge(&given_back))
        .await?;
    eventually("a new term replayed the cache", WAIT, || seen.count("stays") == 2).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        seen.count("moved"),
        1,
        "the object that moved is not reconciled in the new term"
    );
    shutdown.cancel();
    run.await??;
    Ok(())
}
