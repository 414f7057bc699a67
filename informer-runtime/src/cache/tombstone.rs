//! Tombstones: what a handler receives for an object whose deletion was missed.

use std::sync::Arc;

use kube::Resource;

use crate::key::ObjectKey;

/// A deleted object whose final state is unknown (client-go's `DeletedFinalStateUnknown`).
///
/// When the watch misses a deletion (a dropped connection, history compaction), the next relist
/// finds the object gone and the informer reports the deletion with this tombstone. `obj` is the
/// last state the informer knew, which may be stale, or `None` if it never had one.
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The key of the deleted object.
    pub key: ObjectKey,
    /// The last known state of the object, if any.
    pub obj: Option<Arc<K>>,
}

impl<K> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            obj: self.obj.clone(),
        }
    }
}

/// An object, or the tombstone of an object whose deletion was observed only by a relist.
///
/// Delete notifications carry this type, so handlers can never mistake a tombstone for an
/// object (the mistake behind many crashes of client-go handlers):
///
/// ```
/// use informer_runtime::cache::MaybeTombstone;
/// use k8s_openapi::api::core::v1::Pod;
///
/// fn on_delete(deleted: &MaybeTombstone<Pod>) {
///     match deleted {
///         MaybeTombstone::Object(pod) => println!("deleted {:?}", pod.metadata.name),
///         MaybeTombstone::Tombstone(t) => println!("deleted {} while the watch was down", t.key),
///     }
/// }
/// ```
#[derive(Debug)]
pub enum MaybeTombstone<K> {
    /// The object itself.
    Object(Arc<K>),
    /// A tombstone for an object whose deletion was missed.
    Tombstone(DeletedFinalStateUnknown<K>),
}

impl<K> Clone for MaybeTombstone<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Object(obj) => Self::Object(Arc::clone(obj)),
            Self::Tombstone(t) => Self::Tombstone(t.clone()),
        }
    }
}

impl<K> MaybeTombstone<K> {
    /// The object, or the last known state inside the tombstone.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Self::Object(obj) => Some(obj),
            Self::Tombstone(t) => t.obj.as_ref(),
        }
    }

    /// Whether this is a tombstone.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, Self::Tombstone(_))
    }
}

impl<K: Resource> MaybeTombstone<K> {
    /// The key: the tombstone's key, else the object's key (client-go's
    /// `DeletionHandlingMetaNamespaceKeyFunc` and `DeletionHandlingObjectToName`).
    pub fn key(&self) -> ObjectKey {
        match self {
            Self::Object(obj) => ObjectKey::of(obj.as_ref()),
            Self::Tombstone(t) => t.key.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    fn config_map() -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("testname".into()),
                namespace: Some("testnamespace".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    // Port of client-go TestDeletionHandlingObjectToName (controller_test.go).
    #[test]
    fn tombstone_names_the_same_object() {
        let cm = Arc::new(config_map());
        let object = MaybeTombstone::Object(Arc::clone(&cm));
        let tombstone = MaybeTombstone::Tombstone(DeletedFinalStateUnknown {
            key: ObjectKey::new("testnamespace", "testname"),
            obj: Some(cm),
        });
        assert_eq!(object.key(), tombstone.key());
        assert_eq!(tombstone.key().namespace(), Some("testnamespace"));
        assert_eq!(tombstone.key().name(), "testname");
    }

    #[test]
    fn tombstone_without_object_still_has_a_key() {
        let tombstone: MaybeTombstone<ConfigMap> = MaybeTombstone::Tombstone(DeletedFinalStateUnknown {
            key: ObjectKey::new("a", "b"),
            obj: None,
        });
        assert_eq!(tombstone.key(), ObjectKey::new("a", "b"));
        assert!(tombstone.object().is_none());
        assert!(tombstone.is_tombstone());
    }
}
