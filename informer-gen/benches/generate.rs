//! What `Config::generate` costs per resource at 50, 500 and 2 000 resources, in one file
//! (the build-script layout) and as a module tree, and the ratio of the per-resource costs of
//! 2 000 and 50 resources: about 1.0 when generation is linear in resources.
//!
//! Costs are the CPU time of the generating thread (`/proc/thread-self/schedstat`, so other
//! processes on the machine do not count), or wall-clock time where that is not available.
//!
//! `cargo bench -p informer-gen` repeats each size for at least a second; `cargo bench -p
//! informer-gen -- --quick` runs each once, for CI.

use std::{fmt::Write as _, time::Instant};

use informer_gen::{Config, Layout};

/// The sizes measured, in resources.
const SIZES: [usize; 3] = [50, 500, 2_000];

/// `resources` custom resources: groups of 20 resources, 4 versions of 5 kinds each, half of
/// them namespaced.
fn source(resources: usize) -> String {
    let mut out = String::from("//! Synthetic resources.\n");
    for i in 0..resources {
        let group = i / 20;
        let version = (i / 5) % 4;
        let namespaced = if i % 2 == 0 { ", namespaced" } else { "" };
        let _ = writeln!(
            out,
            "#[derive(CustomResource)]\n#[kube(group = \"group{group}.example.com\", version = \"v{version}\", kind = \"Kind{i}\"{namespaced})]\npub struct Kind{i}Spec {{}}"
        );
    }
    out
}

/// A clock: the thread's CPU time in nanoseconds where Linux reports it, else wall time.
struct Clock {
    start: Instant,
    cpu: bool,
}

impl Clock {
    fn new() -> Self {
        Self {
            start: Instant::now(),
            cpu: thread_cpu_ns().is_some(),
        }
    }

    fn now_ns(&self) -> u64 {
        match thread_cpu_ns() {
            Some(ns) if self.cpu => ns,
            _ => u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX),
        }
    }

    fn what(&self) -> &'static str {
        if self.cpu { "CPU time" } else { "wall time" }
    }
}

/// The CPU time of the current thread, in nanoseconds (Linux).
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// The mean cost of one `config.generate()` in milliseconds, over `min_runs` runs or more
/// until `min_ms` have passed.
fn measure(clock: &Clock, config: &Config, min_runs: usize, min_ms: f64) -> (f64, usize) {
    let start = clock.now_ns();
    let mut runs = 0;
    loop {
        let files = config.generate().expect("generated");
        assert!(!files.is_empty());
        runs += 1;
        let elapsed_ms = (clock.now_ns() - start) as f64 / 1e6;
        if runs >= min_runs && elapsed_ms >= min_ms {
            return (elapsed_ms / runs as f64, runs);
        }
    }
}

fn config(resources: usize) -> Config {
    Config::new()
        .input_source("synthetic.rs", source(resources))
        .input_crate_name("synthetic")
        .out_dir("unused")
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (min_runs, min_ms) = if quick { (1, 0.0) } else { (3, 1_000.0) };
    let clock = Clock::new();
    // One warm-up run, so that the first size does not pay for the allocator's growth.
    measure(&clock, &config(50), 1, 0.0);
    for (layout, name) in [(Layout::SingleFile, "single file"), (Layout::Tree, "tree")] {
        let mut per_resource = Vec::new();
        for resources in SIZES {
            let config = config(resources).layout(layout.clone());
            let (ms, runs) = measure(&clock, &config, min_runs, min_ms);
            let each = ms * 1_000.0 / resources as f64;
            per_resource.push(each);
            println!(
                "generate {resources:>5} resources, {name:<11}: {ms:>8.1} ms, {each:>6.0} µs per resource ({}, mean of {runs})",
                clock.what()
            );
        }
        let ratio = per_resource[SIZES.len() - 1] / per_resource[0].max(f64::EPSILON);
        println!(
            "{name}: per-resource cost of {} / {} resources: {ratio:.2}x (1.0 is linear)",
            SIZES[SIZES.len() - 1],
            SIZES[0]
        );
    }
}
