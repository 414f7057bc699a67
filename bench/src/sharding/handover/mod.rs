//! The hand-over phase of `--only sharding`: the sharder and shards with real Leases against
//! the embedded test server, timing the initial assignment, a join and a kill.
//!
//! The parent starts an `informer_testserver::TestServer` holding `--handover-pods` pods
//! without shard labels (created in process, `managedFields` kept), and watches the pods
//! (metadata only) and the Leases through informers of its own ([`observer`]). It starts 4
//! shard processes (`--handover-role shard --shard-name shard-i`: a sharded `Manager` whose
//! Lease lasts `--handover-lease-ms` (2 s), renewed within three quarters of it, retried
//! every quarter ([`Leases`]), and one controller of pods as in the memory phase) and waits until each holds its Lease;
//! then the sharder in a process of its own (`--handover-role sharder`: `Sharder::run` with
//! its defaults, on metadata-only informers). It measures:
//!
//! - the initial assignment: from the sharder's start until every pod carries the label of
//!   the shard the hash ring of the 4 shards chooses;
//! - a join: a 5th shard starts; the time until it holds its Lease, and until the ring is
//!   balanced again (no drain label left, every pod on its shard of 5), with the pods moved;
//! - a kill: shard-0 is killed (SIGKILL), so its Lease is not released; the time until the
//!   sharder holds the Lease (the Lease's expiry and the sharder's acquisition), and from
//!   there until every pod is on its shard of the 4 left (the moves);
//! - a graceful stop: shard-1 stops (its Lease released); the time until the Lease is
//!   released, and until every pod is on its shard of the 3 left;
//! - same-name restarts, as a StatefulSet pod restarts: shard-1 (stopped gracefully), then
//!   shard-0 (killed) start again under their names; the time until each holds its Lease
//!   again, and until the ring including it is balanced.
//!
//! Each child reports its peak RSS when its standard input closes; conditions are checked
//! every [`observer::POLL`].

mod child;
mod observer;
mod report;

use std::{
    collections::HashMap,
    io::Read as _,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use informer_runtime::sharding::{ControllerRing, RingResource, Shard};
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::Pod;

pub(crate) use child::{Role, run as child};
pub(crate) use report::markdown;

use self::{
    child::ProcessMemory,
    observer::{Observer, Placement, moved, wait_until},
};
use super::{assignment::ring_of, shard_name};
use crate::{
    generator::PodGenerator,
    render::{NAMESPACES, SEED},
};

/// The ring of the hand-over phase.
pub(crate) const RING: &str = "bench-handover";

/// The namespace of the shards' Leases.
pub(crate) const LEASE_NAMESPACE: &str = "default";

/// The shards' Lease timings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leases {
    /// How long a shard's Lease lasts after its last renewal.
    pub(crate) duration: Duration,
}

impl Leases {
    /// How long a shard keeps reconciling without a successful renewal: three quarters of
    /// the Lease.
    pub(crate) fn renew_deadline(self) -> Duration {
        self.duration * 3 / 4
    }

    /// The wait between two renewals: a quarter of the Lease.
    pub(crate) fn retry_period(self) -> Duration {
        self.duration / 4
    }
}

/// Shards before the join.
const SHARDS: usize = 4;

/// The longest one step may take before the phase is reported as failed.
const STEP_TIMEOUT: Duration = Duration::from_secs(600);

/// The ring of pods.
pub(crate) fn ring() -> informer_runtime::sharding::Result<ControllerRing> {
    ControllerRing::new(RING)?.resource(RingResource::of::<Pod>())
}

/// Shard `name` of [`RING`] with the Lease timings `leases`.
pub(crate) fn shard(name: &str, leases: Leases) -> informer_runtime::sharding::Result<Shard> {
    Ok(Shard::new(ring()?, name, LEASE_NAMESPACE)?
        .lease_duration(leases.duration)
        .renew_deadline(leases.renew_deadline())
        .retry_period(leases.retry_period()))
}

/// What the hand-over phase runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Pods in the test server.
    pub(crate) pods: usize,
    /// What each reconcile of a shard waits.
    pub(crate) work: Duration,
    /// The shards' Lease timings.
    pub(crate) leases: Leases,
}

/// The times of one step, each from the step's start; `None` when it timed out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Step {
    /// Until the Lease changed hands (the new shard holds its own, or the sharder took the
    /// killed shard's).
    pub(crate) lease: Option<Duration>,
    /// Until every pod was on its shard, with no drain label.
    pub(crate) balanced: Option<Duration>,
    /// Pods whose shard label changed.
    pub(crate) moved: usize,
    /// Pods whose shard the ring changed (what had to move).
    pub(crate) expected: usize,
}

/// What the hand-over phase measured.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// What was run.
    pub(crate) settings: Settings,
    /// Creating the pods in the test server.
    pub(crate) created: Duration,
    /// From the shards' start until the 4 held their Leases.
    pub(crate) shards_ready: Option<Duration>,
    /// From the sharder's start until every pod was assigned.
    pub(crate) initial: Step,
    /// The 5th shard's join.
    pub(crate) join: Step,
    /// The kill of shard-0.
    pub(crate) kill: Step,
    /// The graceful stop of shard-1.
    pub(crate) stop: Step,
    /// shard-1 started again under its name.
    pub(crate) restart_stopped: Step,
    /// shard-0 started again under its name.
    pub(crate) restart_killed: Step,
    /// The sharder's memory, or why it is missing.
    pub(crate) sharder: Result<ProcessMemory, String>,
    /// Each shard still running at the end, with its memory.
    pub(crate) shards: Vec<(String, Result<ProcessMemory, String>)>,
    /// Pods per shard at the end.
    pub(crate) final_shares: HashMap<String, usize>,
    /// The shard Leases once the kill was handled: holders and transitions.
    pub(crate) leases: Vec<String>,
}

impl Outcome {
    /// What went wrong: a step that timed out or a process that failed.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let steps = [
            ("the initial assignment", &self.initial),
            ("the join", &self.join),
            ("the kill", &self.kill),
            ("the graceful stop", &self.stop),
            ("the restart of the stopped shard", &self.restart_stopped),
            ("the restart of the killed shard", &self.restart_killed),
        ];
        if self.shards_ready.is_none() {
            problems.push("the shards did not all hold their Leases".to_owned());
        }
        for (name, step) in steps {
            if step.balanced.is_none() {
                problems.push(format!("{name} did not end balanced within {STEP_TIMEOUT:?}"));
            }
        }
        let processes = std::iter::once(("sharder", &self.sharder))
            .chain(self.shards.iter().map(|(name, memory)| (name.as_str(), memory)));
        for (name, memory) in processes {
            match memory {
                Err(err) => problems.push(format!("{name}: {err}")),
                Ok(ProcessMemory { error: Some(err), .. }) => problems.push(format!("{name}: {err}")),
                Ok(_) => {}
            }
        }
        problems
    }
}

/// Runs the phase on a runtime of its own (the test server's tasks run there too).
pub(crate) fn run(settings: Settings) -> Result<Outcome, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|err| format!("a tokio runtime: {err}"))?;
    runtime.block_on(measure(settings))
}

/// A child process and its name.
struct Process {
    name: String,
    child: Child,
}

impl Process {
    fn spawn(role: Role, name: &str, url: &str, settings: Settings) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("the path of the bench binary: {e}"))?;
        let role_arg = match role {
            Role::Sharder => "sharder",
            Role::Shard => "shard",
        };
        let mut command = Command::new(exe);
        command
            .args(["--handover-role", role_arg, "--url", url])
            .args(["--sharding-work-ms", &settings.work.as_millis().to_string()])
            .args([
                "--handover-lease-ms",
                &settings.leases.duration.as_millis().to_string(),
            ]);
        if role == Role::Shard {
            command.args(["--shard-name", name]);
        }
        let child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{name}: {e}"))?;
        Ok(Self {
            name: name.to_owned(),
            child,
        })
    }

    /// Closes its standard input (it stops gracefully) and reads what it printed.
    fn stop(mut self) -> (String, Result<ProcessMemory, String>) {
        drop(self.child.stdin.take());
        let mut stdout = String::new();
        if let Some(mut out) = self.child.stdout.take() {
            let _ = out.read_to_string(&mut stdout);
        }
        let status = self.child.wait();
        let memory = stdout
            .lines()
            .find_map(|line| line.strip_prefix("HANDOVER "))
            .and_then(|json| serde_json::from_str(json).ok())
            .ok_or_else(|| format!("the child failed ({status:?})"));
        (self.name, memory)
    }

    /// Kills it with SIGKILL: it releases nothing.
    fn kill(mut self) -> Result<(), String> {
        self.child.kill().map_err(|e| format!("{}: {e}", self.name))?;
        let _ = self.child.wait();
        Ok(())
    }
}

/// Creates the generator's namespaces and `pods` pods of it without shard labels.
fn create_pods(server: &TestServer, pods: usize) -> Result<(), String> {
    let generator = PodGenerator::new(SEED, NAMESPACES);
    for index in 0..NAMESPACES {
        let namespace = generator.namespace(index);
        server
            .create_namespace(&namespace)
            .map_err(|err| format!("creating namespace {namespace}: {err}"))?;
    }
    for index in 0..pods {
        let mut pod = generator.pod(index, 1, 0);
        if let Some(metadata) = pod["metadata"].as_object_mut() {
            for server_set in ["resourceVersion", "uid", "creationTimestamp"] {
                metadata.remove(server_set);
            }
        }
        server
            .create(pod)
            .map_err(|err| format!("creating pod {index}: {err}"))?;
    }
    Ok(())
}

/// How many pods the ring of `after` puts elsewhere than the ring of `before`.
fn changed(placement: &Placement, before: &[String], after: &[String]) -> usize {
    let (before, after) = (ring_of(before), ring_of(after));
    placement
        .keys()
        .filter(|key| before.lookup(key) != after.lookup(key))
        .count()
}

async fn measure(settings: Settings) -> Result<Outcome, String> {
    let server = TestServer::start()
        .await
        .map_err(|err| format!("the test server: {err}"))?;
    let started = Instant::now();
    create_pods(&server, settings.pods)?;
    let created = started.elapsed();
    eprintln!("created {} pods in {:.1} s", settings.pods, created.as_secs_f64());
    let client = server
        .client()
        .map_err(|err| format!("a client of the test server: {err}"))?;
    let observer = Observer::start(client).await?;
    let url = server.url();
    let names: Vec<String> = (0..=SHARDS).map(shard_name).collect();
    let first = &names[..SHARDS];

    let shards_started = Instant::now();
    let mut shards = first
        .iter()
        .map(|name| Process::spawn(Role::Shard, name, &url, settings))
        .collect::<Result<Vec<_>, _>>()?;
    let shards_ready = wait_until(shards_started, STEP_TIMEOUT, || {
        first.iter().all(|name| observer.holds_lease(name))
    })
    .await;

    let sharder_started = Instant::now();
    let sharder = Process::spawn(Role::Sharder, "sharder", &url, settings)?;
    let four = ring_of(first);
    let initial_balanced = wait_until(sharder_started, STEP_TIMEOUT, || {
        observer.balanced(&four, settings.pods)
    })
    .await;
    let before_join = observer.placement();
    let initial = Step {
        lease: None,
        balanced: initial_balanced,
        moved: before_join.values().filter(|shard| shard.is_some()).count(),
        expected: settings.pods,
    };
    eprintln!("initial assignment: {initial:?}");

    let join = join(&observer, &url, settings, &names, &mut shards, &before_join).await?;
    eprintln!("join: {join:?}");
    let (killed, stopped) = (names[0].clone(), names[1].clone());
    let mut live: Vec<String> = names.clone();
    let kill = leave(&observer, settings, &killed, Leave::Kill, &mut live, &mut shards).await?;
    eprintln!("kill: {kill:?}");
    let stop = leave(&observer, settings, &stopped, Leave::Stop, &mut live, &mut shards).await?;
    eprintln!("graceful stop: {stop:?}");
    let restart_stopped = restart(&observer, &url, settings, &stopped, &mut live, &mut shards).await?;
    eprintln!("restart of {stopped}: {restart_stopped:?}");
    let restart_killed = restart(&observer, &url, settings, &killed, &mut live, &mut shards).await?;
    eprintln!("restart of {killed}: {restart_killed:?}");

    let leases = observer.lease_summary();
    let mut final_shares = HashMap::new();
    for shard in observer.placement().into_values().flatten() {
        *final_shares.entry(shard).or_default() += 1;
    }
    let sharder = sharder.stop().1;
    let shards = shards.into_iter().map(Process::stop).collect();
    observer.stop().await;
    Ok(Outcome {
        settings,
        created,
        shards_ready,
        initial,
        join,
        kill,
        stop,
        restart_stopped,
        restart_killed,
        sharder,
        shards,
        final_shares,
        leases,
    })
}

/// Starts the 5th shard and times its Lease and the rebalance.
async fn join(
    observer: &Observer,
    url: &str,
    settings: Settings,
    names: &[String],
    shards: &mut Vec<Process>,
    before: &Placement,
) -> Result<Step, String> {
    let joining = &names[SHARDS];
    let five = ring_of(names);
    let started = Instant::now();
    shards.push(Process::spawn(Role::Shard, joining, url, settings)?);
    let lease = wait_until(started, STEP_TIMEOUT, || observer.holds_lease(joining)).await;
    let balanced = wait_until(started, STEP_TIMEOUT, || observer.balanced(&five, settings.pods)).await;
    let after = observer.placement();
    Ok(Step {
        lease,
        balanced,
        moved: moved(before, &after),
        expected: changed(before, &names[..SHARDS], names),
    })
}

/// How a shard leaves the ring in a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leave {
    /// SIGKILL: its Lease is not released; the step's Lease time is until the sharder holds it.
    Kill,
    /// Its standard input closed: it stops gracefully and releases its Lease; the step's
    /// Lease time is until the Lease no longer names it.
    Stop,
}

/// Takes `name` out of the ring as `how` says, and times the Lease changing hands and the
/// moves of its pods to the shards left in `live`.
async fn leave(
    observer: &Observer,
    settings: Settings,
    name: &str,
    how: Leave,
    live: &mut Vec<String>,
    shards: &mut Vec<Process>,
) -> Result<Step, String> {
    let index = shards
        .iter()
        .position(|process| process.name == name)
        .ok_or_else(|| format!("{name} is not running"))?;
    let leaving = shards.remove(index);
    live.retain(|shard| shard != name);
    let remaining = ring_of(live);
    let before = observer.placement();
    let started = Instant::now();
    match how {
        Leave::Kill => leaving.kill()?,
        Leave::Stop => {
            if let (_, Err(err)) = leaving.stop() {
                return Err(format!("{name} did not stop gracefully: {err}"));
            }
        }
    }
    let lease = wait_until(started, STEP_TIMEOUT, || match how {
        Leave::Kill => observer.lease_taken_over(name),
        Leave::Stop => !observer.holds_lease(name),
    })
    .await;
    let balanced = wait_until(started, STEP_TIMEOUT, || {
        observer.balanced(&remaining, settings.pods)
    })
    .await;
    let after = observer.placement();
    Ok(Step {
        lease,
        balanced,
        moved: moved(&before, &after),
        expected: before
            .values()
            .filter(|shard| shard.as_deref() == Some(name))
            .count(),
    })
}

/// Starts `name` again under the same name and times until it holds its Lease and the ring
/// including it is balanced.
async fn restart(
    observer: &Observer,
    url: &str,
    settings: Settings,
    name: &str,
    live: &mut Vec<String>,
    shards: &mut Vec<Process>,
) -> Result<Step, String> {
    let before_names = live.clone();
    live.push(name.to_owned());
    live.sort();
    let ring = ring_of(live);
    let before = observer.placement();
    let started = Instant::now();
    shards.push(Process::spawn(Role::Shard, name, url, settings)?);
    let lease = wait_until(started, STEP_TIMEOUT, || observer.holds_lease(name)).await;
    let balanced = wait_until(started, STEP_TIMEOUT, || observer.balanced(&ring, settings.pods)).await;
    let after = observer.placement();
    Ok(Step {
        lease,
        balanced,
        moved: moved(&before, &after),
        expected: changed(&before, &before_names, live),
    })
}
