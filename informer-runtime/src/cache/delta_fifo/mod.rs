//! The delta FIFO: a per-key queue of changes between the reflector and the informer
//! (client-go's `DeltaFIFO`, classic semantics).
//!
//! Each key holds the ordered list of changes not yet processed; a key is queued once however
//! many changes it accumulates. `replace` (a relist) emits tombstones for keys that vanished,
//! `resync` re-delivers known objects that have no pending change, and `pop` hands one key's
//! changes to a processing function while holding the queue lock, so a consumer that applies
//! them to the known-objects store never races a concurrent `replace`.
//!
//! The queue also tells how far its consumer has caught up: the resource version of the last
//! list or watch event the reflector handed over, published each time the queue is empty
//! after a change was processed (or when a watch event or bookmark arrives while it is empty).
//! Every change the reflector received up to that version has then been processed. Informers
//! publish it as their cache's resource version, which controllers compare with their own
//! writes.

mod relist;

use std::{
    collections::VecDeque,
    fmt,
    ops::Deref,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use hashbrown::HashMap;
use kube::Resource;
use tokio::sync::{Notify, watch};

use crate::{
    cache::{DeletedFinalStateUnknown, MaybeTombstone},
    key::ObjectKey,
    user_panic::{PanicReporter, UserFunction, catch},
};

/// The kind of change a [`Delta`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// The object was added.
    Added,
    /// The object was updated.
    Updated,
    /// The object was deleted; the delta may carry a tombstone.
    Deleted,
    /// The object was seen again in a relist (when the queue emits `Replaced`).
    Replaced,
    /// A periodic resync, or a relist when the queue does not emit `Replaced`.
    Sync,
}

/// One change to one object.
#[derive(Debug)]
pub struct Delta<K> {
    /// What happened.
    pub kind: DeltaType,
    /// The object after the change (for `Deleted`, its final state or a tombstone).
    pub object: MaybeTombstone<K>,
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        Self {
            kind: self.kind,
            object: self.object.clone(),
        }
    }
}

/// The changes of one key, oldest first; never empty when handed out by the queue.
#[derive(Debug)]
pub struct Deltas<K> {
    deltas: Vec<Delta<K>>,
    /// The queue's key, when the queue handed these out (saves recomputing it).
    key: Option<ObjectKey>,
}

impl<K> Clone for Deltas<K> {
    fn clone(&self) -> Self {
        Self {
            deltas: self.deltas.clone(),
            key: self.key.clone(),
        }
    }
}

impl<K> Deltas<K> {
    fn queued(key: ObjectKey, deltas: Vec<Delta<K>>) -> Self {
        Self {
            deltas,
            key: Some(key),
        }
    }

    /// The oldest change.
    pub fn oldest(&self) -> Option<&Delta<K>> {
        self.deltas.first()
    }

    /// The newest change.
    pub fn newest(&self) -> Option<&Delta<K>> {
        self.deltas.last()
    }

    /// The changes, oldest first.
    pub fn into_vec(self) -> Vec<Delta<K>> {
        self.deltas
    }
}

impl<K> From<Vec<Delta<K>>> for Deltas<K> {
    fn from(deltas: Vec<Delta<K>>) -> Self {
        Self { deltas, key: None }
    }
}

impl<K> Deref for Deltas<K> {
    type Target = [Delta<K>];

    fn deref(&self) -> &[Delta<K>] {
        &self.deltas
    }
}

impl<K: Resource> Deltas<K> {
    /// The key of these changes (client-go's `KeyOf` on `Deltas`): the queue's own key when
    /// the queue handed them out, else the key of the newest change's object.
    pub fn key(&self) -> Option<ObjectKey> {
        match &self.key {
            Some(key) => Some(key.clone()),
            None => self.newest().map(|d| d.object.key()),
        }
    }
}

/// The objects a queue's consumer already knows (in an informer, its store): used by
/// `replace` to find vanished objects and by `resync` to re-deliver known ones.
pub trait KnownObjects<K>: Send + Sync {
    /// Every known key.
    fn known_keys(&self) -> Vec<ObjectKey>;
    /// The known object under `key`.
    fn known_object(&self, key: &ObjectKey) -> Option<Arc<K>>;
}

impl<K: Resource + Send + Sync> KnownObjects<K> for crate::cache::Store<K> {
    fn known_keys(&self) -> Vec<ObjectKey> {
        self.list_keys()
    }

    fn known_object(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.get_by_key(key)
    }
}

/// A function applied to every object entering the queue through add, update, delete or
/// replace (never to tombstones or resync deltas), before it is shared.
pub type Transform<K> = Arc<dyn Fn(&mut K) + Send + Sync>;

/// Options of a [`DeltaFifo`].
pub struct Config<K> {
    /// The consumer's store; without it, deletions of keys not in the queue are dropped and
    /// `resync` does nothing.
    pub known_objects: Option<Arc<dyn KnownObjects<K>>>,
    /// Emit `Replaced` instead of `Sync` for objects of a relist (informers do).
    pub emit_delta_type_replaced: bool,
    /// Applied to every incoming object.
    pub transform: Option<Transform<K>>,
}

impl<K> Default for Config<K> {
    fn default() -> Self {
        Self {
            known_objects: None,
            emit_delta_type_replaced: false,
            transform: None,
        }
    }
}

/// What a processing function passed to [`DeltaFifo::pop`] can fail with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessError<E> {
    /// Put the changes back at the tail of the queue (unless the key was queued again
    /// meanwhile), then report the cause, if any, from `pop`.
    Requeue(Option<E>),
    /// The changes are dropped and the error reported from `pop`.
    Failed(E),
}

/// Why [`DeltaFifo::pop`] returned no changes, or what processing them failed with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PopError<E> {
    /// The queue is closed and empty.
    #[error("failed to pop: the delta FIFO is closed")]
    Closed,
    /// The processing function failed.
    #[error("failed to process deltas: {0}")]
    Process(E),
}

/// A failure to queue changes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `add_if_not_present` was given no changes.
    #[error("failed to add deltas: zero-length deltas have no key")]
    ZeroLengthDeltas,
}

struct State<K> {
    /// key -> changes, oldest first. A key is in `items` iff it is in `queue`.
    items: HashMap<ObjectKey, Vec<Delta<K>>>,
    /// Keys in FIFO order, without duplicates.
    queue: VecDeque<ObjectKey>,
    /// Whether anything was ever added, deleted or replaced.
    populated: bool,
    /// Keys of the first replace not yet popped.
    initial_population_count: usize,
    closed: bool,
    /// The resource version of the last list or watch event the reflector handed over.
    received_resource_version: String,
}

/// The delta FIFO queue (client-go's `DeltaFIFO`). See the [module docs](self).
///
/// ```
/// use std::sync::Arc;
/// use informer_runtime::cache::delta_fifo::{self, DeltaFifo, DeltaType, ProcessError};
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::ObjectMeta;
///
/// # tokio_test_block(async {
/// let fifo = DeltaFifo::<ConfigMap>::new(delta_fifo::Config::default());
/// let cm = ConfigMap { metadata: ObjectMeta { name: Some("a".into()), ..Default::default() }, ..Default::default() };
/// fifo.add(cm.clone());
/// fifo.update(cm);
/// let deltas = fifo.pop(|_, _| Ok::<(), ProcessError<()>>(())).await.expect("queued");
/// let kinds: Vec<DeltaType> = deltas.iter().map(|d| d.kind).collect();
/// assert_eq!(kinds, [DeltaType::Added, DeltaType::Updated]);
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().expect("runtime").block_on(f)
/// # }
/// ```
pub struct DeltaFifo<K> {
    state: Mutex<State<K>>,
    changed: Notify,
    /// Becomes `true` once [`DeltaFifo::has_synced`] does (after the last initial pop was
    /// processed), for waiters that do not want to poll.
    synced: watch::Sender<bool>,
    /// The resource version every received change up to which has been processed; see the
    /// [module docs](self).
    caught_up: Arc<watch::Sender<String>>,
    known_objects: Option<Arc<dyn KnownObjects<K>>>,
    emit_delta_type_replaced: bool,
    transform: Option<Transform<K>>,
    panics: Arc<PanicReporter>,
}

impl<K> fmt::Debug for DeltaFifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("DeltaFifo")
            .field("queued", &state.queue.len())
            .field("populated", &state.populated)
            .field("initial_population_count", &state.initial_population_count)
            .field("closed", &state.closed)
            .finish()
    }
}

impl<K: Resource> DeltaFifo<K> {
    /// An empty queue.
    pub fn new(options: Config<K>) -> Self {
        Self {
            state: Mutex::new(State {
                items: HashMap::new(),
                queue: VecDeque::new(),
                populated: false,
                initial_population_count: 0,
                closed: false,
                received_resource_version: String::new(),
            }),
            changed: Notify::new(),
            synced: watch::Sender::new(false),
            caught_up: Arc::new(watch::Sender::new(String::new())),
            known_objects: options.known_objects,
            emit_delta_type_replaced: options.emit_delta_type_replaced,
            transform: options.transform,
            panics: Arc::new(PanicReporter::new("DeltaFIFO")),
        }
    }

    /// Reports transform panics to `panics` (the informer's reporter).
    #[must_use]
    pub(crate) fn panic_reporter(mut self, panics: Arc<PanicReporter>) -> Self {
        self.panics = panics;
        self
    }

    /// Publishes the resource version the consumer has caught up with to `caught_up` (an
    /// informer's) instead of a channel of the queue's own.
    #[must_use]
    pub(crate) fn publish_caught_up_to(mut self, caught_up: Arc<watch::Sender<String>>) -> Self {
        self.caught_up = caught_up;
        self
    }

    /// Records the resource version of a list or watch event the reflector handed over.
    fn received(&self, resource_version: &str) {
        let mut state = self.lock();
        resource_version.clone_into(&mut state.received_resource_version);
        self.publish_caught_up(&state);
    }

    /// Publishes the last received resource version as caught up with if nothing is queued
    /// (changes are processed under the lock, so none is in flight); called with the lock held.
    fn publish_caught_up(&self, state: &State<K>) {
        if !state.queue.is_empty() {
            return;
        }
        self.caught_up.send_if_modified(|caught_up| {
            let changed = *caught_up != state.received_resource_version;
            if changed {
                caught_up.clone_from(&state.received_resource_version);
            }
            changed
        });
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Publishes the synced state; called with the lock held after each change of it.
    fn publish_synced(&self, state: &State<K>) {
        if has_synced(state) {
            self.synced
                .send_if_modified(|synced| !std::mem::replace(synced, true));
        }
    }

    /// A receiver that turns `true` once the queue has synced.
    pub fn synced_receiver(&self) -> watch::Receiver<bool> {
        self.synced.subscribe()
    }

    /// Applies the transform (if any) and shares the object: what the queue keeps. The
    /// reflector prepares objects as they arrive, so that what a transform drops is freed
    /// before the next list page is decoded.
    ///
    /// A transform that panics is reported (see [`user_panic`](crate::user_panic)) and the
    /// object is kept as the transform left it.
    pub fn prepare(&self, mut obj: K) -> Arc<K> {
        if let Some(transform) = &self.transform
            && let Err(message) = catch(|| transform(&mut obj))
        {
            let key = ObjectKey::of(&obj);
            self.panics
                .report(self.panics.panic(UserFunction::Transform, Some(key), message));
        }
        Arc::new(obj)
    }

    fn keyed(obj: Arc<K>) -> (ObjectKey, Arc<K>) {
        (ObjectKey::of(obj.as_ref()), obj)
    }

    /// Queues an `Added` change.
    pub fn add(&self, obj: K) {
        self.add_prepared(self.prepare(obj));
    }

    /// Queues an `Added` change of a [prepared](Self::prepare) object.
    pub(crate) fn add_prepared(&self, obj: Arc<K>) {
        let (key, obj) = Self::keyed(obj);
        let mut state = self.lock();
        state.populated = true;
        append(&mut state, key, DeltaType::Added, MaybeTombstone::Object(obj));
        self.publish_synced(&state);
        drop(state);
        self.changed.notify_waiters();
    }

    /// Queues an `Updated` change.
    pub fn update(&self, obj: K) {
        self.update_prepared(self.prepare(obj));
    }

    /// Queues an `Updated` change of a [prepared](Self::prepare) object.
    pub(crate) fn update_prepared(&self, obj: Arc<K>) {
        let (key, obj) = Self::keyed(obj);
        let mut state = self.lock();
        state.populated = true;
        append(&mut state, key, DeltaType::Updated, MaybeTombstone::Object(obj));
        self.publish_synced(&state);
        drop(state);
        self.changed.notify_waiters();
    }

    /// Queues a `Deleted` change, unless the key is neither queued nor known (then the
    /// deletion is of nothing the consumer has, and is dropped).
    pub fn delete(&self, obj: K) {
        self.delete_prepared(self.prepare(obj));
    }

    /// Queues a `Deleted` change of a [prepared](Self::prepare) object, as
    /// [`delete`](Self::delete) does.
    pub(crate) fn delete_prepared(&self, obj: Arc<K>) {
        let (key, obj) = Self::keyed(obj);
        let mut state = self.lock();
        state.populated = true;
        let appended = self.append_deletion(&mut state, key, obj);
        self.publish_synced(&state);
        drop(state);
        if appended {
            self.changed.notify_waiters();
        }
    }

    /// Queues a `Deleted` change of `obj` under `key` if the key is queued or known; whether it
    /// did.
    fn append_deletion(&self, state: &mut State<K>, key: ObjectKey, obj: Arc<K>) -> bool {
        let queued = state.items.contains_key(&key);
        let known = self
            .known_objects
            .as_ref()
            .is_some_and(|known| known.known_object(&key).is_some());
        if queued || known {
            append(state, key, DeltaType::Deleted, MaybeTombstone::Object(obj));
        }
        queued || known
    }

    /// Queues a `Sync` change for every known object whose key has no queued change
    /// (a queued change is newer than what the consumer knows). Without known objects it does
    /// nothing.
    pub fn resync(&self) {
        let Some(known) = &self.known_objects else { return };
        let keys = known.known_keys();
        let mut state = self.lock();
        let mut queued_any = false;
        for key in keys {
            if state.items.contains_key(&key) {
                continue;
            }
            let Some(obj) = known.known_object(&key) else {
                tracing::debug!(key = %key, "resync skipped a key that is no longer known");
                continue;
            };
            append(&mut state, key, DeltaType::Sync, MaybeTombstone::Object(obj));
            queued_any = true;
        }
        drop(state);
        if queued_any {
            self.changed.notify_waiters();
        }
    }

    /// Queues `deltas` as they are, unless their key already has changes queued
    /// (client-go's `AddIfNotPresent`, used to requeue popped changes).
    pub fn add_if_not_present(&self, deltas: Deltas<K>) -> Result<(), Error> {
        let key = deltas.key().ok_or(Error::ZeroLengthDeltas)?;
        let mut state = self.lock();
        state.populated = true;
        if state.items.contains_key(&key) {
            self.publish_synced(&state);
            return Ok(());
        }
        state.queue.push_back(key.clone());
        state.items.insert(key, deltas.deltas);
        self.publish_synced(&state);
        drop(state);
        self.changed.notify_waiters();
        Ok(())
    }

    /// Waits for a queued key, removes it with its changes and calls `process` on them while
    /// holding the queue lock, with whether they belong to the initial population.
    ///
    /// Returns the changes, or [`PopError::Closed`] once the queue is closed and empty (keys
    /// still queued at close are handed out first). A [`ProcessError::Requeue`] puts the
    /// changes back at the tail; the initial-population count is not restored.
    pub async fn pop<E>(
        &self,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<Deltas<K>, PopError<E>> {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.lock();
                if let Some(key) = state.queue.pop_front() {
                    let is_in_initial_list = !has_synced(&state);
                    let deltas = Deltas::queued(key.clone(), state.items.remove(&key).unwrap_or_default());
                    if state.initial_population_count > 0 {
                        state.initial_population_count -= 1;
                    }
                    let outcome = process(&deltas, is_in_initial_list);
                    self.publish_synced(&state);
                    return match outcome {
                        Ok(()) => {
                            self.publish_caught_up(&state);
                            Ok(deltas)
                        }
                        Err(ProcessError::Failed(err)) => Err(PopError::Process(err)),
                        Err(ProcessError::Requeue(cause)) => {
                            if !state.items.contains_key(&key) {
                                state.queue.push_back(key.clone());
                                state.items.insert(key, deltas.deltas.clone());
                            }
                            drop(state);
                            self.changed.notify_waiters();
                            match cause {
                                Some(err) => Err(PopError::Process(err)),
                                None => Ok(deltas),
                            }
                        }
                    };
                }
                if state.closed {
                    return Err(PopError::Closed);
                }
            }
            notified.await;
        }
    }

    /// Whether the initial population (the first replace, or any change before it) was popped.
    pub fn has_synced(&self) -> bool {
        has_synced(&self.lock())
    }

    /// Closes the queue: every waiting and future `pop` returns [`PopError::Closed`] once the
    /// queue is empty. Changes can still be queued.
    pub fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_waiters();
    }

    /// Whether the queue was closed.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// The queued keys, in queue order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.lock().queue.iter().cloned().collect()
    }

    /// The newest object of every queued key (tombstones contribute their last known state).
    pub fn list(&self) -> Vec<Arc<K>> {
        let state = self.lock();
        state
            .queue
            .iter()
            .filter_map(|key| state.items.get(key)?.last()?.object.object().cloned())
            .collect()
    }

    /// The queued changes of `key`.
    pub fn get_by_key(&self, key: &ObjectKey) -> Option<Deltas<K>> {
        self.lock()
            .items
            .get_key_value(key)
            .map(|(key, deltas)| Deltas::queued(key.clone(), deltas.clone()))
    }

    /// The number of queued keys.
    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Whether no key is queued.
    pub fn is_empty(&self) -> bool {
        self.lock().queue.is_empty()
    }
}

fn has_synced<K>(state: &State<K>) -> bool {
    state.populated && state.initial_population_count == 0
}

/// Queues a `Deleted` change for `key` carrying a tombstone with its last known state.
fn queue_tombstone<K>(state: &mut State<K>, key: ObjectKey, obj: Option<Arc<K>>) {
    let tombstone = DeletedFinalStateUnknown {
        key: key.clone(),
        obj,
    };
    append(
        state,
        key,
        DeltaType::Deleted,
        MaybeTombstone::Tombstone(tombstone),
    );
}

/// Appends one change to `key`, queueing the key if it is new, and collapses two consecutive
/// deletions into one: the older is kept, unless it is a tombstone.
fn append<K>(state: &mut State<K>, key: ObjectKey, kind: DeltaType, object: MaybeTombstone<K>) {
    let delta = Delta { kind, object };
    match state.items.get_mut(&key) {
        Some(deltas) => {
            deltas.push(delta);
            dedup_deletions(deltas);
        }
        None => {
            state.queue.push_back(key.clone());
            state.items.insert(key, vec![delta]);
        }
    }
}

fn dedup_deletions<K>(deltas: &mut Vec<Delta<K>>) {
    let [.., older, newer] = deltas.as_slice() else {
        return;
    };
    if older.kind != DeltaType::Deleted || newer.kind != DeltaType::Deleted {
        return;
    }
    if older.object.is_tombstone() {
        let newest = deltas.pop();
        if let (Some(slot), Some(newest)) = (deltas.last_mut(), newest) {
            *slot = newest;
        }
    } else {
        deltas.pop();
    }
}

#[cfg(test)]
mod tests;
