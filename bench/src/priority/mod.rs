//! The latency of a live change made while a controller works through its initial list: our
//! `Controller` on the FIFO work queue (before) and on the priority queue (after), each in a
//! process of its own.
//!
//! The parent renders `--priority-objects` pods (50 000; 1 000 with `--quick`) and
//! [`LIVE_CHANGES`] MODIFIED events of the first pods of the list, and for each queue starts a
//! fresh server and re-executes the bench binary as `--priority-latency fifo|priority --url
//! <server>`. The child runs a controller of pods with `--reconcile-concurrency` workers and a
//! reconcile that waits `--priority-work-ms` (a controller's API calls) and counts the pod.
//! Once a tenth of the list was reconciled (the changed pods among them), it asks the server
//! to stream the events (`POST /release`) and notes the time; the latency of a live change is
//! from there to the start of the reconcile that sees the pod's new resource version (watch
//! delivery, queueing and waiting included). It waits until every pod was reconciled and
//! every change seen, and prints one `PRIORITY {json}` line.

mod child;
mod report;

use std::{process::Command, sync::Arc, time::Duration};

use serde::{Deserialize, Serialize};

pub(crate) use child::run as child;
pub(crate) use report::markdown;

use crate::{render::Rendered, server::Server};

/// The live changes made during a run: MODIFIED events of the first pods of the list.
pub(crate) const LIVE_CHANGES: usize = 10;

/// The longest a run may take before it is reported as failed.
const RUN_TIMEOUT: Duration = Duration::from_secs(1800);

/// Which work queue the child's controller runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Queue {
    /// `Controller::priorities(false)`: client-go's FIFO order.
    Fifo,
    /// The default priority queue.
    Priority,
}

impl Queue {
    fn arg(self) -> &'static str {
        match self {
            Self::Fifo => "fifo",
            Self::Priority => "priority",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Self::Fifo => "FIFO queue (before; `priorities(false)`)",
            Self::Priority => "priority queue (after; the default)",
        }
    }
}

/// What the parent asks of a run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Pods in the initial list.
    pub(crate) objects: usize,
    /// Reconciles at once.
    pub(crate) concurrency: u16,
    /// Simulated I/O of each reconcile.
    pub(crate) work: Duration,
}

impl Settings {
    /// Reconciles before the live changes are made: a tenth of the list.
    pub(crate) fn release_after(&self) -> usize {
        (self.objects / 10).max(LIVE_CHANGES)
    }
}

/// What one child measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Measured {
    /// Each live change's latency, in seconds, in the order they were seen.
    pub(crate) latencies: Vec<f64>,
    /// Seconds from the first reconcile to every pod reconciled.
    pub(crate) list_seconds: Option<f64>,
    /// Pods reconciled at least once.
    pub(crate) reconciled: usize,
    /// Reconciles, repeats included.
    pub(crate) reconciles: u64,
    /// Anything unusual.
    pub(crate) notes: Vec<String>,
}

/// One queue's run, as the parent reads it.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// The queue.
    pub(crate) queue: Queue,
    /// What the run was asked.
    pub(crate) settings: Settings,
    /// What the child measured, or why it failed.
    pub(crate) measured: Result<Measured, String>,
}

impl Outcome {
    /// Why the run is wrong, if it is: every pod reconciled and every live change seen.
    pub(crate) fn check(&self) -> Result<(), String> {
        let problem = match &self.measured {
            Err(err) => err.clone(),
            Ok(m) if m.reconciled != self.settings.objects => {
                format!("reconciled {} of {} pods", m.reconciled, self.settings.objects)
            }
            Ok(m) if m.latencies.len() != LIVE_CHANGES => {
                format!("saw {} of {LIVE_CHANGES} live changes", m.latencies.len())
            }
            Ok(m) if !m.notes.is_empty() => m.notes.join("; "),
            Ok(_) => return Ok(()),
        };
        Err(format!(
            "live-change latency on the {}: {problem}",
            self.queue.arg()
        ))
    }
}

/// Runs one child per queue, FIFO first, each against a fresh server of `rendered`.
pub(crate) fn measure_all(rendered: &Arc<Rendered>, settings: Settings) -> Vec<Outcome> {
    [Queue::Fifo, Queue::Priority]
        .into_iter()
        .map(|queue| Outcome {
            queue,
            settings,
            measured: Server::start(Arc::clone(rendered))
                .map_err(|e| format!("the bench server: {e}"))
                .and_then(|server| run_child(queue, server.url(), settings)),
        })
        .collect()
}

/// One child process and the line it printed.
fn run_child(queue: Queue, url: &str, settings: Settings) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| format!("the path of the bench binary: {e}"))?;
    let output = Command::new(exe)
        .args(["--priority-latency", queue.arg(), "--url", url])
        .args(["--priority-objects", &settings.objects.to_string()])
        .args(["--reconcile-concurrency", &settings.concurrency.to_string()])
        .args(["--priority-work-ms", &settings.work.as_millis().to_string()])
        .output()
        .map_err(|e| format!("{}: {e}", queue.arg()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("PRIORITY "))
        .and_then(|json| serde_json::from_str(json).ok())
        .ok_or_else(|| {
            format!(
                "{} child failed ({}): {}",
                queue.arg(),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )
        })
}
