//! The sharder's typed access to one resource behind a type-erased handle: a metadata-only
//! informer of the resource and its cached metadata, the controller that checks its objects,
//! and merge patches through `Api<K>`. Made in [`ResourceType::of`](super::ResourceType::of),
//! where the Rust type is known.

use std::{convert::Infallible, marker::PhantomData, sync::Arc};

use futures::{FutureExt, future::BoxFuture, stream::BoxStream};
use k8s_openapi::{api::core::v1::Namespace, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams},
    core::{PartialObjectMeta, Selector},
};
use tokio_util::sync::CancellationToken;

use crate::{
    controller::{self, Action, Controller, ReconcileMetrics, Watches},
    factory::{SharedInformerFactory, TypedResource},
    key::ObjectKey,
    leader_election::Leadership,
    predicate::Predicate,
    scope::{Scope, ScopedLister},
    source::ApiScope,
    workqueue::QueueMetrics,
};

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

/// Checks one object of a resource, by key: what an object controller of the sharder
/// reconciles with.
pub(crate) type CheckObject = Arc<dyn Fn(ObjectKey) -> BoxFuture<'static, Action> + Send + Sync>;

/// What the controller of one resource's objects is made of (see
/// [`MetadataAccess::controller`]).
pub(crate) struct ObjectController {
    /// Its name, in logs and stats.
    pub(crate) name: String,
    /// The objects it checks: those of [`MetadataAccess::cache`] with these labels.
    pub(crate) labels: Selector,
    /// How many objects it checks at once.
    pub(crate) concurrency: usize,
    /// Each item checks every cached object again (the ring's shards changed).
    pub(crate) check_all_on: BoxStream<'static, ()>,
    /// Whether a change of a namespace's labels checks the objects in it again (it may have
    /// joined or left the ring).
    pub(crate) follows_namespaces: bool,
    /// The check of one object.
    pub(crate) check: CheckObject,
    /// Stops the controller.
    pub(crate) stop: CancellationToken,
    /// The term it writes in.
    pub(crate) leadership: Option<Leadership>,
    /// Where it reports its queue and reconciles, if anywhere.
    pub(crate) metrics: Option<(Arc<dyn QueueMetrics>, Arc<dyn ReconcileMetrics>)>,
}

/// The typed operations the sharder needs on one resource.
pub(crate) trait MetadataAccess: Send + Sync {
    /// The metadata-only cache of the resource's objects that `labels` selects (every one for
    /// an empty selector), in `factory` (shared with its other users; narrowed further if the
    /// factory is [restricted](crate::factory::Builder::resource_labels)).
    fn cache(&self, factory: &SharedInformerFactory, labels: Selector) -> Arc<dyn MetadataCache>;

    /// Runs the controller that checks the objects of [`cache`](Self::cache) with
    /// `settings.labels` until `settings.stop` is cancelled or an informer it reads stops. The factory's caches
    /// are expected to be synced.
    fn controller(
        &self,
        factory: &SharedInformerFactory,
        settings: ObjectController,
    ) -> BoxFuture<'static, controller::Result<()>>;

    /// Sends the JSON merge patch `patch` to the object `key`.
    fn merge_patch(
        &self,
        client: kube::Client,
        key: &ObjectKey,
        patch: serde_json::Value,
    ) -> BoxFuture<'static, kube::Result<()>>;

    /// The keys of the objects the label selector `labels` selects, in every namespace, and
    /// the list's resource version: a consistent read of their metadata.
    fn list_keys(
        &self,
        client: kube::Client,
        labels: &str,
    ) -> BoxFuture<'static, kube::Result<(Vec<ObjectKey>, String)>>;
}

/// A metadata-only cache of one resource.
pub(crate) trait MetadataCache: Send + Sync {
    /// The cached metadata of `key`.
    fn get(&self, key: &ObjectKey) -> Option<Arc<dyn CachedMetadata>>;
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
    fn cache(&self, factory: &SharedInformerFactory, labels: Selector) -> Arc<dyn MetadataCache> {
        let scope = Scope::<PartialObjectMeta<K>>::all().and_labels(labels);
        Arc::new(factory.informer_in(&scope).lister())
    }

    fn controller(
        &self,
        factory: &SharedInformerFactory,
        settings: ObjectController,
    ) -> BoxFuture<'static, controller::Result<()>> {
        let scope = Scope::<PartialObjectMeta<K>>::all().and_labels(settings.labels);
        let mut controller = Controller::new_in(factory, &scope)
            .name(settings.name)
            .concurrency(settings.concurrency)
            // the sharder keeps track of its own writes, by resourceVersion
            .wait_for_own_writes(None)
            .reconcile_all_on(settings.check_all_on);
        if let Some((queue, reconciles)) = settings.metrics {
            controller = controller.metrics(queue, reconciles);
        }
        if settings.follows_namespaces {
            let objects = factory.informer_in(&scope).lister();
            controller = controller.relation(
                Watches::new(move |namespace: &PartialObjectMeta<Namespace>| objects_in(&objects, namespace))
                    .scope(&Scope::all())
                    .predicate(Predicate::labels_changed()),
            );
        }
        let check = settings.check;
        let reconcile = move |object: Arc<PartialObjectMeta<K>>, _: Arc<()>| {
            check(ObjectKey::of(&*object)).map(Ok::<_, Infallible>)
        };
        let error_policy = |_: Arc<PartialObjectMeta<K>>, error: &Infallible, _: Arc<()>| match *error {};
        let runner = controller.into_runner(reconcile, error_policy, Arc::new(()));
        let (stop, leadership) = (settings.stop, settings.leadership);
        Box::pin(async move { runner.run(stop, leadership).await })
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

    fn list_keys(
        &self,
        client: kube::Client,
        labels: &str,
    ) -> BoxFuture<'static, kube::Result<(Vec<ObjectKey>, String)>> {
        let api: Api<K> = Api::all(client);
        let params = ListParams::default().labels(labels);
        Box::pin(async move {
            let list = api.list_metadata(&params).await?;
            let version = list.metadata.resource_version.clone().unwrap_or_default();
            let keys = list.items.iter().map(ObjectKey::of).collect();
            Ok((keys, version))
        })
    }
}

/// The keys of the cached objects in `namespace` (of a namespace whose labels changed).
fn objects_in<K: TypedResource>(
    objects: &ScopedLister<PartialObjectMeta<K>>,
    namespace: &PartialObjectMeta<Namespace>,
) -> Vec<ObjectKey> {
    let Some(name) = namespace.metadata.name.as_deref() else {
        return Vec::new();
    };
    match objects.by_namespace(name).list(&Selector::default()) {
        Ok(objects) => objects.iter().map(|object| ObjectKey::of(&**object)).collect(),
        Err(error) => {
            tracing::warn!(namespace = %name, %error, "failed to list the objects of a namespace whose labels changed; they are checked at the next resync");
            Vec::new()
        }
    }
}

impl<K: TypedResource> MetadataCache for ScopedLister<PartialObjectMeta<K>> {
    fn get(&self, key: &ObjectKey) -> Option<Arc<dyn CachedMetadata>> {
        let object: Arc<dyn CachedMetadata> = self.cached(key)?;
        Some(object)
    }

    fn any(&self, predicate: &dyn Fn(&ObjectMeta) -> bool) -> bool {
        self.list_in_scope(&Selector::default())
            .iter()
            .any(|object| predicate(&object.metadata))
    }
}
