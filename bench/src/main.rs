//! The benchmark rig: our informers against kube-rs and single-thread floors (serde_json on
//! the JSON, prost on the protobuf), in one run, on the same pre-rendered bytes served over
//! loopback HTTP. Every page and event is rendered in JSON and in protobuf; the server answers
//! in protobuf a client that asks for it first (our informer, by default, for built-in types),
//! in JSON otherwise (kube-rs).
//!
//! ```sh
//! cargo run --release -p informer-bench            # 50 000 pods, 100 000 events, 100 000 objects for listers
//! cargo run -p informer-bench -- --quick           # 2 000 pods, 2 000 events (CI: checks every final state)
//! cargo bench -p informer-bench                    # micro-benchmarks of store, DeltaFIFO (criterion)
//! ```
//!
//! It prints markdown tables: sync time with user and system CPU, watch-phase time, CPU per
//! event and events/s for the floors (`--only floor`, `--only floor-protobuf`), kube-rs
//! (`watcher` + `reflector`) and ours over protobuf, the default (factory informer with 1 and 3
//! counting handlers, with 3 on the caller's runtime and on a connection opened there
//! (`--only caller-runtime`), and with streaming lists), and ours over JSON, with 1
//! and 3 handlers (`--only ours-json`); the goals of protobuf against the JSON floor and
//! kube-rs; memory per cached pod measured in child processes
//! (`--rss ours|ours-json|kube|floor|floor-protobuf [--strip-managed-fields]`; `--only memory`
//! runs only those), with the
//! sync CPU per pod and the peak of a relist after a 410, and for our informer once more at
//! 200 000 pods (not with `--quick`); and lister
//! queries through our indexes against kube-rs's full scan; and reconciles per second of our
//! `controller::Controller` against kube-rs's `runtime::Controller` (`--only reconcile`).
//! It exits with an error if any consumer ends without every pod or without the last event
//! applied, or if a controller did not reconcile every pod; it asserts nothing about time.
//!
//! The scoped-cache phase (`--only scoped`; part of every run unless `--only` or `--skip-rss`
//! leaves it out) measures the memory of our informer of every pod against that of a scope
//! selecting a tenth of them by label, each in a child process of its own
//! (`--rss ours-scoped`).
//!
//! The reconcile phase serves 10 000 pods (1 000 with `--quick`; `--reconcile-objects`) and
//! runs each controller in a child process of its own (`--reconcile ours|ours-fifo|kube --url <server>`)
//! with a no-op reconcile that returns `await_change`, both with at most 2 reconciles at once
//! (`--reconcile-concurrency`): it times the initial sync, then the reconcile of every pod.
//!
//! ```sh
//! cargo run --release -p informer-bench -- --only reconcile
//! ```
//!
//! The priority phase (`--only priority`) measures the latency of a live change made while our
//! controller works through an initial list of 50 000 pods (1 000 with `--quick`;
//! `--priority-objects`), reconciles with 1 ms of simulated I/O each (`--priority-work-ms`),
//! on the FIFO work queue and on the priority queue, each in a child process of its own
//! (`--priority-latency fifo|priority --url <server>`).
//!
//! The sharding phase (`--only sharding`, only when chosen) divides a controller of 200 000
//! pods (2 000 with `--quick`; `--pods`) over 1, 2 and 4 shards, each a process of its own
//! (`--shard-name shard-i --shard-ring bench-N --url <server>`), and prints the peak RSS per
//! shard against one replica's and the total reconciles per second; then it runs the sharder
//! and shards with Leases against the embedded test server (`--handover-pods`, 20 000; each a
//! process: `--handover-role sharder|shard`) and times the initial assignment, a join and a
//! kill. `--sharding-part memory|handover` runs one part (see [`sharding`]).
//!
//! The decoding tables (`--only decode`; part of every run unless `--only` leaves them out) time
//! each parser on the watch lines and on the list pages, one thread, the fastest of
//! `--decode-rounds` rounds: serde_json, simdutf8 + serde_json, our exact-capacity decoding and
//! simd-json, with kube-rs's framing and ours on the watch lines (see [`decode`]); and the
//! protobuf watch frames with prost and with ours (see [`decode_protobuf`]).
//!
//! The custom resource phase (`--only custom`; part of every run unless `--only` leaves it out)
//! reads a 6.8 KiB CRD type over JSON and CBOR: the floors, kube-rs and ours, each in a child
//! process (`--custom-child`), and the CBOR crates' decoding (see [`custom`]).
//!
//! To profile one consumer's watch phase: `--only ours3 --passes 1` (or `--only floor`) with
//! `BENCH_PERF_CTL` set to a perf control FIFO; `enable` is written to it when the watch phase
//! begins:
//!
//! ```sh
//! mkfifo /tmp/ctl && BENCH_PERF_CTL=/tmp/ctl perf record -D -1 --control=fifo:/tmp/ctl \
//!     target/release/informer-bench --only ours3 --passes 1
//! ```

mod cpu;
mod custom;
mod decode;
mod decode_protobuf;
mod floor;
mod floor_protobuf;
mod generator;
mod kube_rs;
mod listers;
mod ours;
mod outcome;
mod priority;
mod reconcile;
mod render;
mod report;
mod rss;
mod scope;
mod scoped;
mod server;
mod sharding;

use std::{process::ExitCode, sync::Arc, time::Instant};

use clap::Parser;

use crate::{
    ours::{InitialList, Placement, Reading},
    render::Rendered,
    report::Report,
    server::Server,
};

/// With `--features mimalloc`, every consumer allocates with mimalloc (not in test builds, which
/// count allocations).
#[cfg(all(feature = "mimalloc", not(test)))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The allocator every consumer of this build uses.
const ALLOCATOR_NAME: &str = if cfg!(feature = "mimalloc") {
    "mimalloc"
} else {
    "the system allocator"
};

/// The consumers whose sync and watch phases are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Timed {
    /// serde_json + HashMap on one thread.
    Floor,
    /// prost (k8s-pb's messages) + HashMap on one thread, on the protobuf bytes.
    FloorProtobuf,
    /// kube-rs `watcher` + `reflector`.
    Kube,
    /// Our factory informer with one handler, over protobuf.
    Ours1,
    /// Our factory informer with three handlers, over protobuf.
    Ours3,
    /// Our factory informer with one and with three handlers, over JSON.
    OursJson,
    /// Our factory informer with three handlers over protobuf, `metadata.managedFields` skipped
    /// as objects are read (`factory::Builder::skip_fields`).
    OursSkipping,
    /// Our factory informer with three handlers on the caller's runtime
    /// (`Builder::runtime(InformerRuntime::Caller)`), and with a connection the client opened there before.
    CallerRuntime,
    /// Our informer with streaming lists.
    Streaming,
    /// Decoding on one thread: watch lines (kube-rs's framing against ours) and list pages,
    /// with serde_json, simdutf8 + serde_json and simd-json for reference; protobuf watch
    /// frames with prost and with ours.
    Decode,
    /// Memory per cached pod, each consumer in a child process (part of every run without
    /// `--only`).
    Memory,
    /// kube-rs on a current-thread runtime, and our factory (3 handlers) on its own thread.
    CurrentThread,
    /// Reconciles per second: our `Controller` against kube-rs's, in child processes.
    Reconcile,
    /// Lister queries (indexes, selectors, gets by name) on a large cache, ours against
    /// kube-rs's store.
    Listers,
    /// The latency of a live change made during the initial list's reconciles: our
    /// controller on the FIFO queue and on the priority queue, in child processes.
    Priority,
    /// Memory of a scoped cache (a tenth of the pods, selected by label on the server) against
    /// the cache of every pod, in child processes.
    Scoped,
    /// A controller sharded over 1, 2 and 4 shards (one process each): memory per shard and
    /// total reconciles per second. Only run when chosen.
    Sharding,
    /// Custom resources of a large operator's size over JSON and CBOR: the floors, kube-rs and
    /// ours, each in a child process, and the CBOR crates' decoding (see [`custom`]).
    Custom,
}

/// Pods of the memory run at scale (our informer, full pods), besides the default size.
const SCALE_PODS: usize = 200_000;

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
    /// Rounds of each decoder in the decoding tables, the fastest reported (default 3, 1 with
    /// `--quick`).
    #[arg(long)]
    decode_rounds: Option<usize>,
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
    /// Child modes: the server to sync from (`--rss` default: render the pods and serve them
    /// here).
    #[arg(long)]
    url: Option<String>,
    /// Pods the controllers reconcile (default 10 000, 1 000 with `--quick`).
    #[arg(long)]
    reconcile_objects: Option<usize>,
    /// Reconciles each controller runs at once (kube-rs's default, 0, means unbounded).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    reconcile_concurrency: u16,
    /// Child mode: reconcile every pod of `--url` with this controller and print the times.
    #[arg(long, value_enum, requires = "url")]
    reconcile: Option<reconcile::Consumer>,
    /// Pods in the initial list of the priority phase (default 50 000, 1 000 with `--quick`).
    #[arg(long)]
    priority_objects: Option<usize>,
    /// Simulated I/O of each reconcile of the priority phase, in milliseconds.
    #[arg(long, default_value_t = 1)]
    priority_work_ms: u64,
    /// Child mode: run the priority phase's controller on this queue against `--url`.
    #[arg(long, value_enum, requires = "url")]
    priority_latency: Option<priority::Queue>,
    /// Workers of each shard's controller in the sharding phase.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    sharding_concurrency: u16,
    /// What each reconcile of the sharding phase waits (its simulated I/O), in milliseconds.
    #[arg(long, default_value_t = 1)]
    sharding_work_ms: u64,
    /// Child mode: run this shard (of `--shard-ring`, or of the hand-over phase's ring with
    /// `--handover-role shard`) against `--url`.
    #[arg(long, requires = "url")]
    shard_name: Option<String>,
    /// The ring of `--shard-name`.
    #[arg(long, requires = "shard_name")]
    shard_ring: Option<String>,
    /// Which parts of the sharding phase run (repeatable; default both).
    #[arg(long, value_enum)]
    sharding_part: Vec<ShardingPart>,
    /// Pods in the test server of the hand-over part (default 20 000, 1 000 with `--quick`).
    #[arg(long)]
    handover_pods: Option<usize>,
    /// How long a shard's Lease lasts in the hand-over part, in milliseconds (renew deadline
    /// three quarters of it, retry period a quarter).
    #[arg(long, default_value_t = 2000)]
    handover_lease_ms: u64,
    /// Child mode: measure this consumer of the custom resource phase against `--url` (with
    /// `--pods` objects and `--events` events).
    #[arg(long, value_enum, requires = "url")]
    custom_child: Option<custom::Consumer>,
    /// Child mode: run the hand-over part's sharder or a shard (`--shard-name`) against the
    /// test server at `--url` until standard input closes.
    #[arg(long, value_enum, requires = "url")]
    handover_role: Option<sharding::handover::Role>,
}

/// The parts of the sharding phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ShardingPart {
    /// Memory per shard and reconciles/s over 1, 2 and 4 shards (the static bench server).
    Memory,
    /// The sharder and shards with Leases on the test server: assignment, join, kill.
    Handover,
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

impl Args {
    /// Pods in the list.
    fn pods(&self) -> usize {
        self.pods.unwrap_or(if self.quick { 2_000 } else { 50_000 })
    }

    /// MODIFIED watch events.
    fn events(&self) -> usize {
        self.events.unwrap_or(if self.quick { 2_000 } else { 100_000 })
    }

    /// Passes over the timed consumers.
    fn passes(&self) -> usize {
        self.passes.unwrap_or(if self.quick { 1 } else { 2 }).max(1)
    }

    /// Objects in the caches of the lister queries.
    fn lister_objects(&self) -> usize {
        self.lister_objects
            .unwrap_or(if self.quick { 10_000 } else { 100_000 })
    }

    /// Pods the controllers reconcile.
    fn reconcile_objects(&self) -> usize {
        self.reconcile_objects
            .unwrap_or(if self.quick { 1_000 } else { 10_000 })
    }

    /// What the priority phase runs.
    fn priority_settings(&self) -> priority::Settings {
        priority::Settings {
            objects: self
                .priority_objects
                .unwrap_or(if self.quick { 1_000 } else { 50_000 }),
            concurrency: self.reconcile_concurrency,
            work: std::time::Duration::from_millis(self.priority_work_ms),
        }
    }

    /// What the sharding phase runs: `--pods` pods (default 200 000, 2 000 with `--quick`).
    fn sharding_settings(&self) -> sharding::Settings {
        sharding::Settings {
            pods: self.pods.unwrap_or(if self.quick { 2_000 } else { SCALE_PODS }),
            concurrency: self.sharding_concurrency,
            work: std::time::Duration::from_millis(self.sharding_work_ms),
        }
    }

    /// What the hand-over part of the sharding phase runs.
    fn handover_settings(&self) -> sharding::handover::Settings {
        sharding::handover::Settings {
            pods: self
                .handover_pods
                .unwrap_or(if self.quick { 1_000 } else { 20_000 }),
            work: std::time::Duration::from_millis(self.sharding_work_ms),
            leases: sharding::handover::Leases {
                duration: std::time::Duration::from_millis(self.handover_lease_ms),
            },
        }
    }

    /// Whether `part` of the sharding phase runs.
    fn runs_sharding_part(&self, part: ShardingPart) -> bool {
        self.only.contains(&Timed::Sharding)
            && (self.sharding_part.is_empty() || self.sharding_part.contains(&part))
    }

    /// Whether `consumer` is measured.
    fn times(&self, consumer: Timed) -> bool {
        self.only.is_empty() || self.only.contains(&consumer)
    }

    /// Whether the sync, watch, memory or decoding measurements run (all but the reconcile
    /// and lister phases).
    fn times_informers(&self) -> bool {
        self.only.is_empty()
            || self.only.iter().any(|t| {
                !matches!(
                    t,
                    Timed::Reconcile
                        | Timed::Listers
                        | Timed::Scoped
                        | Timed::Priority
                        | Timed::Sharding
                        | Timed::Custom
                )
            })
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let pods = args.pods();
    if let Some(consumer) = args.rss {
        rss_child(&args, consumer, pods);
        return ExitCode::SUCCESS;
    }
    if let Some(consumer) = args.reconcile {
        let url = args.url.as_deref().unwrap_or_default();
        reconcile::child(
            consumer,
            url,
            args.reconcile_objects(),
            args.reconcile_concurrency,
        );
        return ExitCode::SUCCESS;
    }
    if let Some(queue) = args.priority_latency {
        let url = args.url.as_deref().unwrap_or_default();
        priority::child(queue, url, args.priority_settings());
        return ExitCode::SUCCESS;
    }
    if let Some(consumer) = args.custom_child {
        let url = args.url.as_deref().unwrap_or_default();
        custom::child(consumer, url, pods, args.events());
        return ExitCode::SUCCESS;
    }
    if let Some(role) = args.handover_role {
        let url = args.url.as_deref().unwrap_or_default();
        sharding::handover::child(role, args.shard_name.as_deref(), url, args.handover_settings());
        return ExitCode::SUCCESS;
    }
    if let (Some(shard), Some(ring)) = (&args.shard_name, &args.shard_ring) {
        let url = args.url.as_deref().unwrap_or_default();
        sharding::child(ring, shard, url, args.sharding_settings());
        return ExitCode::SUCCESS;
    }

    print_machine();
    let started = Instant::now();
    let mut problems = Vec::new();
    let mut summary = Vec::new();
    if args.times_informers() {
        let (informer_problems, line) = informer_phases(&args);
        problems.extend(informer_problems);
        summary.push(line);
    }
    if args.only.contains(&Timed::Listers) {
        let outcomes = listers::run(args.lister_objects());
        println!("{}", listers::markdown(&outcomes));
        summary.push(format!(
            "both listers answered every query over {} pods alike",
            args.lister_objects()
        ));
    }
    if args.only.contains(&Timed::Scoped) || (args.only.is_empty() && !args.skip_rss) {
        match scoped::run(pods) {
            Ok(outcomes) => {
                println!("{}", scoped::markdown(&outcomes));
                summary.push("each scoped cache held only the pods its selector selects".into());
            }
            Err(problem) => problems.push(problem),
        }
    }
    if args.times(Timed::Reconcile) {
        let outcomes = measure_reconciles(&args);
        println!("{}", reconcile::markdown(&outcomes));
        problems.extend(outcomes.iter().filter_map(|o| o.check().err()));
        summary.push(format!(
            "every controller reconciled {} pods",
            args.reconcile_objects()
        ));
    }
    if args.times(Timed::Priority) {
        let settings = args.priority_settings();
        let rendered = Arc::new(Rendered::new(settings.objects, priority::LIVE_CHANGES));
        let outcomes = priority::measure_all(&rendered, settings);
        eprintln!("priority latencies done");
        println!("{}", priority::markdown(&outcomes));
        problems.extend(outcomes.iter().filter_map(|o| o.check().err()));
        summary.push(format!(
            "both queues reconciled {} pods and saw every live change",
            settings.objects
        ));
    }
    if args.times(Timed::Custom) {
        let (markdown, custom_problems) = custom::phase(
            pods,
            args.events(),
            args.decode_rounds.unwrap_or(if args.quick { 1 } else { 3 }),
        );
        println!("{markdown}");
        if custom_problems.is_empty() {
            summary.push(format!(
                "every custom resource consumer cached {pods} objects and the last event"
            ));
        }
        problems.extend(custom_problems);
    }
    if args.runs_sharding_part(ShardingPart::Memory) {
        let settings = args.sharding_settings();
        match sharding::run(settings) {
            Ok(outcome) => {
                println!("{}", sharding::markdown(&outcome));
                problems.extend(outcome.problems());
                summary.push(format!(
                    "every shard cached and reconciled exactly its share of {} pods",
                    settings.pods
                ));
            }
            Err(problem) => problems.push(problem),
        }
    }
    if args.runs_sharding_part(ShardingPart::Handover) {
        let settings = args.handover_settings();
        match sharding::handover::run(settings) {
            Ok(outcome) => {
                println!("{}", sharding::handover::markdown(&outcome));
                problems.extend(outcome.problems());
                summary.push(format!(
                    "the sharder assigned, rebalanced and moved {} pods",
                    settings.pods
                ));
            }
            Err(problem) => problems.push(problem),
        }
    }
    report_problems(&problems, &summary, started)
}

/// The sync, watch, memory, lister and decoding measurements: prints their tables; returns
/// what went wrong and the line that says what every consumer ended with.
fn informer_phases(args: &Args) -> (Vec<String>, String) {
    let pods = args.pods();
    let rendered = render(pods, args.events());
    let outcomes = time_consumers(args, &rendered);
    let decode_outcomes = measure_decoding(args, &rendered);
    let protobuf_decode_outcomes = measure_protobuf_decoding(args, &rendered);
    let rss_outcomes = measure_memory(args, &rendered);
    let bytes = (rendered.list_bytes, rendered.event_bytes);
    let protobuf_bytes = (rendered.protobuf.list_bytes, rendered.protobuf.event_bytes);
    let last_resource_version = rendered.last_resource_version;
    // The listers build caches of their own: free the rendered bytes first.
    drop(rendered);
    let lister_outcomes = measure_listers(args);

    println!(
        "{}",
        Report {
            pods,
            events: args.events(),
            bytes,
            protobuf_bytes,
            passes: args.passes(),
            outcomes: &outcomes.last_pass,
            not_measured: &[],
            rss: &rss_outcomes,
            listers: &lister_outcomes,
        }
        .markdown()
    );
    println!("{}", decode::markdown(&decode_outcomes.watch));
    println!(
        "{}",
        decode::pages::markdown(&decode_outcomes.pages, decode_outcomes.page_count)
    );
    println!(
        "{}",
        decode_protobuf::markdown(&protobuf_decode_outcomes, (bytes.1, protobuf_bytes.1))
    );

    let problems = final_state_problems(&outcomes.all_passes, &rss_outcomes, pods, last_resource_version);
    let line =
        format!("every consumer ended with {pods} pods and resourceVersion {last_resource_version} applied");
    (problems, line)
}

/// Reconciles per second of both controllers, each in a child process, on a server of
/// `--reconcile-objects` pods and no watch events.
fn measure_reconciles(args: &Args) -> Vec<reconcile::Outcome> {
    let objects = args.reconcile_objects();
    let server = Server::start(render(objects, 0)).expect("the bench server starts");
    let outcomes = reconcile::measure_all(server.url(), objects, args.reconcile_concurrency);
    server.stop();
    eprintln!("reconciles done");
    outcomes
}

/// Child mode: syncs every pod with `consumer` (from `--url`, or from a server started here)
/// and prints its memory per object.
fn rss_child(args: &Args, consumer: rss::Consumer, pods: usize) {
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
}

/// The first line: cores, CPU model, build profile and allocator.
fn print_machine() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "informer-bench: {cores} cores, {}, {profile} build, {ALLOCATOR_NAME}",
        cpu_model()
    );
}

/// The list pages and event lines every consumer is served.
fn render(pods: usize, events: usize) -> Arc<Rendered> {
    let started = Instant::now();
    let rendered = Arc::new(Rendered::new(pods, events));
    eprintln!(
        "rendered {pods} pods and {events} events in JSON and protobuf in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    rendered
}

/// The outcomes of the timed consumers.
struct Timings {
    /// Every pass's, each checked for its final state.
    all_passes: Vec<outcome::Outcome>,
    /// The last pass's, for the tables.
    last_pass: Vec<outcome::Outcome>,
}

/// Runs every chosen consumer, `passes` times in turn, on a multi-thread runtime.
fn time_consumers(args: &Args, rendered: &Arc<Rendered>) -> Timings {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let passes = args.passes();
    let mut timings = Timings {
        all_passes: Vec::new(),
        last_pass: Vec::new(),
    };
    for pass in 1..=passes {
        eprintln!("pass {pass} of {passes}");
        timings.last_pass = one_pass(args, &runtime, rendered);
        timings.all_passes.extend(timings.last_pass.iter().cloned());
    }
    timings
}

/// One pass over the chosen consumers, in a fixed order.
fn one_pass(
    args: &Args,
    runtime: &tokio::runtime::Runtime,
    rendered: &Arc<Rendered>,
) -> Vec<outcome::Outcome> {
    let mut outcomes = Vec::new();
    if args.times(Timed::Floor) {
        outcomes.push(floor::run(rendered));
        eprintln!("floor done");
    }
    if args.times(Timed::FloorProtobuf) {
        outcomes.push(floor_protobuf::run(rendered));
        eprintln!("protobuf floor done");
    }
    if args.times(Timed::Kube) {
        outcomes.push(with_server(rendered, "kube-rs", &|server| {
            runtime.block_on(kube_rs::run(server, rendered))
        }));
    }
    let paged = [
        (Timed::Ours1, 1, Placement::Default, Reading::PROTOBUF),
        (Timed::Ours3, 3, Placement::Default, Reading::PROTOBUF),
        (Timed::OursJson, 1, Placement::Default, Reading::JSON),
        (Timed::OursJson, 3, Placement::Default, Reading::JSON),
        (
            Timed::OursSkipping,
            3,
            Placement::Default,
            Reading::PROTOBUF_SKIPPING_MANAGED_FIELDS,
        ),
        (
            Timed::CallerRuntime,
            3,
            Placement::CallerRuntime,
            Reading::PROTOBUF,
        ),
        (
            Timed::CallerRuntime,
            3,
            Placement::DefaultReusedConnection,
            Reading::PROTOBUF,
        ),
    ];
    for (consumer, handlers, placement, reading) in paged {
        if args.times(consumer) {
            outcomes.push(with_server(rendered, "ours", &|server| {
                runtime.block_on(ours::run(
                    server,
                    rendered,
                    handlers,
                    InitialList::Paged,
                    placement,
                    reading,
                ))
            }));
        }
    }
    if args.times(Timed::Streaming) {
        outcomes.push(with_server(rendered, "ours (streaming list)", &|server| {
            runtime.block_on(ours::run(
                server,
                rendered,
                1,
                InitialList::Streaming,
                Placement::Default,
                Reading::PROTOBUF,
            ))
        }));
    }
    if args.times(Timed::CurrentThread) {
        outcomes.extend(current_thread_pair(runtime, rendered));
    }
    outcomes
}

/// kube-rs on a current-thread runtime, and our factory (3 handlers) on its own thread.
fn current_thread_pair(runtime: &tokio::runtime::Runtime, rendered: &Arc<Rendered>) -> [outcome::Outcome; 2] {
    // The client is made inside, so its connection tasks live on this runtime too.
    let mut kube = with_server(rendered, "kube-rs (current-thread runtime)", &|server| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
            .block_on(kube_rs::run(server, rendered))
    });
    kube.name = format!("{}, current-thread runtime", kube.name);
    let ours = with_server(rendered, "ours (own thread)", &|server| {
        runtime.block_on(ours::run(
            server,
            rendered,
            3,
            InitialList::Paged,
            Placement::OwnThread,
            Reading::PROTOBUF,
        ))
    });
    [kube, ours]
}

/// Runs `consumer` against a fresh server of `rendered`.
fn with_server(
    rendered: &Arc<Rendered>,
    name: &str,
    consumer: &dyn Fn(&Server) -> outcome::Outcome,
) -> outcome::Outcome {
    let server = Server::start(Arc::clone(rendered)).expect("the bench server starts");
    let outcome = consumer(&server);
    server.stop();
    eprintln!("{name} done");
    outcome
}

/// The decoding tables: watch lines and list pages.
#[derive(Default)]
struct DecodeOutcomes {
    watch: Vec<decode::DecodeOutcome>,
    pages: Vec<decode::DecodeOutcome>,
    page_count: usize,
}

/// Watch-line and list-page decoding on one thread, if chosen (`--decode-rounds` rounds).
fn measure_decoding(args: &Args, rendered: &Rendered) -> DecodeOutcomes {
    if !args.times(Timed::Decode) {
        return DecodeOutcomes::default();
    }
    let rounds = args.decode_rounds.unwrap_or(if args.quick { 1 } else { 3 });
    let watch = decode::run(rendered, rounds);
    let pages = decode::pages::run(rendered, rounds);
    eprintln!("decoding done");
    DecodeOutcomes {
        watch,
        pages,
        page_count: rendered.pages.len(),
    }
}

/// Protobuf watch-frame decoding on one thread, if chosen.
fn measure_protobuf_decoding(args: &Args, rendered: &Rendered) -> Vec<decode_protobuf::DecodeOutcome> {
    if !args.times(Timed::Decode) {
        return Vec::new();
    }
    let rounds = args.decode_rounds.unwrap_or(if args.quick { 1 } else { 3 });
    let outcomes = decode_protobuf::run(rendered, rounds);
    eprintln!("protobuf decoding done");
    outcomes
}

/// Memory per cached pod, in child processes, unless skipped or only other consumers are
/// timed.
fn measure_memory(args: &Args, rendered: &Arc<Rendered>) -> Vec<Result<rss::RssOutcome, String>> {
    if args.skip_rss || !args.times(Timed::Memory) {
        return Vec::new();
    }
    let server = Server::start(Arc::clone(rendered)).expect("the bench server starts");
    let mut outcomes = rss::measure_all(server.url(), &rss::ALL_RUNS, args.pods());
    server.stop();
    if !args.quick && args.pods() < SCALE_PODS {
        outcomes.extend(measure_memory_at_scale());
    }
    eprintln!("memory done");
    outcomes
}

/// Our informer (full pods) at [`SCALE_PODS`]: memory and sync CPU per pod against the
/// default size, and the peak of a relist.
fn measure_memory_at_scale() -> Vec<Result<rss::RssOutcome, String>> {
    let rendered = render(SCALE_PODS, 0);
    let server = Server::start(Arc::clone(&rendered)).expect("the bench server starts");
    let outcomes = rss::measure_all(server.url(), &[(rss::Consumer::Ours, false)], SCALE_PODS);
    server.stop();
    outcomes
}

/// Lister queries, unless only some consumers are timed.
fn measure_listers(args: &Args) -> Vec<listers::ListerOutcome> {
    if !args.only.is_empty() {
        return Vec::new();
    }
    let outcomes = listers::run(args.lister_objects());
    eprintln!("listers done");
    outcomes
}

/// Every consumer that ended without every pod or without the last event applied.
fn final_state_problems(
    outcomes: &[outcome::Outcome],
    rss_outcomes: &[Result<rss::RssOutcome, String>],
    pods: usize,
    last_resource_version: u64,
) -> Vec<String> {
    let mut problems: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.check(pods, last_resource_version).err())
        .collect();
    problems.extend(rss_outcomes.iter().filter_map(|r| r.as_ref().err().cloned()));
    problems
}

/// The last line on success (`summary`, joined); the problems and a failure otherwise.
fn report_problems(problems: &[String], summary: &[String], started: Instant) -> ExitCode {
    if problems.is_empty() {
        println!(
            "{} ({:.1} s)",
            summary.join("; "),
            started.elapsed().as_secs_f64()
        );
        ExitCode::SUCCESS
    } else {
        for problem in problems {
            eprintln!("error: {problem}");
        }
        ExitCode::FAILURE
    }
}
