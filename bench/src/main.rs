//! The benchmark rig: our informers against kube-rs and a single-thread serde_json floor, in
//! one run, on the same pre-rendered bytes served over loopback HTTP.
//!
//! ```sh
//! cargo run --release -p informer-bench            # 50 000 pods, 100 000 events, 100 000 objects for listers
//! cargo run -p informer-bench -- --quick           # 2 000 pods, 2 000 events (CI: checks every final state)
//! cargo bench -p informer-bench                    # micro-benchmarks of store, DeltaFIFO (criterion)
//! ```
//!
//! It prints markdown tables: sync time with user and system CPU, watch-phase time and
//! events/s for the floor, kube-rs (`watcher` + `reflector`) and ours (factory informer with 1
//! and 3 counting handlers, and with streaming lists); memory per cached pod measured in
//! child processes (`--rss ours|kube|floor [--strip-managed-fields]`); and lister queries
//! through our indexes against kube-rs's full scan. It exits with an error if any consumer
//! ends without every pod or without the last event applied; it asserts nothing about time.
//!
//! To profile one consumer's watch phase: `--only ours3 --passes 1` with `BENCH_PERF_CTL` set
//! to a perf control FIFO; `enable` is written to it when the events are released:
//!
//! ```sh
//! mkfifo /tmp/ctl && BENCH_PERF_CTL=/tmp/ctl perf record -D -1 --control=fifo:/tmp/ctl \
//!     target/release/informer-bench --only ours3 --passes 1
//! ```

mod cpu;
mod decode;
mod floor;
mod generator;
mod kube_rs;
mod listers;
mod ours;
mod render;
mod report;
mod rss;
mod server;

use std::{process::ExitCode, sync::Arc, time::Instant};

use clap::Parser;

use crate::{
    ours::{InitialList, Placement},
    render::Rendered,
    report::Report,
    server::Server,
};

/// The consumers whose sync and watch phases are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Timed {
    /// serde_json + HashMap on one thread.
    Floor,
    /// kube-rs `watcher` + `reflector`.
    Kube,
    /// Our factory informer with one handler.
    Ours1,
    /// Our factory informer with three handlers.
    Ours3,
    /// Our informer with streaming lists.
    Streaming,
    /// Watch-body decoding on one thread: kube-rs's framing against ours.
    Decode,
    /// kube-rs on a current-thread runtime, and our factory (3 handlers) on its own thread.
    CurrentThread,
}

/// Benchmarks informers against kube-rs and a serde_json floor.
#[derive(Debug, Parser)]
#[command(name = "informer-bench")]
struct Args {
    /// Small sizes for CI: 2 000 pods, 2 000 events, 10 000 objects for lister queries.
    #[arg(long)]
    quick: bool,
    /// Pods in the list (spread over 100 namespaces).
    #[arg(long)]
    pods: Option<usize>,
    /// MODIFIED watch events.
    #[arg(long)]
    events: Option<usize>,
    /// Objects in the caches of the lister queries.
    #[arg(long)]
    lister_objects: Option<usize>,
    /// Measure every consumer this many times in turn and report the last pass (default 2, 1
    /// with `--quick`): the first pass also pays the page faults of a fresh heap, in an order
    /// that depends on which consumer runs first; later passes run on a warm heap.
    #[arg(long)]
    passes: Option<usize>,
    /// Skip the memory measurements.
    #[arg(long)]
    skip_rss: bool,
    /// Measure only these consumers (repeatable; default: all, with memory and listers), e.g.
    /// to profile one.
    #[arg(long, value_enum)]
    only: Vec<Timed>,
    /// Child mode: sync every pod with this consumer and print its memory per object.
    #[arg(long, value_enum)]
    rss: Option<rss::Consumer>,
    /// Child mode: strip `metadata.managedFields` before caching.
    #[arg(long, requires = "rss")]
    strip_managed_fields: bool,
    /// Child mode: the server to sync from (default: render the pods and serve them here).
    #[arg(long, requires = "rss")]
    url: Option<String>,
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let pods = args.pods.unwrap_or(if args.quick { 2_000 } else { 50_000 });
    let events = args.events.unwrap_or(if args.quick { 2_000 } else { 100_000 });
    let passes = args.passes.unwrap_or(if args.quick { 1 } else { 2 }).max(1);
    let lister_objects = args
        .lister_objects
        .unwrap_or(if args.quick { 10_000 } else { 100_000 });

    if let Some(consumer) = args.rss {
        let local = match args.url {
            Some(_) => None,
            None => Some(Server::start(Arc::new(Rendered::new(pods, 0))).expect("the bench server starts")),
        };
        let url = args
            .url
            .as_deref()
            .or(local.as_ref().map(Server::url))
            .unwrap_or_default()
            .to_owned();
        rss::child(consumer, args.strip_managed_fields, &url);
        return ExitCode::SUCCESS;
    }

    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!("informer-bench: {cores} cores, {}, {profile} build", cpu_model());
    let started = Instant::now();
    let rendered = Arc::new(Rendered::new(pods, events));
    eprintln!(
        "rendered {pods} pods and {events} events in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let run = |name: &str, consumer: &dyn Fn(&Server) -> report::Outcome| {
        let server = Server::start(Arc::clone(&rendered)).expect("the bench server starts");
        let outcome = consumer(&server);
        server.stop();
        eprintln!("{name} done");
        outcome
    };
    let timed = |consumer: Timed| args.only.is_empty() || args.only.contains(&consumer);
    let mut all_outcomes = Vec::new();
    let mut outcomes = Vec::new();
    for pass in 1..=passes {
        eprintln!("pass {pass} of {passes}");
        outcomes.clear();
        if timed(Timed::Floor) {
            outcomes.push(floor::run(&rendered));
            eprintln!("floor done");
        }
        if timed(Timed::Kube) {
            outcomes.push(run("kube-rs", &|server| {
                runtime.block_on(kube_rs::run(server, &rendered))
            }));
        }
        for (consumer, handlers) in [(Timed::Ours1, 1), (Timed::Ours3, 3)] {
            if timed(consumer) {
                outcomes.push(run("ours", &|server| {
                    runtime.block_on(ours::run(
                        server,
                        &rendered,
                        handlers,
                        InitialList::Paged,
                        Placement::CallerRuntime,
                    ))
                }));
            }
        }
        if timed(Timed::Streaming) {
            outcomes.push(run("ours (streaming list)", &|server| {
                runtime.block_on(ours::run(
                    server,
                    &rendered,
                    1,
                    InitialList::Streaming,
                    Placement::CallerRuntime,
                ))
            }));
        }
        if timed(Timed::CurrentThread) {
            // The client is made inside, so its connection tasks live on this runtime too.
            let mut kube = run("kube-rs (current-thread runtime)", &|server| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a tokio runtime")
                    .block_on(kube_rs::run(server, &rendered))
            });
            kube.name = format!("{}, current-thread runtime", kube.name);
            outcomes.push(kube);
            outcomes.push(run("ours (own thread)", &|server| {
                runtime.block_on(ours::run(
                    server,
                    &rendered,
                    3,
                    InitialList::Paged,
                    Placement::OwnThread,
                ))
            }));
        }
        all_outcomes.extend(outcomes.iter().cloned());
    }
    drop(runtime);
    let decode_outcomes = if timed(Timed::Decode) {
        let outcomes = decode::run(&rendered, if args.quick { 1 } else { 3 });
        eprintln!("decoding done");
        outcomes
    } else {
        Vec::new()
    };

    let rss_outcomes = if args.skip_rss || !args.only.is_empty() {
        Vec::new()
    } else {
        let server = Server::start(Arc::clone(&rendered)).expect("the bench server starts");
        let outcomes = rss::measure_all(server.url());
        server.stop();
        eprintln!("memory done");
        outcomes
    };
    let bytes = (rendered.list_bytes, rendered.event_bytes);
    let last_resource_version = rendered.last_resource_version;
    drop(rendered);
    let lister_outcomes = if args.only.is_empty() {
        let outcomes = listers::run(lister_objects);
        eprintln!("listers done");
        outcomes
    } else {
        Vec::new()
    };

    println!(
        "{}",
        Report {
            pods,
            events,
            bytes,
            passes,
            outcomes: &outcomes,
            not_measured: &[],
            rss: &rss_outcomes,
            listers: &lister_outcomes,
        }
        .markdown()
    );
    println!("{}", decode::markdown(&decode_outcomes));

    let mut problems: Vec<String> = all_outcomes
        .iter()
        .filter_map(|o| o.check(pods, last_resource_version).err())
        .collect();
    for result in &rss_outcomes {
        match result {
            Ok(r) if r.objects != pods => {
                problems.push(format!(
                    "memory of {}: {} objects, expected {pods}",
                    r.consumer, r.objects
                ));
            }
            Ok(_) => {}
            Err(err) => problems.push(err.clone()),
        }
    }
    if problems.is_empty() {
        println!(
            "every consumer ended with {pods} pods and resourceVersion {last_resource_version} applied ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        ExitCode::SUCCESS
    } else {
        for problem in &problems {
            eprintln!("error: {problem}");
        }
        ExitCode::FAILURE
    }
}
