//! The invariants a run must keep, and the checks behind them.
//!
//! 1. Every informer's store equals the server's objects in its scope, object by object,
//!    resourceVersion included ([`compare_states`]).
//! 2. Replaying the notifications a handler received reconstructs exactly that state, and the
//!    notifications make sense in order: no add of a cached key, no update or delete of an
//!    unknown key, an update's old object is the state before it, a tombstone carries the last
//!    known state, and no key's resourceVersion goes back ([`replay`]).
//! 3. `has_synced` of an informer or a registration never turns false once true
//!    ([`SyncedTracker`]), and every registration, late ones included, syncs.
//! 4. After shutdown nothing runs any more (checked by the harness).

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    fmt,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use informer_runtime::{ObjectKey, cache::MaybeTombstone, informer::handler::Notification};
use kube::Resource;
use serde::Serialize;
use serde_json::Value;

use super::schedule::{REVISION_ANNOTATION, TIER_LABEL};

/// The invariant a [`Violation`] breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Invariant {
    /// An informer's store differs from the server's objects in its scope.
    StoreMatchesServer,
    /// A handler's replayed notifications differ from the store.
    ReplayMatchesStore,
    /// A handler received a notification that contradicts the earlier ones (a phantom delete,
    /// an add of a cached key, an update whose old object is not the state before, a
    /// resourceVersion going back).
    NotificationsConsistent,
    /// `has_synced` turned false after it was true.
    SyncedStaysTrue,
    /// A registration never synced, or its handler never caught up.
    RegistrationsSync,
    /// The runtime's panic count of a handler, a transform or an index function differs from
    /// the panics it raised or from what the watch-error handler was told.
    PanicsCounted,
    /// An index does not hold what the store holds (objects whose index function panics are
    /// left out).
    IndexMatchesStore,
    /// Something kept running after shutdown (a task, a handler thread, a watch).
    ShutdownEndsEverything,
}

impl Invariant {
    /// Whether a violation stays a violation however long the run waits (the others may be a
    /// state that has not converged yet).
    pub fn is_permanent(self) -> bool {
        matches!(self, Self::NotificationsConsistent | Self::SyncedStaysTrue)
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::StoreMatchesServer => "the store equals the server's state in its scope",
            Self::ReplayMatchesStore => "replaying a handler's notifications gives the store's state",
            Self::NotificationsConsistent => "notifications are consistent with each other",
            Self::SyncedStaysTrue => "has_synced never turns false once true",
            Self::RegistrationsSync => "every registration syncs and catches up",
            Self::PanicsCounted => "panics in handlers and user functions are caught, counted and reported",
            Self::IndexMatchesStore => "indexes hold the cached objects their functions index",
            Self::ShutdownEndsEverything => "shutdown ends every task, handler thread and watch",
        })
    }
}

/// A broken invariant, with what was expected and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Which invariant.
    pub invariant: Invariant,
    /// Where and how: informer, handler, key, expected and actual.
    pub details: String,
}

impl Violation {
    /// A violation of `invariant`.
    pub fn new(invariant: Invariant, details: impl Into<String>) -> Self {
        Self {
            invariant,
            details: details.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "violated: {}: {}", self.invariant, self.details)
    }
}

/// Objects by key (`namespace/name`).
pub type State<K> = BTreeMap<ObjectKey, Arc<K>>;

/// The numeric resourceVersion of `object`.
pub fn resource_version<K: Resource>(object: &K) -> Option<u64> {
    object.meta().resource_version.as_deref()?.parse().ok()
}

/// A short description of an object's version: `rv=12 tier=front revision=3`.
pub fn describe<K: Resource>(object: &K) -> String {
    let meta = object.meta();
    let label = |key: &str| {
        meta.labels
            .as_ref()
            .and_then(|l| l.get(key))
            .map_or("-", String::as_str)
            .to_owned()
    };
    let revision = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(REVISION_ANNOTATION))
        .map_or("0", String::as_str);
    format!(
        "rv={} {TIER_LABEL}={} revision={revision}",
        meta.resource_version.as_deref().unwrap_or("none"),
        label(TIER_LABEL)
    )
}

/// Where two objects' JSON forms first differ: the path of the field and both values
/// (`none` for a missing field), such as `metadata.annotations: {} vs none`.
pub fn first_difference<K: Serialize>(expected: &K, actual: &K) -> Option<String> {
    fn walk(path: &str, expected: Option<&Value>, actual: Option<&Value>) -> Option<String> {
        let show = |value: Option<&Value>| value.map_or_else(|| "none".to_owned(), Value::to_string);
        match (expected, actual) {
            (Some(Value::Object(want)), Some(Value::Object(have))) => {
                let keys: BTreeSet<&String> = want.keys().chain(have.keys()).collect();
                keys.into_iter().find_map(|key| {
                    let path = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(&path, want.get(key), have.get(key))
                })
            }
            (Some(Value::Array(want)), Some(Value::Array(have))) if want.len() == have.len() => want
                .iter()
                .zip(have)
                .enumerate()
                .find_map(|(i, (want, have))| walk(&format!("{path}[{i}]"), Some(want), Some(have))),
            _ if expected == actual => None,
            _ => Some(format!("{path}: {} vs {}", show(expected), show(actual))),
        }
    }
    let (expected, actual) = (
        serde_json::to_value(expected).ok()?,
        serde_json::to_value(actual).ok()?,
    );
    walk("", Some(&expected), Some(&actual))
}

/// The first difference between an expected and an actual state, and how many there are.
pub fn compare_states<K: Resource + PartialEq + Serialize>(
    expected: &State<K>,
    actual: &State<K>,
) -> Result<(), String> {
    let mut differences = Vec::new();
    for (key, want) in expected {
        match actual.get(key) {
            None => differences.push(format!("{key}: expected {}, missing", describe(want.as_ref()))),
            Some(have) if have != want => differences.push(format!(
                "{key}: expected {}, found {}{}",
                describe(want.as_ref()),
                describe(have.as_ref()),
                if resource_version(want.as_ref()) == resource_version(have.as_ref()) {
                    let at = first_difference(want.as_ref(), have.as_ref())
                        .map_or_else(String::new, |difference| format!(": {difference}"));
                    format!(" (same resourceVersion, different content{at})")
                } else {
                    String::new()
                }
            )),
            Some(_) => {}
        }
    }
    for (key, have) in actual {
        if !expected.contains_key(key) {
            differences.push(format!(
                "{key}: expected no object, found {}",
                describe(have.as_ref())
            ));
        }
    }
    match differences.as_slice() {
        [] => Ok(()),
        [only] => Err(only.clone()),
        [first, ..] => Err(format!("{} differences, first: {first}", differences.len())),
    }
}

/// Replays a handler's notifications from an empty state, checking each against the state
/// before it; returns the final state or what was inconsistent (with the notification's
/// position).
pub fn replay<K: Resource + PartialEq>(log: &[Notification<K>]) -> Result<State<K>, String> {
    let mut state: State<K> = State::new();
    let mut highest: HashMap<ObjectKey, u64> = HashMap::new();
    for (position, notification) in log.iter().enumerate() {
        let at = |what: String| format!("notification #{position}: {what}");
        match notification {
            Notification::Add { object, .. } => {
                let key = ObjectKey::of(object.as_ref());
                let rv = checked_version(object.as_ref(), &key, &mut highest).map_err(at)?;
                if let Some(cached) = state.get(&key) {
                    return Err(at(format!(
                        "add of {key} at rv={rv}, but the handler already has it at {}",
                        describe(cached.as_ref())
                    )));
                }
                state.insert(key, Arc::clone(object));
            }
            Notification::Update { old, new } => {
                let key = ObjectKey::of(new.as_ref());
                let Some(cached) = state.get(&key) else {
                    return Err(at(format!(
                        "update of {key} to {}, but the handler has no such object",
                        describe(new.as_ref())
                    )));
                };
                if old != cached {
                    return Err(at(format!(
                        "update of {key}: old object {} is not the state before, {}",
                        describe(old.as_ref()),
                        describe(cached.as_ref())
                    )));
                }
                checked_version(new.as_ref(), &key, &mut highest).map_err(at)?;
                state.insert(key, Arc::clone(new));
            }
            Notification::Delete(deleted) => {
                let key = deleted.key();
                let Some(cached) = state.remove(&key) else {
                    return Err(at(format!(
                        "phantom delete of {key} ({}), the handler has no such object",
                        if deleted.is_tombstone() {
                            "tombstone"
                        } else {
                            "object"
                        }
                    )));
                };
                match deleted {
                    MaybeTombstone::Object(object) => {
                        checked_version(object.as_ref(), &key, &mut highest).map_err(at)?;
                    }
                    MaybeTombstone::Tombstone(tombstone) => {
                        if let Some(last) = &tombstone.obj
                            && *last != cached
                        {
                            return Err(at(format!(
                                "tombstone of {key} carries {}, but the last known state is {}",
                                describe(last.as_ref()),
                                describe(cached.as_ref())
                            )));
                        }
                    }
                }
            }
        }
    }
    Ok(state)
}

/// The resourceVersion of `object`, checked not to be below the highest seen for `key`.
fn checked_version<K: Resource>(
    object: &K,
    key: &ObjectKey,
    highest: &mut HashMap<ObjectKey, u64>,
) -> Result<u64, String> {
    let Some(rv) = resource_version(object) else {
        return Err(format!(
            "{key} has no numeric resourceVersion: {}",
            describe(object)
        ));
    };
    let seen = highest.entry(key.clone()).or_insert(rv);
    if rv < *seen {
        return Err(format!(
            "{key} went back from rv={} to {}",
            *seen,
            describe(object)
        ));
    }
    *seen = rv;
    Ok(rv)
}

/// Something whose `has_synced` is sampled.
struct Probe {
    name: String,
    has_synced: Box<dyn Fn() -> bool + Send + Sync>,
    was_synced: bool,
}

/// Samples `has_synced` of informers and registrations and remembers the first time one turned
/// false after being true.
#[derive(Default)]
pub struct SyncedTracker {
    probes: Mutex<Vec<Probe>>,
    samples: Mutex<u64>,
    violation: Mutex<Option<Violation>>,
}

impl SyncedTracker {
    fn lock_probes(&self) -> MutexGuard<'_, Vec<Probe>> {
        self.probes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Samples `has_synced` under `name` from now on.
    pub fn watch(&self, name: impl Into<String>, has_synced: impl Fn() -> bool + Send + Sync + 'static) {
        self.lock_probes().push(Probe {
            name: name.into(),
            has_synced: Box::new(has_synced),
            was_synced: false,
        });
    }

    /// Samples every probe once.
    pub fn sample(&self) {
        let sample = {
            let mut samples = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
            *samples += 1;
            *samples
        };
        let mut probes = self.lock_probes();
        for probe in probes.iter_mut() {
            let synced = (probe.has_synced)();
            if probe.was_synced && !synced {
                let mut violation = self.violation.lock().unwrap_or_else(PoisonError::into_inner);
                violation.get_or_insert_with(|| {
                    Violation::new(
                        Invariant::SyncedStaysTrue,
                        format!(
                            "{}: has_synced was true, then false at sample {sample}",
                            probe.name
                        ),
                    )
                });
            }
            probe.was_synced |= synced;
        }
    }

    /// The number of samples taken.
    pub fn samples(&self) -> u64 {
        *self.samples.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The first flip seen, if any.
    pub fn violation(&self) -> Option<Violation> {
        self.violation
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
