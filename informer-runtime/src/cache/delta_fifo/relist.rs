//! The queue as a reflector's store: watch events become changes, and a relist becomes
//! `Replaced` (or `Sync`) changes page by page, then tombstones for what vanished.

use std::sync::Arc;

use kube::Resource;

use super::{DeltaFifo, DeltaType, append, queue_tombstone};
use crate::{
    cache::{MaybeTombstone, ReflectorStore, Relist},
    key::ObjectKey,
    source::BoxError,
};

impl<K: Resource + Send + Sync> ReflectorStore<K> for DeltaFifo<K> {
    fn prepare(&self, obj: K) -> Arc<K> {
        DeltaFifo::prepare(self, obj)
    }

    fn add(&self, obj: Arc<K>) {
        self.add_prepared(obj);
    }

    fn update(&self, obj: Arc<K>) {
        self.update_prepared(obj);
    }

    fn delete(&self, obj: Arc<K>) {
        self.delete_prepared(obj);
    }

    fn begin_relist(&self) -> Box<dyn Relist<K> + '_>
    where
        K: 'static,
    {
        Box::new(FifoRelist::new(self))
    }

    fn replace(&self, objects: Vec<Arc<K>>, resource_version: &str) {
        self.replace_prepared(objects, resource_version);
    }

    fn resync(&self) -> Result<(), BoxError> {
        DeltaFifo::resync(self);
        Ok(())
    }

    fn update_resource_version(&self, resource_version: &str) {
        self.received(resource_version);
    }
}

impl<K: Resource> DeltaFifo<K> {
    /// Replaces the queue's view of the world with `list` (a relist): every listed object gets a
    /// `Replaced` (or `Sync`) change, and every queued or known key that is not listed gets a
    /// `Deleted` change carrying a tombstone with the newest object the queue or the consumer
    /// had. The first replace defines the initial population that [`DeltaFifo::has_synced`]
    /// waits for. The resource version becomes the one the consumer catches up with once
    /// it has processed what the replace queued (see the [module docs](super)).
    ///
    /// A reflector hands its relists over page by page instead
    /// ([`ReflectorStore::begin_relist`]): each
    /// page is queued as it arrives, and the tombstones and the initial population come with
    /// the end of the list.
    pub fn replace(&self, list: Vec<K>, resource_version: &str) {
        let prepared = list.into_iter().map(|obj| self.prepare(obj)).collect();
        self.replace_prepared(prepared, resource_version);
    }

    /// [`replace`](Self::replace) with [prepared](Self::prepare) objects: a relist of one page.
    fn replace_prepared(&self, list: Vec<Arc<K>>, resource_version: &str) {
        let mut relist = FifoRelist::new(self);
        relist.page(list);
        relist.finish(resource_version);
    }
}

/// A relist of the queue: the keys its pages listed so far.
pub(super) struct FifoRelist<'a, K> {
    fifo: &'a DeltaFifo<K>,
    listed: hashbrown::HashSet<ObjectKey>,
}

impl<'a, K: Resource> FifoRelist<'a, K> {
    pub(super) fn new(fifo: &'a DeltaFifo<K>) -> Self {
        Self {
            fifo,
            listed: hashbrown::HashSet::new(),
        }
    }

    /// Every object of the page gets a `Replaced` (or `Sync`) change at once, and its key
    /// counts as listed.
    pub(super) fn page(&mut self, page: Vec<Arc<K>>) {
        let kind = if self.fifo.emit_delta_type_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        let keyed: Vec<(ObjectKey, Arc<K>)> = page.into_iter().map(DeltaFifo::keyed).collect();
        let mut state = self.fifo.lock();
        for (key, obj) in keyed {
            self.listed.insert(key.clone());
            append(&mut state, key, kind, MaybeTombstone::Object(obj));
        }
        drop(state);
        self.fifo.changed.notify_waiters();
    }

    /// A deletion during the relist is queued as [`DeltaFifo::delete`] queues one, without
    /// ending the initial population, and the key no longer counts as listed.
    pub(super) fn delete(&mut self, obj: Arc<K>) {
        let (key, obj) = DeltaFifo::keyed(obj);
        self.listed.remove(&key);
        let mut state = self.fifo.lock();
        let appended = self.fifo.append_deletion(&mut state, key, obj);
        drop(state);
        if appended {
            self.fifo.changed.notify_waiters();
        }
    }

    /// Every queued or known key that is not listed gets a tombstone, and the first relist
    /// defines the initial population (the keys still queued: those of its pages not popped
    /// yet, and its tombstones).
    pub(super) fn finish(self, resource_version: &str) {
        let fifo = self.fifo;
        let mut state = fifo.lock();
        resource_version.clone_into(&mut state.received_resource_version);
        let vanished: Vec<(ObjectKey, Option<Arc<K>>)> = state
            .items
            .iter()
            .filter(|(key, _)| !self.listed.contains(*key))
            .map(|(key, deltas)| {
                (
                    key.clone(),
                    deltas.last().and_then(|d| d.object.object().cloned()),
                )
            })
            .collect();
        for (key, obj) in vanished {
            queue_tombstone(&mut state, key, obj);
        }
        if let Some(known) = &fifo.known_objects {
            for key in known.known_keys() {
                if self.listed.contains(&key) || state.items.contains_key(&key) {
                    continue;
                }
                let obj = known.known_object(&key);
                queue_tombstone(&mut state, key, obj);
            }
        }
        if !state.populated {
            state.populated = true;
            state.initial_population_count = state.queue.len();
        }
        fifo.publish_synced(&state);
        fifo.publish_caught_up(&state);
        drop(state);
        fifo.changed.notify_waiters();
    }
}

impl<K: Resource + Send + Sync> Relist<K> for FifoRelist<'_, K> {
    fn page(&mut self, objects: Vec<Arc<K>>) {
        FifoRelist::page(self, objects);
    }

    fn delete(&mut self, object: Arc<K>) {
        FifoRelist::delete(self, object);
    }

    fn start_over(&mut self) {
        self.listed.clear();
    }

    fn finish(self: Box<Self>, resource_version: &str) {
        FifoRelist::finish(*self, resource_version);
    }
}
