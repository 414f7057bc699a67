//! The child process of the memory phase: one shard of a ring, without a Lease: a factory
//! restricted to the shard that strips `managedFields`, and a sharded controller of pods whose
//! reconcile waits as an API call would.

use std::{
    convert::Infallible,
    sync::Arc,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use informer_runtime::{
    SharedInformerFactory,
    controller::{Action, Controller},
    sharding::Shard,
};
use k8s_openapi::api::core::v1::Pod;
use kube::core::Selector;
use tokio_util::sync::CancellationToken;

use super::{Measured, RUN_TIMEOUT, Settings};
use crate::{reconcile::Tally, rss::memory, server};

/// The longest the controller may take to stop once told to.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// What the reconcile shares with the measurement.
struct Probe {
    tally: Arc<Tally>,
    work: Duration,
}

/// Child mode: runs shard `shard` of `ring` against the server at `url` and prints what it
/// measured as one `SHARD {json}` line.
pub(crate) fn run(ring: &str, shard: &str, url: &str, settings: Settings) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let client = {
        let _runtime = runtime.enter();
        server::client(url)
    };
    let measured = match super::shard_of(ring, shard) {
        Ok(shard) => runtime.block_on(measure(&shard, client, settings)),
        Err(err) => failed(shard, err),
    };
    println!(
        "SHARD {}",
        serde_json::to_string(&measured).expect("the measurement serializes")
    );
    // Exit without tearing down the runtime and its open watch.
    std::process::exit(0);
}

fn failed(shard: &str, note: String) -> Measured {
    let mut measured = Measured::nothing(shard);
    measured.notes.push(note);
    measured
}

/// Seconds since the UNIX epoch.
fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64())
}

async fn measure(shard: &Shard, client: kube::Client, settings: Settings) -> Measured {
    let (baseline_rss, _) = memory();
    let started = Instant::now();
    let mut measured = Measured::nothing(shard.name());
    measured.baseline_rss = baseline_rss;
    let probe = Arc::new(Probe {
        // Pods are told apart by the index that ends their name, below the cluster's count.
        tally: Tally::new(settings.pods),
        work: settings.work,
    });
    let builder =
        SharedInformerFactory::builder(client).transform_metadata(|meta| meta.managed_fields = None);
    let factory = shard.restrict_factory(builder).build();
    let informer = factory.informer::<Pod>();
    let shutdown = CancellationToken::new();
    let controller = Controller::<Pod>::new(&factory)
        .shard(shard)
        .concurrency(usize::from(settings.concurrency))
        .graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let running = tokio::spawn(controller.run(reconcile, error_policy, Arc::clone(&probe)));
    let synced = tokio::time::timeout(RUN_TIMEOUT, informer.wait_for_sync())
        .await
        .unwrap_or(false);
    if synced {
        let synced_at = Instant::now();
        measured.synced_at = Some(now_epoch());
        measured.sync_seconds = Some(synced_at.duration_since(started).as_secs_f64());
        measured.synced_rss = memory().0;
        measured.objects = informer.lister().list_in_scope(&Selector::default()).len();
        probe.tally.expect(measured.objects);
        if probe.tally.wait_complete(RUN_TIMEOUT).await {
            measured.reconcile_seconds = Some(synced_at.elapsed().as_secs_f64());
            measured.done_at = Some(now_epoch());
        } else {
            measured
                .notes
                .push(format!("not every pod reconciled within {RUN_TIMEOUT:?}"));
        }
    } else {
        measured.notes.push(format!("not synced within {RUN_TIMEOUT:?}"));
    }
    (measured.rss, measured.hwm) = memory();
    measured.reconciled = probe.tally.distinct();
    measured.reconciles = probe.tally.reconciles();
    if probe.tally.unknown() > 0 {
        measured
            .notes
            .push(format!("{} reconciles of unknown pods", probe.tally.unknown()));
    }
    shutdown.cancel();
    match tokio::time::timeout(STOP_TIMEOUT, running).await {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(err))) => measured.notes.push(format!("the controller failed: {err}")),
        Ok(Err(err)) => measured
            .notes
            .push(format!("the controller's task failed: {err}")),
        Err(_) => measured
            .notes
            .push(format!("the controller did not stop within {STOP_TIMEOUT:?}")),
    }
    measured
}

/// Counts the pod, then waits as a controller's API calls would.
async fn reconcile(pod: Arc<Pod>, probe: Arc<Probe>) -> Result<Action, Infallible> {
    probe.tally.reconciled(&pod);
    tokio::time::sleep(probe.work).await;
    Ok(Action::await_change())
}

/// Never called: the reconcile cannot fail.
fn error_policy(_: Arc<Pod>, never: &Infallible, _: Arc<Probe>) -> Action {
    match *never {}
}
