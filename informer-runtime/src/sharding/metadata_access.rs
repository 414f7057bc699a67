//! The sharder's typed access to one resource behind a type-erased handle: a metadata-only
//! informer of the resource, its cached metadata, and merge patches through `Api<K>`. Made in
//! [`ResourceType::of`](super::ResourceType::of), where the Rust type is known.

use std::{marker::PhantomData, sync::Arc};

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Api,
    api::{Patch, PatchParams},
    core::{PartialObjectMeta, Selector},
};

use crate::{
    factory::{SharedInformerFactory, TypedResource},
    informer::{self, handler::EventHandlerFuncs},
    key::ObjectKey,
    scope::{Scope, ScopedLister},
    source::ApiScope,
};

/// Called with the key of each object added or updated in a watched cache.
pub(crate) type OnChange = Arc<dyn Fn(ObjectKey) + Send + Sync>;

/// An object's metadata held by a cache, whatever its type.
pub(crate) trait CachedMetadata: Send + Sync {
    /// The metadata.
    fn metadata(&self) -> &ObjectMeta;
}

impl<K: Send + Sync> CachedMetadata for PartialObjectMeta<K> {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
}

/// The typed operations the sharder needs on one resource.
pub(crate) trait MetadataAccess: Send + Sync {
    /// The metadata-only informer of the resource's objects that `labels` selects (every one
    /// for an empty selector), in `factory` (shared with its other users; narrowed further
    /// if the factory is [restricted](crate::factory::Builder::resource_labels)), with
    /// `on_change` registered for its adds and updates.
    fn watch(
        &self,
        factory: &SharedInformerFactory,
        labels: Selector,
        on_change: OnChange,
    ) -> informer::Result<Arc<dyn MetadataCache>>;

    /// Sends the JSON merge patch `patch` to the object `key`.
    fn merge_patch(
        &self,
        client: kube::Client,
        key: &ObjectKey,
        patch: serde_json::Value,
    ) -> BoxFuture<'static, kube::Result<()>>;
}

/// A metadata-only cache of one resource.
pub(crate) trait MetadataCache: Send + Sync {
    /// The cached metadata of `key`.
    fn get(&self, key: &ObjectKey) -> Option<Arc<dyn CachedMetadata>>;
    /// The keys of every cached object.
    fn keys(&self) -> Vec<ObjectKey>;
    /// Whether a cached object's metadata satisfies `predicate`.
    fn any(&self, predicate: &dyn Fn(&ObjectMeta) -> bool) -> bool;
}

/// [`MetadataAccess`] for the objects of `K`.
pub(crate) struct TypedAccess<K>(PhantomData<fn() -> K>);

impl<K> TypedAccess<K> {
    pub(crate) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<K: TypedResource> MetadataAccess for TypedAccess<K> {
    fn watch(
        &self,
        factory: &SharedInformerFactory,
        labels: Selector,
        on_change: OnChange,
    ) -> informer::Result<Arc<dyn MetadataCache>> {
        let scope = Scope::<PartialObjectMeta<K>>::all().and_labels(labels);
        let informer = factory.informer_in(&scope);
        let on_update = Arc::clone(&on_change);
        informer.add_event_handler(
            EventHandlerFuncs::new()
                .added(move |object: Arc<PartialObjectMeta<K>>, _| on_change(ObjectKey::of(&*object)))
                .updated(move |_, object: Arc<PartialObjectMeta<K>>| on_update(ObjectKey::of(&*object))),
        )?;
        Ok(Arc::new(informer.lister()))
    }

    fn merge_patch(
        &self,
        client: kube::Client,
        key: &ObjectKey,
        patch: serde_json::Value,
    ) -> BoxFuture<'static, kube::Result<()>> {
        let api: Api<K> = <K::Scope as ApiScope>::api(client, key.namespace());
        let name = key.name().to_owned();
        Box::pin(async move {
            api.patch_metadata(&name, &PatchParams::default(), &Patch::Merge(patch))
                .await
                .map(drop)
        })
    }
}

impl<K: TypedResource> MetadataCache for ScopedLister<PartialObjectMeta<K>> {
    fn get(&self, key: &ObjectKey) -> Option<Arc<dyn CachedMetadata>> {
        let object: Arc<dyn CachedMetadata> = self.cached(key)?;
        Some(object)
    }

    fn keys(&self) -> Vec<ObjectKey> {
        self.list_in_scope(&Selector::default())
            .iter()
            .map(|object| ObjectKey::of(&**object))
            .collect()
    }

    fn any(&self, predicate: &dyn Fn(&ObjectMeta) -> bool) -> bool {
        self.list_in_scope(&Selector::default())
            .iter()
            .any(|object| predicate(&object.metadata))
    }
}
