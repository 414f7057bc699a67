//! The informers a controller reads: its own type, the types it owns and the types it
//! watches. Each becomes an [`Enqueue`] handler, behind the relation's predicate
//! ([`Filtered`]), on a shared informer when the controller runs, and is removed when it
//! stops.

use std::{fmt, sync::Arc};

use futures::future::BoxFuture;
use kube::Resource;

use super::{
    filter::Filtered, gate::Gated, out_of_scope::OutOfScope, own_writes::CacheProgress,
    queue::ControllerQueue, stats::Counters,
};
use crate::{
    cache::Index,
    factory::TypedResource,
    informer::{self, Registration, SharedIndexInformer, enqueue::Enqueue, handler::ResourceEventHandler},
    key::ObjectKey,
    predicate::Predicate,
    scope::{Part, Selection},
    source::ApiScope,
    workqueue::Priority,
};

/// What a relation registers its handler for: one run's queue, and the controller's name and
/// counters (for the predicates' reports).
pub(crate) struct Target<'a> {
    pub(crate) queue: &'a ControllerQueue,
    pub(crate) controller: &'a str,
    pub(crate) counters: &'a Arc<Counters>,
}

impl Target<'_> {
    /// `handler` of a relation behind `predicate`, reporting to this controller.
    fn filtered<C, H>(&self, handler: H, predicate: Option<Predicate<C>>) -> Filtered<C, H> {
        Filtered {
            inner: handler,
            predicate,
            controller: self.controller.to_owned(),
            counters: Arc::clone(self.counters),
            out_of_scope: None,
            gate: None,
            resyncs: false,
        }
    }
}

/// What a watch relation maps an object to: the names to reconcile.
pub(crate) type Mapper<O> = Arc<dyn Fn(&O) -> Vec<ObjectKey> + Send + Sync>;

/// A relation not registered yet: registers its handler on a queue of the controller, once per
/// run (a controller under a manager runs once per leadership term).
pub(crate) type Wiring = Arc<dyn Fn(&Target<'_>) -> informer::Result<Box<dyn Relation>> + Send + Sync>;

/// A registered handler of the controller, whatever its object type.
pub(crate) trait Relation: Send + Sync {
    /// The informer's description (`pods`, `foos`).
    fn informer(&self) -> &str;
    /// Whether the informer synced and the handler handled its initial list.
    fn has_synced(&self) -> bool;
    /// Calls of the handler that panicked (a handler that panicked on its initial list never
    /// syncs: reported while the controller waits).
    fn panics(&self) -> u64;
    /// Resolves when the informer stopped.
    fn until_stopped(&self) -> BoxFuture<'static, ()>;
    /// Removes the handler.
    fn remove(&self);
    /// How far the informer's cache has caught up, for the guard of the controller's own writes.
    fn cache(&self) -> CacheProgress;
}

struct Registered<C> {
    informer: SharedIndexInformer<C>,
    /// What the informer holds (its scope), for the guard of the controller's own writes.
    selection: Arc<Selection>,
    registration: Registration<C>,
}

impl<C: TypedResource> Relation for Registered<C> {
    fn informer(&self) -> &str {
        self.informer.description()
    }

    fn has_synced(&self) -> bool {
        self.registration.has_synced()
    }

    fn panics(&self) -> u64 {
        self.registration.panics()
    }

    fn until_stopped(&self) -> BoxFuture<'static, ()> {
        let informer = self.informer.clone();
        Box::pin(async move { informer.until_stopped().await })
    }

    fn remove(&self) {
        self.registration.remove();
    }

    fn cache(&self) -> CacheProgress {
        CacheProgress::new(
            &C::group(&()),
            &C::kind(&()),
            self.informer.description(),
            self.informer.cache_resource_version(),
        )
        .holding(Arc::clone(&self.selection))
        .handled_by(self.registration.delivery())
    }
}

impl fmt::Debug for dyn Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Relation")
            .field("informer", &self.informer())
            .field("synced", &self.has_synced())
            .finish()
    }
}

/// Registers `handler` on the informer of `part`.
fn register<C, H>(part: &Part<C>, handler: H) -> informer::Result<Box<dyn Relation>>
where
    C: TypedResource,
    H: ResourceEventHandler<C>,
{
    let registration = part.informer.add_event_handler(handler)?;
    Ok(Box::new(Registered {
        informer: part.informer.clone(),
        selection: Arc::clone(&part.selection),
        registration,
    }))
}

/// The controller's own objects: every change that passes `predicate` enqueues the object,
/// resyncs included (a resync period on the factory reconciles every object periodically, as
/// in client-go); with `out_of_scope`, objects that leave the scope carrying the controller's
/// finalizer too.
pub(crate) fn main<K: TypedResource>(
    part: Part<K>,
    predicate: Option<Predicate<K>>,
    out_of_scope: Option<Arc<OutOfScope>>,
    gate: Option<Arc<Gated>>,
) -> Wiring {
    Arc::new(move |target| {
        let enqueue = Enqueue::by_key(Arc::clone(target.queue)).on_resync(true);
        let filtered = Filtered {
            out_of_scope: out_of_scope.clone(),
            gate: gate.clone(),
            resyncs: true,
            ..target.filtered(enqueue, predicate.clone())
        };
        register(&part, filtered)
    })
}

/// Objects of `C` that pass `predicate` enqueue the `K` that controls them; the child
/// informer gets the [`Index::BY_CONTROLLER_UID`] index, so a reconcile finds an owner's
/// children without a scan.
pub(crate) fn owns<K: TypedResource, C: TypedResource>(
    part: Part<C>,
    predicate: Option<Predicate<C>>,
    priority: Priority,
) -> Wiring {
    Arc::new(move |target| {
        part.informer.add_index(&Index::<C>::BY_CONTROLLER_UID)?;
        let enqueue = Enqueue::new(Arc::clone(target.queue), controller_of::<K, C>).priority(priority);
        register(&part, target.filtered(enqueue, predicate.clone()))
    })
}

/// Objects of `O` that pass `predicate` enqueue what `mapper` returns for them.
pub(crate) fn watches<O: TypedResource>(
    part: Part<O>,
    predicate: Option<Predicate<O>>,
    priority: Priority,
    mapper: Mapper<O>,
) -> Wiring {
    Arc::new(move |target| {
        let mapper = Arc::clone(&mapper);
        let enqueue =
            Enqueue::new(Arc::clone(target.queue), move |object: &O| mapper(object)).priority(priority);
        register(&part, target.filtered(enqueue, predicate.clone()))
    })
}

/// The name of the `K` that controls `child` (its owner reference with `controller: true`,
/// compared by group and kind: any version of `K` is the same object), if any.
///
/// A namespaced owner lives in its child's namespace; a cluster-scoped one has none.
pub(crate) fn controller_of<K: TypedResource, C: Resource>(child: &C) -> Option<ObjectKey> {
    let (kind, group) = (K::kind(&()), K::group(&()));
    let owner = child
        .meta()
        .owner_references
        .iter()
        .flatten()
        .filter(|owner| owner.controller == Some(true))
        .find(|owner| owner.kind == kind && group_of(&owner.api_version) == group)?;
    let namespace = if <K::Scope as ApiScope>::NAMESPACED {
        child.meta().namespace.as_deref().unwrap_or_default()
    } else {
        ""
    };
    Some(ObjectKey::new(namespace, &owner.name))
}

/// The group of an `apiVersion` (`apps/v1` → `apps`; `v1` → the core group, `""`).
fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(group, _)| group)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        api::{
            apps::v1::{Deployment, ReplicaSet},
            core::v1::{Namespace, Pod},
        },
        apimachinery::pkg::apis::meta::v1::OwnerReference,
    };
    use kube::api::ObjectMeta;

    use super::*;

    fn pod_owned_by(owners: Vec<OwnerReference>) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("web-1".into()),
                namespace: Some("prod".into()),
                owner_references: Some(owners),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        }
    }

    fn owner(api_version: &str, kind: &str, name: &str, controller: bool) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            controller: Some(controller),
            block_owner_deletion: None,
        }
    }

    #[test]
    fn the_controller_owner_of_the_kind_is_found_in_the_childs_namespace() {
        let pod = pod_owned_by(vec![
            owner("apps/v1", "ReplicaSet", "not-the-controller", false),
            owner("apps/v1", "ReplicaSet", "web", true),
        ]);
        assert_eq!(
            controller_of::<ReplicaSet, _>(&pod),
            Some(ObjectKey::new("prod", "web"))
        );
        assert_eq!(controller_of::<Deployment, _>(&pod), None);
    }

    #[test]
    fn owners_match_by_group_and_kind_in_any_version() {
        let pod = pod_owned_by(vec![owner("apps/v1beta2", "ReplicaSet", "web", true)]);
        assert_eq!(
            controller_of::<ReplicaSet, _>(&pod),
            Some(ObjectKey::new("prod", "web"))
        );
        let other_group = pod_owned_by(vec![owner("example.com/v1", "ReplicaSet", "web", true)]);
        assert_eq!(controller_of::<ReplicaSet, _>(&other_group), None);
    }

    #[test]
    fn a_cluster_scoped_owner_has_no_namespace() {
        let pod = pod_owned_by(vec![owner("v1", "Namespace", "prod", true)]);
        assert_eq!(
            controller_of::<Namespace, _>(&pod),
            Some(ObjectKey::new("", "prod"))
        );
    }
}
