//! A store that hands its complete content to a function after every change (client-go's
//! `UndeltaStore`, which the kubelet's pod config source uses).

use std::{
    cell::RefCell,
    fmt,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

use kube::Resource;

use crate::{
    cache::{Indexers, ReflectorStore, Store, Writer},
    key::ObjectKey,
    source::BoxError,
    user_panic::catch,
};

/// The function an [`UndeltaStore`] calls with its complete content after every change.
pub type PushFunc<K> = Box<dyn Fn(Vec<Arc<K>>) + Send + Sync>;

thread_local! {
    /// The stores this thread is pushing from (by address), to spot changes made by a push
    /// function to its own store.
    static PUSHING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Marks a store as pushing on this thread until dropped.
struct PushMarker(usize);

impl PushMarker {
    fn enter(id: usize) -> Self {
        PUSHING.with(|p| p.borrow_mut().push(id));
        Self(id)
    }

    fn is_pushing(id: usize) -> bool {
        PUSHING.with(|p| p.borrow().contains(&id))
    }
}

impl Drop for PushMarker {
    fn drop(&mut self) {
        PUSHING.with(|p| {
            let mut p = p.borrow_mut();
            if let Some(i) = p.iter().rposition(|id| *id == self.0) {
                p.remove(i);
            }
        });
    }
}

/// A store that calls a push function with its complete content (every object, in no
/// particular order) after every add, update, delete and replace (client-go's
/// `UndeltaStore`).
///
/// A consumer that wants the whole state on each change, rather than the change itself, gets
/// it from here: the kubelet's pod config source is the classic user. The list holds the
/// stored `Arc`s, never deep copies. Reads ([`store`](Self::store), or the [`Store`] this
/// dereferences to) never push, and a resync pushes nothing (no object changed).
///
/// - **Order**: changes and their pushes are serialized, so pushes arrive in the order of the
///   changes and the last push is the current state, even with several writers. A change
///   from another thread waits for the push in progress, so a push function must not wait
///   for another thread that changes the same store.
/// - **Changes from the push function**: a push function may read the store, and may change
///   it: the change is applied at once and, when the push function returns, the store pushes
///   again with the new state (a push function that changes the store on every call would
///   never stop).
/// - **Panics**: the push function is user code. A panic in it is caught, logged at error
///   level and counted in [`push_panics`](Self::push_panics); the change that preceded it is
///   kept and the store goes on (the next change pushes the complete state again). The
///   informers' [`PanicReporter`](crate::user_panic) is not used: an undelta store belongs
///   to no informer and has no watch-error handler to forward to.
///
/// It is a [`ReflectorStore`], so a [`Reflector`](crate::reflector::Reflector) can keep it in
/// step with the API server:
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// use informer_runtime::{ObjectKey, cache::{ReflectorStore, UndeltaStore}};
/// use k8s_openapi::api::core::v1::Pod;
/// use kube::api::ObjectMeta;
///
/// let latest = Arc::new(Mutex::new(Vec::new()));
/// let undelta = UndeltaStore::new({
///     let latest = Arc::clone(&latest);
///     move |pods: Vec<Arc<Pod>>| *latest.lock().unwrap() = pods
/// });
/// let pod = |name: &str| {
///     let metadata = ObjectMeta { name: Some(name.into()), namespace: Some("prod".into()), ..Default::default() };
///     Arc::new(Pod { metadata, ..Default::default() })
/// };
///
/// undelta.add(pod("web"));
/// undelta.add(pod("db"));
/// assert_eq!(latest.lock().unwrap().len(), 2);
///
/// undelta.delete_by_key(&ObjectKey::new("prod", "web"));
/// let names: Vec<_> = latest.lock().unwrap().iter().map(|p| p.metadata.name.clone()).collect();
/// assert_eq!(names, [Some("db".to_owned())]);
///
/// // Reads never push.
/// assert!(undelta.store().get_by_key(&ObjectKey::new("prod", "db")).is_some());
///
/// // In a reflector (`reflector::Reflector::new("pods", lister_watcher, store, config)`):
/// let store: Arc<dyn ReflectorStore<Pod>> = Arc::new(undelta);
/// # let _ = store;
/// ```
pub struct UndeltaStore<K> {
    writer: Writer<K>,
    push: PushFunc<K>,
    /// Held while a change is applied and pushed, so pushes follow the order of changes.
    serial: Mutex<()>,
    /// Set when the push function changed the store; the push is then repeated.
    changed_during_push: AtomicBool,
    push_panics: AtomicU64,
}

impl<K> fmt::Debug for UndeltaStore<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UndeltaStore")
            .field("store", &*self.writer)
            .field("push_panics", &self.push_panics())
            .finish_non_exhaustive()
    }
}

impl<K> std::ops::Deref for UndeltaStore<K> {
    type Target = Store<K>;

    fn deref(&self) -> &Store<K> {
        &self.writer
    }
}

impl<K> UndeltaStore<K> {
    /// A read-only view of the stored objects; reading it never pushes.
    pub fn store(&self) -> Store<K> {
        self.writer.store()
    }

    /// How many calls of the push function panicked.
    pub fn push_panics(&self) -> u64 {
        self.push_panics.load(Ordering::Relaxed)
    }
}

impl<K: Resource> UndeltaStore<K> {
    /// An empty store without indexes that calls `push` after every change.
    pub fn new(push: impl Fn(Vec<Arc<K>>) + Send + Sync + 'static) -> Self {
        Self::with_indexers(Indexers::new(), push)
    }

    /// An empty store with the given indexes (see [`Writer::new`]) that calls `push` after
    /// every change.
    pub fn with_indexers(indexers: Indexers<K>, push: impl Fn(Vec<Arc<K>>) + Send + Sync + 'static) -> Self {
        Self {
            writer: Writer::new(indexers),
            push: Box::new(push),
            serial: Mutex::new(()),
            changed_during_push: AtomicBool::new(false),
            push_panics: AtomicU64::new(0),
        }
    }

    /// Stores `obj` under its key, then pushes; returns the object it replaced.
    pub fn add(&self, obj: Arc<K>) -> Option<Arc<K>> {
        self.change(|w| w.add(obj))
    }

    /// Same as [`add`](Self::add) (client-go keeps both names).
    pub fn update(&self, obj: Arc<K>) -> Option<Arc<K>> {
        self.change(|w| w.update(obj))
    }

    /// Removes the object stored under `obj`'s key, then pushes (also when nothing was
    /// stored, as client-go does); returns the removed object.
    pub fn delete(&self, obj: &K) -> Option<Arc<K>> {
        self.change(|w| w.delete(obj))
    }

    /// Removes the object stored under `key`, then pushes (also when nothing was stored);
    /// returns the removed object.
    pub fn delete_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.change(|w| w.delete_by_key(key))
    }

    /// Replaces the whole content with `objects` (a later object with the same key wins),
    /// then pushes once.
    pub fn replace(&self, objects: impl IntoIterator<Item = Arc<K>>) {
        self.change(|w| w.replace(objects));
    }

    /// Applies `apply` to the store and pushes the result, in order with other changes.
    fn change<R>(&self, apply: impl FnOnce(&Writer<K>) -> R) -> R {
        let id = self as *const Self as usize;
        if PushMarker::is_pushing(id) {
            // The push function changed its own store: the outer push pushes again.
            let result = apply(&self.writer);
            self.changed_during_push.store(true, Ordering::SeqCst);
            return result;
        }
        let _serial = self.serial.lock().unwrap_or_else(PoisonError::into_inner);
        let result = apply(&self.writer);
        let _marker = PushMarker::enter(id);
        loop {
            self.changed_during_push.store(false, Ordering::SeqCst);
            self.push_current();
            if !self.changed_during_push.swap(false, Ordering::SeqCst) {
                break;
            }
        }
        result
    }

    /// Calls the push function with the complete content, catching and reporting a panic.
    fn push_current(&self) {
        let objects = self.writer.list();
        let len = objects.len();
        if let Err(message) = catch(|| (self.push)(objects)) {
            let count = self.push_panics.fetch_add(1, Ordering::Relaxed).saturating_add(1);
            tracing::error!(
                objects = len,
                panics = count,
                panic = %message,
                "the push function of an undelta store panicked; the store goes on"
            );
        }
    }
}

/// A reflector's changes become pushes. The resource version is not kept, and a resync
/// pushes nothing: no object changed (client-go's `UndeltaStore` does the same).
impl<K: Resource + Send + Sync> ReflectorStore<K> for UndeltaStore<K> {
    fn add(&self, obj: Arc<K>) {
        UndeltaStore::add(self, obj);
    }

    fn update(&self, obj: Arc<K>) {
        UndeltaStore::update(self, obj);
    }

    fn delete(&self, obj: Arc<K>) {
        UndeltaStore::delete(self, &obj);
    }

    fn replace(&self, objects: Vec<Arc<K>>, _resource_version: &str) {
        UndeltaStore::replace(self, objects);
    }

    fn resync(&self) -> Result<(), BoxError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
