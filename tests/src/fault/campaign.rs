//! Campaigns: running many seeds, minimizing failures and summarizing what was exercised.
//!
//! Environment variables choose the seeds:
//! - `FAULT_SUITE_SEED=N` runs seed `N` alone (to reproduce a failure);
//! - `FAULT_SUITE_SEEDS=COUNT` runs `COUNT` seeds from `FAULT_SUITE_FIRST_SEED` (default 1);
//! - `FAULT_SUITE_REPEAT=N` runs every seed `N` times (to catch a failure that depends on
//!   timing);
//! - `FAULT_SUITE_MINIMIZE=0` reports failures without shrinking them;
//! - `FAULT_SUITE_MINIMIZE_RUNS=N` caps the runs spent shrinking one failure.
//!
//! Without them, [`FAST_SEEDS`] seeds run.

use std::{collections::BTreeMap, fmt, time::Duration};

use tokio::time::Instant;

use super::{
    harness::{RunReport, run_schedule},
    invariants::Violation,
    minimize::{Budget, Minimized, minimize},
    schedule::generate,
};

/// How many seeds `cargo test` runs.
pub const FAST_SEEDS: u64 = 16;

/// The first seed when none is given.
pub const DEFAULT_FIRST_SEED: u64 = 1;

/// How often a long campaign prints its progress.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(60);

/// A failed reading of the campaign's environment variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// A variable is not a whole number.
    NotANumber {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotANumber { variable, value } => {
                write!(f, "failed to read {variable}: {value:?} is not a whole number")
            }
        }
    }
}

impl std::error::Error for PlanError {}

/// Which seeds to run and how to treat failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The first seed.
    pub first_seed: u64,
    /// How many consecutive seeds.
    pub seeds: u64,
    /// How many times each seed runs.
    pub repeat: u64,
    /// Whether failures are shrunk.
    pub minimize: bool,
    /// What shrinking one failure may spend.
    pub budget: Budget,
}

impl Plan {
    /// The seeds `cargo test` runs.
    pub fn fast() -> Self {
        Self {
            first_seed: DEFAULT_FIRST_SEED,
            seeds: FAST_SEEDS,
            repeat: 1,
            minimize: true,
            budget: Budget::default(),
        }
    }

    /// The plan the environment asks for (see the module docs).
    pub fn from_env() -> Result<Self, PlanError> {
        let number = |variable: &'static str| -> Result<Option<u64>, PlanError> {
            match std::env::var(variable) {
                Ok(value) => value
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| PlanError::NotANumber { variable, value }),
                Err(_) => Ok(None),
            }
        };
        let mut plan = Self::fast();
        if let Some(seed) = number("FAULT_SUITE_SEED")? {
            plan.first_seed = seed;
            plan.seeds = 1;
        } else {
            if let Some(seeds) = number("FAULT_SUITE_SEEDS")? {
                plan.seeds = seeds;
            }
            if let Some(first) = number("FAULT_SUITE_FIRST_SEED")? {
                plan.first_seed = first;
            }
        }
        if let Some(repeat) = number("FAULT_SUITE_REPEAT")? {
            plan.repeat = repeat.max(1);
        }
        if let Some(minimize) = number("FAULT_SUITE_MINIMIZE")? {
            plan.minimize = minimize != 0;
        }
        if let Some(runs) = number("FAULT_SUITE_MINIMIZE_RUNS")? {
            plan.budget.runs = usize::try_from(runs).unwrap_or(usize::MAX);
        }
        Ok(plan)
    }
}

/// One failing seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureReport {
    /// The seed.
    pub seed: u64,
    /// The number of steps of its schedule.
    pub steps: usize,
    /// What broke.
    pub violation: Violation,
    /// The smallest failing schedule found, if shrinking was asked for.
    pub minimized: Option<Minimized>,
}

impl fmt::Display for FailureReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "seed {}: {}", self.seed, self.violation)?;
        writeln!(
            f,
            "  reproduce: FAULT_SUITE_SEED={} cargo test -p informer-tests --test fault_suite seeded -- --nocapture",
            self.seed
        )?;
        writeln!(f, "  generated schedule: {} steps", self.steps)?;
        if let Some(minimized) = &self.minimized {
            writeln!(
                f,
                "  smallest failing schedule found ({} steps, {} runs to find it): {}",
                minimized.schedule.len(),
                minimized.runs,
                minimized.violation
            )?;
            writeln!(f, "{}", minimized.schedule.to_rust())?;
        }
        Ok(())
    }
}

/// What a campaign ran and found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Schedules run.
    pub schedules: u64,
    /// Wall time, shrinking included.
    pub elapsed: Duration,
    /// The longest passing run.
    pub slowest: Duration,
    /// Totals of every passing run (steps by category, lists, errors, notifications, ...).
    pub totals: RunReport,
    /// Every failing seed.
    pub failures: Vec<FailureReport>,
}

impl Summary {
    fn add(&mut self, run: &RunReport) {
        let totals = &mut self.totals;
        for (category, count) in &run.categories {
            *totals.categories.entry(category.clone()).or_insert(0) += count;
        }
        totals.lists += run.lists;
        totals.relists += run.relists;
        totals.list_errors += run.list_errors;
        totals.watches += run.watches;
        totals.watch_errors += run.watch_errors;
        totals.reported_errors += run.reported_errors;
        totals.notifications += run.notifications;
        totals.tombstones += run.tombstones;
        totals.handler_panics += run.handler_panics;
        totals.user_code_panics += run.user_code_panics;
        totals.late_registrations += run.late_registrations;
        totals.quiesce += run.quiesce;
        totals.elapsed += run.elapsed;
        self.slowest = self.slowest.max(run.elapsed);
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let passed = self.schedules - self.failures.len() as u64;
        let per_schedule = self.elapsed.as_secs_f64() / self.schedules.max(1) as f64;
        writeln!(
            f,
            "fault suite: {} schedules in {:.1} s ({per_schedule:.2} s each, slowest passing run {:.2} s), {} failed",
            self.schedules,
            self.elapsed.as_secs_f64(),
            self.slowest.as_secs_f64(),
            self.failures.len()
        )?;
        let totals = &self.totals;
        writeln!(f, "steps run by kind (passing schedules):")?;
        let categories: BTreeMap<&String, &usize> = totals.categories.iter().collect();
        for (category, count) in categories {
            writeln!(f, "  {count:>7}  {category}")?;
        }
        writeln!(
            f,
            "observed in {passed} passing schedules: {} lists ({} relists), {} failed lists, {} watches, {} failed watches, \
             {} errors reported through the hooks, {} notifications, {} tombstones, {} handler panics caught, \
             {} transform and index function panics caught, {} late registrations, {:.2} s average convergence after the last step",
            totals.lists,
            totals.relists,
            totals.list_errors,
            totals.watches,
            totals.watch_errors,
            totals.reported_errors,
            totals.notifications,
            totals.tombstones,
            totals.handler_panics,
            totals.user_code_panics,
            totals.late_registrations,
            totals.quiesce.as_secs_f64() / passed.max(1) as f64
        )?;
        for failure in &self.failures {
            write!(f, "\n{failure}")?;
        }
        Ok(())
    }
}

/// Runs the plan's seeds one after another, shrinking each failure.
pub async fn run_campaign(plan: &Plan) -> Summary {
    let started = Instant::now();
    let mut summary = Summary::default();
    let mut last_progress = Instant::now();
    let seeds = plan.first_seed..plan.first_seed.saturating_add(plan.seeds);
    let runs =
        seeds.flat_map(|seed| std::iter::repeat_n(seed, usize::try_from(plan.repeat).unwrap_or(usize::MAX)));
    for seed in runs {
        let schedule = generate(seed);
        summary.schedules += 1;
        match run_schedule(&schedule).await {
            Ok(run) => summary.add(&run),
            Err(violation) => {
                eprintln!("fault suite: seed {seed} failed: {violation}");
                let minimized = if plan.minimize {
                    Some(
                        minimize(&schedule, &violation, plan.budget, |candidate| async move {
                            run_schedule(&candidate).await.err()
                        })
                        .await,
                    )
                } else {
                    None
                };
                let failure = FailureReport {
                    seed,
                    steps: schedule.len(),
                    violation,
                    minimized,
                };
                eprintln!("{failure}");
                summary.failures.push(failure);
            }
        }
        if last_progress.elapsed() >= PROGRESS_INTERVAL {
            last_progress = Instant::now();
            eprintln!(
                "fault suite: {}/{} schedules in {:.0} s, {} failed",
                summary.schedules,
                plan.seeds.saturating_mul(plan.repeat),
                started.elapsed().as_secs_f64(),
                summary.failures.len()
            );
        }
    }
    summary.elapsed = started.elapsed();
    summary
}
