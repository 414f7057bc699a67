//! Controllers on managers under leader election, over HTTP: every replica keeps a warm
//! ConfigMap cache and runs its controller only while it leads.
//!
//! - A new leader's controller reconciles the whole cache on its first pass, without a list
//!   request of its own (warm standby).
//! - Leader faults in the seeded fault suite: the ConfigMap workload and server faults of
//!   `controller_faults.rs`, plus killed leaders, stalled lease renewals and 500s and 409s on
//!   leases. The reconciles never check their leadership themselves: the manager's workers
//!   start none after a term's end and its client sends no write after it. Every reconcile
//!   records its term when it starts and again after each write the server accepted; no two
//!   terms act at once, and once the faults stop the last reconcile of every object saw its
//!   final version.
//!
//! `REPLICATED_CONTROLLER_SEEDS=20 cargo test -p informer-tests --test replicated_controllers -- --nocapture`
//! runs a longer campaign.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use informer_runtime::{
    SharedInformerFactory,
    controller::{Action, Controller, RunContext},
    leader_election::Config,
    manager::{self, Manager},
    workqueue::ItemExponentialFailureRateLimiter,
};
use informer_tests::fault::{
    config_maps::{config_map, fast_informer, server_versions, step},
    fencing::FencingLog,
};
use informer_testserver::{Failure, Stall, TestServer};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use tokio::task::JoinHandle;

const LEASE: Duration = Duration::from_millis(800);
const RENEW: Duration = Duration::from_millis(500);
const RETRY: Duration = Duration::from_millis(100);

/// What the replicas' reconciles did, shared with the test.
#[derive(Default)]
struct Observed {
    /// Fenced actions: one per reconcile that acted, with its term.
    fencing: FencingLog,
    /// The resource version each object's last acting reconcile saw, by name.
    reconciled: Mutex<HashMap<String, String>>,
    /// The names each term reconciled, in order, by term.
    by_term: Mutex<HashMap<i32, Vec<String>>>,
    /// Reconcile calls so far (the source of the injected failures).
    calls: Mutex<u64>,
    /// Writes the manager's client refused because their term had ended.
    refused: Mutex<u64>,
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
enum ReconcileError {
    #[error("failed to reconcile on purpose")]
    Injected,
    #[error("failed to reconcile: it ran outside a leadership term")]
    NoTerm,
    #[error("failed to stamp: {0}")]
    Stamp(#[from] kube::Error),
}

/// The annotation a leader stamps its term into.
const STAMP: &str = "test.example.com/term";

/// A reconcile's context: the replica's identity and its manager's client.
struct Replicated {
    identity: String,
    client: kube::Client,
    observed: Arc<Observed>,
    /// Every ninth call fails, and each object is stamped with the term, when set.
    faults: bool,
}

/// Records that it runs in its term, stamps the object with the term (a write the manager
/// fences) and records the accepted write, then the version seen and the name.
async fn reconcile(cm: Arc<ConfigMap>, context: Arc<Replicated>) -> Result<Action, ReconcileError> {
    let observed = &context.observed;
    let call = {
        let mut calls = observed.calls.lock().expect("calls");
        *calls += 1;
        *calls
    };
    if context.faults && call.is_multiple_of(9) {
        return Err(ReconcileError::Injected);
    }
    let run = RunContext::current().ok_or(ReconcileError::NoTerm)?;
    let transitions = run.leadership().ok_or(ReconcileError::NoTerm)?.term().transitions;
    observed.fencing.record(&context.identity, transitions);
    let name = cm.metadata.name.clone().unwrap_or_default();
    let stamp = transitions.to_string();
    let stamped = cm.metadata.annotations.as_ref().and_then(|a| a.get(STAMP)) == Some(&stamp);
    if context.faults && !stamped {
        if call.is_multiple_of(5) {
            // A slow reconcile: long enough for its term to end and the next leader to act
            // before it writes, were the write not fenced.
            tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
        }
        let api: Api<ConfigMap> = Api::namespaced(context.client.clone(), "default");
        let patch = serde_json::json!({"metadata": {"annotations": {STAMP: stamp}}});
        let written = api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        if let Err(error) = &written
            && manager::WriteRefused::of(error).is_some()
        {
            *observed.refused.lock().expect("refused") += 1;
        }
        written?;
        observed.fencing.record(&context.identity, transitions);
    }
    let version = cm.metadata.resource_version.clone().unwrap_or_default();
    observed
        .by_term
        .lock()
        .expect("by term")
        .entry(transitions)
        .or_default()
        .push(name.clone());
    observed
        .reconciled
        .lock()
        .expect("reconciled")
        .insert(name, version);
    Ok(Action::await_change())
}

/// A replica: a manager whose ConfigMap informer runs all along, with an election, and a
/// controller it runs during each term it leads.
struct Replica {
    identity: String,
    run: JoinHandle<manager::Result<()>>,
}

impl Replica {
    fn start(server: &TestServer, identity: &str, observed: &Arc<Observed>, faults: bool) -> Self {
        let client = server.named_client(identity).expect("a named client");
        let factory = SharedInformerFactory::new(client.clone());
        fast_informer(&factory);
        let config = Config::new("replicated", "default", identity)
            .lease_duration(LEASE)
            .renew_deadline(RENEW)
            .retry_period(RETRY);
        let mut manager = Manager::builder(client)
            .factory(factory.clone())
            .leader_election(config)
            .build()
            .expect("a valid configuration");
        let controller = Controller::<ConfigMap>::new(&factory)
            .concurrency(2)
            .rate_limiter(ItemExponentialFailureRateLimiter::new(
                Duration::from_millis(1),
                Duration::from_millis(50),
            ));
        let context = Arc::new(Replicated {
            identity: identity.to_owned(),
            client: manager.client(),
            observed: Arc::clone(observed),
            faults,
        });
        manager.add_controller(
            controller,
            reconcile,
            |_, _: &ReconcileError, _| Action::requeue_with_backoff(),
            context,
        );
        let run = tokio::spawn(manager.run(std::future::pending()));
        Self {
            identity: identity.to_owned(),
            run,
        }
    }

    /// A crash: no release, no drain.
    async fn kill(self) {
        self.run.abort();
        if let Ok(Err(error)) = self.run.await {
            eprintln!("{}: the manager stopped: {error}", self.identity);
        }
    }
}

/// Waits until `condition` holds, polling every 10 ms; false after `timeout`.
async fn wait_for(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    tokio::time::timeout(timeout, async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .is_ok()
}

/// The replica that acted last.
fn acting(observed: &Observed, replicas: &[Replica]) -> Option<usize> {
    let (identity, _) = observed.fencing.last()?;
    replicas.iter().position(|r| r.identity == identity)
}

fn list_requests(server: &TestServer, client: &str) -> usize {
    let requests = server.requests();
    requests
        .iter()
        .filter(|r| r.verb == "list" && r.resource == "configmaps" && r.client.as_deref() == Some(client))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_leaders_controller_reconciles_the_whole_cache_on_its_first_pass_without_a_relist() {
    let server = TestServer::start().await.expect("server");
    for i in 0..20 {
        server
            .create_typed(&config_map(&format!("early-{i}"), i))
            .expect("created");
    }
    let observed = Arc::new(Observed::default());
    let first = Replica::start(&server, "r0", &observed, false);
    assert!(
        wait_for(Duration::from_secs(10), || observed.fencing.last().is_some()).await,
        "r0 never led"
    );
    let standby = Replica::start(&server, "r1", &observed, false);
    // Changes while r1 is a standby: only its cache sees them.
    for i in 0..5 {
        server
            .create_typed(&config_map(&format!("late-{i}"), i))
            .expect("created");
    }
    let all: HashSet<String> = server_versions(&server).into_keys().collect();
    assert!(
        wait_for(Duration::from_secs(10), || {
            observed.reconciled.lock().expect("reconciled").len() == all.len()
        })
        .await,
        "r0 reconciled everything"
    );
    let lists_before = list_requests(&server, "r1");
    let first_term = observed.fencing.windows().last().map(|w| w.1).expect("a term");

    first.kill().await;
    let new_term = || {
        let by_term = observed.by_term.lock().expect("by term");
        by_term
            .iter()
            .find(|(term, _)| **term > first_term)
            .map(|(_, names)| names.clone())
    };
    let covered = wait_for(LEASE * 2 + Duration::from_secs(5), || {
        new_term().is_some_and(|names| names.len() >= all.len())
    })
    .await;
    let names = new_term().unwrap_or_default();
    assert!(covered, "the new leader reconciled only {names:?} of {all:?}");
    let distinct: HashSet<String> = names.iter().cloned().collect();
    assert_eq!(distinct, all, "the first pass covers the whole cache");
    assert_eq!(names.len(), all.len(), "each object once: {names:?}");
    assert_eq!(
        list_requests(&server, "r1"),
        lists_before,
        "the new leader reconciled from its warm cache, without a list"
    );
    assert_eq!(lists_before, 1, "the standby listed once, when it started");
    observed.fencing.assert_fenced(0);
    standby.kill().await;
    server.shutdown().await;
}

/// One leader fault, chosen by `rng`, aimed at the replica that acted last.
async fn leader_fault(
    server: &TestServer,
    rng: &mut fastrand::Rng,
    replicas: &mut [Replica],
    observed: &Arc<Observed>,
    generation: &mut usize,
) {
    let Some(leader) = acting(observed, replicas) else {
        return;
    };
    let identity = replicas[leader].identity.clone();
    match rng.u8(..4) {
        0 => {
            *generation += 1;
            let fresh = Replica::start(server, &format!("r{leader}-{generation}"), observed, true);
            std::mem::replace(&mut replicas[leader], fresh).kill().await;
        }
        1 => server.stall_next(
            Stall::new(LEASE)
                .verb("update")
                .resource("leases")
                .client(&identity),
        ),
        2 => server.fail_next(Failure::new(500).resource("leases").client(&identity).times(3)),
        _ => server.fail_next(Failure::new(409).verb("update").resource("leases").times(2)),
    }
}

async fn run_seed(seed: u64) {
    let server = TestServer::start().await.expect("server");
    let observed = Arc::new(Observed::default());
    let mut replicas = Vec::new();
    for i in 0..3 {
        replicas.push(Replica::start(&server, &format!("r{i}"), &observed, true));
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut generation = 0;
    for value in 0..120 {
        if value % 15 == 0 {
            leader_fault(&server, &mut rng, &mut replicas, &observed, &mut generation).await;
        }
        step(&server, &mut rng, value);
        tokio::time::sleep(Duration::from_millis(rng.u64(5..25))).await;
    }
    server.clear_faults();

    // The leader's stamps change versions too: converged is when the last reconcile of every
    // object saw the version the server holds now.
    let converged = wait_for(Duration::from_secs(30), || {
        let reconciled = observed.reconciled.lock().expect("reconciled");
        server_versions(&server)
            .iter()
            .all(|(name, version)| reconciled.get(name) == Some(version))
    })
    .await;
    let want = server_versions(&server);
    let reconciled = observed.reconciled.lock().expect("reconciled").clone();
    assert!(
        converged,
        "seed {seed}: not converged: the server holds {want:?}, the last reconciles saw {reconciled:?}"
    );
    observed.fencing.assert_fenced(seed);
    let terms = observed.fencing.windows().len();
    for replica in replicas {
        replica.kill().await;
    }
    println!(
        "seed {seed}: {} objects converged over {terms} terms, {} fenced reconciles and writes, {} late writes refused",
        want.len(),
        observed.fencing.actions().len(),
        observed.refused.lock().expect("refused"),
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicated_controllers_converge_fenced_under_leader_and_server_faults() {
    let seeds: u64 = std::env::var("REPLICATED_CONTROLLER_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    for seed in 1..=seeds {
        run_seed(seed).await;
    }
}
