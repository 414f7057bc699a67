//! Event handlers: what an informer calls for every add, update and delete.

use std::sync::Arc;

use crate::cache::MaybeTombstone;

/// One change delivered to a handler.
#[derive(Debug)]
pub enum Notification<K> {
    /// An object appeared; `is_in_initial_list` is true for the objects of the first list (and
    /// for the replay a handler gets when it joins late).
    Add {
        /// The object.
        object: Arc<K>,
        /// Whether it belongs to the initial state rather than to a later change.
        is_in_initial_list: bool,
    },
    /// An object changed (or was re-delivered by a resync: then `old` and `new` have the same
    /// resource version).
    Update {
        /// The state before.
        old: Arc<K>,
        /// The state after.
        new: Arc<K>,
    },
    /// An object was deleted: its final state, or a tombstone if the deletion was only seen
    /// by a relist.
    Delete(MaybeTombstone<K>),
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Add {
                object,
                is_in_initial_list,
            } => Self::Add {
                object: Arc::clone(object),
                is_in_initial_list: *is_in_initial_list,
            },
            Self::Update { old, new } => Self::Update {
                old: Arc::clone(old),
                new: Arc::clone(new),
            },
            Self::Delete(obj) => Self::Delete(obj.clone()),
        }
    }
}

/// Receives an informer's notifications (client-go's `ResourceEventHandler`).
///
/// Calls for one handler are sequential and in order, on a thread of the handler's own, so a
/// slow handler delays only itself. Keep handlers short: the usual handler puts a key on a
/// work queue. A panic is caught and logged; the handler keeps receiving notifications.
///
/// During a burst of changes the thread takes what arrived within each 1 ms window at once
/// rather than being woken for every change, so a change reaches the handler at most 1 ms
/// late; after a quiet window it is handled as soon as it is sent.
pub trait ResourceEventHandler<K>: Send + Sync + 'static {
    /// An object was added.
    fn on_add(&self, object: Arc<K>, is_in_initial_list: bool) {
        let _ = (object, is_in_initial_list);
    }

    /// An object was updated, or re-delivered by a resync.
    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        let _ = (old, new);
    }

    /// An object was deleted.
    fn on_delete(&self, object: MaybeTombstone<K>) {
        let _ = object;
    }
}

type AddFn<K> = Box<dyn Fn(Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(Arc<K>, Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(MaybeTombstone<K>) + Send + Sync>;

/// A handler made of closures (client-go's `ResourceEventHandlerFuncs`); missing ones do
/// nothing.
///
/// ```
/// use informer_runtime::informer::handler::EventHandlerFuncs;
/// use k8s_openapi::api::core::v1::Pod;
///
/// let handler = EventHandlerFuncs::<Pod>::new()
///     .added(|pod, _initial| println!("added {:?}", pod.metadata.name))
///     .updated(|_old, new| println!("updated {:?}", new.metadata.name))
///     .deleted(|deleted| println!("deleted {}", deleted.key()));
/// # let _ = handler;
/// ```
pub struct EventHandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for EventHandlerFuncs<K> {
    fn default() -> Self {
        Self {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> EventHandlerFuncs<K> {
    /// A handler that does nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Called for added objects, with whether they belong to the initial list.
    #[must_use]
    pub fn added(mut self, f: impl Fn(Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Called for updated objects with the old and the new state.
    #[must_use]
    pub fn updated(mut self, f: impl Fn(Arc<K>, Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Called for deleted objects (possibly tombstones).
    #[must_use]
    pub fn deleted(mut self, f: impl Fn(MaybeTombstone<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K> for EventHandlerFuncs<K> {
    fn on_add(&self, object: Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &self.add {
            f(object, is_in_initial_list);
        }
    }

    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new);
        }
    }

    fn on_delete(&self, object: MaybeTombstone<K>) {
        if let Some(f) = &self.delete {
            f(object);
        }
    }
}

/// Passes on only the objects that `filter` accepts (client-go's
/// `FilteringResourceEventHandler`): an update whose old state passed and new state does not
/// becomes a delete, and the reverse becomes an add.
pub struct FilteringHandler<K, H> {
    filter: Box<dyn Fn(&K) -> bool + Send + Sync>,
    handler: H,
}

impl<K, H> FilteringHandler<K, H> {
    /// Wraps `handler` with `filter`.
    pub fn new(filter: impl Fn(&K) -> bool + Send + Sync + 'static, handler: H) -> Self {
        Self {
            filter: Box::new(filter),
            handler,
        }
    }
}

impl<K: Send + Sync + 'static, H: ResourceEventHandler<K>> ResourceEventHandler<K>
    for FilteringHandler<K, H>
{
    fn on_add(&self, object: Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(&object) {
            self.handler.on_add(object, is_in_initial_list);
        }
    }

    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        match ((self.filter)(&old), (self.filter)(&new)) {
            (true, true) => self.handler.on_update(old, new),
            (false, true) => self.handler.on_add(new, false),
            (true, false) => self.handler.on_delete(MaybeTombstone::Object(old)),
            (false, false) => {}
        }
    }

    fn on_delete(&self, object: MaybeTombstone<K>) {
        // A tombstone without an object cannot be filtered: pass it on.
        if object.object().is_none_or(|o| (self.filter)(o)) {
            self.handler.on_delete(object);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl ResourceEventHandler<i32> for Arc<Recorder> {
        fn on_add(&self, object: Arc<i32>, is_in_initial_list: bool) {
            self.0
                .lock()
                .expect("lock")
                .push(format!("add {object} {is_in_initial_list}"));
        }
        fn on_update(&self, old: Arc<i32>, new: Arc<i32>) {
            self.0.lock().expect("lock").push(format!("update {old}->{new}"));
        }
        fn on_delete(&self, object: MaybeTombstone<i32>) {
            self.0
                .lock()
                .expect("lock")
                .push(format!("delete {:?}", object.object().map(|o| **o)));
        }
    }

    #[test]
    fn filtering_handler_maps_transitions() {
        let recorder = Arc::new(Recorder::default());
        let even = FilteringHandler::new(|n: &i32| n % 2 == 0, Arc::clone(&recorder));
        even.on_add(Arc::new(1), true);
        even.on_add(Arc::new(2), true);
        even.on_update(Arc::new(2), Arc::new(4));
        even.on_update(Arc::new(3), Arc::new(6));
        even.on_update(Arc::new(8), Arc::new(9));
        even.on_update(Arc::new(1), Arc::new(3));
        even.on_delete(MaybeTombstone::Object(Arc::new(5)));
        even.on_delete(MaybeTombstone::Object(Arc::new(10)));
        assert_eq!(
            *recorder.0.lock().expect("lock"),
            [
                "add 2 true",
                "update 2->4",
                "add 6 false",
                "delete Some(8)",
                "delete Some(10)"
            ]
        );
    }

    #[test]
    fn funcs_call_only_what_is_set() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let handler = EventHandlerFuncs::<i32>::new().added(move |o, _| sink.lock().expect("lock").push(*o));
        ResourceEventHandler::on_add(&handler, Arc::new(7), false);
        ResourceEventHandler::on_update(&handler, Arc::new(1), Arc::new(2));
        ResourceEventHandler::on_delete(&handler, MaybeTombstone::Object(Arc::new(3)));
        assert_eq!(*seen.lock().expect("lock"), [7]);
    }
}
