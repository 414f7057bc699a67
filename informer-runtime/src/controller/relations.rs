//! What a controller reads besides its own objects, one settings value per relation:
//! [`Owns`] (children that wake their controller owner) and [`Watches`] (objects that wake the
//! names a mapper returns), each with a scope, a predicate and a priority; and
//! [`ReconcileRequest`], what an external trigger asks for. controller-runtime's
//! `Owns(obj, opts...)` and `Watches(obj, handler, opts...)`, as values.

use std::{fmt, sync::Arc};

use super::relation::{self, Mapper, Wiring};
use crate::{
    factory::{SharedInformerFactory, TypedResource},
    key::ObjectKey,
    predicate::Predicate,
    scope::Scope,
    workqueue::Priority,
};

/// The children of type `C` a controller owns: a change of a child reconciles its controller
/// owner (the owner reference with `controller: true` whose group and kind are the
/// controller's type). Given to [`Controller::relation`](super::Controller::relation);
/// [`Controller::owns`](super::Controller::owns) is the short form of `Owns::new()`.
///
/// ```no_run
/// # fn build(factory: &informer_runtime::SharedInformerFactory) -> Result<(), Box<dyn std::error::Error>> {
/// use informer_runtime::{controller::{Controller, Owns}, predicate::Predicate, scope::Scope};
/// use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
///
/// let controller = Controller::<Deployment>::new(factory).relation(
///     Owns::<ReplicaSet>::new()
///         .scope(&Scope::all().namespace("prod")?)
///         // the children's status writes do not wake the owner
///         .predicate(Predicate::generation_changed()),
/// );
/// # let _ = controller; Ok(()) }
/// ```
pub struct Owns<C> {
    scope: Option<Scope<C>>,
    predicate: Option<Predicate<C>>,
    priority: Priority,
}

impl<C> Owns<C> {
    /// Every child in the factory's default scope of `C` ([`Builder::scope`](crate::factory::Builder::scope);
    /// every `C` when it has none), every change, at [`Priority::NORMAL`].
    pub fn new() -> Self {
        Self {
            scope: None,
            predicate: None,
            priority: Priority::NORMAL,
        }
    }

    /// Only the children in `scope`: only they are cached, and only they wake their owner.
    pub fn scope(mut self, scope: &Scope<C>) -> Self {
        self.scope = Some(scope.clone());
        self
    }

    /// Only the changes of children that `predicate` passes (for example
    /// [`Predicate::generation_changed`] to ignore the children's status writes); called
    /// again, a change must pass every predicate given.
    pub fn predicate(mut self, predicate: Predicate<C>) -> Self
    where
        C: kube::Resource + 'static,
    {
        self.predicate = Some(combined(self.predicate.take(), predicate));
        self
    }

    /// The priority at which a live change of a child enqueues its owner
    /// ([`Priority::NORMAL`] by default); the initial list stays at [`Priority::LOW`].
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }
}

impl<C> Default for Owns<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C> fmt::Debug for Owns<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Owns")
            .field("scope", &self.scope)
            .field("predicate", &self.predicate.as_ref().map(Predicate::name))
            .field("priority", &self.priority)
            .finish()
    }
}

/// Objects of type `O` a controller watches: a change of one reconciles the names its mapper
/// returns (for the old and the new state of an update, and the last known state of a deleted
/// object). Given to [`Controller::relation`](super::Controller::relation);
/// [`Controller::watches`](super::Controller::watches) is the short form of
/// `Watches::new(mapper)`.
///
/// ```no_run
/// # fn build(factory: &informer_runtime::SharedInformerFactory) -> Result<(), Box<dyn std::error::Error>> {
/// use informer_runtime::{ObjectKey, controller::{Controller, Watches}, predicate::Predicate};
/// use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};
///
/// let controller = Controller::<Deployment>::new(factory).relation(
///     Watches::new(|config_map: &ConfigMap| {
///         // the deployments that mount it, e.g. from a typed index
///         # let _ = config_map;
///         Vec::<ObjectKey>::new()
///     })
///     // only config maps labelled for us; the mapper is not called for the others
///     .predicate(Predicate::labels("app.example.com/config")?),
/// );
/// # let _ = controller; Ok(()) }
/// ```
pub struct Watches<O> {
    mapper: Mapper<O>,
    scope: Option<Scope<O>>,
    predicate: Option<Predicate<O>>,
    priority: Priority,
}

impl<O> Watches<O> {
    /// Every object of `O` in the factory's default scope of `O` (every `O` when it has none),
    /// every change, each reconciling the names `mapper` returns, at [`Priority::NORMAL`].
    pub fn new<I>(mapper: impl Fn(&O) -> I + Send + Sync + 'static) -> Self
    where
        I: IntoIterator<Item = ObjectKey>,
    {
        Self {
            mapper: Arc::new(move |object| mapper(object).into_iter().collect()),
            scope: None,
            predicate: None,
            priority: Priority::NORMAL,
        }
    }

    /// Only the objects in `scope`: only they are cached and mapped.
    pub fn scope(mut self, scope: &Scope<O>) -> Self {
        self.scope = Some(scope.clone());
        self
    }

    /// Only the changes that `predicate` passes (the mapper is not called for the others);
    /// called again, a change must pass every predicate given.
    pub fn predicate(mut self, predicate: Predicate<O>) -> Self
    where
        O: kube::Resource + 'static,
    {
        self.predicate = Some(combined(self.predicate.take(), predicate));
        self
    }

    /// The priority at which a live change enqueues the mapped names ([`Priority::NORMAL`] by
    /// default); the initial list stays at [`Priority::LOW`].
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }
}

impl<O> fmt::Debug for Watches<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watches")
            .field("scope", &self.scope)
            .field("predicate", &self.predicate.as_ref().map(Predicate::name))
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

/// `earlier` and `predicate` together.
fn combined<K: kube::Resource + 'static>(
    earlier: Option<Predicate<K>>,
    predicate: Predicate<K>,
) -> Predicate<K> {
    match earlier {
        Some(earlier) => earlier.and(predicate),
        None => predicate,
    }
}

/// How a [`Relation`] registers on a factory's informers.
type WireFn = dyn FnOnce(&SharedInformerFactory) -> Vec<Wiring> + Send;

/// A relation of a controller of `K`, from [`Owns`] or [`Watches`]: what
/// [`Controller::relation`](super::Controller::relation) takes.
pub struct Relation<K> {
    wire: Box<WireFn>,
    description: &'static str,
    _controller: std::marker::PhantomData<fn() -> K>,
}

impl<K> Relation<K> {
    /// The handlers the relation registers on the factory's informers, one per informer of its
    /// scope.
    pub(crate) fn wire(self, factory: &SharedInformerFactory) -> Vec<Wiring> {
        (self.wire)(factory)
    }
}

impl<K> fmt::Debug for Relation<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Relation")
            .field("of", &self.description)
            .finish_non_exhaustive()
    }
}

impl<K: TypedResource, C: TypedResource> From<Owns<C>> for Relation<K> {
    fn from(owns: Owns<C>) -> Self {
        Self {
            wire: Box::new(move |factory| {
                let scope = owns.scope.unwrap_or_else(|| factory.default_scope::<C>());
                let (predicate, priority) = (owns.predicate, owns.priority);
                factory
                    .informer_in(&scope)
                    .parts()
                    .map(|part| relation::owns::<K, C>(part, predicate.clone(), priority))
                    .collect()
            }),
            description: "owns",
            _controller: std::marker::PhantomData,
        }
    }
}

impl<K: TypedResource, O: TypedResource> From<Watches<O>> for Relation<K> {
    fn from(watches: Watches<O>) -> Self {
        Self {
            wire: Box::new(move |factory| {
                let scope = watches.scope.unwrap_or_else(|| factory.default_scope::<O>());
                let (predicate, priority, mapper) = (watches.predicate, watches.priority, watches.mapper);
                factory
                    .informer_in(&scope)
                    .parts()
                    .map(|part| relation::watches(part, predicate.clone(), priority, Arc::clone(&mapper)))
                    .collect()
            }),
            description: "watches",
            _controller: std::marker::PhantomData,
        }
    }
}

/// What an external trigger ([`Controller::reconcile_on`](super::Controller::reconcile_on))
/// asks for: one object, at a priority. An [`ObjectKey`] asks at [`Priority::NORMAL`]; a pair
/// `(ObjectKey, Priority)` at its priority ([`Priority::HIGH`] is reconciled before the live
/// changes waiting in the queue, [`Priority::LOW`] after them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReconcileRequest {
    /// The object to reconcile.
    pub key: ObjectKey,
    /// Its priority in the controller's queue.
    pub priority: Priority,
}

impl From<ObjectKey> for ReconcileRequest {
    fn from(key: ObjectKey) -> Self {
        Self {
            key,
            priority: Priority::NORMAL,
        }
    }
}

impl From<(ObjectKey, Priority)> for ReconcileRequest {
    fn from((key, priority): (ObjectKey, Priority)) -> Self {
        Self { key, priority }
    }
}
