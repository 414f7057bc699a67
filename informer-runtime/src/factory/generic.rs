//! [`GenericInformer`]: an informer reached by group, version and resource.

use std::{any::Any, fmt, sync::Arc};

use kube::core::GroupVersionResource;

use super::erased::ErasedInformer;

use crate::{informer::SharedIndexInformer, lister::GenericLister};

/// An informer reached through its group, version and resource (client-go's
/// `GenericInformer`); it is the same informer the typed accessor returns.
#[derive(Clone)]
pub struct GenericInformer {
    pub(super) gvr: GroupVersionResource,
    pub(super) typed: Arc<dyn Any + Send + Sync>,
    pub(super) erased: Arc<dyn ErasedInformer>,
}

impl fmt::Debug for GenericInformer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericInformer").field("gvr", &self.gvr).finish()
    }
}

impl GenericInformer {
    /// The resource.
    pub fn gvr(&self) -> &GroupVersionResource {
        &self.gvr
    }

    /// Whether the informer's cache synced.
    pub fn has_synced(&self) -> bool {
        self.erased.has_synced()
    }

    /// A lister over the informer's cache.
    pub fn lister(&self) -> GenericLister {
        self.erased.generic_lister()
    }

    /// The typed informer, if its objects are `K`.
    pub fn informer<K: Send + Sync + 'static>(&self) -> Option<SharedIndexInformer<K>> {
        self.typed.downcast_ref::<SharedIndexInformer<K>>().cloned()
    }
}
