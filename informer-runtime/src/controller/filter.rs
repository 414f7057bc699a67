//! [`Filtered`]: a controller's handler behind its predicates. Each notification becomes a
//! predicate [`Event`]; what passes goes on to the handler that enqueues.
//!
//! On the controller's own objects it also keeps the objects that left the controller's
//! scope while carrying its finalizer (see [`OutOfScope`]): an event the predicates reject
//! still passes when the object carries the finalizer and is out of scope
//! ([`Predicate::matches`] says no), and a DELETED notification of an object that still
//! carries it (a label-selector-restricted watch dropping an object that still exists) is
//! remembered for the worker and always passes.

use std::sync::{Arc, atomic::Ordering};

use kube::Resource;

use super::{gate::Gated, out_of_scope::OutOfScope, stats::Counters};
use crate::{
    cache::MaybeTombstone,
    informer::handler::ResourceEventHandler,
    key::ObjectKey,
    predicate::{Event, Predicate},
};

/// A handler that passes on the notifications its predicate lets through.
pub(crate) struct Filtered<K, H> {
    pub(crate) inner: H,
    pub(crate) predicate: Option<Predicate<K>>,
    pub(crate) controller: String,
    pub(crate) counters: Arc<Counters>,
    /// On the controller's own objects, when it declared a finalizer.
    pub(crate) out_of_scope: Option<Arc<OutOfScope>>,
    /// On a sharded controller's own objects: drains pass whatever the predicate says.
    pub(crate) gate: Option<Arc<Gated>>,
    /// Whether resyncs go on to `inner` (the controller's own objects); otherwise they are
    /// passed on unjudged, for `inner` to skip.
    pub(crate) resyncs: bool,
}

impl<K: Resource + 'static, H> Filtered<K, H> {
    /// Whether `event` passes the predicate, or passes anyway because its object left the
    /// scope with the controller's finalizer.
    fn passes(&self, event: &Event<'_, K>) -> bool {
        let Some(predicate) = &self.predicate else {
            return true;
        };
        if self
            .gate
            .as_ref()
            .is_some_and(|gate| gate.passes_anyway(event.object().meta()))
        {
            return true;
        }
        let evaluation = predicate.evaluate_for(&self.controller, event);
        if evaluation.panicked {
            self.counters.predicate_panics.fetch_add(1, Ordering::Relaxed);
        }
        if evaluation.passed {
            return true;
        }
        let object = event.object();
        let leaving = self
            .out_of_scope
            .as_ref()
            .is_some_and(|tracked| tracked.carries_finalizer(object) && !predicate.matches(object));
        if leaving {
            self.counters.out_of_scope.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(controller = %self.controller, object = %ObjectKey::of(object), "out of scope but carries the controller's finalizer: reconciled to clean up");
            return true;
        }
        self.counters.filtered.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Whether a delete notification is an object leaving the watch with the controller's
    /// finalizer (then remembered for the worker).
    fn remember_if_leaving(&self, object: &MaybeTombstone<K>) -> bool {
        let (Some(tracked), Some(last)) = (&self.out_of_scope, object.object()) else {
            return false;
        };
        if !tracked.carries_finalizer(last.as_ref()) {
            return false;
        }
        // The API server deletes an object only once its finalizers are gone: a DELETED
        // notification whose object still carries ours is the watch losing sight of it.
        self.counters.out_of_scope.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(controller = %self.controller, object = %object.key(), "left the watch but carries the controller's finalizer: reconciled to clean up");
        tracked.remember(object.key());
        true
    }
}

impl<K, H> ResourceEventHandler<K> for Filtered<K, H>
where
    K: Resource + Send + Sync + 'static,
    H: ResourceEventHandler<K>,
{
    fn on_add(&self, object: Arc<K>, is_in_initial_list: bool) {
        if let Some(tracked) = &self.out_of_scope {
            tracked.forget(&ObjectKey::of(object.as_ref()));
        }
        let event = Event::Create {
            object: object.as_ref(),
            is_in_initial_list,
        };
        if self.passes(&event) {
            self.inner.on_add(object, is_in_initial_list);
        }
    }

    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        let resync = old.meta().resource_version == new.meta().resource_version;
        if resync && !self.resyncs {
            self.inner.on_update(old, new);
            return;
        }
        let event = if resync {
            Event::Generic { object: new.as_ref() }
        } else {
            Event::Update {
                old: old.as_ref(),
                new: new.as_ref(),
            }
        };
        if self.passes(&event) {
            self.inner.on_update(old, new);
        }
    }

    fn on_delete(&self, object: MaybeTombstone<K>) {
        if self.remember_if_leaving(&object) {
            self.inner.on_delete(object);
            return;
        }
        let passes = match object.object() {
            Some(last) => self.passes(&Event::Delete {
                object: last.as_ref(),
                final_state_unknown: matches!(object, MaybeTombstone::Tombstone(_)),
            }),
            // Nothing to judge: the key alone goes on.
            None => true,
        };
        if passes {
            self.inner.on_delete(object);
        }
    }
}

#[cfg(test)]
mod tests;
