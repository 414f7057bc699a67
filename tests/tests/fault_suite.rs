//! The seeded fault suite: random workloads and faults against informers over HTTP, and the
//! error behaviour informers owe their users.
//!
//! `cargo test -p informer-tests --test fault_suite` runs a fast set of seeds. A long campaign:
//!
//! ```sh
//! FAULT_SUITE_SEEDS=2000 cargo test -p informer-tests --test fault_suite seeded -- --nocapture
//! ```
//!
//! and one seed again: `FAULT_SUITE_SEED=1234 cargo test ... seeded -- --nocapture`. A failure
//! prints its seed, the broken invariant and the smallest failing schedule found, as Rust to
//! paste into a regression test named after the seed.

use std::{
    collections::BTreeSet,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
    time::Duration,
};

use informer_runtime::{
    EventHandlerFuncs, ObjectKey, SharedInformerFactory,
    cache::{DeletedFinalStateUnknown, MaybeTombstone},
    informer::handler::Notification,
    reflector::backoff,
};
use informer_tests::{
    eventually,
    fault::{
        campaign::{Plan, run_campaign},
        harness::{RunOptions, run_schedule, run_schedule_with},
        invariants::{Invariant, State, SyncedTracker, Violation, compare_states, replay},
        minimize::{Budget, minimize},
        recorder::{HandlerCensus, NotificationLog, RecordingHandler},
        schedule::{
            InformerId::*,
            Kind::*,
            Poison::*,
            Schedule, Settings,
            Step::{self, *},
            Verb::*,
            generate, generate_resets_and_panics,
        },
    },
    pod,
};
use informer_testserver::{Failure, TestServer};
use k8s_openapi::api::core::v1::Pod;

const WAIT: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_schedules_converge_and_lose_nothing() {
    let plan = Plan::from_env().expect("valid FAULT_SUITE_* variables");
    let summary = run_campaign(&plan).await;
    println!("{summary}");
    assert!(summary.failures.is_empty(), "{summary}");
    assert_eq!(summary.schedules, plan.seeds * plan.repeat);
}

// Connection resets and panicking transforms and index functions, and nothing else: every cache
// converges, every panic is counted and reported, the informers keep processing, and no reset
// causes a relist (the history is long enough that every watch can resume).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resets_and_panics_converge_without_a_relist() {
    let mut resets = 0;
    let mut panics = 0;
    for seed in 1..=6 {
        let schedule = generate_resets_and_panics(seed);
        let report = run_schedule(&schedule)
            .await
            .unwrap_or_else(|violation| panic!("seed {seed}: {violation}\n{}", schedule.to_rust()));
        assert_eq!(
            report.relists,
            0,
            "seed {seed}: resets caused relists\n{}",
            schedule.to_rust()
        );
        resets += schedule.all_steps().filter(|s| **s == ResetWatches).count();
        panics += report.user_code_panics;
    }
    assert!(
        resets > 0 && panics > 0,
        "{resets} resets and {panics} panics exercised"
    );
}

#[test]
fn the_same_seed_gives_the_same_schedule() {
    for seed in 0..100 {
        assert_eq!(generate(seed), generate(seed), "seed {seed}");
    }
    let distinct: BTreeSet<String> = (0..100)
        .map(|seed| format!("{:?}", generate(seed).steps))
        .collect();
    assert_eq!(distinct.len(), 100, "every seed gives its own schedule");
}

#[test]
fn schedules_exercise_every_workload_change_and_fault() {
    let mut seen = BTreeSet::new();
    for seed in 1..=300 {
        seen.extend(generate(seed).category_counts().into_keys());
    }
    let every_kind_of_step = [
        Create {
            kind: Pods,
            namespace: 0,
            name: 0,
            front: true,
        },
        Update {
            kind: Pods,
            namespace: 0,
            name: 0,
        },
        Relabel {
            kind: Pods,
            namespace: 0,
            name: 0,
            front: false,
        },
        Delete {
            kind: Pods,
            namespace: 0,
            name: 0,
        },
        Poison {
            kind: Pods,
            namespace: 0,
            name: 0,
            poison: Transform,
        },
        Poison {
            kind: Pods,
            namespace: 0,
            name: 0,
            poison: IndexFunction,
        },
        Poison {
            kind: Pods,
            namespace: 0,
            name: 0,
            poison: Cured,
        },
        DropWatches,
        ResetWatches,
        DropWatchesAfter { events: 1 },
        Restart,
        Compact,
        Fail {
            code: 500,
            verb: List,
            kind: Pods,
            times: 1,
        },
        Fail {
            code: 500,
            verb: Watch,
            kind: Pods,
            times: 1,
        },
        Fail {
            code: 403,
            verb: List,
            kind: Pods,
            times: 1,
        },
        Fail {
            code: 403,
            verb: Watch,
            kind: Pods,
            times: 1,
        },
        Fail {
            code: 404,
            verb: List,
            kind: Pods,
            times: 1,
        },
        Fail {
            code: 404,
            verb: Watch,
            kind: Pods,
            times: 1,
        },
        Throttle {
            verb: List,
            kind: Pods,
        },
        Throttle {
            verb: Watch,
            kind: Pods,
        },
        ClearFaults,
        Delay { millis: 50 },
        Delay { millis: 0 },
        MalformedLine,
        BlockHandler { millis: 50 },
        PanicHandler { times: 1 },
        LateHandler {
            informer: ClusterPods,
        },
        Pause { millis: 5 },
    ];
    let missing: Vec<String> = every_kind_of_step
        .iter()
        .map(Step::category)
        .filter(|category| !seen.contains(category))
        .collect();
    assert!(missing.is_empty(), "300 seeds never generate: {missing:?}");
}

/// A pod at resourceVersion `rv` with the tier label `tier`.
fn pod_at(name: &str, rv: u64, tier: &str) -> Arc<Pod> {
    let mut object = pod("alpha", name, &[("tier", tier)]);
    object.metadata.resource_version = Some(rv.to_string());
    Arc::new(object)
}

fn add(object: &Arc<Pod>) -> Notification<Pod> {
    Notification::Add {
        object: Arc::clone(object),
        is_in_initial_list: false,
    }
}

fn update(old: &Arc<Pod>, new: &Arc<Pod>) -> Notification<Pod> {
    Notification::Update {
        old: Arc::clone(old),
        new: Arc::clone(new),
    }
}

fn delete(object: &Arc<Pod>) -> Notification<Pod> {
    Notification::Delete(MaybeTombstone::Object(Arc::clone(object)))
}

fn tombstone(object: &Arc<Pod>) -> Notification<Pod> {
    Notification::Delete(MaybeTombstone::Tombstone(DeletedFinalStateUnknown {
        key: ObjectKey::of(object.as_ref()),
        obj: Some(Arc::clone(object)),
    }))
}

#[test]
fn replay_rebuilds_the_state_and_rejects_lost_phantom_and_regressed_notifications() {
    let a1 = pod_at("a", 1, "front");
    let a3 = pod_at("a", 3, "back");
    let b2 = pod_at("b", 2, "front");
    let b5 = pod_at("b", 5, "front");
    let c4 = pod_at("c", 4, "front");

    let state =
        replay(&[add(&a1), add(&b2), update(&a1, &a3), tombstone(&b2), add(&c4)]).expect("consistent");
    let expected: State<Pod> = [
        (ObjectKey::new("alpha", "a"), a3.clone()),
        (ObjectKey::new("alpha", "c"), c4.clone()),
    ]
    .into();
    assert_eq!(compare_states(&expected, &state), Ok(()));
    assert_eq!(
        replay(&[add(&b2), update(&b2, &b2)]).map(|s| s.len()),
        Ok(1),
        "a relist re-delivers an unchanged object"
    );

    let inconsistent = [
        (vec![delete(&a1)], "phantom delete of alpha/a"),
        (vec![tombstone(&a1)], "phantom delete of alpha/a"),
        (vec![add(&a1), add(&a3)], "already has it"),
        (vec![update(&a1, &a3)], "has no such object"),
        (vec![add(&a3), update(&a1, &a3)], "is not the state before"),
        (vec![add(&a3), update(&a3, &a1)], "went back from rv=3"),
        (vec![add(&b5), delete(&b5), add(&b2)], "went back from rv=5"),
        (
            vec![add(&a3), tombstone(&a1)],
            "tombstone of alpha/a carries rv=1",
        ),
    ];
    for (log, expected) in inconsistent {
        let error = replay(&log).expect_err(expected);
        assert!(error.contains(expected), "{error:?} should say {expected:?}");
    }

    let lost_delete: State<Pod> = [(ObjectKey::new("alpha", "a"), a1.clone())].into();
    let difference = compare_states(&State::new(), &lost_delete).expect_err("an extra object");
    assert_eq!(
        difference,
        "alpha/a: expected no object, found rv=1 tier=front revision=0"
    );
    let stale: State<Pod> = [(ObjectKey::new("alpha", "a"), a1)].into();
    let mut emptied = (*a3).clone();
    emptied.metadata.annotations = Some(Default::default());
    let current: State<Pod> = [(ObjectKey::new("alpha", "a"), a3)].into();
    let difference = compare_states(&current, &stale).expect_err("a stale object");
    assert_eq!(
        difference,
        "alpha/a: expected rv=3 tier=back revision=0, found rv=1 tier=front revision=0"
    );
    let emptied: State<Pod> = [(ObjectKey::new("alpha", "a"), Arc::new(emptied))].into();
    let difference = compare_states(&current, &emptied).expect_err("other content");
    assert_eq!(
        difference,
        "alpha/a: expected rv=3 tier=back revision=0, found rv=3 tier=back revision=0 \
         (same resourceVersion, different content: metadata.annotations: none vs {})"
    );
}

#[test]
fn synced_tracker_reports_a_flip_back_to_false() {
    let synced = Arc::new(AtomicBool::new(false));
    let tracker = SyncedTracker::default();
    let probe = Arc::clone(&synced);
    tracker.watch("informer \"probe\"", move || probe.load(Ordering::SeqCst));
    tracker.sample();
    synced.store(true, Ordering::SeqCst);
    tracker.sample();
    assert_eq!(tracker.violation(), None, "false then true is how syncing goes");
    synced.store(false, Ordering::SeqCst);
    tracker.sample();
    tracker.sample();
    assert_eq!(
        tracker.violation(),
        Some(Violation::new(
            Invariant::SyncedStaysTrue,
            "informer \"probe\": has_synced was true, then false at sample 3"
        ))
    );
    assert_eq!(tracker.samples(), 4);
}

#[tokio::test(flavor = "current_thread")]
async fn minimizer_keeps_only_the_steps_the_failure_needs() {
    let mut steps: Vec<Step> = (0..20).map(|millis| Pause { millis }).collect();
    steps.insert(13, Compact);
    steps.insert(7, Restart);
    let schedule = Schedule {
        seed: 7,
        settings: Settings {
            streaming_list: true,
            page_size: Some(2),
            history_size: 5,
            retry_internal_errors: true,
        },
        setup: vec![Create {
            kind: ConfigMaps,
            namespace: 1,
            name: 2,
            front: false,
        }],
        steps,
    };
    let violation = Violation::new(
        Invariant::StoreMatchesServer,
        "needs a restart, then a compaction",
    );
    let fails = |candidate: Schedule| {
        let restart = candidate.steps.iter().position(|s| *s == Restart);
        let compact = candidate.steps.iter().position(|s| *s == Compact);
        let failing = matches!((restart, compact), (Some(r), Some(c)) if r < c);
        let found = failing.then(|| Violation::new(Invariant::StoreMatchesServer, "reproduced"));
        async move { found }
    };
    let minimized = minimize(&schedule, &violation, Budget::default(), fails).await;
    assert_eq!(minimized.schedule.setup, []);
    assert_eq!(minimized.schedule.steps, [Restart, Compact]);
    assert_eq!(minimized.schedule.settings, Settings::default());
    assert_eq!(minimized.schedule.seed, 7);
    assert!(
        minimized.runs <= Budget::default().runs,
        "{} runs",
        minimized.runs
    );
    let printed = minimized.schedule.to_rust();
    assert!(
        printed.contains("steps: vec![\n        Restart,\n        Compact,\n    ]"),
        "{printed}"
    );
}

/// Runs a schedule (a minimized one, for regression tests) and fails with the violation.
async fn assert_converges(schedule: Schedule) {
    if let Err(violation) = run_schedule(&schedule).await {
        panic!("{violation}\n{}", schedule.to_rust());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_in_one_schedule_still_converges() {
    let steps = vec![
        Create {
            kind: Pods,
            namespace: 0,
            name: 0,
            front: true,
        },
        LateHandler {
            informer: SelectedPods,
        },
        PanicHandler { times: 2 },
        BlockHandler { millis: 100 },
        Fail {
            code: 403,
            verb: Watch,
            kind: Pods,
            times: 10_000,
        },
        Relabel {
            kind: Pods,
            namespace: 1,
            name: 1,
            front: true,
        },
        Relabel {
            kind: Pods,
            namespace: 0,
            name: 0,
            front: false,
        },
        ClearFaults,
        DropWatchesAfter { events: 2 },
        Update {
            kind: Pods,
            namespace: 1,
            name: 1,
        },
        Delete {
            kind: Pods,
            namespace: 2,
            name: 3,
        },
        Compact,
        Create {
            kind: ConfigMaps,
            namespace: 2,
            name: 1,
            front: true,
        },
        Delay { millis: 40 },
        Restart,
        Delete {
            kind: ConfigMaps,
            namespace: 0,
            name: 0,
        },
        MalformedLine,
        Fail {
            code: 500,
            verb: List,
            kind: ConfigMaps,
            times: 2,
        },
        Fail {
            code: 404,
            verb: List,
            kind: Pods,
            times: 10_000,
        },
        DropWatches,
        Pause { millis: 30 },
        Delete {
            kind: Pods,
            namespace: 0,
            name: 0,
        },
        ClearFaults,
        LateHandler {
            informer: ClusterConfigMaps,
        },
        Pause { millis: 30 },
    ];
    let setup = vec![
        Create {
            kind: Pods,
            namespace: 1,
            name: 1,
            front: false,
        },
        Create {
            kind: Pods,
            namespace: 2,
            name: 3,
            front: true,
        },
        Create {
            kind: ConfigMaps,
            namespace: 0,
            name: 0,
            front: false,
        },
    ];
    for streaming_list in [false, true] {
        assert_converges(Schedule {
            seed: 0,
            settings: Settings {
                streaming_list,
                page_size: Some(2),
                history_size: 6,
                retry_internal_errors: streaming_list,
            },
            setup: setup.clone(),
            steps: steps.clone(),
        })
        .await;
    }
}

/// Seed 11817, found by a campaign (its schedule fails about once in 300 runs on a loaded
/// machine): right after a server restart, a watch the reflector re-opened was never answered.
/// The request never reached the server; kube's HTTP client kept it pending without a
/// connection. The reflector waited on it with no deadline, so the informer stopped following
/// changes, reported no error and never relisted: its store stayed stale for the rest of the run.
///
/// The schedule does not shrink (the hang depends on timing), so this replays its cause
/// deterministically: the server holds back its answer to the re-opened watches for ten
/// minutes. Fixed by the lister-watcher's response timeout (30 s by default, 2 s in the suite):
/// a request left unanswered is given up on, reported and sent again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_11817_a_watch_request_never_answered_stalls_the_informer() {
    let schedule = Schedule {
        seed: 11817,
        settings: Settings::default(),
        setup: vec![
            Create {
                kind: Pods,
                namespace: 0,
                name: 1,
                front: true,
            },
            Create {
                kind: Pods,
                namespace: 1,
                name: 2,
                front: false,
            },
            Create {
                kind: ConfigMaps,
                namespace: 0,
                name: 0,
                front: false,
            },
        ],
        steps: vec![
            // Watches that lasted over a second and end cleanly are re-opened at once.
            Pause { millis: 1_100 },
            Delay { millis: 600_000 },
            DropWatches,
            // The re-opened watches now wait for their answer.
            Pause { millis: 200 },
            Delay { millis: 0 },
            Update {
                kind: Pods,
                namespace: 0,
                name: 1,
            },
            Relabel {
                kind: Pods,
                namespace: 1,
                name: 2,
                front: true,
            },
            Delete {
                kind: ConfigMaps,
                namespace: 0,
                name: 0,
            },
        ],
    };
    let options = RunOptions {
        quiesce_deadline: Duration::from_secs(40),
    };
    if let Err(violation) = run_schedule_with(&schedule, options).await {
        panic!("{violation}\n{}", schedule.to_rust());
    }
}

/// Seeds 1128154, 1128199, 2811080, 2811246 and 2811275, found by a campaign over seeds never
/// run before: 10 s after the last step the "cluster pods" informer, which reads protobuf, held
/// a pod at the server's resourceVersion with other content. Each shrinks to a pod poisoned
/// (its transform or its index function panics on it) and cured: the cure removes the pod's
/// only annotation. The panics played no part: the test server stored `"annotations": {}`,
/// which its JSON answers carried (an empty map) and its protobuf answers could not (no
/// annotations), so the protobuf informers never equalled the server, and no later event could
/// change that. kube-apiserver never shows an empty map (its storage is protobuf, its JSON
/// omits empty maps); the test server now stores built-in objects as it does
/// (`informer_runtime::protobuf::omit_empty`), and both answers decode to one object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_1128154_a_pod_cured_of_a_panicking_transform_equals_the_server() {
    assert_converges(Schedule {
        seed: 1128154,
        settings: Settings::default(),
        setup: vec![],
        steps: vec![
            Create {
                kind: Pods,
                namespace: 0,
                name: 2,
                front: false,
            },
            Poison {
                kind: Pods,
                namespace: 0,
                name: 2,
                poison: Transform,
            },
            Poison {
                kind: Pods,
                namespace: 0,
                name: 2,
                poison: Cured,
            },
        ],
    })
    .await;
}

/// Seed 1128199: as seed 1128154.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_1128199_a_pod_poisoned_before_the_start_and_cured_after_equals_the_server() {
    assert_converges(Schedule {
        seed: 1128199,
        settings: Settings::default(),
        setup: vec![
            Create {
                kind: Pods,
                namespace: 1,
                name: 2,
                front: false,
            },
            Poison {
                kind: Pods,
                namespace: 1,
                name: 2,
                poison: Transform,
            },
        ],
        steps: vec![Poison {
            kind: Pods,
            namespace: 1,
            name: 2,
            poison: Cured,
        }],
    })
    .await;
}

/// Seed 2811080: as seed 1128154.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_2811080_a_pod_cured_of_a_panicking_index_function_equals_the_server() {
    assert_converges(Schedule {
        seed: 2811080,
        settings: Settings::default(),
        setup: vec![],
        steps: vec![
            Create {
                kind: Pods,
                namespace: 1,
                name: 4,
                front: false,
            },
            Poison {
                kind: Pods,
                namespace: 1,
                name: 4,
                poison: IndexFunction,
            },
            Poison {
                kind: Pods,
                namespace: 1,
                name: 4,
                poison: Cured,
            },
        ],
    })
    .await;
}

/// Seed 2811246: as seed 1128154.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_2811246_a_listed_pod_cured_of_a_panicking_transform_equals_the_server() {
    assert_converges(Schedule {
        seed: 2811246,
        settings: Settings::default(),
        setup: vec![Create {
            kind: Pods,
            namespace: 2,
            name: 1,
            front: false,
        }],
        steps: vec![
            Poison {
                kind: Pods,
                namespace: 2,
                name: 1,
                poison: Transform,
            },
            Poison {
                kind: Pods,
                namespace: 2,
                name: 1,
                poison: Cured,
            },
        ],
    })
    .await;
}

/// Seed 2811275: as seed 1128154.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_2811275_a_listed_pod_cured_of_a_panicking_index_function_equals_the_server() {
    assert_converges(Schedule {
        seed: 2811275,
        settings: Settings::default(),
        setup: vec![Create {
            kind: Pods,
            namespace: 1,
            name: 1,
            front: false,
        }],
        steps: vec![
            Poison {
                kind: Pods,
                namespace: 1,
                name: 1,
                poison: IndexFunction,
            },
            Poison {
                kind: Pods,
                namespace: 1,
                name: 1,
                poison: Cured,
            },
        ],
    })
    .await;
}

/// The most requests a reflector backing off with `backoff` makes within `window`: the first at
/// once, each later one at least the un-jittered delay after the one before (jitter only
/// lengthens a delay, to at most twice its value).
fn max_attempts_within(window: Duration, backoff: &backoff::Config) -> usize {
    let mut attempts = 1;
    let mut elapsed = Duration::ZERO;
    let mut delay = backoff.initial;
    loop {
        elapsed += delay;
        if elapsed > window {
            return attempts;
        }
        attempts += 1;
        delay = delay.mul_f32(backoff.factor).min(backoff.max);
    }
}

/// What one persistent failure did within the observation window.
struct PersistentFailure {
    code: u16,
    verb: &'static str,
    attempts: usize,
    reported: Vec<String>,
}

/// A factory over `server` whose watch-error hook records every report as `informer: error`.
fn reporting_factory(server: &TestServer) -> (SharedInformerFactory, Arc<Mutex<Vec<String>>>) {
    let reported: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&reported);
    let factory = SharedInformerFactory::builder(server.client().expect("client"))
        .watch_error_handler(move |informer, error| {
            sink.lock().expect("lock").push(format!("{informer}: {error}"));
        })
        .build();
    (factory, reported)
}

/// Keeps `code` armed on every `verb` of pods for `window`, with the factory's default
/// backoff; then clears it and checks that the informer recovers.
async fn persistent_failure(code: u16, verb: &'static str, window: Duration) -> PersistentFailure {
    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("a").expect("namespace");
    server.create_typed(&pod("a", "p1", &[])).expect("created");
    server.fail_next(Failure::new(code).verb(verb).resource("pods").times(1_000_000));
    let (factory, reported) = reporting_factory(&server);
    let pods = factory.unscoped_informer::<Pod>();
    factory.start();
    tokio::time::sleep(window).await;
    let attempts = server.request_count(verb, "pods");
    eventually("every failed request reported", WAIT, || {
        reported.lock().expect("lock").len() >= attempts
    })
    .await;
    let reported = reported.lock().expect("lock").clone();

    server.clear_faults();
    eventually("recovery once the fault is cleared", WAIT, || {
        pods.has_synced() && pods.store().len() == 1 && server.watch_count() == 1
    })
    .await;
    server.create_typed(&pod("a", "p2", &[])).expect("created");
    eventually("live events after recovery", WAIT, || pods.store().len() == 2).await;
    tokio::time::timeout(WAIT, factory.shutdown())
        .await
        .expect("shutdown completes");
    server.shutdown().await;
    PersistentFailure {
        code,
        verb,
        attempts,
        reported,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_or_missing_list_and_watch_are_reported_and_retried_with_bounded_backoff() {
    let window = Duration::from_secs(3);
    let backoff = backoff::Config::default();
    let per_window = max_attempts_within(window, &backoff);
    let per_minute = max_attempts_within(Duration::from_secs(60), &backoff);
    assert_eq!(
        (per_window, per_minute),
        (3, 7),
        "client-go's backoff (800 ms doubling to 30 s) allows 3 requests in 3 s and 7 per minute"
    );
    let (forbidden_list, forbidden_watch, missing_list, missing_watch) = tokio::join!(
        persistent_failure(403, "list", window),
        persistent_failure(403, "watch", window),
        persistent_failure(404, "list", window),
        persistent_failure(404, "watch", window),
    );
    for case in [forbidden_list, forbidden_watch, missing_list, missing_watch] {
        let PersistentFailure {
            code,
            verb,
            attempts,
            reported,
        } = case;
        let cause = match code {
            403 => "the API server answered 403 Forbidden: pods is forbidden",
            _ => "the API server answered 404 NotFound: the server could not find the requested resource",
        };
        assert!(
            (2..=per_window).contains(&attempts),
            "{code} on {verb}: {attempts} {verb} requests in {window:?}; retried, but with backoff: at most \
             {per_window} (at most {per_minute} per minute)"
        );
        assert!(!reported.is_empty(), "{code} on {verb}: nothing reported");
        let expected = format!("pods: failed to {verb} pods: {cause}");
        assert!(
            reported.iter().all(|message| message.starts_with(&expected)),
            "{code} on {verb}: every report names the resource and the cause ({expected:?}): {reported:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_watch_event_is_reported_then_relisted_and_the_change_still_arrives() {
    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("a").expect("namespace");
    server.create_typed(&pod("a", "p1", &[])).expect("created");
    let (factory, reported) = reporting_factory(&server);
    let pods = factory.unscoped_informer::<Pod>();
    let census = HandlerCensus::default();
    let log = Arc::new(NotificationLog::default());
    let registration = pods
        .add_event_handler(RecordingHandler::new(Arc::clone(&log), &census, None))
        .expect("added");
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
    eventually("watch open", WAIT, || server.watch_count() == 1).await;
    let (lists, watches) = (
        server.request_count("list", "pods"),
        server.request_count("watch", "pods"),
    );

    // The malformed line breaks the stream; the change right behind it is what it would have
    // carried next, and must not be skipped.
    server.send_malformed_watch_line();
    let p2 = server.create_typed(&pod("a", "p2", &[])).expect("created");
    eventually("decode error reported", WAIT, || {
        !reported.lock().expect("lock").is_empty()
    })
    .await;
    let first = reported.lock().expect("lock")[0].clone();
    assert!(
        first.starts_with("pods: failed to watch pods: failed to decode a response from the API server"),
        "{first}"
    );
    eventually("a relist or a new watch after the malformed line", WAIT, || {
        server.request_count("list", "pods") > lists || server.request_count("watch", "pods") > watches
    })
    .await;
    eventually("the change behind the malformed line arrives", WAIT, || {
        pods.store()
            .get_by_key(&ObjectKey::new("a", "p2"))
            .is_some_and(|cached| cached.metadata.resource_version == p2.metadata.resource_version)
    })
    .await;
    eventually("the handler caught up", WAIT, || {
        registration.backlog() == 0 && registration.handled() == log.len() as u64
    })
    .await;
    let replayed = replay(&log.snapshot()).expect("consistent notifications");
    let store: State<Pod> = pods
        .store()
        .list()
        .into_iter()
        .map(|p| (ObjectKey::of(p.as_ref()), p))
        .collect();
    assert_eq!(compare_states(&store, &replayed), Ok(()));
    assert_eq!(store.len(), 2);
    assert_eq!(registration.panics(), 0);
    tokio::time::timeout(WAIT, factory.shutdown())
        .await
        .expect("shutdown completes");
    assert_eq!(census.alive(), 0);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stuck_handler_backlog_is_visible_and_stalls_neither_other_handlers_nor_the_watch() {
    const CREATED: usize = 20;
    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("a").expect("namespace");
    server.create_typed(&pod("a", "p0", &[])).expect("created");
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = factory.unscoped_informer::<Pod>();

    let (release, stuck_until_released) = mpsc::channel::<()>();
    let stuck_until_released = Mutex::new(stuck_until_released);
    let stuck = pods
        .add_event_handler(EventHandlerFuncs::new().added(move |_, is_in_initial_list| {
            if !is_in_initial_list {
                // Blocks until the sender is dropped.
                let _ = stuck_until_released.lock().expect("lock").recv();
            }
        }))
        .expect("added");
    let census = HandlerCensus::default();
    let log = Arc::new(NotificationLog::default());
    let healthy = pods
        .add_event_handler(RecordingHandler::new(Arc::clone(&log), &census, None))
        .expect("added");
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
    eventually("both handlers synced", WAIT, || {
        stuck.has_synced() && healthy.has_synced()
    })
    .await;

    for index in 1..=CREATED {
        server
            .create_typed(&pod("a", &format!("p{index}"), &[]))
            .expect("created");
    }
    let latest = server.resource_version().to_string();
    eventually("the healthy handler got every add", WAIT, || {
        log.len() == CREATED + 1
    })
    .await;
    eventually("the watch kept going", WAIT, || {
        pods.store().len() == CREATED + 1 && pods.last_sync_resource_version() == latest
    })
    .await;
    eventually("the stuck handler's backlog is visible", WAIT, || {
        stuck.backlog() == CREATED - 1
    })
    .await;
    let stats = pods.stats();
    let backlogs: Vec<usize> = stats.handlers.iter().map(|h| h.backlog).collect();
    assert_eq!(backlogs, [CREATED - 1, 0], "{stats:?}");
    assert_eq!(healthy.backlog(), 0);

    drop(release);
    eventually("the stuck handler drains once released", WAIT, || {
        stuck.backlog() == 0 && stuck.handled() == (CREATED + 1) as u64
    })
    .await;
    tokio::time::timeout(WAIT, factory.shutdown())
        .await
        .expect("shutdown completes");
    assert_eq!(census.alive(), 0);
    server.shutdown().await;
}
