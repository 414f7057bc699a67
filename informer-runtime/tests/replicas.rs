//! The replica harness over HTTP: three replicas of a sharded ConfigMap controller and their
//! sharder; a replica crashed, one stopped, one restarted under its name, one added, each
//! followed by the wait for the ring to settle, and the invariants checked from the API server
//! and from what the controllers reconciled.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use informer_runtime::{
    controller::{Action, Controller},
    manager::Manager,
    replicas::{BuildError, Problem, Replicas, ReplicasError, SHARDER_CLIENT},
    sharding::{
        ControllerRing, RingResource, Shard,
        labels::{drain_label, shard_label},
    },
};
use informer_testserver::{TestServer, wait::eventually};
use k8s_openapi::api::{coordination::v1::Lease, core::v1::ConfigMap};
use kube::api::{Api, ObjectMeta, PostParams};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const RING: &str = "configmaps";
const SETTLE: Duration = Duration::from_secs(15);
const WAIT: Duration = Duration::from_secs(5);
const OBJECTS: usize = 24;

fn ring() -> Result<ControllerRing, informer_runtime::sharding::Error> {
    ControllerRing::new(RING)?.resource(RingResource::of::<ConfigMap>())
}

/// Which replica reconciled each config map last.
#[derive(Default)]
struct Reconciled(Mutex<HashMap<String, String>>);

impl Reconciled {
    fn by(&self) -> HashMap<String, String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

struct Context {
    replica: String,
    reconciled: Arc<Reconciled>,
}

async fn reconcile(config_map: Arc<ConfigMap>, context: Arc<Context>) -> Result<Action, kube::Error> {
    let name = config_map.metadata.name.clone().unwrap_or_default();
    context
        .reconciled
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name, context.replica.clone());
    Ok(Action::await_change())
}

/// Builds replica `name`: a manager sharded as `name`, with short Leases, running a ConfigMap
/// controller that records what it reconciles.
fn replica(
    reconciled: &Arc<Reconciled>,
) -> impl Fn(&str, kube::Client) -> Result<Manager, BuildError> + Send + Sync + 'static {
    let reconciled = Arc::clone(reconciled);
    move |name: &str, client: kube::Client| -> Result<Manager, BuildError> {
        let shard = Shard::new(ring()?, name, "default")?
            .lease_duration(Duration::from_millis(800))
            .renew_deadline(Duration::from_millis(500))
            .retry_period(Duration::from_millis(100));
        let mut manager = Manager::builder(client).shard(shard).build()?;
        let controller = Controller::<ConfigMap>::new(manager.factory());
        let context = Arc::new(Context {
            replica: name.to_owned(),
            reconciled: Arc::clone(&reconciled),
        });
        manager.add_controller(
            controller,
            reconcile,
            |_, _, _| Action::requeue(Duration::from_millis(50)),
            context,
        );
        Ok(manager)
    }
}

fn config_map(name: &str, namespace: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// Checks, from the API server and from the controllers, what a settled ring promises after a
/// step: every config map of `default` is labelled for a running replica and not drained, the
/// one in `kube-system` (outside the ring) is not labelled, every running replica holds its
/// Lease, and each config map was last reconciled by the replica it is assigned to. Returns
/// how many config maps each replica holds.
async fn assert_settled(
    server: &TestServer,
    replicas: &Replicas<'_>,
    reconciled: &Reconciled,
) -> Result<HashMap<String, usize>, Box<dyn std::error::Error>> {
    let running = replicas.running();
    let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    let mut assigned = HashMap::new();
    let mut held: HashMap<String, usize> = HashMap::new();
    for object in api.list(&Default::default()).await?.items {
        let name = object.metadata.name.clone().unwrap_or_default();
        let labels = object.metadata.labels.unwrap_or_default();
        let shard = labels.get(&shard_label(RING)).cloned().unwrap_or_default();
        assert!(
            running.contains(&shard.as_str()),
            "{name} is assigned to {shard:?}, not to one of the running {running:?}"
        );
        assert!(
            !labels.contains_key(&drain_label(RING)),
            "{name} is still drained"
        );
        *held.entry(shard.clone()).or_default() += 1;
        assigned.insert(name, shard);
    }
    assert_eq!(assigned.len(), OBJECTS);
    let system: Api<ConfigMap> = Api::namespaced(server.client()?, "kube-system");
    let outside = system.get("outside").await?.metadata.labels.unwrap_or_default();
    assert!(
        !outside.contains_key(&shard_label(RING)),
        "an object outside the ring is not assigned"
    );
    let leases: Api<Lease> = Api::namespaced(server.client()?, "default");
    for replica in &running {
        let holder = leases
            .get(replica)
            .await?
            .spec
            .and_then(|spec| spec.holder_identity)
            .unwrap_or_default();
        assert_eq!(&holder, replica, "{replica} holds its Lease");
    }
    let reconciled_by_assigned = eventually(
        "every config map to be reconciled by the replica it is assigned to",
        WAIT,
        || reconciled.by() == assigned,
    )
    .await;
    assert!(
        reconciled_by_assigned.is_ok(),
        "{reconciled_by_assigned:?}: reconciled by {:?}, assigned to {assigned:?}",
        reconciled.by()
    );
    Ok(held)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_map_controller_hands_over_through_a_crash_a_stop_a_restart_and_an_addition() -> TestResult {
    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    for index in 0..OBJECTS {
        api.create(
            &PostParams::default(),
            &config_map(&format!("cm-{index:02}"), "default"),
        )
        .await?;
    }
    server.create_typed(&config_map("outside", "kube-system"))?;
    let reconciled = Arc::new(Reconciled::default());
    let mut replicas = Replicas::start(&server, ring()?, 3, replica(&reconciled))?;
    assert_eq!(replicas.names(), ["shard-0", "shard-1", "shard-2"]);

    let started = replicas.wait_settled(SETTLE).await?;
    let held = assert_settled(&server, &replicas, &reconciled).await?;
    assert!(
        ["shard-0", "shard-1", "shard-2"]
            .iter()
            .all(|replica| held.contains_key(*replica)),
        "every replica holds config maps: {held:?}"
    );
    assert!(replicas.sharder_stats().assigned >= OBJECTS as u64);

    replicas.crash("shard-1").await?;
    let crashed = replicas.wait_settled(SETTLE).await?;
    let held = assert_settled(&server, &replicas, &reconciled).await?;
    assert!(!held.contains_key("shard-1"), "{held:?}");
    assert!(
        replicas.sharder_stats().lease_acquisitions >= 1,
        "the sharder took the crashed shard's Lease before moving its objects"
    );

    replicas.stop("shard-2").await?;
    let stopped = replicas.wait_settled(SETTLE).await?;
    let held = assert_settled(&server, &replicas, &reconciled).await?;
    assert_eq!(
        held.get("shard-0"),
        Some(&OBJECTS),
        "the last replica holds every config map"
    );

    replicas.restart("shard-1")?;
    let restarted = replicas.wait_settled(SETTLE).await?;
    let held = assert_settled(&server, &replicas, &reconciled).await?;
    assert!(
        held.contains_key("shard-1"),
        "the restarted replica holds config maps again: {held:?}"
    );

    let added = replicas.add()?;
    assert_eq!(added, "shard-3");
    let scaled = replicas.wait_settled(SETTLE).await?;
    let held = assert_settled(&server, &replicas, &reconciled).await?;
    assert!(
        held.contains_key("shard-3"),
        "the added replica holds config maps: {held:?}"
    );
    assert_eq!(replicas.running(), ["shard-0", "shard-1", "shard-3"]);

    let senders: Vec<Option<String>> = server
        .requests()
        .into_iter()
        .map(|request| request.client)
        .collect();
    for client in ["shard-3", SHARDER_CLIENT] {
        assert!(
            senders.iter().any(|sender| sender.as_deref() == Some(client)),
            "the server tells {client}'s requests apart"
        );
    }
    println!(
        "settled after: start {started:?}, crash {crashed:?}, stop {stopped:?}, restart {restarted:?}, addition {scaled:?}"
    );
    replicas.shutdown().await?;
    Ok(())
}

/// On a current-thread runtime nothing the replicas do runs before the first check, which
/// finds every replica without its Lease and every object unassigned.
#[tokio::test(flavor = "current_thread")]
async fn a_ring_that_has_not_settled_is_named_and_misuse_is_refused() -> TestResult {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("waiting", "default"))?;
    let reconciled = Arc::new(Reconciled::default());
    let mut replicas = Replicas::start(&server, ring()?, 1, replica(&reconciled))?;
    let error = replicas
        .wait_settled(Duration::ZERO)
        .await
        .expect_err("nothing ran yet");
    match &error {
        ReplicasError::NotSettled { ring, unsettled, .. } => {
            assert_eq!(ring, RING);
            assert_eq!(
                unsettled.problems,
                [
                    Problem::ShardNotLive {
                        shard: "shard-0".into(),
                        reason: "it has no Lease".into(),
                    },
                    Problem::Unassigned {
                        object: "configmaps default/waiting".into(),
                    },
                ]
            );
        }
        other => panic!("expected NotSettled, got {other}"),
    }
    assert_eq!(
        error.to_string(),
        "failed to wait for ring configmaps to settle within 0ns: 2 problems: replica shard-0 runs but is not a live shard: it has no Lease; configmaps default/waiting is assigned to no shard"
    );

    let unknown = replicas.crash("shard-7").await.expect_err("no such replica");
    assert_eq!(
        unknown.to_string(),
        "failed to crash replica shard-7: no replica has that name (replicas: [\"shard-0\"])"
    );
    let running = replicas.restart("shard-0").expect_err("it runs");
    assert!(matches!(running, ReplicasError::Running { .. }), "{running}");
    replicas.crash("shard-0").await?;
    let crashed = replicas.stop("shard-0").await.expect_err("it was crashed");
    assert!(
        matches!(crashed, ReplicasError::NotRunning { action: "stop", .. }),
        "{crashed}"
    );
    drop(replicas);

    let unsharded = Replicas::start(&server, ring()?, 1, |_: &str, client: kube::Client| {
        Manager::builder(client).build()
    })
    .expect_err("not a shard");
    assert!(
        matches!(unsharded, ReplicasError::NotSharded { .. }),
        "{unsharded}"
    );
    let misnamed = Replicas::start(
        &server,
        ring()?,
        1,
        |_: &str, client: kube::Client| -> Result<Manager, BuildError> {
            Ok(Manager::builder(client)
                .shard(Shard::new(ring()?, "elsewhere", "default")?)
                .build()?)
        },
    )
    .expect_err("not the shard of its name");
    assert_eq!(
        misnamed.to_string(),
        "failed to run replica shard-0: its manager runs shard elsewhere of ring configmaps (Lease default/elsewhere), not shard shard-0 of ring configmaps (Lease default/shard-0); build its shard with the name, ring and Lease namespace the harness has"
    );
    Ok(())
}
