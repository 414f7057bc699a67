//! What one consumer did: its phases (wall-clock and CPU time) and what its cache held.

use std::time::Duration;

use crate::cpu::{CpuTimes, Mark};

/// The wall-clock and CPU time of one phase.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Phase {
    /// Elapsed time.
    pub(crate) wall: Duration,
    /// CPU time of the consumer (the server's thread excluded).
    pub(crate) cpu: CpuTimes,
}

impl Phase {
    /// The phase from `start` to `end`.
    pub(crate) fn between(start: &Mark, end: &Mark) -> Self {
        Self {
            wall: end.at.saturating_duration_since(start.at),
            cpu: end.cpu.since(&start.cpu),
        }
    }
}

/// What one consumer did with the list and the watch events.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// The consumer.
    pub(crate) name: String,
    /// Start to synced (`None`: never synced).
    pub(crate) sync: Option<Phase>,
    /// Synced to every event applied (`None`: not every event was applied).
    pub(crate) watch: Option<Phase>,
    /// Objects in the cache when it synced.
    pub(crate) synced_objects: usize,
    /// Objects in the cache at the end.
    pub(crate) final_objects: usize,
    /// The resource version of the last event's object in the cache at the end.
    pub(crate) last_resource_version: String,
    /// Anything unusual.
    pub(crate) note: Option<String>,
}

impl Outcome {
    /// Why the final state is wrong, if it is: every consumer must end with every pod and the
    /// last event applied.
    pub(crate) fn check(&self, pods: usize, last_resource_version: u64) -> Result<(), String> {
        let mut problems = Vec::new();
        if self.sync.is_none() {
            problems.push("never synced".to_owned());
        }
        if self.synced_objects != pods {
            problems.push(format!(
                "{} objects at sync, expected {pods}",
                self.synced_objects
            ));
        }
        if self.final_objects != pods {
            problems.push(format!(
                "{} objects at the end, expected {pods}",
                self.final_objects
            ));
        }
        if self.last_resource_version != last_resource_version.to_string() {
            problems.push(format!(
                "last object at resourceVersion {:?}, expected {last_resource_version}",
                self.last_resource_version
            ));
        }
        if self.watch.is_none() {
            problems.push("the watch phase did not complete".into());
        }
        if let Some(note) = &self.note {
            problems.push(note.clone());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("{}: {}", self.name, problems.join("; ")))
        }
    }

    /// CPU time (user + system) per watch event, in microseconds.
    pub(crate) fn cpu_per_event(&self, events: usize) -> Option<f64> {
        self.watch
            .map(|watch| watch.cpu.total().as_secs_f64() * 1e6 / events.max(1) as f64)
    }

    /// Watch events applied per second of the watch phase.
    pub(crate) fn events_per_second(&self, events: usize) -> Option<f64> {
        self.watch
            .map(|watch| events as f64 / watch.wall.as_secs_f64().max(f64::MIN_POSITIVE))
    }
}
