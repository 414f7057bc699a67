//! Sharding (`--only sharding`): memory and reconciles per second of a controller divided over
//! 1, 2 and 4 shards, each shard a process of its own.
//!
//! The parent renders `--pods` pods (200 000; 2 000 with `--quick`), each carrying the shard
//! labels of three rings at once (`shard.alpha.sharding.timebertt.dev/bench-1`, `-2`, `-4`),
//! every value chosen on the sharder's consistent-hash ring of that ring's shards
//! (`shard-0` … `shard-<N-1>`; see [`assignment`]). For each N it serves the ring `bench-N`
//! as N label selections, one per shard, as an API server answers a shard's `labelSelector`,
//! and starts N children at once (`--shard-name shard-i --shard-ring bench-N --url <server>`).
//! Each child runs a shard: a factory restricted to it (`Shard::restrict_factory`) that strips
//! `managedFields` (`transform_metadata`), and a `Controller::<Pod>` with `.shard(&shard)`,
//! `--sharding-concurrency` workers (4) and a reconcile that waits `--sharding-work-ms` (1 ms:
//! an I/O-bound reconcile), run by `Controller::run` without a Lease. It prints the pods it
//! cached, its RSS (baseline, after the sync, at the end, peak), the time to sync and the time
//! to reconcile its initial list once. The fixed overhead is the peak RSS of a shard that is
//! assigned no pod, run alone the same way.

mod assignment;
pub(crate) mod handover;
mod report;
mod shard;

use std::{
    process::{Child, Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use informer_runtime::{
    scope::Scope,
    sharding::{ControllerRing, RingResource, Shard},
};
use k8s_openapi::api::core::v1::Pod;
use serde::{Deserialize, Serialize};

pub(crate) use report::markdown;
pub(crate) use shard::run as child;

use self::assignment::{pod_key, ring_of, shard_index};
use crate::{
    generator::PodGenerator,
    render::{NAMESPACES, Rendered, SEED},
    server::Server,
};

/// The shard counts measured: one ring each, `bench-<N>`.
pub(crate) const SHARD_COUNTS: [usize; 3] = [1, 2, 4];

/// The shard assigned no pod, whose peak RSS is the fixed overhead of a shard process.
const EMPTY_SHARD: &str = "shard-empty";

/// The namespace of the shards' Leases (the memory phase holds none).
const LEASE_NAMESPACE: &str = "default";

/// The longest a child may take to sync and reconcile its initial list.
const RUN_TIMEOUT: Duration = Duration::from_secs(1800);

/// The name of the ring of `shards` shards.
pub(crate) fn ring_name(shards: usize) -> String {
    format!("bench-{shards}")
}

/// The name of shard `index` of a ring.
pub(crate) fn shard_name(index: usize) -> String {
    format!("shard-{index}")
}

/// The names of a ring's `count` shards.
fn shard_names(count: usize) -> Vec<String> {
    (0..count).map(shard_name).collect()
}

/// Shard `name` of the ring `ring`, dividing pods.
pub(crate) fn shard_of(ring: &str, name: &str) -> Result<Shard, String> {
    let ring = ControllerRing::new(ring)
        .and_then(|ring| ring.resource(RingResource::of::<Pod>()))
        .map_err(|err| err.to_string())?;
    Shard::new(ring, name, LEASE_NAMESPACE).map_err(|err| err.to_string())
}

/// The `labelSelector` a shard's informer of pods sends: its factory's default scope of pods.
fn list_selector(shard: &Shard) -> String {
    shard.restrict(Scope::<Pod>::all()).selected_labels().to_string()
}

/// What the memory phase runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Settings {
    /// Pods in the cluster, over every shard.
    pub(crate) pods: usize,
    /// Workers of each shard's controller.
    pub(crate) concurrency: u16,
    /// What each reconcile waits (its simulated I/O).
    pub(crate) work: Duration,
}

/// What one shard process measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Measured {
    /// The shard's name.
    pub(crate) shard: String,
    /// Pods in its cache once synced.
    pub(crate) objects: usize,
    /// `VmRSS` once its runtime and client exist, before its factory, in bytes.
    pub(crate) baseline_rss: u64,
    /// `VmRSS` once synced, in bytes.
    pub(crate) synced_rss: u64,
    /// `VmRSS` once its initial list was reconciled, in bytes.
    pub(crate) rss: u64,
    /// `VmHWM` (peak RSS) at the end, in bytes.
    pub(crate) hwm: u64,
    /// Seconds from the start to the cache synced (`None`: never synced).
    pub(crate) sync_seconds: Option<f64>,
    /// Seconds from the cache synced to every cached pod reconciled once (`None`: not every
    /// pod was).
    pub(crate) reconcile_seconds: Option<f64>,
    /// When the cache synced, in seconds since the UNIX epoch (to line the shards of a ring
    /// up).
    pub(crate) synced_at: Option<f64>,
    /// When the last pod of the initial list was reconciled, in seconds since the UNIX epoch.
    pub(crate) done_at: Option<f64>,
    /// Pods reconciled at least once.
    pub(crate) reconciled: usize,
    /// Reconciles, repeats included.
    pub(crate) reconciles: u64,
    /// Anything unusual.
    pub(crate) notes: Vec<String>,
}

impl Measured {
    /// Nothing measured yet of `shard`.
    pub(crate) fn nothing(shard: &str) -> Self {
        Self {
            shard: shard.to_owned(),
            objects: 0,
            baseline_rss: 0,
            synced_rss: 0,
            rss: 0,
            hwm: 0,
            sync_seconds: None,
            reconcile_seconds: None,
            synced_at: None,
            done_at: None,
            reconciled: 0,
            reconciles: 0,
            notes: Vec::new(),
        }
    }

    /// Reconciles per second of the initial list: its pods over the time to reconcile them.
    pub(crate) fn rate(&self) -> Option<f64> {
        self.reconcile_seconds
            .map(|seconds| self.objects as f64 / seconds.max(f64::MIN_POSITIVE))
    }
}

/// The shards of one ring, run at once.
#[derive(Debug, Clone)]
pub(crate) struct RingOutcome {
    /// Shards in the ring.
    pub(crate) shards: usize,
    /// Pods the ring's shards were assigned, by shard.
    pub(crate) assigned: Vec<usize>,
    /// What each shard measured, or why it failed.
    pub(crate) measured: Vec<Result<Measured, String>>,
}

/// The memory phase: the empty shard, then each ring.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// What was run.
    pub(crate) settings: Settings,
    /// The shard with no pod (the fixed overhead).
    pub(crate) empty: Result<Measured, String>,
    /// One per entry of [`SHARD_COUNTS`].
    pub(crate) rings: Vec<RingOutcome>,
}

impl Outcome {
    /// What went wrong: a child that failed, or a shard that did not cache or reconcile
    /// exactly the pods assigned to it.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut check = |ring: &str, measured: &Result<Measured, String>, expected: usize| match measured {
            Err(err) => problems.push(format!("{ring}: {err}")),
            Ok(m) if m.objects != expected || m.reconciled != expected => problems.push(format!(
                "{ring}/{}: cached {} and reconciled {} pods, {expected} assigned",
                m.shard, m.objects, m.reconciled
            )),
            Ok(m) if !m.notes.is_empty() => {
                problems.push(format!("{ring}/{}: {}", m.shard, m.notes.join("; ")))
            }
            Ok(_) => {}
        };
        check("bench-1", &self.empty, 0);
        for ring in &self.rings {
            for (measured, expected) in ring.measured.iter().zip(&ring.assigned) {
                check(&ring_name(ring.shards), measured, *expected);
            }
        }
        problems
    }
}

/// The shard of every pod on each ring of [`SHARD_COUNTS`] (index `i`: ring `SHARD_COUNTS[i]`).
fn assign(pods: usize) -> Vec<Vec<usize>> {
    let generator = PodGenerator::new(SEED, NAMESPACES);
    let keys: Vec<String> = (0..pods)
        .map(|index| {
            let id = generator.id(index);
            pod_key(&id.namespace, &id.name)
        })
        .collect();
    SHARD_COUNTS
        .iter()
        .map(|&count| {
            let shards = shard_names(count);
            let ring = ring_of(&shards);
            keys.iter()
                .map(|key| shard_index(&ring, &shards, key).unwrap_or_default())
                .collect()
        })
        .collect()
}

/// The pods of the ring `count` served as one selection per shard (the empty shard's too on
/// the ring of one), each pod labelled for every ring.
fn render_ring(
    pods: usize,
    count: usize,
    assignments: &[Vec<usize>],
) -> Result<(Rendered, Vec<usize>), String> {
    let ring_index = SHARD_COUNTS
        .iter()
        .position(|&c| c == count)
        .ok_or_else(|| format!("no ring of {count} shards"))?;
    let mut selections: Vec<(String, Vec<usize>)> = Vec::new();
    for (index, name) in shard_names(count).iter().enumerate() {
        let indexes = (0..pods)
            .filter(|&pod| assignments[ring_index][pod] == index)
            .collect();
        selections.push((list_selector(&shard_of(&ring_name(count), name)?), indexes));
    }
    let assigned = selections.iter().map(|(_, indexes)| indexes.len()).collect();
    if count == 1 {
        selections.push((list_selector(&shard_of(&ring_name(1), EMPTY_SHARD)?), Vec::new()));
    }
    let labels = |pod: usize| {
        SHARD_COUNTS
            .iter()
            .zip(assignments)
            .map(|(&count, shards)| {
                (
                    informer_runtime::sharding::labels::shard_label(&ring_name(count)),
                    shard_name(shards[pod]),
                )
            })
            .collect()
    };
    Ok((Rendered::selections_only(pods, labels, &selections), assigned))
}

/// Runs the memory phase: the empty shard alone, then every ring of [`SHARD_COUNTS`], each
/// against a server of its own.
pub(crate) fn run(settings: Settings) -> Result<Outcome, String> {
    let assignments = assign(settings.pods);
    let mut empty = Err("not run".to_owned());
    let mut rings = Vec::new();
    for count in SHARD_COUNTS {
        let started = Instant::now();
        let (rendered, assigned) = render_ring(settings.pods, count, &assignments)?;
        eprintln!(
            "rendered the ring of {count} shard(s) in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let server = Server::start(Arc::new(rendered)).map_err(|err| format!("the bench server: {err}"))?;
        if count == 1 {
            empty = run_shards(server.url(), &ring_name(1), &[EMPTY_SHARD.to_owned()], settings)
                .pop()
                .unwrap_or_else(|| Err("no empty shard".into()));
        }
        let measured = run_shards(server.url(), &ring_name(count), &shard_names(count), settings);
        server.stop();
        eprintln!("ring of {count} shard(s) done");
        rings.push(RingOutcome {
            shards: count,
            assigned,
            measured,
        });
    }
    Ok(Outcome {
        settings,
        empty,
        rings,
    })
}

/// Starts one child per shard of `shards` at once and reads what each measured.
fn run_shards(url: &str, ring: &str, shards: &[String], settings: Settings) -> Vec<Result<Measured, String>> {
    let children: Vec<Result<Child, String>> = shards
        .iter()
        .map(|shard| spawn_shard(url, ring, shard, settings))
        .collect();
    children
        .into_iter()
        .zip(shards)
        .map(|(child, shard)| child.and_then(|child| read_child(shard, child)))
        .collect()
}

fn spawn_shard(url: &str, ring: &str, shard: &str, settings: Settings) -> Result<Child, String> {
    let exe = std::env::current_exe().map_err(|e| format!("the path of the bench binary: {e}"))?;
    Command::new(exe)
        .args(["--shard-name", shard, "--shard-ring", ring, "--url", url])
        .args(["--pods", &settings.pods.to_string()])
        .args(["--sharding-concurrency", &settings.concurrency.to_string()])
        .args(["--sharding-work-ms", &settings.work.as_millis().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{ring}/{shard}: {e}"))
}

fn read_child(shard: &str, child: Child) -> Result<Measured, String> {
    let output = child.wait_with_output().map_err(|e| format!("{shard}: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("SHARD "))
        .and_then(|json| serde_json::from_str(json).ok())
        .ok_or_else(|| {
            format!(
                "{shard} child failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )
        })
}
