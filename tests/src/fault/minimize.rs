//! Shrinking a failing schedule by delta debugging.
//!
//! The setup and the steps are shrunk as one sequence: chunks of it are removed, from halves
//! down to single steps, keeping every removal after which the schedule still breaks the same
//! invariant. Each try is a complete run from a fresh server. Last, the settings are reset to
//! their defaults where that keeps the failure. The search stops at a budget of runs or time,
//! keeping the smallest failing schedule found so far.

use std::{future::Future, time::Duration};

use tokio::time::Instant;

use super::{
    invariants::Violation,
    schedule::{Schedule, Settings, Step},
};

/// How much the minimizer may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// At most this many runs.
    pub runs: usize,
    /// At most this long.
    pub time: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            runs: 80,
            time: Duration::from_secs(300),
        }
    }
}

/// The smallest failing schedule found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Minimized {
    /// The schedule.
    pub schedule: Schedule,
    /// What its last failing run reported.
    pub violation: Violation,
    /// How many runs the search took.
    pub runs: usize,
}

/// A step and whether it belongs to the setup.
type Item = (bool, Step);

fn items(schedule: &Schedule) -> Vec<Item> {
    schedule
        .setup
        .iter()
        .map(|s| (true, *s))
        .chain(schedule.steps.iter().map(|s| (false, *s)))
        .collect()
}

fn rebuild(seed: u64, settings: Settings, items: &[Item]) -> Schedule {
    Schedule {
        seed,
        settings,
        setup: items
            .iter()
            .filter(|(setup, _)| *setup)
            .map(|(_, s)| *s)
            .collect(),
        steps: items
            .iter()
            .filter(|(setup, _)| !*setup)
            .map(|(_, s)| *s)
            .collect(),
    }
}

/// Shrinks `schedule`, which failed with `violation`; `run` runs a candidate and returns its
/// violation, if any. A candidate counts as failing when it breaks the same invariant.
pub async fn minimize<F, Fut>(
    schedule: &Schedule,
    violation: &Violation,
    budget: Budget,
    mut run: F,
) -> Minimized
where
    F: FnMut(Schedule) -> Fut,
    Fut: Future<Output = Option<Violation>>,
{
    let started = Instant::now();
    let mut best = Minimized {
        schedule: schedule.clone(),
        violation: violation.clone(),
        runs: 0,
    };
    let exhausted = |best: &Minimized| best.runs >= budget.runs || started.elapsed() >= budget.time;
    let mut current = items(schedule);
    let mut granularity = 2usize;
    while !current.is_empty() && !exhausted(&best) {
        let chunk = current.len().div_ceil(granularity);
        let mut reduced = false;
        let mut start = 0;
        while start < current.len() && !exhausted(&best) {
            let end = (start + chunk).min(current.len());
            let candidate: Vec<Item> = current[..start].iter().chain(&current[end..]).copied().collect();
            let candidate_schedule = rebuild(schedule.seed, best.schedule.settings, &candidate);
            best.runs += 1;
            match run(candidate_schedule.clone()).await {
                Some(found) if found.invariant == violation.invariant => {
                    best.schedule = candidate_schedule;
                    best.violation = found;
                    current = candidate;
                    reduced = true;
                    break;
                }
                _ => start = end,
            }
        }
        if reduced {
            granularity = granularity.saturating_sub(1).max(2);
        } else if chunk == 1 {
            break;
        } else {
            granularity = (granularity * 2).min(current.len());
        }
    }
    let defaults = Settings::default();
    let simplifications: [fn(Settings, Settings) -> Settings; 4] = [
        |settings, defaults| Settings {
            streaming_list: defaults.streaming_list,
            ..settings
        },
        |settings, defaults| Settings {
            page_size: defaults.page_size,
            ..settings
        },
        |settings, defaults| Settings {
            history_size: defaults.history_size,
            ..settings
        },
        |settings, defaults| Settings {
            retry_internal_errors: defaults.retry_internal_errors,
            ..settings
        },
    ];
    for simplify in simplifications {
        if exhausted(&best) {
            break;
        }
        let settings = simplify(best.schedule.settings, defaults);
        if settings == best.schedule.settings {
            continue;
        }
        let candidate = Schedule {
            settings,
            ..best.schedule.clone()
        };
        best.runs += 1;
        if let Some(found) = run(candidate.clone()).await
            && found.invariant == violation.invariant
        {
            best.schedule = candidate;
            best.violation = found;
        }
    }
    best
}
