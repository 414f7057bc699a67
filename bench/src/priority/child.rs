//! The child process of the latency phase: a controller of pods on one kind of queue, a
//! reconcile with simulated I/O, and the live changes released partway through the list.

use std::{
    convert::Infallible,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use informer_runtime::{
    SharedInformerFactory,
    controller::{Action, Controller},
};
use k8s_openapi::api::core::v1::Pod;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::{LIVE_CHANGES, Measured, Queue, RUN_TIMEOUT, Settings};
use crate::{reconcile::Tally, server};

/// What the reconcile function shares with the measurement.
struct Probe {
    tally: Arc<Tally>,
    /// The list's resource version: a pod with a newer one is a live change.
    list_resource_version: u64,
    release_after: usize,
    work: Duration,
    client: kube::Client,
    release_started: AtomicBool,
    released_at: OnceLock<Instant>,
    first_reconcile: OnceLock<Instant>,
    latencies: Mutex<Vec<f64>>,
    all_live_seen: Notify,
}

impl Probe {
    /// Records the latency of a live change seen by a reconcile that started at `started`.
    fn live_change(&self, started: Instant) {
        let released = self.released_at.get().copied().unwrap_or(started);
        let mut latencies = self.latencies.lock().expect("latencies");
        latencies.push(started.duration_since(released).as_secs_f64());
        if latencies.len() == LIVE_CHANGES {
            self.all_live_seen.notify_one();
        }
    }

    /// Makes the live changes once `release_after` reconciles ran.
    fn release_when_due(self: &Arc<Self>) {
        let due = self.tally.reconciles() >= self.release_after as u64;
        if !due || self.release_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let probe = Arc::clone(self);
        tokio::spawn(async move {
            let _ = probe.released_at.set(Instant::now());
            server::release_events(&probe.client).await;
        });
    }
}

/// Child mode: runs a controller on `queue` against the server at `url` and prints what it
/// measured.
pub(crate) fn run(queue: Queue, url: &str, settings: Settings) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let client = {
        let _runtime = runtime.enter();
        server::client(url)
    };
    let measured = runtime.block_on(measure(queue, client, settings));
    println!(
        "PRIORITY {}",
        serde_json::to_string(&measured).expect("the measurement serializes")
    );
    // Exit without tearing down the runtime and its open connections.
    std::process::exit(0);
}

async fn measure(queue: Queue, client: kube::Client, settings: Settings) -> Measured {
    let probe = Arc::new(Probe {
        tally: Tally::new(settings.objects),
        list_resource_version: settings.objects as u64,
        release_after: settings.release_after(),
        work: settings.work,
        client: client.clone(),
        release_started: AtomicBool::new(false),
        released_at: OnceLock::new(),
        first_reconcile: OnceLock::new(),
        latencies: Mutex::new(Vec::new()),
        all_live_seen: Notify::new(),
    });
    let factory = SharedInformerFactory::new(client);
    let shutdown = CancellationToken::new();
    let controller = Controller::<Pod>::new(&factory)
        .concurrency(usize::from(settings.concurrency))
        .priorities(queue == Queue::Priority)
        .graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let running = tokio::spawn(controller.run(reconcile, error_policy, Arc::clone(&probe)));
    let complete = probe.tally.wait_complete(RUN_TIMEOUT).await;
    let list_done = Instant::now();
    let live_seen = tokio::time::timeout(RUN_TIMEOUT, probe.all_live_seen.notified())
        .await
        .is_ok()
        || probe.latencies.lock().expect("latencies").len() == LIVE_CHANGES;
    shutdown.cancel();
    let stopped = running.await;
    factory.shutdown().await;
    let mut notes = Vec::new();
    if !complete || !live_seen {
        notes.push(format!("timed out after {RUN_TIMEOUT:?}"));
    }
    if !matches!(stopped, Ok(Ok(()))) {
        notes.push(format!("the controller ended with {stopped:?}"));
    }
    let latencies = probe.latencies.lock().expect("latencies").clone();
    Measured {
        latencies,
        list_seconds: probe
            .first_reconcile
            .get()
            .map(|first| list_done.duration_since(*first).as_secs_f64()),
        reconciled: probe.tally.distinct(),
        reconciles: probe.tally.reconciles(),
        notes,
    }
}

/// Counts the pod, notes a live change, makes the live changes when due, then waits as a
/// controller's API calls would.
async fn reconcile(pod: Arc<Pod>, probe: Arc<Probe>) -> Result<Action, Infallible> {
    let started = Instant::now();
    let _ = probe.first_reconcile.set(started);
    let resource_version = pod
        .metadata
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse::<u64>().ok())
        .unwrap_or_default();
    if resource_version > probe.list_resource_version {
        probe.live_change(started);
    }
    probe.tally.reconciled(&pod);
    probe.release_when_due();
    tokio::time::sleep(probe.work).await;
    Ok(Action::await_change())
}

/// Never called: the reconcile cannot fail.
fn error_policy(_: Arc<Pod>, never: &Infallible, _: Arc<Probe>) -> Action {
    match *never {}
}
