//! Objects that left a controller's scope while they still carry its finalizer.
//!
//! A watch restricted by a label selector sees an object whose labels stop matching as
//! DELETED, although the object still exists; the informer drops it from the cache. If it
//! carries the controller's finalizer, nothing would ever remove that finalizer, and a later
//! delete of the object would hang. So the controller's handler keeps the last state of such
//! an object here, and the worker reconciles that state when the cache no longer has the
//! key, until a reconcile of it succeeds (or the object comes back into the cache).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use kube::Resource;

use crate::key::ObjectKey;

/// The finalizer a controller declared, and the objects carrying it that left its cache.
#[derive(Debug)]
pub(crate) struct OutOfScope<K> {
    finalizer: String,
    objects: Mutex<HashMap<ObjectKey, Arc<K>>>,
}

impl<K: Resource> OutOfScope<K> {
    /// Tracks the objects that carry `finalizer`.
    pub(crate) fn new(finalizer: String) -> Self {
        Self {
            finalizer,
            objects: Mutex::default(),
        }
    }

    fn objects(&self) -> MutexGuard<'_, HashMap<ObjectKey, Arc<K>>> {
        self.objects.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `object` carries the controller's finalizer.
    pub(crate) fn carries_finalizer(&self, object: &K) -> bool {
        object
            .meta()
            .finalizers
            .iter()
            .flatten()
            .any(|finalizer| *finalizer == self.finalizer)
    }

    /// Keeps `object`, which left the cache while carrying the finalizer, for the worker.
    pub(crate) fn remember(&self, key: ObjectKey, object: Arc<K>) {
        self.objects().insert(key, object);
    }

    /// The kept state of `key`, if any.
    pub(crate) fn get(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.objects().get(key).cloned()
    }

    /// Stops keeping `key` (back in the cache).
    pub(crate) fn forget(&self, key: &ObjectKey) {
        self.objects().remove(key);
    }

    /// Stops keeping `key` if its kept state is still `reconciled` (a newer state that came
    /// meanwhile stays).
    pub(crate) fn forget_reconciled(&self, key: &ObjectKey, reconciled: &Arc<K>) {
        let mut objects = self.objects();
        if objects.get(key).is_some_and(|kept| Arc::ptr_eq(kept, reconciled)) {
            objects.remove(key);
        }
    }
}
