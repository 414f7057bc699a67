//! [`Enqueue`]: the usual controller handler, which puts the key of every changed object on a
//! work queue.
//!
//! ```
//! use std::sync::Arc;
//! use informer_runtime::{ObjectKey, source::ListerWatcher, workqueue::WorkQueue};
//! use informer_runtime::informer::{Config, SharedIndexInformer, enqueue::Enqueue};
//! use k8s_openapi::api::core::v1::Pod;
//!
//! fn wire(lister_watcher: impl ListerWatcher<Pod>) -> Result<(), informer_runtime::informer::Error> {
//!     let informer = SharedIndexInformer::new(lister_watcher, Config::default());
//!     let queue: Arc<WorkQueue<ObjectKey>> = Arc::new(WorkQueue::new());
//!     informer.add_event_handler(Enqueue::by_key(Arc::clone(&queue)))?;
//!     // start the informer; workers take keys off `queue`
//!     Ok(())
//! }
//! ```

use std::{fmt, sync::Arc};

use kube::Resource;

use crate::{
    cache::MaybeTombstone,
    informer::handler::ResourceEventHandler,
    key::ObjectKey,
    workqueue::{Priority, Queue},
};

type MapFn<K, T> = Box<dyn Fn(&K) -> Vec<T> + Send + Sync>;

/// How an object becomes queue items.
enum Mapper<K, T> {
    /// The object's key; a tombstone's key.
    Key(fn(ObjectKey) -> T),
    /// A function of the object; a tombstone's last known state.
    Custom(MapFn<K, T>),
}

/// A handler that adds a queue item for every added, updated and deleted object
/// (the add/update/delete functions of a client-go controller, in one value).
///
/// - Updates that only re-deliver an object (a resync or a relist of an unchanged object:
///   the same resource version) are skipped unless [`on_resync(true)`](Self::on_resync).
/// - A delete whose final state is unknown ([`DeletedFinalStateUnknown`]) enqueues the
///   tombstone's key with [`by_key`](Self::by_key), and the items of the last known state with
///   [`new`](Self::new). A tombstone without a last known
///   state cannot be mapped by a function: that is logged as a warning, never dropped silently.
///
/// Register it with [`SharedIndexInformer::add_event_handler`]. Works with any [`Queue`].
///
/// **Priorities** (for a [`PriorityQueue`](crate::workqueue::PriorityQueue); FIFO queues ignore them): the objects of the
/// initial list (`is_in_initial_list`) and resyncs are added at [`Priority::LOW`], live
/// changes at [`Priority::NORMAL`] or the one set with [`priority`](Self::priority), so a
/// worker busy with a large initial list takes a live change next.
///
/// [`DeletedFinalStateUnknown`]: crate::cache::DeletedFinalStateUnknown
/// [`SharedIndexInformer::add_event_handler`]: crate::informer::SharedIndexInformer::add_event_handler
pub struct Enqueue<K, Q: Queue> {
    queue: Q,
    mapper: Mapper<K, Q::Item>,
    on_resync: bool,
    /// The priority of live changes.
    priority: Priority,
}

impl<K, Q: Queue> fmt::Debug for Enqueue<K, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mapper = match self.mapper {
            Mapper::Key(_) => "key",
            Mapper::Custom(_) => "custom",
        };
        f.debug_struct("Enqueue")
            .field("mapper", &mapper)
            .field("on_resync", &self.on_resync)
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

impl<K, Q: Queue<Item = ObjectKey>> Enqueue<K, Q> {
    /// Enqueues the [`ObjectKey`] of each changed object.
    pub fn by_key(queue: Q) -> Self {
        Self {
            queue,
            mapper: Mapper::Key(|key| key),
            on_resync: false,
            priority: Priority::NORMAL,
        }
    }
}

impl<K, Q: Queue> Enqueue<K, Q> {
    /// Enqueues the items `mapper` returns for each changed object: none (an object the
    /// controller ignores), one, or several (for example the controllers owning a pod).
    ///
    /// An update enqueues the items of both the old and the new state, so that a change of
    /// the mapped value (a new owner) reaches the old one too; queues deduplicate the rest.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use informer_runtime::{ObjectKey, informer::enqueue::Enqueue, workqueue::WorkQueue};
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// // pods wake the ReplicaSet that controls them
    /// let queue: Arc<WorkQueue<ObjectKey>> = Arc::new(WorkQueue::new());
    /// let handler = Enqueue::new(Arc::clone(&queue), |pod: &Pod| {
    ///     let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    ///     pod.metadata
    ///         .owner_references
    ///         .iter()
    ///         .flatten()
    ///         .filter(|owner| owner.controller == Some(true) && owner.kind == "ReplicaSet")
    ///         .map(|owner| ObjectKey::new(namespace, &owner.name))
    ///         .collect::<Vec<_>>()
    /// });
    /// # let _ = handler;
    /// ```
    pub fn new<I>(queue: Q, mapper: impl Fn(&K) -> I + Send + Sync + 'static) -> Self
    where
        I: IntoIterator<Item = Q::Item>,
    {
        Self {
            queue,
            mapper: Mapper::Custom(Box::new(move |obj| mapper(obj).into_iter().collect())),
            on_resync: false,
            priority: Priority::NORMAL,
        }
    }

    /// Whether updates that only re-deliver an object (same resource version: resyncs)
    /// enqueue it too; `false` by default.
    pub fn on_resync(mut self, on_resync: bool) -> Self {
        self.on_resync = on_resync;
        self
    }

    /// The priority live changes are added at ([`Priority::NORMAL`] by default); the initial
    /// list and resyncs stay at [`Priority::LOW`]. Only a [`PriorityQueue`](crate::workqueue::PriorityQueue) uses it.
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }
}

impl<K: Resource, Q: Queue> Enqueue<K, Q> {
    fn enqueue(&self, obj: &K, priority: Priority) {
        match &self.mapper {
            Mapper::Key(into) => self.queue.add_with_priority(into(ObjectKey::of(obj)), priority),
            Mapper::Custom(map) => map(obj)
                .into_iter()
                .for_each(|item| self.queue.add_with_priority(item, priority)),
        }
    }
}

impl<K, Q> ResourceEventHandler<K> for Enqueue<K, Q>
where
    K: Resource + Send + Sync + 'static,
    Q: Queue,
{
    fn on_add(&self, object: Arc<K>, is_in_initial_list: bool) {
        let priority = if is_in_initial_list {
            Priority::LOW
        } else {
            self.priority
        };
        self.enqueue(&object, priority);
    }

    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        let resync = old.meta().resource_version == new.meta().resource_version;
        if resync && !self.on_resync {
            return;
        }
        let priority = if resync { Priority::LOW } else { self.priority };
        self.enqueue(&new, priority);
        if let Mapper::Custom(_) = self.mapper {
            self.enqueue(&old, priority);
        }
    }

    fn on_delete(&self, object: MaybeTombstone<K>) {
        match &self.mapper {
            Mapper::Key(into) => self.queue.add_with_priority(into(object.key()), self.priority),
            Mapper::Custom(_) => match object.object() {
                Some(last) => self.enqueue(last, self.priority),
                None => tracing::warn!(
                    key = %object.key(),
                    "failed to enqueue a deleted object: its tombstone has no last known state to map"
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests;
