//! [`ErasedObject`]: an object of any type, as the informer's core holds it.
//!
//! The core of every informer (its reflector, its queue, its handler threads, its run loop) is
//! compiled once, for this type, instead of once per object type: a crate with a hundred
//! informers compiles a hundred decoders and thin typed views, not a hundred pipelines. An
//! `ErasedObject` is a shared pointer to the typed object (the same allocation the typed cache
//! and handlers see), read back as `Arc<K>` without a copy.

use std::{any::Any, borrow::Cow, fmt, sync::Arc};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Resource,
    core::{ApiResource, DynamicResourceScope},
};

/// What the core needs of an object: its metadata, and a copy when it must change a shared one.
pub(crate) trait Object: Any + Send + Sync {
    fn meta(&self) -> &ObjectMeta;
    fn meta_mut(&mut self) -> &mut ObjectMeta;
    /// A deep copy, for a change to an object someone else holds.
    fn copied(&self) -> Arc<dyn Object>;
}

impl<K: Resource + Clone + Send + Sync + 'static> Object for K {
    fn meta(&self) -> &ObjectMeta {
        Resource::meta(self)
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        Resource::meta_mut(self)
    }

    fn copied(&self) -> Arc<dyn Object> {
        Arc::new(self.clone())
    }
}

/// An object of the type its informer was built for, behind a type-erased pointer.
#[derive(Clone)]
pub(crate) struct ErasedObject(Arc<dyn Object>);

impl ErasedObject {
    /// `object`, erased.
    pub(crate) fn new<K: Resource + Clone + Send + Sync + 'static>(object: K) -> Self {
        Self(Arc::new(object))
    }

    /// The object `object` points to, erased, without a copy.
    pub(crate) fn from_arc<K: Resource + Clone + Send + Sync + 'static>(object: Arc<K>) -> Self {
        Self(object)
    }

    /// The object as a `K`, sharing it; `None` if it is not a `K`.
    pub(crate) fn downcast<K: Send + Sync + 'static>(&self) -> Option<Arc<K>> {
        let any: Arc<dyn Any + Send + Sync> = Arc::clone(&self.0) as Arc<dyn Any + Send + Sync>;
        any.downcast().ok()
    }

    /// Whether the object is a `K`.
    pub(crate) fn is<K: 'static>(&self) -> bool {
        (&*self.0 as &dyn Any).is::<K>()
    }

    /// The object as a `K`, taking this pointer's place (no new reference while the caller
    /// holds the result); `None` if it is not a `K`.
    pub(crate) fn into_typed<K: Send + Sync + 'static>(self) -> Option<Arc<K>> {
        let any: Arc<dyn Any + Send + Sync> = self.0;
        any.downcast().ok()
    }

    /// The object as a `K` to change, copied first if someone else holds it.
    pub(crate) fn downcast_mut<K: 'static>(&mut self) -> Option<&mut K> {
        let object: &mut dyn Object = self.unique();
        (object as &mut dyn Any).downcast_mut()
    }

    /// Whether this is the only pointer to the object (it is freed when this one is).
    pub(crate) fn is_unique(&self) -> bool {
        Arc::strong_count(&self.0) == 1
    }

    fn unique(&mut self) -> &mut dyn Object {
        if Arc::get_mut(&mut self.0).is_none() {
            self.0 = self.0.copied();
        }
        Arc::get_mut(&mut self.0).expect("a fresh copy has no other owner")
    }
}

impl fmt::Debug for ErasedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let meta = self.0.meta();
        f.debug_struct("ErasedObject")
            .field("namespace", &meta.namespace)
            .field("name", &meta.name)
            .field("resource_version", &meta.resource_version)
            .finish()
    }
}

/// Its type is described at run time, as `DynamicObject`'s: code that needs a type known at
/// compile time (`Resource<DynamicType = ()>`) cannot take an erased object by mistake.
impl Resource for ErasedObject {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        Cow::Borrowed(&dt.kind)
    }

    fn group(dt: &ApiResource) -> Cow<'_, str> {
        Cow::Borrowed(&dt.group)
    }

    fn version(dt: &ApiResource) -> Cow<'_, str> {
        Cow::Borrowed(&dt.version)
    }

    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        Cow::Borrowed(&dt.plural)
    }

    fn meta(&self) -> &ObjectMeta {
        self.0.meta()
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.unique().meta_mut()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Pod};

    use super::*;

    fn config_map(name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn an_erased_object_is_read_back_as_its_type_without_a_copy() {
        let typed = Arc::new(config_map("a"));
        let erased = ErasedObject::from_arc(Arc::clone(&typed));
        let back = erased.downcast::<ConfigMap>().expect("a config map");
        assert!(Arc::ptr_eq(&typed, &back));
        assert!(erased.downcast::<Pod>().is_none());
        assert!(erased.is::<ConfigMap>() && !erased.is::<Pod>());
        let moved = erased.clone().into_typed::<ConfigMap>().expect("a config map");
        assert!(Arc::ptr_eq(&typed, &moved));
        assert_eq!(Arc::strong_count(&typed), 4, "typed, back, erased and moved");
        assert_eq!(Resource::meta(&erased).name.as_deref(), Some("a"));
    }

    #[test]
    fn a_change_to_a_shared_object_changes_a_copy() {
        let typed = Arc::new(config_map("a"));
        let mut erased = ErasedObject::from_arc(Arc::clone(&typed));
        Resource::meta_mut(&mut erased).name = Some("b".into());
        assert_eq!(typed.metadata.name.as_deref(), Some("a"));
        assert_eq!(Resource::meta(&erased).name.as_deref(), Some("b"));
        assert!(erased.is_unique());
        // a unique one changes in place
        let before = erased.downcast::<ConfigMap>().map(|c| Arc::as_ptr(&c));
        erased.downcast_mut::<ConfigMap>().expect("a config map").data = Some(Default::default());
        assert_eq!(erased.downcast::<ConfigMap>().map(|c| Arc::as_ptr(&c)), before);
    }
}
