//! [`DrainSweep`]: a shard lets go of the drained objects that none of its controllers sees,
//! so that no object of the ring stays drained while its shard runs.
//!
//! A sharded controller acknowledges the drains of the objects in its cache. An object of a
//! ring resource outside every controller's scope (a controller that reconciles a labelled
//! subset, or no controller of the resource at all) is assigned and drained by the sharder
//! all the same, and nobody would take its labels off. The sweep watches the shard's drained
//! objects (metadata only) and acknowledges those that no controller of the manager may hold.
//! An object a controller's scope holds is left to that controller, which acknowledges it
//! after its last reconcile: the sweep never takes an object away from a running reconcile.
//! Scopes are the same on every replica, so an object outside them is reconciled by no shard
//! before or after it moves.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex, PoisonError, RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::{Expression, Selector};
use tokio_util::sync::CancellationToken;

use super::{
    Assignment, Shard,
    metadata_access::{MetadataCache, OnChange},
    resource_type::ResourceType,
};
use crate::{
    factory::{SharedInformerFactory, TypedResource},
    informer,
    key::ObjectKey,
    leader_election::Leadership,
    scope::{Scope, coverage::Selection},
    workqueue::{RateLimitingQueue, default_controller_rate_limiter},
};

/// The scopes of a manager's controllers of the ring's resources: what they see, and so
/// acknowledge themselves.
#[derive(Clone, Default)]
pub(crate) struct Claims(Arc<RwLock<Vec<Claim>>>);

struct Claim {
    group: String,
    plural: String,
    selection: Selection,
}

impl Claims {
    /// Records that a controller reconciles the objects of `scope`.
    pub(crate) fn add<K: TypedResource>(&self, scope: &Scope<K>) {
        let claim = Claim {
            group: K::group(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            selection: scope.selection().clone(),
        };
        self.0.write().unwrap_or_else(PoisonError::into_inner).push(claim);
    }

    /// Whether a controller's scope may hold the object of `resource` with `metadata`
    /// (field requirements on other fields than the name and namespace count as met).
    fn cover(&self, resource: &ResourceType, metadata: &ObjectMeta) -> bool {
        let empty = BTreeMap::new();
        let labels = metadata.labels.as_ref().unwrap_or(&empty);
        let claims = self.0.read().unwrap_or_else(PoisonError::into_inner);
        claims
            .iter()
            .filter(|claim| claim.group == resource.group() && claim.plural == resource.plural())
            .any(|claim| {
                claim
                    .selection
                    .may_hold(metadata.namespace.as_deref(), metadata.name.as_deref(), labels)
            })
    }
}

/// One watched ring resource: its drained objects on this shard.
struct Watched {
    resource: ResourceType,
    cache: Arc<dyn MetadataCache>,
}

/// What the sweep checks: an object of the watched resource at this index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Item {
    resource: usize,
    key: ObjectKey,
}

/// The sweep of one shard (see the [module documentation](self)); a runnable of the shard's
/// manager, acting while the shard holds its Lease.
pub(crate) struct DrainSweep {
    shard: Shard,
    claims: Claims,
    name: String,
    watched: Vec<Watched>,
    /// The queue of the running term, if any (events between terms are dropped: a term
    /// starts by checking every cached object).
    queue: Arc<Mutex<Option<Arc<RateLimitingQueue<Item>>>>>,
    acknowledged: Arc<AtomicU64>,
}

impl DrainSweep {
    /// The sweep of `shard`, watching its drained objects through `factory` (restricted to
    /// the shard). Call before the factory starts.
    pub(crate) fn new(
        shard: &Shard,
        claims: Claims,
        factory: &SharedInformerFactory,
    ) -> informer::Result<Self> {
        let drain = Selector::from(Expression::Exists(super::labels::drain_label(
            shard.ring().name(),
        )));
        let queue: Arc<Mutex<Option<Arc<RateLimitingQueue<Item>>>>> = Arc::default();
        let mut watched = Vec::new();
        for ring_resource in shard.ring().resources() {
            let index = watched.len();
            let current = Arc::clone(&queue);
            let on_change: OnChange = Arc::new(move |key| {
                if let Some(queue) = current.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
                    queue.add(Item { resource: index, key });
                }
            });
            let resource = ring_resource.resource().clone();
            let cache = resource
                .access
                .watch_labelled(factory, drain.clone(), on_change)?;
            watched.push(Watched { resource, cache });
        }
        Ok(Self {
            name: format!("drain sweep of shard {}", shard.name()),
            shard: shard.clone(),
            claims,
            watched,
            queue,
            acknowledged: Arc::default(),
        })
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
    /// cancelled or `leadership` ends; writes through `client` (the manager's fenced client).
    pub(crate) async fn run_term(
        &self,
        client: kube::Client,
        stop: CancellationToken,
        leadership: Option<Leadership>,
    ) {
        let queue = Arc::new(RateLimitingQueue::new(default_controller_rate_limiter()));
        *self.queue.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&queue));
        for (resource, watched) in self.watched.iter().enumerate() {
            for key in watched.cache.keys() {
                queue.add(Item { resource, key });
            }
        }
        let work = async {
            while let Some(item) = queue.get().await {
                let retry = self.check(&client, &item, leadership.as_ref()).await;
                if retry {
                    queue.add_rate_limited(item.clone());
                } else {
                    queue.forget(&item);
                }
                queue.done(&item);
            }
        };
        let ended = async {
            match &leadership {
                Some(leadership) => tokio::select! {
                    () = leadership.lost() => {}
                    () = stop.cancelled() => {}
                },
                None => stop.cancelled().await,
            }
        };
        tokio::select! {
            () = work => {}
            () = ended => {}
        }
        *self.queue.lock().unwrap_or_else(PoisonError::into_inner) = None;
        queue.shut_down();
    }

    /// Acknowledges the drain of `item` if no controller may hold it; `true` to retry later.
    async fn check(&self, client: &kube::Client, item: &Item, leadership: Option<&Leadership>) -> bool {
        let Some(watched) = self.watched.get(item.resource) else {
            return false;
        };
        let Some(object) = watched.cache.get(&item.key) else {
            return false;
        };
        let metadata = object.metadata();
        if self.shard.assignment(metadata) != Assignment::Draining
            || self.claims.cover(&watched.resource, metadata)
            || leadership.is_some_and(|leadership| !leadership.is_current())
        {
            return false;
        }
        let patch = self.shard.acknowledge_patch(metadata.resource_version.as_deref());
        match watched
            .resource
            .access
            .merge_patch(client.clone(), &item.key, patch)
            .await
        {
            Ok(()) => {
                self.acknowledged.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(resource = %watched.resource, object = %item.key, "acknowledged the drain of an object no controller sees");
                false
            }
            Err(kube::Error::Api(status)) if status.code == 404 => false,
            Err(error) => {
                tracing::warn!(resource = %watched.resource, object = %item.key, %error, "failed to acknowledge a drain; retrying");
                true
            }
        }
    }
}
