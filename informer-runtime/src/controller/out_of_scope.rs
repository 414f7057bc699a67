//! Objects that left a controller's scope while they still carry its finalizer.
//!
//! A watch restricted by a label selector sees an object whose labels stop matching as
//! DELETED, although the object still exists; the informer drops it from the cache. If it
//! carries the controller's finalizer, nothing would ever remove that finalizer, and a later
//! delete of the object would hang. So the controller's handler notes the key of such an
//! object here, and when the cache no longer has it the worker reads the object's current
//! state from the API server and reconciles that, until a reconcile of it succeeds, the
//! object no longer carries the finalizer or exists, or it comes back into the cache.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use kube::{Client, Resource};

use crate::{factory::TypedResource, key::ObjectKey, source::ApiScope};

/// The finalizer a controller declared, and the objects carrying it that left its cache.
#[derive(Debug)]
pub(crate) struct OutOfScope {
    finalizer: String,
    keys: Mutex<HashSet<ObjectKey>>,
}

impl OutOfScope {
    /// Tracks the objects that carry `finalizer`.
    pub(crate) fn new(finalizer: String) -> Self {
        Self {
            finalizer,
            keys: Mutex::default(),
        }
    }

    fn keys(&self) -> MutexGuard<'_, HashSet<ObjectKey>> {
        self.keys.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `object` carries the controller's finalizer.
    pub(crate) fn carries_finalizer<K: Resource>(&self, object: &K) -> bool {
        object
            .meta()
            .finalizers
            .iter()
            .flatten()
            .any(|finalizer| *finalizer == self.finalizer)
    }

    /// Notes that `key` left the cache while carrying the finalizer.
    pub(crate) fn remember(&self, key: ObjectKey) {
        self.keys().insert(key);
    }

    /// Whether `key` left the cache while carrying the finalizer and was not released yet.
    pub(crate) fn contains(&self, key: &ObjectKey) -> bool {
        self.keys().contains(key)
    }

    /// Stops tracking `key` (released, gone, or back in the cache).
    pub(crate) fn forget(&self, key: &ObjectKey) {
        self.keys().remove(key);
    }

    /// The current state of `key` from the API server (`None` when it no longer exists): the
    /// last state the watch sent is the one from before it lost sight of the object (the API
    /// server sends the previous object), which still looks in scope.
    pub(crate) async fn fetch<K: TypedResource>(
        &self,
        client: Client,
        key: &ObjectKey,
    ) -> kube::Result<Option<Arc<K>>> {
        let api = <K::Scope as ApiScope>::api::<K>(client, key.namespace());
        Ok(api.get_opt(key.name()).await?.map(Arc::new))
    }
}

#[cfg(test)]
mod tests;
