//! Predicates: which changes of an object are worth a reconcile (controller-runtime's
//! `pkg/predicate`, kube-rs's `predicates`).
//!
//! A [`Predicate`] looks at one [`Event`] (an object created, updated, deleted, or re-delivered
//! by a resync) and says whether it passes. A controller reconciles an object only for events
//! that pass every predicate set on it ([`Controller::predicate`](crate::controller::Controller::predicate)),
//! and maps a related object to the objects it affects only for events that pass the
//! relation's predicate ([`Owns::predicate`](crate::controller::Owns::predicate),
//! [`Watches::predicate`](crate::controller::Watches::predicate)).
//!
//! | predicate | create | update | delete | generic (resync) |
//! |---|---|---|---|---|
//! | [`generation_changed`](Predicate::generation_changed) | passes | `metadata.generation` changed (or the deletion began) | passes | passes |
//! | [`labels_changed`](Predicate::labels_changed) | passes | labels changed | passes | passes |
//! | [`annotations_changed`](Predicate::annotations_changed) | passes | annotations changed | passes | passes |
//! | [`resource_version_changed`](Predicate::resource_version_changed) | passes | `metadata.resourceVersion` changed | passes | passes |
//! | [`label_selector`](Predicate::label_selector) | labels match | the new labels match | labels match | labels match |
//! | [`from_object_fn(f)`](Predicate::from_object_fn) | `f(object)` | `f(new)` | `f(object)` | `f(object)` |
//! | [`new(f)`](Predicate::new) | `f(event)` | `f(event)` | `f(event)` | `f(event)` |
//!
//! Combine them with [`and`](Predicate::and), [`or`](Predicate::or), `!` (or `.not()`, the
//! [`Not`](std::ops::Not) trait's method), [`all`](Predicate::all) and [`any`](Predicate::any).
//!
//! **The initial list** arrives as [`Event::Create`] events with `is_in_initial_list: true`
//! (also when a controller joins an informer that already synced): the change predicates pass
//! them, so every object is reconciled once at start; a predicate that rejects them leaves
//! those objects alone until they change.
//!
//! **Resyncs** (an update that re-delivers an unchanged object, same resource version) arrive
//! as [`Event::Generic`], which the change predicates pass: a resync period exists to
//! reconcile unchanged objects. Reject them with
//! `Predicate::new("no resyncs", |event| !event.is_generic())`.
//!
//! **An object leaving the scope.** [`matches`](Predicate::matches) asks the predicate about
//! an object's current state alone (a generic event): the change predicates say yes, a label
//! selector says whether the labels still match. A controller that declares its
//! [`finalizer`](crate::controller::Controller::finalizer) still reconciles objects that left
//! its scope while they carry that finalizer, so it can clean up and remove it (see the
//! [`finalizer`](crate::finalizer) module).
//!
//! **Panics.** A predicate that panics is caught: the panic is logged at error level with the
//! predicate's name and the object's key, counted ([`Predicate::panics`], and a controller's
//! [`ControllerStats::predicate_panics`](crate::controller::ControllerStats::predicate_panics)),
//! and **the event passes**. A reconcile too many costs a little work; an event dropped by a
//! bug would leave the object unreconciled until its next change.
//!
//! ```
//! use informer_runtime::predicate::{Event, Predicate};
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! let mut old = ConfigMap::default();
//! old.metadata.generation = Some(1);
//! old.metadata.labels = Some([("replicate".to_owned(), "true".to_owned())].into());
//! let mut new = old.clone();
//! new.metadata.resource_version = Some("2".into()); // a status write: same generation
//!
//! let spec_changes = Predicate::<ConfigMap>::generation_changed();
//! assert!(!spec_changes.evaluate(&Event::Update { old: &old, new: &new }));
//!
//! let replicated = Predicate::<ConfigMap>::labels("replicate=true")?;
//! let either = spec_changes.or(replicated.clone());
//! assert!(either.evaluate(&Event::Update { old: &old, new: &new }));
//! assert!(replicated.matches(&new));
//! # Ok::<(), informer_runtime::selector::Error>(())
//! ```

use std::{
    collections::BTreeMap,
    fmt,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use kube::{
    Resource,
    core::{Selector, SelectorExt},
};

use crate::{key::ObjectKey, selector, user_panic::catch};

/// What happened to an object, as a [`Predicate`] sees it (controller-runtime's
/// `CreateEvent`, `UpdateEvent`, `DeleteEvent` and `GenericEvent`).
#[derive(Debug)]
pub enum Event<'a, K> {
    /// The object appeared: created, or listed.
    Create {
        /// The object.
        object: &'a K,
        /// Whether it came with the informer's initial list rather than with a later change.
        is_in_initial_list: bool,
    },
    /// The object changed (its resource version differs).
    Update {
        /// The state before.
        old: &'a K,
        /// The state after.
        new: &'a K,
    },
    /// The object was deleted.
    Delete {
        /// Its last known state.
        object: &'a K,
        /// Whether the deletion was only inferred by a relist (a tombstone), so that the
        /// state may be older than the deletion.
        final_state_unknown: bool,
    },
    /// The object did not change but is delivered again: a resync, or a question about its
    /// current state ([`Predicate::matches`]).
    Generic {
        /// The object.
        object: &'a K,
    },
}

impl<K> Clone for Event<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Event<'_, K> {}

impl<'a, K> Event<'a, K> {
    /// The object the event is about (the new state of an update).
    pub fn object(&self) -> &'a K {
        match *self {
            Self::Create { object, .. } | Self::Delete { object, .. } | Self::Generic { object } => object,
            Self::Update { new, .. } => new,
        }
    }

    /// Whether this is an [`Event::Generic`] (a resync).
    pub fn is_generic(&self) -> bool {
        matches!(self, Self::Generic { .. })
    }

    /// The kind of event, in lowercase (`create`, `update`, `delete`, `generic`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Create { .. } => "create",
            Self::Update { .. } => "update",
            Self::Delete { .. } => "delete",
            Self::Generic { .. } => "generic",
        }
    }
}

type Test<K> = Arc<dyn Fn(&Event<'_, K>) -> bool + Send + Sync>;

/// A filter of events of `K` objects (see the [module documentation](self)). Cheap to clone:
/// clones share the test and the panic count.
pub struct Predicate<K> {
    name: Arc<str>,
    test: Test<K>,
    panics: Arc<AtomicU64>,
}

impl<K> Clone for Predicate<K> {
    fn clone(&self) -> Self {
        Self {
            name: Arc::clone(&self.name),
            test: Arc::clone(&self.test),
            panics: Arc::clone(&self.panics),
        }
    }
}

impl<K> fmt::Debug for Predicate<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Predicate")
            .field("name", &self.name)
            .field("panics", &self.panics())
            .finish_non_exhaustive()
    }
}

/// Whether two optional maps are equal, an absent map being an empty one (the API server
/// omits empty maps, so the two mean the same).
fn same_map(a: Option<&BTreeMap<String, String>>, b: Option<&BTreeMap<String, String>>) -> bool {
    a.filter(|map| !map.is_empty()) == b.filter(|map| !map.is_empty())
}

/// The labels of `object` (an empty map when it has none).
fn labels_of<K: Resource>(object: &K) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    object.meta().labels.as_ref().unwrap_or(&EMPTY)
}

impl<K: Resource + 'static> Predicate<K> {
    /// A predicate named `name` (used in logs) that passes the events `test` accepts: any
    /// closure over the [`Event`].
    ///
    /// ```
    /// use informer_runtime::predicate::{Event, Predicate};
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// // reconcile pods when they are created or deleted, not when they change
    /// let lifecycle = Predicate::<Pod>::new("create or delete", |event| {
    ///     matches!(event, Event::Create { .. } | Event::Delete { .. })
    /// });
    /// # let _ = lifecycle;
    /// ```
    pub fn new(
        name: impl Into<String>,
        test: impl Fn(&Event<'_, K>) -> bool + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: Arc::from(name.into()),
            test: Arc::new(test),
            panics: Arc::default(),
        }
    }

    /// A predicate that passes every event whose object `test` accepts (the new state of an
    /// update): controller-runtime's `NewPredicateFuncs`. The object filter also decides
    /// [`matches`](Self::matches).
    pub fn from_object_fn(
        name: impl Into<String>,
        test: impl Fn(&K) -> bool + Send + Sync + 'static,
    ) -> Self {
        Self::new(name, move |event| test(event.object()))
    }

    /// Passes updates whose `metadata.generation` changed, and every other event
    /// (controller-runtime's `GenerationChangedPredicate`). The API server raises the
    /// generation on changes of the spec, not of the status or metadata, so a controller
    /// writing its own status does not wake itself. Objects without a generation never raise
    /// it: updates of them never pass.
    ///
    /// An update that sets `metadata.deletionTimestamp` passes too: kube-apiserver (and the
    /// embedded test server) raise the generation then as well, for types that keep one, but
    /// a server that does not (an aggregated API) must not hide a deletion from a controller
    /// whose finalizer waits for it.
    pub fn generation_changed() -> Self {
        Self::new("generation changed", |event| match event {
            Event::Update { old, new } => {
                old.meta().generation != new.meta().generation
                    || (old.meta().deletion_timestamp.is_none() && new.meta().deletion_timestamp.is_some())
            }
            _ => true,
        })
    }

    /// Passes updates whose labels changed, and every other event
    /// (controller-runtime's `LabelChangedPredicate`). No labels and an empty map are equal.
    pub fn labels_changed() -> Self {
        Self::new("labels changed", |event| match event {
            Event::Update { old, new } => !same_map(old.meta().labels.as_ref(), new.meta().labels.as_ref()),
            _ => true,
        })
    }

    /// Passes updates whose annotations changed, and every other event
    /// (controller-runtime's `AnnotationChangedPredicate`). No annotations and an empty map
    /// are equal.
    pub fn annotations_changed() -> Self {
        Self::new("annotations changed", |event| match event {
            Event::Update { old, new } => {
                !same_map(old.meta().annotations.as_ref(), new.meta().annotations.as_ref())
            }
            _ => true,
        })
    }

    /// Passes updates whose `metadata.resourceVersion` changed, and every other event
    /// (controller-runtime's `ResourceVersionChangedPredicate`).
    pub fn resource_version_changed() -> Self {
        Self::new("resource version changed", |event| match event {
            Event::Update { old, new } => old.meta().resource_version != new.meta().resource_version,
            _ => true,
        })
    }

    /// Passes the events of objects whose labels `selector` matches (the new labels of an
    /// update): controller-runtime's `LabelSelectorPredicate`. Build the selector with kube's
    /// [`Selector`] and [`Expression`](kube::core::Expression), from a `LabelSelector`
    /// (`Selector::try_from`), or from text with [`labels`](Self::labels).
    pub fn label_selector(selector: Selector) -> Self {
        let name = format!("labels match {selector}");
        Self::from_object_fn(name, move |object| selector.matches(labels_of(object)))
    }

    /// [`label_selector`](Self::label_selector) of a selector written as text (`app=web`,
    /// `tier in (fe, be)`), parsed by [`selector::parse_label_selector`].
    ///
    /// # Errors
    ///
    /// [`selector::Error`] when the text is not a valid label selector.
    pub fn labels(selector: &str) -> Result<Self, selector::Error> {
        selector::parse_label_selector(selector).map(Self::label_selector)
    }

    /// Passes the events both `self` and `other` pass (`other` is not asked about events
    /// `self` rejects).
    #[must_use]
    pub fn and(self, other: Self) -> Self {
        let name = format!("({} and {})", self.name, other.name);
        Self::new(name, move |event| (self.test)(event) && (other.test)(event))
    }

    /// Passes the events `self` or `other` passes (`other` is not asked about events `self`
    /// passes).
    #[must_use]
    pub fn or(self, other: Self) -> Self {
        let name = format!("({} or {})", self.name, other.name);
        Self::new(name, move |event| (self.test)(event) || (other.test)(event))
    }

    /// Passes the events every one of `predicates` passes (every event when there are none).
    pub fn all(predicates: impl IntoIterator<Item = Self>) -> Self {
        let predicates: Vec<Self> = predicates.into_iter().collect();
        let names: Vec<&str> = predicates.iter().map(|p| &*p.name).collect();
        let name = format!("all of [{}]", names.join(", "));
        Self::new(name, move |event| predicates.iter().all(|p| (p.test)(event)))
    }

    /// Passes the events any one of `predicates` passes (no event when there are none).
    pub fn any(predicates: impl IntoIterator<Item = Self>) -> Self {
        let predicates: Vec<Self> = predicates.into_iter().collect();
        let names: Vec<&str> = predicates.iter().map(|p| &*p.name).collect();
        let name = format!("any of [{}]", names.join(", "));
        Self::new(name, move |event| predicates.iter().any(|p| (p.test)(event)))
    }

    /// Whether `event` passes. A panic of the test is caught, logged and counted
    /// ([`panics`](Self::panics)), and the event passes.
    pub fn evaluate(&self, event: &Event<'_, K>) -> bool {
        self.evaluate_for("", event).passed
    }

    /// Whether the object's current state is in the predicate's scope: whether it passes a
    /// generic event of `object`. The change predicates always say yes; a label selector
    /// says whether the labels match.
    pub fn matches(&self, object: &K) -> bool {
        self.evaluate(&Event::Generic { object })
    }

    /// [`evaluate`](Self::evaluate) on behalf of `user` (a controller's name, for the log).
    pub(crate) fn evaluate_for(&self, user: &str, event: &Event<'_, K>) -> Evaluation {
        match catch(|| (self.test)(event)) {
            Ok(passed) => Evaluation {
                passed,
                panicked: false,
            },
            Err(message) => {
                self.panics.fetch_add(1, Ordering::Relaxed);
                tracing::error!(
                    controller = user,
                    predicate = %self.name,
                    event = event.kind(),
                    object = %ObjectKey::of(event.object()),
                    panic = %message,
                    "a predicate panicked; the event passes"
                );
                Evaluation {
                    passed: true,
                    panicked: true,
                }
            }
        }
    }
}

impl<K> Predicate<K> {
    /// The predicate's name, as logged (`(generation changed or labels match app=web)`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How often the test panicked (all clones together).
    pub fn panics(&self) -> u64 {
        self.panics.load(Ordering::Relaxed)
    }
}

/// `!predicate` passes the events `predicate` rejects.
impl<K: Resource + 'static> std::ops::Not for Predicate<K> {
    type Output = Self;

    fn not(self) -> Self {
        let name = format!("not {}", self.name);
        Self::new(name, move |event| !(self.test)(event))
    }
}

/// The result of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Evaluation {
    /// Whether the event passes (also after a panic).
    pub(crate) passed: bool,
    /// Whether the test panicked.
    pub(crate) panicked: bool,
}

#[cfg(test)]
mod tests;
