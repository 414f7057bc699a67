//! The child processes of the hand-over phase: the sharder, and shards that hold real Leases.
//! Each runs until its standard input closes (a shard then shuts down gracefully and releases
//! its Lease), and prints one line of what it measured; the parent may also kill a shard.

use std::{
    convert::Infallible,
    io::Read as _,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use informer_runtime::{
    SharedInformerFactory,
    controller::{Action, Controller},
    manager::Manager,
    sharding::Sharder,
};
use k8s_openapi::api::core::v1::Pod;
use serde::{Deserialize, Serialize};

use super::Settings;
use crate::{rss::memory, server};

/// Which process a child of the hand-over phase is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Role {
    /// The sharder of the ring.
    Sharder,
    /// One shard (its name is `--shard-name`).
    Shard,
}

/// What a child process of the hand-over phase measured, printed when it stops.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ProcessMemory {
    /// `VmRSS` once its runtime and client exist, in bytes.
    pub(crate) baseline_rss: u64,
    /// `VmRSS` when told to stop, in bytes.
    pub(crate) rss: u64,
    /// `VmHWM` (peak RSS) when told to stop, in bytes.
    pub(crate) hwm: u64,
    /// Reconciles the shard ran (none for the sharder).
    pub(crate) reconciles: u64,
    /// The sharder's counters at the end (none for a shard).
    pub(crate) sharder: Option<SharderCounts>,
    /// What went wrong, if anything.
    pub(crate) error: Option<String>,
}

/// What the sharder did over the whole run ([`informer_runtime::sharding::SharderStats`]).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub(crate) struct SharderCounts {
    /// Objects labelled for a shard.
    pub(crate) assigned: u64,
    /// Drain labels added.
    pub(crate) drains: u64,
    /// Objects moved straight to a new shard.
    pub(crate) moves: u64,
    /// Shard Leases acquired.
    pub(crate) lease_acquisitions: u64,
    /// Dead shards' Leases given back once their objects moved.
    #[serde(default)]
    pub(crate) lease_hand_backs: u64,
    /// Writes answered 409.
    pub(crate) conflicts: u64,
    /// Other failures.
    pub(crate) errors: u64,
}

/// Resolves once the parent closes this process's standard input.
async fn stdin_closed() {
    let _ = tokio::task::spawn_blocking(|| {
        let mut sink = [0u8; 64];
        while matches!(std::io::stdin().read(&mut sink), Ok(read) if read > 0) {}
    })
    .await;
}

/// Child mode: runs `role` (shard `shard` for [`Role::Shard`]) against the test server at `url`
/// until standard input closes, then prints one `HANDOVER {json}` line.
pub(crate) fn run(role: Role, shard: Option<&str>, url: &str, settings: Settings) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let client = {
        let _runtime = runtime.enter();
        server::client(url)
    };
    let (baseline_rss, _) = memory();
    let reconciles = Arc::new(AtomicU64::new(0));
    let mut sharder = None;
    let result = runtime.block_on(async {
        match (role, shard) {
            (Role::Sharder, _) => run_sharder(client, &mut sharder).await,
            (Role::Shard, Some(name)) => run_shard(client, name, settings, Arc::clone(&reconciles)).await,
            (Role::Shard, None) => Err("a shard needs --shard-name".into()),
        }
    });
    let (rss, hwm) = memory();
    let measured = ProcessMemory {
        baseline_rss,
        rss,
        hwm,
        reconciles: reconciles.load(Ordering::Relaxed),
        sharder,
        error: result.err(),
    };
    println!(
        "HANDOVER {}",
        serde_json::to_string(&measured).expect("the measurement serializes")
    );
    std::process::exit(0);
}

/// The sharder of [`super::RING`] (metadata-only informers of the pods), until stdin closes;
/// its counters at the end go to `counts`.
async fn run_sharder(client: kube::Client, counts: &mut Option<SharderCounts>) -> Result<(), String> {
    let ring = super::ring().map_err(|e| e.to_string())?;
    let sharder = Sharder::new(client.clone(), ring).map_err(|e| e.to_string())?;
    let stats = sharder.clone();
    let mut manager = Manager::builder(client).build().map_err(|e| e.to_string())?;
    manager.add(sharder);
    let result = manager.run(stdin_closed()).await.map_err(|e| e.to_string());
    let stats = stats.stats();
    *counts = Some(SharderCounts {
        assigned: stats.assigned,
        drains: stats.drains,
        moves: stats.moves,
        lease_acquisitions: stats.lease_acquisitions,
        lease_hand_backs: stats.lease_hand_backs,
        conflicts: stats.conflicts,
        errors: stats.errors,
    });
    result
}

/// Shard `name` of [`super::RING`] in a sharded manager (its Lease timed as `settings` says)
/// with one controller of pods whose reconcile waits `settings.work`, until stdin closes.
async fn run_shard(
    client: kube::Client,
    name: &str,
    settings: Settings,
    reconciles: Arc<AtomicU64>,
) -> Result<(), String> {
    let shard = super::shard(name, settings.leases).map_err(|e| e.to_string())?;
    let factory = shard
        .restrict_factory(
            SharedInformerFactory::builder(client.clone())
                .transform_metadata(|meta| meta.managed_fields = None),
        )
        .build();
    let mut manager = Manager::builder(client)
        .factory(factory)
        .shard(shard)
        .build()
        .map_err(|e| e.to_string())?;
    let controller = Controller::<Pod>::new(manager.factory()).concurrency(4);
    let context = Arc::new((reconciles, settings.work));
    manager.add_controller(controller, reconcile, error_policy, context);
    manager.run(stdin_closed()).await.map_err(|e| e.to_string())
}

/// Counts the reconcile and waits as a controller's API calls would.
async fn reconcile(_: Arc<Pod>, context: Arc<(Arc<AtomicU64>, Duration)>) -> Result<Action, Infallible> {
    context.0.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(context.1).await;
    Ok(Action::await_change())
}

/// Never called: the reconcile cannot fail.
fn error_policy(_: Arc<Pod>, never: &Infallible, _: Arc<(Arc<AtomicU64>, Duration)>) -> Action {
    match *never {}
}
