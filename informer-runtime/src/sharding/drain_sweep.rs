//! [`DrainSweep`]: a shard lets go of the drained objects that none of its controllers sees,
//! so that no object of the ring stays drained while its shard runs.
//!
//! A sharded controller acknowledges the drains of the objects in its cache. An object of a
//! ring resource outside every controller's scope (a controller that reconciles a labelled
//! subset, or no controller of the resource at all) is assigned and drained by the sharder
//! all the same, and nobody would take its labels off. The sweep watches the shard's drained
//! objects (metadata only) and acknowledges those that no controller of the manager may hold.
//! An object a controller's scope holds is left to that controller, which acknowledges it
//! after its last reconcile. One that just left a controller's scope is acknowledged only
//! once that controller neither works on it nor caches it any more, and conditionally on the
//! version read: the sweep never takes an object away from a running reconcile, and no later
//! reconcile of this shard can see it (its caches only get newer versions, which no longer
//! carry the shard's label).

use std::{
    collections::BTreeMap,
    sync::{
        Arc, PoisonError, RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use futures::{FutureExt, StreamExt};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::{Expression, Selector};
use tokio_util::sync::CancellationToken;

use super::{
    Assignment, Shard,
    metadata_access::{CheckObject, MetadataCache, ObjectController},
    resource_type::ResourceType,
};
use crate::{
    controller::{self, Action},
    factory::{SharedInformerFactory, TypedResource},
    key::ObjectKey,
    leader_election::Leadership,
    scope::{Scope, coverage::Selection},
};

/// The scopes of a manager's controllers of the ring's resources: what they see, and so
/// acknowledge themselves.
#[derive(Clone, Default)]
pub(crate) struct Claims(Arc<RwLock<Vec<Claim>>>);

/// Whether a controller works on an object now or holds it in its cache.
pub(crate) type BusyProbe = Arc<dyn Fn(&ObjectKey) -> bool + Send + Sync>;

struct Claim {
    group: String,
    plural: String,
    selection: Selection,
    busy: BusyProbe,
}

/// Who lets go of a drained object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cover {
    /// A controller's scope holds it: the controller acknowledges it.
    Scope,
    /// No scope holds it, but a controller still works on it or caches it (an object that
    /// just left its scope): wait until it is done.
    Busy,
    /// Nobody: the sweep acknowledges it.
    Nobody,
}

impl Claims {
    /// Records that a controller reconciles the objects of `scope`, and how to ask it whether
    /// it works on an object or caches it.
    pub(crate) fn add<K: TypedResource>(&self, scope: &Scope<K>, busy: BusyProbe) {
        let claim = Claim {
            group: K::group(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            selection: scope.selection().clone(),
            busy,
        };
        self.0.write().unwrap_or_else(PoisonError::into_inner).push(claim);
    }

    /// Who lets go of the object `key` of `resource` with `metadata`: a controller whose
    /// scope may hold it (field requirements on other fields than the name and namespace
    /// count as met), one that still works on it or caches it, or nobody.
    fn cover(&self, resource: &ResourceType, key: &ObjectKey, metadata: &ObjectMeta) -> Cover {
        let empty = BTreeMap::new();
        let labels = metadata.labels.as_ref().unwrap_or(&empty);
        let claims = self.0.read().unwrap_or_else(PoisonError::into_inner);
        let mut of_resource = claims
            .iter()
            .filter(|claim| claim.group == resource.group() && claim.plural == resource.plural())
            .peekable();
        if of_resource.peek().is_none() {
            return Cover::Nobody;
        }
        let mut busy = false;
        for claim in of_resource {
            if claim
                .selection
                .may_hold(metadata.namespace.as_deref(), metadata.name.as_deref(), labels)
            {
                return Cover::Scope;
            }
            busy |= (claim.busy)(key);
        }
        if busy { Cover::Busy } else { Cover::Nobody }
    }
}

/// One watched ring resource: its drained objects on this shard.
struct Watched {
    resource: ResourceType,
    cache: Arc<dyn MetadataCache>,
}

/// The sweep of one shard (see the [module documentation](self)); a runnable of the shard's
/// manager, acting while the shard holds its Lease. It checks the drained objects with one
/// [`Controller`](crate::controller::Controller) per ring resource.
pub(crate) struct DrainSweep {
    shard: Shard,
    claims: Claims,
    name: String,
    factory: SharedInformerFactory,
    /// The shard's drained objects: those carrying the ring's drain label.
    drained: Selector,
    watched: Vec<Watched>,
    acknowledged: AtomicU64,
}

impl DrainSweep {
    /// The sweep of `shard`, watching its drained objects through `factory` (restricted to
    /// the shard). Call before the factory starts.
    pub(crate) fn new(shard: &Shard, claims: Claims, factory: &SharedInformerFactory) -> Self {
        let drained = Selector::from(Expression::Exists(super::labels::drain_label(
            shard.ring().name(),
        )));
        let watched = shard
            .ring()
            .resources()
            .iter()
            .map(|ring_resource| {
                let resource = ring_resource.resource().clone();
                let cache = resource.access.cache(factory, drained.clone());
                Watched { resource, cache }
            })
            .collect();
        Self {
            name: format!("drain sweep of shard {}", shard.name()),
            shard: shard.clone(),
            claims,
            factory: factory.clone(),
            drained,
            watched,
            acknowledged: AtomicU64::new(0),
        }
    }

    /// `drain sweep of shard <name>`.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The ring's name.
    #[cfg(feature = "metrics")]
    pub(crate) fn ring(&self) -> &str {
        self.shard.ring().name()
    }

    /// The shard's name.
    #[cfg(feature = "metrics")]
    pub(crate) fn shard_name(&self) -> &str {
        self.shard.name()
    }

    /// Drains the sweep acknowledged so far.
    #[cfg(feature = "metrics")]
    pub(crate) fn acknowledged(&self) -> u64 {
        self.acknowledged.load(Ordering::Relaxed)
    }

    /// One term: checks every drained object, then each that changes, until `stop` is
    /// cancelled (at shutdown, or when the term `leadership` belongs to ends); writes through
    /// `client` (the manager's fenced client), only while `leadership` is current.
    ///
    /// # Errors
    ///
    /// The error of a controller that stopped (its informer stopped); the others stop too.
    pub(crate) async fn run_term(
        self: &Arc<Self>,
        client: kube::Client,
        stop: CancellationToken,
        leadership: Option<Leadership>,
    ) -> controller::Result<()> {
        let controllers = self.watched.iter().enumerate().map(|(index, watched)| {
            let (sweep, client, term) = (Arc::clone(self), client.clone(), leadership.clone());
            let check: CheckObject = Arc::new(move |key| {
                let (sweep, client, term) = (Arc::clone(&sweep), client.clone(), term.clone());
                async move {
                    if sweep.check(&client, index, &key, term.as_ref()).await {
                        Action::requeue_with_backoff()
                    } else {
                        Action::await_change()
                    }
                }
                .boxed()
            });
            let settings = ObjectController {
                name: format!("{} {}", self.name, watched.resource),
                labels: self.drained.clone(),
                concurrency: 1,
                check_all_on: futures::stream::pending().boxed(),
                follows_namespaces: false,
                check,
                stop: stop.clone(),
                leadership: leadership.clone(),
                metrics: None,
            };
            watched.resource.access.controller(&self.factory, settings)
        });
        // the manager cancels `stop` when the term ends, as at shutdown
        futures::future::try_join_all(controllers).await.map(drop)
    }

    /// Acknowledges the drain of the object `key` of the watched resource at `index` if no
    /// controller may hold it; `true` to retry later.
    async fn check(
        &self,
        client: &kube::Client,
        index: usize,
        key: &ObjectKey,
        leadership: Option<&Leadership>,
    ) -> bool {
        let Some(watched) = self.watched.get(index) else {
            return false;
        };
        let Some(object) = watched.cache.get(key) else {
            return false;
        };
        let metadata = object.metadata();
        if self.shard.assignment(metadata) != Assignment::Draining
            || leadership.is_some_and(|leadership| !leadership.is_current())
        {
            return false;
        }
        match self.claims.cover(&watched.resource, key, metadata) {
            Cover::Scope => return false,
            // the controller's next event (the object leaving its cache) comes, but the sweep
            // gets none: look again after a backoff
            Cover::Busy => return true,
            Cover::Nobody => {}
        }
        let patch = self.shard.acknowledge_patch(metadata.resource_version.as_deref());
        match watched
            .resource
            .access
            .merge_patch(client.clone(), key, patch)
            .await
        {
            Ok(()) => {
                self.acknowledged.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(resource = %watched.resource, object = %key, "acknowledged the drain of an object no controller sees");
                false
            }
            Err(kube::Error::Api(status)) if status.code == 404 => false,
            Err(error) => {
                tracing::warn!(resource = %watched.resource, object = %key, %error, "failed to acknowledge a drain; retrying");
                true
            }
        }
    }
}
