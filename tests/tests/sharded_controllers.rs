//! Sharded controllers over HTTP: shards on managers, each holding its own Lease and caching
//! only the ConfigMaps the sharder assigned to it, and a sharder on a consistent-hash ring.
//!
//! The seeded fault suite runs 3 to 5 shards and a sharder under a ConfigMap workload (creates,
//! data updates, relabels, deletes) and faults: shards joining, leaving gracefully (their Lease
//! released), killed (their Lease left to expire: the sharder acquires it before it moves
//! their objects), restarted under the same name after either, stalled Lease renewals, a
//! killed sharder, 500s and 409s on Leases, 409s, 500s and stalls on the sharder's label
//! patches, and server faults (dropped watches, restarts, compaction). The ring holds the
//! ConfigMaps labelled `sharded=true` in two of three namespaces, and the shards' controller
//! reconciles that label only (a scope): the workload writes inside and outside the ring, and
//! moves objects in and out of it by their label. Every reconcile records the shard that ran
//! it, from its start to its last accepted write. After the faults stop:
//!
//! - every object in the ring reaches the desired state: assigned to a live shard, not
//!   drained, stamped by that shard, and last reconciled at the version the server holds;
//! - every object outside the ring carries neither a shard nor a drain label;
//! - no two shards acted on one object at once;
//! - each shard's cache holds only the objects labelled for it, and the caches' sizes add up
//!   to the number of objects.
//!
//! `SHARDED_CONTROLLER_SEEDS=20 cargo test -p informer-tests --test sharded_controllers -- --nocapture`
//! runs a longer campaign; `SHARDED_CONTROLLER_SEED=7` runs one seed.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use informer_runtime::{
    controller::{Action, Controller, RunContext},
    manager::{self, Manager},
    scope::Scope,
    sharding::{
        ControllerRing, RingResource, Shard, Sharder,
        labels::{drain_label, shard_label},
    },
    workqueue::ItemExponentialFailureRateLimiter,
};
use informer_tests::fault::{config_maps::config_map, tenure::TenureLog};
use informer_testserver::{Failure, Stall, TestServer};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const RING: &str = "config-maps";
const LEASE: Duration = Duration::from_millis(800);
const RENEW: Duration = Duration::from_millis(500);
const RETRY: Duration = Duration::from_millis(100);
/// The annotation a shard stamps its name into.
const STAMP: &str = "test.example.com/shard";
/// How many names the workload touches.
const NAMES: usize = 24;
/// The label of the objects the ring holds and the controller reconciles.
const SHARDED: &str = "sharded";
/// The namespaces the workload writes to: the ring holds the first two.
const NAMESPACES: [&str; 3] = ["default", "tenant", "outside"];

fn ring() -> ControllerRing {
    ControllerRing::new(RING)
        .and_then(|ring| ring.resource(RingResource::of::<ConfigMap>().labels(&format!("{SHARDED}=true"))?))
        .and_then(|ring| ring.namespace_selector("kubernetes.io/metadata.name in (default,tenant)"))
        .expect("a valid ring")
}

/// Whether the ring holds `object` (a ConfigMap as the server returns it).
fn in_ring(object: &serde_json::Value) -> bool {
    let meta = &object["metadata"];
    let namespace = meta["namespace"].as_str().unwrap_or_default();
    NAMESPACES[..2].contains(&namespace) && meta["labels"][SHARDED].as_str() == Some("true")
}

/// Every ConfigMap of the workload's namespaces.
fn all_config_maps(server: &TestServer) -> Result<Vec<serde_json::Value>, String> {
    let mut all = Vec::new();
    for namespace in NAMESPACES {
        all.extend(
            server
                .list("v1", "ConfigMap", Some(namespace))
                .map_err(|e| e.to_string())?,
        );
    }
    Ok(all)
}

/// `namespace/name` of a ConfigMap as the server returns it.
fn key_of(object: &serde_json::Value) -> String {
    let meta = &object["metadata"];
    format!(
        "{}/{}",
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default()
    )
}

/// What the shards' reconciles did, shared with the test.
#[derive(Default)]
struct Observed {
    tenures: TenureLog,
    /// The resource version each object's last reconcile saw, by name.
    reconciled: Mutex<HashMap<String, String>>,
    calls: Mutex<u64>,
    /// Writes the manager's client refused because the shard's term had ended.
    refused: Mutex<u64>,
}

#[derive(Debug, thiserror::Error)]
enum ReconcileError {
    #[error("failed to reconcile on purpose")]
    Injected,
    #[error("failed to reconcile: it ran outside the shard's term")]
    NoTerm,
    #[error("failed to stamp: {0}")]
    Stamp(#[from] kube::Error),
}

struct Context {
    shard: String,
    client: kube::Client,
    observed: Arc<Observed>,
}

/// Stamps the object with the shard's name (a write the manager fences), sometimes slowly
/// enough for the shard's term to end first, and records what it did.
async fn reconcile(cm: Arc<ConfigMap>, context: Arc<Context>) -> Result<Action, ReconcileError> {
    let from = Instant::now();
    let observed = &context.observed;
    let call = {
        let mut calls = observed.calls.lock().expect("calls");
        *calls += 1;
        *calls
    };
    if call.is_multiple_of(9) {
        return Err(ReconcileError::Injected);
    }
    let run = RunContext::current().ok_or(ReconcileError::NoTerm)?;
    run.leadership().ok_or(ReconcileError::NoTerm)?;
    let name = cm.metadata.name.clone().unwrap_or_default();
    let namespace = cm.metadata.namespace.clone().unwrap_or_default();
    let stamped = cm.metadata.annotations.as_ref().and_then(|a| a.get(STAMP)) == Some(&context.shard);
    if !stamped {
        if call.is_multiple_of(5) {
            tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
        }
        let api: Api<ConfigMap> = Api::namespaced(context.client.clone(), &namespace);
        let patch = serde_json::json!({"metadata": {"annotations": {STAMP: context.shard}}});
        let written = api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        if let Err(error) = &written
            && manager::WriteRefused::of(error).is_some()
        {
            *observed.refused.lock().expect("refused") += 1;
        }
        written?;
    }
    let key = format!("{namespace}/{name}");
    // Exclusivity is per object: a reconcile of a deleted object may still run on its old
    // shard while a new object of the same name is assigned elsewhere (the ring changed in
    // between; the protocol moves objects, not names), so tenures are kept by UID.
    let uid = cm.metadata.uid.clone().unwrap_or_default();
    observed
        .tenures
        .record(&format!("{key} ({uid})"), &context.shard, from);
    let version = cm.metadata.resource_version.clone().unwrap_or_default();
    observed
        .reconciled
        .lock()
        .expect("reconciled")
        .insert(key, version);
    Ok(Action::await_change())
}

/// A shard: a sharded manager running the stamping controller.
struct ShardReplica {
    name: String,
    factory: informer_runtime::SharedInformerFactory,
    shutdown: CancellationToken,
    run: JoinHandle<manager::Result<()>>,
}

impl ShardReplica {
    fn start(server: &TestServer, name: &str, observed: &Arc<Observed>) -> Self {
        let client = server.named_client(name).expect("a named client");
        let shard = Shard::new(ring(), name, "default")
            .expect("a valid shard")
            .lease_duration(LEASE)
            .renew_deadline(RENEW)
            .retry_period(RETRY);
        let mut manager = Manager::builder(client)
            .shard(shard)
            .build()
            .expect("a valid manager");
        let sharded = Scope::<ConfigMap>::all()
            .labels(&format!("{SHARDED}=true"))
            .expect("a valid scope");
        let controller = Controller::new_in(manager.factory(), &sharded)
            .concurrency(2)
            .rate_limiter(ItemExponentialFailureRateLimiter::new(
                Duration::from_millis(1),
                Duration::from_millis(50),
            ));
        let context = Arc::new(Context {
            shard: name.to_owned(),
            client: manager.client(),
            observed: Arc::clone(observed),
        });
        manager.add_controller(
            controller,
            reconcile,
            |_, _: &ReconcileError, _| Action::requeue_with_backoff(),
            context,
        );
        let factory = manager.factory().clone();
        let shutdown = CancellationToken::new();
        let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
        Self {
            name: name.to_owned(),
            factory,
            shutdown,
            run,
        }
    }

    /// A crash: no release, no hand-over; the sharder must wait for the Lease to expire.
    async fn kill(self) {
        self.run.abort();
        if let Ok(Err(error)) = self.run.await {
            eprintln!("{}: the manager stopped: {error}", self.name);
        }
    }

    /// A graceful shutdown: reconciles finish, the Lease is released.
    async fn leave(self) {
        self.shutdown.cancel();
        match self.run.await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!("{}: the manager stopped: {error}", self.name),
            Err(error) => eprintln!("{}: the manager's task failed: {error}", self.name),
        }
    }

    /// The names of the objects the shard's cache holds, and whether each is labelled for it.
    fn cached(&self) -> Vec<(String, bool)> {
        let sharded = Scope::<ConfigMap>::all()
            .labels(&format!("{SHARDED}=true"))
            .expect("a valid scope");
        let informer = self.factory.informer_in(&sharded);
        informer
            .lister()
            .list_in_scope(&Default::default())
            .iter()
            .map(|cm| {
                let labelled = cm
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(&shard_label(RING)))
                    == Some(&self.name);
                (cm.metadata.name.clone().unwrap_or_default(), labelled)
            })
            .collect()
    }
}

fn start_sharder(server: &TestServer) -> JoinHandle<()> {
    let client = server.named_client("sharder").expect("a named client");
    let sharder = Sharder::new(client.clone(), ring())
        .expect("a valid sharder")
        .resync_period(Duration::from_secs(2));
    let mut manager = Manager::builder(client).build().expect("a manager");
    manager.add(sharder);
    tokio::spawn(async move {
        if let Err(error) = manager.run(std::future::pending()).await {
            eprintln!("the sharder stopped: {error}");
        }
    })
}

/// One step of the workload, in one of [`NAMESPACES`]: a create (labelled `sharded=true` for
/// most names), a data update that keeps the labels, a relabel (the object leaves or joins
/// the ring), or a delete.
fn workload_step(server: &TestServer, rng: &mut fastrand::Rng, value: u64) {
    let index = rng.usize(..NAMES);
    let name = format!("cm-{index}");
    let namespace = NAMESPACES[rng.usize(..NAMESPACES.len())];
    match rng.u8(..22) {
        0 => server.drop_watches(),
        1 => server.restart(),
        2 => server.compact(),
        3..=5 => drop(server.delete_typed::<ConfigMap>(Some(namespace), &name)),
        6 | 7 => {
            if let Ok(mut current) = server.get("v1", "ConfigMap", Some(namespace), &name) {
                let sharded = current["metadata"]["labels"][SHARDED].as_str() == Some("true");
                current["metadata"]["labels"][SHARDED] = (if sharded { "false" } else { "true" }).into();
                drop(server.update(current));
            }
        }
        _ => {
            let mut object = config_map(&name, value);
            object.metadata.namespace = Some(namespace.into());
            let sharded = if index % 4 == 3 { "false" } else { "true" };
            object.metadata.labels = Some([(SHARDED.to_owned(), sharded.to_owned())].into());
            if server.create_typed(&object).is_err()
                && let Ok(mut current) = server.get("v1", "ConfigMap", Some(namespace), &name)
            {
                // the labels the sharder set stay: only the data changes
                current["data"]["value"] = value.to_string().into();
                drop(server.update(current));
            }
        }
    }
}

/// One fault of the sharding layer, chosen by `rng`.
async fn sharding_fault(
    server: &TestServer,
    rng: &mut fastrand::Rng,
    shards: &mut Vec<ShardReplica>,
    sharder: &mut JoinHandle<()>,
    observed: &Arc<Observed>,
    generation: &mut usize,
) -> &'static str {
    let victim = rng.usize(..shards.len());
    match rng.u8(..10) {
        9 => {
            let replica = shards.swap_remove(victim);
            let name = replica.name.clone();
            let how = if rng.bool() {
                replica.leave().await;
                "same-name restart after a graceful leave"
            } else {
                replica.kill().await;
                "same-name restart after a kill"
            };
            shards.push(ShardReplica::start(server, &name, observed));
            how
        }
        0 | 1 if shards.len() < 5 => {
            *generation += 1;
            shards.push(ShardReplica::start(
                server,
                &format!("shard-{generation}"),
                observed,
            ));
            "join"
        }
        2 if shards.len() > 3 => {
            shards.swap_remove(victim).leave().await;
            "graceful leave"
        }
        3 if shards.len() > 3 => {
            shards.swap_remove(victim).kill().await;
            "kill"
        }
        4 => {
            let name = shards[victim].name.clone();
            server.stall_next(Stall::new(LEASE).verb("update").resource("leases").client(&name));
            "stalled renewal"
        }
        5 => {
            sharder.abort();
            *sharder = start_sharder(server);
            "killed sharder"
        }
        6 => {
            server.fail_next(Failure::new(500).resource("leases").times(3));
            server.fail_next(Failure::new(409).verb("update").resource("leases").times(2));
            "500s and 409s on leases"
        }
        7 => {
            server.fail_next(
                Failure::new(409)
                    .verb("patch")
                    .resource("configmaps")
                    .client("sharder")
                    .times(3),
            );
            server.fail_next(
                Failure::new(500)
                    .verb("patch")
                    .resource("configmaps")
                    .client("sharder")
                    .times(2),
            );
            "409s and 500s on label patches"
        }
        _ => {
            server.stall_next(
                Stall::new(Duration::from_millis(300))
                    .verb("patch")
                    .resource("configmaps")
                    .client("sharder")
                    .times(3),
            );
            "stalled label patches"
        }
    }
}

/// Whether every object is settled: in the ring, assigned to a live shard, not drained,
/// stamped by it, and last reconciled at the version the server holds; outside it, without
/// shard or drain labels.
fn settled(server: &TestServer, shards: &[ShardReplica], observed: &Observed) -> Result<(), String> {
    let live: Vec<&str> = shards.iter().map(|shard| shard.name.as_str()).collect();
    let objects = all_config_maps(server)?;
    let reconciled = observed.reconciled.lock().expect("reconciled");
    for object in objects {
        let meta = &object["metadata"];
        let key = key_of(&object);
        let name = key.as_str();
        if !in_ring(&object) {
            if !meta["labels"][shard_label(RING)].is_null() || !meta["labels"][drain_label(RING)].is_null() {
                return Err(format!(
                    "{name} is outside the ring but labelled: {}",
                    meta["labels"]
                ));
            }
            continue;
        }
        let shard = meta["labels"][shard_label(RING)].as_str().unwrap_or_default();
        if !live.contains(&shard) {
            return Err(format!("{name} is assigned to {shard:?}, not to one of {live:?}"));
        }
        if !meta["labels"][drain_label(RING)].is_null() {
            return Err(format!("{name} is still drained"));
        }
        if meta["annotations"][STAMP].as_str() != Some(shard) {
            return Err(format!("{name} is not stamped by its shard {shard}"));
        }
        let version = meta["resourceVersion"].as_str().unwrap_or_default();
        if reconciled.get(name).map(String::as_str) != Some(version) {
            return Err(format!(
                "{name} was last reconciled at {:?}, the server holds {version}",
                reconciled.get(name)
            ));
        }
    }
    Ok(())
}

/// How many objects the ring holds.
fn in_ring_count(server: &TestServer) -> Result<usize, String> {
    Ok(all_config_maps(server)?
        .iter()
        .filter(|object| in_ring(object))
        .count())
}

/// Checks that each shard caches only its own objects, and that the caches add up.
fn assert_caches_disjoint(seed: u64, server: &TestServer, shards: &[ShardReplica]) {
    let total = in_ring_count(server).expect("a list");
    let mut cached = 0;
    for shard in shards {
        let objects = shard.cached();
        let foreign: Vec<_> = objects.iter().filter(|(_, labelled)| !labelled).collect();
        assert!(
            foreign.is_empty(),
            "seed {seed}: {} caches objects of other shards: {foreign:?}",
            shard.name
        );
        cached += objects.len();
    }
    assert_eq!(
        cached, total,
        "seed {seed}: the shards' caches hold {cached} objects, the server {total}"
    );
}

async fn wait_until(timeout: Duration, mut check: impl FnMut() -> Result<(), String>) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        let outcome = check();
        if outcome.is_ok() || Instant::now() > deadline {
            return outcome;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn run_seed(seed: u64) {
    let server = TestServer::start().await.expect("server");
    for namespace in &NAMESPACES[1..] {
        server.create_namespace(namespace).expect("a namespace");
    }
    let observed = Arc::new(Observed::default());
    let mut shards: Vec<ShardReplica> = (0..3)
        .map(|i| ShardReplica::start(&server, &format!("shard-{i}"), &observed))
        .collect();
    let mut sharder = start_sharder(&server);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut generation = 2;
    let mut faults = Vec::new();
    for value in 0..160 {
        if value % 16 == 8 {
            faults.push(
                sharding_fault(
                    &server,
                    &mut rng,
                    &mut shards,
                    &mut sharder,
                    &observed,
                    &mut generation,
                )
                .await,
            );
        }
        workload_step(&server, &mut rng, value);
        tokio::time::sleep(Duration::from_millis(rng.u64(5..25))).await;
    }
    server.clear_faults();

    let outcome = wait_until(Duration::from_secs(45), || settled(&server, &shards, &observed)).await;
    assert!(
        outcome.is_ok(),
        "seed {seed} (faults {faults:?}): not settled: {outcome:?}"
    );
    observed.tenures.assert_exclusive(seed);
    let caches = wait_until(Duration::from_secs(10), || {
        let total = in_ring_count(&server)?;
        let cached: usize = shards.iter().map(|shard| shard.cached().len()).sum();
        (cached == total)
            .then_some(())
            .ok_or(format!("{cached} cached of {total}"))
    })
    .await;
    assert!(
        caches.is_ok(),
        "seed {seed}: the caches did not settle: {caches:?}"
    );
    assert_caches_disjoint(seed, &server, &shards);
    let moved = observed
        .tenures
        .owners()
        .values()
        .filter(|owners| owners.len() > 1)
        .count();
    println!(
        "seed {seed}: {} objects in the ring settled on {} shards after {faults:?}; {} reconciles, {moved} objects changed shards, {} late writes refused",
        in_ring_count(&server).expect("a list"),
        shards.len(),
        observed.tenures.len(),
        observed.refused.lock().expect("refused"),
    );
    sharder.abort();
    for shard in shards {
        shard.kill().await;
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_controllers_settle_without_overlap_under_shard_sharder_and_server_faults() {
    if let Some(seed) = std::env::var("SHARDED_CONTROLLER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        run_seed(seed).await;
        return;
    }
    let seeds: u64 = std::env::var("SHARDED_CONTROLLER_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    for seed in 1..=seeds {
        run_seed(seed).await;
    }
}
