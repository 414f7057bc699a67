//! Seeded schedules: a random workload of object changes interleaved with faults.
//!
//! [`generate`] turns a seed into a [`Schedule`] with `fastrand`, so the same seed always gives
//! the same schedule. Steps name objects by kind, namespace index and name index; the harness
//! skips a change that no longer applies (an update of an object that does not exist, a create
//! of one that does), so any subset of a schedule is a valid schedule, which is what the
//! minimizer relies on.
//!
//! `Debug` of every type here is valid Rust once the enums' variants are imported, so a printed
//! schedule can be pasted into a regression test.

use std::collections::BTreeMap;

/// The namespaces the workload writes to; the namespaced informer watches the first one.
pub const NAMESPACES: [&str; 3] = ["alpha", "beta", "gamma"];

/// How many object names the workload uses per kind and namespace.
pub const NAMES_PER_NAMESPACE: u8 = 5;

/// The label that moves objects in and out of the selector-scoped informer.
pub const TIER_LABEL: &str = "tier";

/// The value of [`TIER_LABEL`] the selector-scoped informer selects.
pub const SELECTED_TIER: &str = "front";

/// The value of [`TIER_LABEL`] outside the selector.
pub const OTHER_TIER: &str = "back";

/// The annotation an update bumps.
pub const REVISION_ANNOTATION: &str = "fault-suite/revision";

/// The annotation that makes an informer's user code panic on an object: its value names the
/// function ([`Poison::annotation_value`]).
pub const POISON_ANNOTATION: &str = "fault-suite/panic-in";

/// How many times a 403 or 404 is armed: enough to last until the schedule clears it.
pub const PERSISTENT_FAILURE_TIMES: usize = 10_000;

/// The kinds of objects the workload changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `v1` pods.
    Pods,
    /// `v1` config maps.
    ConfigMaps,
    /// `fault.example.com/v1` `ConfigMirror`s, a custom resource: never named by a schedule's
    /// steps, the harness copies every config map step onto a mirror of the same name.
    ConfigMirrors,
}

impl Kind {
    /// The plural resource name, as requests and faults name it.
    pub fn plural(self) -> &'static str {
        match self {
            Self::Pods => "pods",
            Self::ConfigMaps => "configmaps",
            Self::ConfigMirrors => "configmirrors",
        }
    }

    /// The `apiVersion` of the objects.
    pub fn api_version(self) -> &'static str {
        match self {
            Self::Pods | Self::ConfigMaps => "v1",
            Self::ConfigMirrors => "fault.example.com/v1",
        }
    }

    /// The `kind` of the objects.
    pub fn api_kind(self) -> &'static str {
        match self {
            Self::Pods => "Pod",
            Self::ConfigMaps => "ConfigMap",
            Self::ConfigMirrors => "ConfigMirror",
        }
    }
}

/// Which user function of every informer panics on an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Poison {
    /// The transform panics on it.
    Transform,
    /// The index function of the tier index panics on it.
    IndexFunction,
    /// Nothing panics on it any more.
    Cured,
}

impl Poison {
    /// The value of [`POISON_ANNOTATION`] (`None`: no annotation).
    pub fn annotation_value(self) -> Option<&'static str> {
        match self {
            Self::Transform => Some("transform"),
            Self::IndexFunction => Some("index-function"),
            Self::Cured => None,
        }
    }
}

/// The request verbs faults are aimed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    /// List requests.
    List,
    /// Watch requests.
    Watch,
}

impl Verb {
    /// The verb as the test server matches it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::List => "list",
            Self::Watch => "watch",
        }
    }
}

/// The informers of a run, each with its own scope and its own watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InformerId {
    /// Pods of all namespaces.
    ClusterPods,
    /// Config maps of all namespaces.
    ClusterConfigMaps,
    /// Pods of the first of [`NAMESPACES`].
    NamespacedPods,
    /// Pods of all namespaces labelled `tier=front`.
    SelectedPods,
    /// Config map mirrors (a custom resource) of all namespaces, read over CBOR.
    ClusterMirrors,
}

impl InformerId {
    /// Every informer a schedule's steps name, in creation order (the config map mirrors'
    /// informer, created last, is never named: schedules stay what their seeds made them).
    pub const ALL: [Self; 4] = [
        Self::ClusterPods,
        Self::ClusterConfigMaps,
        Self::NamespacedPods,
        Self::SelectedPods,
    ];

    /// What the informer caches.
    pub fn kind(self) -> Kind {
        match self {
            Self::ClusterConfigMaps => Kind::ConfigMaps,
            Self::ClusterMirrors => Kind::ConfigMirrors,
            _ => Kind::Pods,
        }
    }

    /// The namespace it is restricted to, if any.
    pub fn namespace(self) -> Option<&'static str> {
        match self {
            Self::NamespacedPods => Some(NAMESPACES[0]),
            _ => None,
        }
    }

    /// The scope its factory's watch-error hook names (`cluster`, `namespaced`, `selected`).
    pub fn factory_scope(self) -> &'static str {
        match self {
            Self::ClusterPods | Self::ClusterConfigMaps => "cluster",
            Self::NamespacedPods => "namespaced",
            Self::SelectedPods => "selected",
            Self::ClusterMirrors => "cbor",
        }
    }

    /// Whether it selects only objects labelled `tier=front`.
    pub fn selects_tier(self) -> bool {
        self == Self::SelectedPods
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClusterPods => "cluster pods",
            Self::ClusterConfigMaps => "cluster configmaps",
            Self::NamespacedPods => "namespaced pods",
            Self::SelectedPods => "selected pods",
            Self::ClusterMirrors => "cluster configmirrors over CBOR",
        }
    }
}

/// One step of a schedule: a change to an object, or a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Creates an object, labelled `tier=front` or `tier=back` (skipped if it exists).
    Create {
        /// The object's kind.
        kind: Kind,
        /// An index into [`NAMESPACES`].
        namespace: u8,
        /// The object's name index.
        name: u8,
        /// Whether it is labelled `tier=front`.
        front: bool,
    },
    /// Bumps the object's revision annotation (skipped if it does not exist).
    Update {
        /// The object's kind.
        kind: Kind,
        /// An index into [`NAMESPACES`].
        namespace: u8,
        /// The object's name index.
        name: u8,
    },
    /// Sets the object's tier label, moving it in or out of the selector (skipped if it does
    /// not exist).
    Relabel {
        /// The object's kind.
        kind: Kind,
        /// An index into [`NAMESPACES`].
        namespace: u8,
        /// The object's name index.
        name: u8,
        /// Whether it becomes `tier=front`.
        front: bool,
    },
    /// Makes a user function of every informer panic on the object from now on, or stop
    /// panicking on it (skipped if it does not exist).
    Poison {
        /// The object's kind.
        kind: Kind,
        /// An index into [`NAMESPACES`].
        namespace: u8,
        /// The object's name index.
        name: u8,
        /// Which function panics.
        poison: Poison,
    },
    /// Deletes the object (skipped if it does not exist).
    Delete {
        /// The object's kind.
        kind: Kind,
        /// An index into [`NAMESPACES`].
        namespace: u8,
        /// The object's name index.
        name: u8,
    },
    /// Ends every open watch now.
    DropWatches,
    /// Resets (TCP RST) every watch connection now, through the proxy between the informers
    /// and the server, in the middle of its stream.
    ResetWatches,
    /// Ends every open watch after this many more writes (mid-stream).
    DropWatchesAfter {
        /// Writes before the watches end.
        events: u64,
    },
    /// Restarts the server: closes every watch and connection, keeps the data and history.
    Restart,
    /// Drops the event history: older versions answer 410 and informers relist.
    Compact,
    /// Fails the next requests of `verb` on `kind` with HTTP `code` (500, 403, 404).
    Fail {
        /// The status code.
        code: u16,
        /// The verb failed.
        verb: Verb,
        /// The resource failed.
        kind: Kind,
        /// How many requests fail.
        times: usize,
    },
    /// Answers the next request of `verb` on `kind` with 429 and `Retry-After: 1`.
    Throttle {
        /// The verb throttled.
        verb: Verb,
        /// The resource throttled.
        kind: Kind,
    },
    /// Disarms every failure and the response delay.
    ClearFaults,
    /// Delays every response by this many milliseconds (0: no delay).
    Delay {
        /// The delay in milliseconds.
        millis: u64,
    },
    /// Sends a line that is not JSON on every open watch.
    MalformedLine,
    /// Makes the faulty handler block this long on its next notification.
    BlockHandler {
        /// How long it blocks, in milliseconds.
        millis: u64,
    },
    /// Makes the faulty handler panic on its next live notifications (after recording them).
    PanicHandler {
        /// How many notifications panic.
        times: u32,
    },
    /// Registers one more recording handler with a running informer.
    LateHandler {
        /// The informer.
        informer: InformerId,
    },
    /// Waits, letting events flow.
    Pause {
        /// How long, in milliseconds.
        millis: u64,
    },
}

impl Step {
    /// Whether the step changes an object (rather than injecting a fault or waiting).
    pub fn is_workload(&self) -> bool {
        matches!(
            self,
            Self::Create { .. }
                | Self::Update { .. }
                | Self::Relabel { .. }
                | Self::Poison { .. }
                | Self::Delete { .. }
        )
    }

    /// The kind of step, for the campaign's counts (`fail 403 watch`, `restart`, ...).
    pub fn category(&self) -> String {
        match self {
            Self::Create { .. } => "create".into(),
            Self::Update { .. } => "update".into(),
            Self::Relabel { .. } => "relabel (selector in/out)".into(),
            Self::Poison {
                poison: Poison::Transform,
                ..
            } => "panicking transform".into(),
            Self::Poison {
                poison: Poison::IndexFunction,
                ..
            } => "panicking index function".into(),
            Self::Poison {
                poison: Poison::Cured,
                ..
            } => "user code cured".into(),
            Self::Delete { .. } => "delete".into(),
            Self::DropWatches => "drop watches now".into(),
            Self::ResetWatches => "connection reset mid-watch".into(),
            Self::DropWatchesAfter { .. } => "drop watches after N events".into(),
            Self::Restart => "server restart".into(),
            Self::Compact => "compaction (410, relist)".into(),
            Self::Fail { code, verb, .. } => format!("{code} on {}", verb.as_str()),
            Self::Throttle { verb, .. } => format!("429 Retry-After on {}", verb.as_str()),
            Self::ClearFaults => "clear faults".into(),
            Self::Delay { millis: 0 } => "slow responses off".into(),
            Self::Delay { .. } => "slow responses".into(),
            Self::MalformedLine => "malformed watch line".into(),
            Self::BlockHandler { .. } => "blocking handler".into(),
            Self::PanicHandler { .. } => "panicking handler".into(),
            Self::LateHandler { .. } => "late registration".into(),
            Self::Pause { .. } => "pause".into(),
        }
    }
}

/// How the server and the informers of a run are configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Settings {
    /// Whether the namespaced and the selector-scoped informers stream their initial list
    /// (`sendInitialEvents`) instead of listing.
    pub streaming_list: bool,
    /// A fixed list page size of every informer (`None`: the reflector's rules).
    pub page_size: Option<u32>,
    /// The number of writes the server keeps for watches from older versions.
    pub history_size: usize,
    /// Whether watches failing with 500 are re-opened at once for a while instead of relisting
    /// (the reflector's `max_internal_error_retry_duration`).
    pub retry_internal_errors: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            streaming_list: false,
            page_size: None,
            history_size: 10_000,
            retry_internal_errors: false,
        }
    }
}

/// A run: the objects created before the informers start, then the steps.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Schedule {
    /// The seed it was generated from (kept by minimized schedules).
    pub seed: u64,
    /// Server and informer configuration.
    pub settings: Settings,
    /// Steps applied before the informers start.
    pub setup: Vec<Step>,
    /// Steps applied while the informers run.
    pub steps: Vec<Step>,
}

impl Schedule {
    /// Every step, setup first.
    pub fn all_steps(&self) -> impl Iterator<Item = &Step> {
        self.setup.iter().chain(&self.steps)
    }

    /// The number of steps, setup included.
    pub fn len(&self) -> usize {
        self.setup.len() + self.steps.len()
    }

    /// Whether there is no step at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many steps of each category the schedule has.
    pub fn category_counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for step in self.all_steps() {
            *counts.entry(step.category()).or_insert(0) += 1;
        }
        counts
    }

    /// The schedule as a Rust expression, for a regression test (with `Step::*`, `Kind::*`,
    /// `Verb::*` and `InformerId::*` in scope).
    pub fn to_rust(&self) -> String {
        let steps = |steps: &[Step]| -> String {
            if steps.is_empty() {
                return "vec![]".into();
            }
            let lines: Vec<String> = steps.iter().map(|s| format!("        {s:?},\n")).collect();
            format!("vec![\n{}    ]", lines.concat())
        };
        format!(
            "Schedule {{\n    seed: {},\n    settings: {:?},\n    setup: {},\n    steps: {},\n}}",
            self.seed,
            self.settings,
            steps(&self.setup),
            steps(&self.steps)
        )
    }
}

/// What the generator believes exists: `(kind, namespace, name) -> labelled front`.
type Model = BTreeMap<(Kind, u8, u8), bool>;

/// Faults that must be cleared a few steps after they are armed.
#[derive(Default)]
struct Pending {
    clear_faults_in: Option<usize>,
    delay_off_in: Option<usize>,
}

/// The schedule of `seed`: 2 to 8 objects created before the informers start, then 20 to 40
/// steps, about 60 % workload (mostly changes to existing objects) and 40 % faults, with short
/// pauses in between. 403s and 404s are cleared and delays switched off a few steps after they
/// are armed.
pub fn generate(seed: u64) -> Schedule {
    let mut rng = fastrand::Rng::with_seed(seed);
    let settings = Settings {
        streaming_list: rng.bool(),
        page_size: (rng.u8(..4) == 0).then_some(2),
        history_size: if rng.bool() { 10_000 } else { rng.usize(4..=16) },
        retry_internal_errors: rng.bool(),
    };
    let mut model = Model::new();
    let setup = setup_steps(&mut rng, &mut model);
    let mut steps = Vec::new();
    let mut pending = Pending::default();
    for _ in 0..rng.usize(20..=40) {
        if let Some(step) = pending_step(&mut pending) {
            steps.push(step);
        }
        let step = if rng.u8(..100) < 60 {
            let existing: Vec<(Kind, u8, u8)> = model.keys().copied().collect();
            let (kind, namespace, name) = if !existing.is_empty() && rng.u8(..10) < 7 {
                existing[rng.usize(..existing.len())]
            } else {
                pick_object(&mut rng)
            };
            workload_step(&mut rng, &mut model, kind, namespace, name)
        } else {
            fault_step(&mut rng, &mut pending)
        };
        steps.push(step);
        maybe_pause(&mut rng, &mut steps);
    }
    Schedule {
        seed,
        settings,
        setup,
        steps,
    }
}

/// A schedule of `seed` whose only faults are connection resets and panicking user code,
/// with a history long enough that no watch is ever too old: none of it may cause a relist.
pub fn generate_resets_and_panics(seed: u64) -> Schedule {
    let mut rng = fastrand::Rng::with_seed(seed);
    let settings = Settings {
        streaming_list: rng.bool(),
        page_size: (rng.u8(..4) == 0).then_some(2),
        ..Settings::default()
    };
    let mut model = Model::new();
    let setup = setup_steps(&mut rng, &mut model);
    let mut steps = Vec::new();
    for _ in 0..rng.usize(20..=40) {
        let step = if rng.u8(..100) < 75 {
            let (kind, namespace, name) = pick_object(&mut rng);
            workload_step(&mut rng, &mut model, kind, namespace, name)
        } else {
            Step::ResetWatches
        };
        steps.push(step);
        maybe_pause(&mut rng, &mut steps);
    }
    Schedule {
        seed,
        settings,
        setup,
        steps,
    }
}

/// 2 to 8 objects created before the informers start.
fn setup_steps(rng: &mut fastrand::Rng, model: &mut Model) -> Vec<Step> {
    (0..rng.usize(2..=8))
        .map(|_| {
            let (kind, namespace, name) = pick_object(rng);
            workload_step(rng, model, kind, namespace, name)
        })
        .collect()
}

/// A short pause after one step in three.
fn maybe_pause(rng: &mut fastrand::Rng, steps: &mut Vec<Step>) {
    if rng.u8(..3) == 0 {
        steps.push(Step::Pause {
            millis: rng.u64(5..=40),
        });
    }
}

fn pick_object(rng: &mut fastrand::Rng) -> (Kind, u8, u8) {
    let kind = if rng.u8(..4) == 0 {
        Kind::ConfigMaps
    } else {
        Kind::Pods
    };
    let namespace = rng.u8(..NAMESPACES.len() as u8);
    (kind, namespace, rng.u8(..NAMES_PER_NAMESPACE))
}

fn workload_step(rng: &mut fastrand::Rng, model: &mut Model, kind: Kind, namespace: u8, name: u8) -> Step {
    let key = (kind, namespace, name);
    let Some(&front) = model.get(&key) else {
        let front = rng.bool();
        model.insert(key, front);
        return Step::Create {
            kind,
            namespace,
            name,
            front,
        };
    };
    match rng.u8(..20) {
        0..7 => Step::Update {
            kind,
            namespace,
            name,
        },
        7..9 => Step::Poison {
            kind,
            namespace,
            name,
            poison: [Poison::Transform, Poison::IndexFunction, Poison::Cured][rng.usize(..3)],
        },
        9..14 => {
            model.insert(key, !front);
            Step::Relabel {
                kind,
                namespace,
                name,
                front: !front,
            }
        }
        _ => {
            model.remove(&key);
            Step::Delete {
                kind,
                namespace,
                name,
            }
        }
    }
}

fn pending_step(pending: &mut Pending) -> Option<Step> {
    for (countdown, step) in [
        (&mut pending.clear_faults_in, Step::ClearFaults),
        (&mut pending.delay_off_in, Step::Delay { millis: 0 }),
    ] {
        if let Some(left) = countdown {
            if *left == 0 {
                *countdown = None;
                return Some(step);
            }
            *left -= 1;
        }
    }
    None
}

fn fault_step(rng: &mut fastrand::Rng, pending: &mut Pending) -> Step {
    let verb = if rng.bool() { Verb::List } else { Verb::Watch };
    let kind = if rng.u8(..4) == 0 {
        Kind::ConfigMaps
    } else {
        Kind::Pods
    };
    match rng.u8(..108) {
        100..108 => Step::ResetWatches,
        0..12 => Step::DropWatches,
        12..24 => Step::DropWatchesAfter {
            events: rng.u64(1..=5),
        },
        24..31 => Step::Restart,
        31..40 => Step::Compact,
        40..49 => Step::Fail {
            code: 500,
            verb,
            kind,
            times: rng.usize(1..=3),
        },
        49..57 => {
            pending.clear_faults_in = Some(rng.usize(1..=4));
            Step::Fail {
                code: if rng.u8(..3) == 0 { 404 } else { 403 },
                verb,
                kind,
                times: PERSISTENT_FAILURE_TIMES,
            }
        }
        57..59 => Step::Throttle { verb, kind },
        59..68 => Step::MalformedLine,
        68..74 => {
            pending.delay_off_in = Some(rng.usize(1..=4));
            Step::Delay {
                millis: rng.u64(10..=120),
            }
        }
        74..81 => Step::BlockHandler {
            millis: rng.u64(20..=250),
        },
        81..88 => Step::PanicHandler {
            times: rng.u32(1..=3),
        },
        88..94 => Step::LateHandler {
            informer: InformerId::ALL[rng.usize(..InformerId::ALL.len())],
        },
        _ => Step::ClearFaults,
    }
}
