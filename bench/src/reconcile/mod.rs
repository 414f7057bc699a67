//! Reconciles per second: our `Controller` against kube-rs's, each in a process of its own.
//!
//! The parent serves `--reconcile-objects` pods (10 000; 1 000 with `--quick`) and no watch
//! events, and re-executes the bench binary once per consumer as `--reconcile ours|kube
//! --url <server> --reconcile-objects N --reconcile-concurrency C`. The child builds its
//! controller with at most C reconciles at once and a no-op reconcile that counts the pod and
//! returns `Action::await_change()`, then measures from the start (before the client's first
//! request) to the initial sync, and from there until every pod was reconciled once; it prints
//! one `RECONCILE {json}` line. CPU is the child's user and system time: the server runs in
//! the parent.

mod kube_rs;
mod ours;
mod report;
mod tally;

use std::{process::Command, time::Duration};

use serde::{Deserialize, Serialize};

pub(crate) use report::markdown;
pub(crate) use tally::Tally;

use crate::{cpu::Mark, outcome::Phase, server};

/// The longest a phase may take before the run is reported as failed.
const PHASE_TIMEOUT: Duration = Duration::from_secs(900);

/// The longest a controller may take to stop once its shutdown token fired.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// Which controller a child process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Consumer {
    /// `informer_runtime::controller::Controller` (on its default priority queue).
    Ours,
    /// The same on the FIFO queue (`priorities(false)`).
    OursFifo,
    /// `kube::runtime::Controller`.
    Kube,
}

impl Consumer {
    fn arg(self) -> &'static str {
        match self {
            Self::Ours => "ours",
            Self::OursFifo => "ours-fifo",
            Self::Kube => "kube",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Self::Ours => "ours: controller::Controller",
            Self::OursFifo => "ours: controller::Controller, FIFO queue",
            Self::Kube => "kube-rs 5: runtime::Controller",
        }
    }
}

/// Wall-clock and CPU seconds of one phase, as a child reports them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Seconds {
    /// Elapsed time.
    pub(crate) wall: f64,
    /// User CPU time of the child.
    pub(crate) user: f64,
    /// System CPU time of the child.
    pub(crate) system: f64,
}

impl Seconds {
    fn between(start: &Mark, end: &Mark) -> Self {
        let phase = Phase::between(start, end);
        Self {
            wall: phase.wall.as_secs_f64(),
            user: phase.cpu.user.as_secs_f64(),
            system: phase.cpu.system.as_secs_f64(),
        }
    }

    /// User plus system CPU time.
    pub(crate) fn cpu(&self) -> f64 {
        self.user + self.system
    }
}

/// What one child measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Measured {
    /// Start to initial sync (`None`: never synced).
    pub(crate) sync: Option<Seconds>,
    /// Initial sync to every pod reconciled (`None`: not every pod was).
    pub(crate) reconcile: Option<Seconds>,
    /// Start to every pod reconciled.
    pub(crate) total: Option<Seconds>,
    /// Pods reconciled at least once.
    pub(crate) reconciled: usize,
    /// Reconciles, repeats included.
    pub(crate) reconciles: u64,
    /// Anything unusual.
    pub(crate) notes: Vec<String>,
}

impl Measured {
    fn new(tally: &Tally, start: Mark, synced: Option<Mark>, done: Option<Mark>) -> Self {
        let mut measured = Self {
            sync: synced.map(|synced| Seconds::between(&start, &synced)),
            reconcile: synced
                .zip(done)
                .map(|(synced, done)| Seconds::between(&synced, &done)),
            total: done.map(|done| Seconds::between(&start, &done)),
            reconciled: tally.distinct(),
            reconciles: tally.reconciles(),
            notes: Vec::new(),
        };
        if tally.unknown() > 0 {
            measured.note(format!("{} reconciles of unknown pods", tally.unknown()));
        }
        measured
    }

    fn note(&mut self, note: String) {
        self.notes.push(note);
    }
}

/// One consumer's run, as the parent reads it.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// The consumer.
    pub(crate) consumer: Consumer,
    /// Pods served.
    pub(crate) objects: usize,
    /// Reconciles allowed at once.
    pub(crate) concurrency: u16,
    /// What the child measured, or why it failed.
    pub(crate) measured: Result<Measured, String>,
}

impl Outcome {
    /// Why the run is wrong, if it is: every pod must be reconciled, with nothing unusual.
    pub(crate) fn check(&self) -> Result<(), String> {
        let problem = match &self.measured {
            Err(err) => err.clone(),
            Ok(m) if m.sync.is_none() => "never synced".into(),
            Ok(m) if m.reconcile.is_none() || m.reconciled != self.objects => {
                format!("reconciled {} of {} pods", m.reconciled, self.objects)
            }
            Ok(m) if !m.notes.is_empty() => m.notes.join("; "),
            Ok(_) => return Ok(()),
        };
        Err(format!("reconciles of {}: {problem}", self.consumer.title()))
    }
}

/// Child mode: runs `consumer` against the server at `url` and prints what it measured.
pub(crate) fn child(consumer: Consumer, url: &str, objects: usize, concurrency: u16) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let client = {
        let _runtime = runtime.enter();
        server::client(url)
    };
    let measured = runtime.block_on(async {
        match consumer {
            Consumer::Ours => ours::run(client, objects, usize::from(concurrency), true).await,
            Consumer::OursFifo => ours::run(client, objects, usize::from(concurrency), false).await,
            Consumer::Kube => kube_rs::run(client, objects, concurrency).await,
        }
    });
    println!(
        "RECONCILE {}",
        serde_json::to_string(&measured).expect("the measurement serializes")
    );
    // Exit without tearing down the runtime and its open connections.
    std::process::exit(0);
}

/// Runs one child per consumer, kube-rs first, against the server at `url`.
pub(crate) fn measure_all(url: &str, objects: usize, concurrency: u16) -> Vec<Outcome> {
    [Consumer::Kube, Consumer::Ours, Consumer::OursFifo]
        .into_iter()
        .map(|consumer| Outcome {
            consumer,
            objects,
            concurrency,
            measured: run_child(consumer, url, objects, concurrency),
        })
        .collect()
}

/// One child process and the line it printed.
fn run_child(consumer: Consumer, url: &str, objects: usize, concurrency: u16) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| format!("the path of the bench binary: {e}"))?;
    let output = Command::new(exe)
        .args(["--reconcile", consumer.arg(), "--url", url])
        .args(["--reconcile-objects", &objects.to_string()])
        .args(["--reconcile-concurrency", &concurrency.to_string()])
        .output()
        .map_err(|e| format!("{}: {e}", consumer.arg()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("RECONCILE "))
        .and_then(|json| serde_json::from_str(json).ok())
        .ok_or_else(|| {
            format!(
                "{} child failed ({}): {}",
                consumer.arg(),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )
        })
}
