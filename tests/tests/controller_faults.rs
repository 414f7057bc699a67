//! Controllers under faults: a seeded workload of creates, updates and deletes, with dropped
//! watches, API server restarts, compaction (relists with tombstones) and 500s, while the
//! reconcile function panics or fails now and then. The controller is level-triggered: once
//! the faults stop, the last successful reconcile of every object saw its final version, and
//! every panic and error was counted without stopping the controller.
//!
//! `CONTROLLER_FAULT_SEEDS=50 cargo test -p informer-tests --test controller_faults -- --nocapture`
//! runs a longer campaign.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use informer_runtime::{
    SharedInformerFactory,
    controller::{Action, Controller},
    workqueue::ItemExponentialFailureRateLimiter,
};
use informer_tests::fault::{
    config_maps::{fast_informer, server_versions, step},
    recorder::{DELIBERATE_PANIC, silence_deliberate_panics},
};
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::ConfigMap;
use tokio_util::sync::CancellationToken;

/// What the reconciles did, shared with the test.
#[derive(Default)]
struct Observed {
    /// The resource version each object's last successful reconcile saw.
    reconciled: Mutex<HashMap<String, String>>,
    /// Reconcile calls so far (the source of the injected failures).
    calls: AtomicU64,
    panics: AtomicU64,
    errors: AtomicU64,
}

#[derive(Debug, thiserror::Error)]
#[error("failed to reconcile on purpose")]
struct Injected;

/// Panics on every 7th call and fails on every 5th (others succeed), so that failures hit
/// objects at every stage of the workload.
async fn reconcile(cm: Arc<ConfigMap>, observed: Arc<Observed>) -> Result<Action, Injected> {
    let call = observed.calls.fetch_add(1, Ordering::SeqCst) + 1;
    if call.is_multiple_of(7) {
        observed.panics.fetch_add(1, Ordering::SeqCst);
        panic!("{DELIBERATE_PANIC}");
    }
    if call.is_multiple_of(5) {
        observed.errors.fetch_add(1, Ordering::SeqCst);
        return Err(Injected);
    }
    let name = cm.metadata.name.clone().unwrap_or_default();
    let version = cm.metadata.resource_version.clone().unwrap_or_default();
    observed
        .reconciled
        .lock()
        .expect("observed")
        .insert(name, version);
    Ok(Action::await_change())
}

async fn run_seed(seed: u64) {
    let server = TestServer::start().await.expect("server");
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    fast_informer(&factory);
    let shutdown = CancellationToken::new();
    let controller = Controller::<ConfigMap>::new(&factory)
        .concurrency(3)
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(1),
            Duration::from_millis(50),
        ))
        .graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let stats = controller.stats();
    let observed = Arc::new(Observed::default());
    let running = tokio::spawn(controller.run(
        reconcile,
        |_, _: &Injected, _| Action::requeue_with_backoff(),
        Arc::clone(&observed),
    ));

    let mut rng = fastrand::Rng::with_seed(seed);
    for value in 0..150 {
        step(&server, &mut rng, value);
        tokio::time::sleep(Duration::from_millis(rng.u64(0..4))).await;
    }
    server.clear_faults();

    let want = server_versions(&server);
    let converged = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let reconciled = observed.reconciled.lock().expect("observed").clone();
            if want
                .iter()
                .all(|(name, version)| reconciled.get(name) == Some(version))
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let reconciled = observed.reconciled.lock().expect("observed").clone();
    assert!(
        converged.is_ok(),
        "seed {seed}: not converged: the server holds {want:?}, the last reconciles saw {reconciled:?}; {stats:?}"
    );
    assert_eq!(
        stats.panics(),
        observed.panics.load(Ordering::SeqCst),
        "seed {seed}"
    );
    assert_eq!(
        stats.errors(),
        observed.errors.load(Ordering::SeqCst),
        "seed {seed}"
    );
    assert!(!running.is_finished(), "seed {seed}: the controller stopped");
    shutdown.cancel();
    running
        .await
        .expect("the controller's task")
        .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
    factory.shutdown().await;
    println!(
        "seed {seed}: {} objects converged after {} reconciles ({} panics, {} errors, {} skipped as deleted)",
        want.len(),
        stats.reconciles(),
        stats.panics(),
        stats.errors(),
        stats.skipped_missing()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_converges_under_faults_and_failing_reconciles() {
    silence_deliberate_panics();
    let seeds: u64 = std::env::var("CONTROLLER_FAULT_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    for seed in 1..=seeds {
        run_seed(seed).await;
    }
}
