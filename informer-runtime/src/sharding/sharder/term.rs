//! One term of a sharder: its own factory and informers, a work queue of Leases and objects,
//! the workers that check them, and the periodic resync. Everything ends with the term.

mod leases;
mod membership;
mod objects;

use std::{
    collections::{HashMap, HashSet},
    panic::AssertUnwindSafe,
    sync::{Arc, Mutex, RwLock, atomic::Ordering},
    time::Duration,
};

use futures::FutureExt;
use k8s_openapi::{
    api::{coordination::v1::Lease, core::v1::Namespace},
    jiff::Timestamp,
};
use kube::core::{PartialObjectMeta, Selector};
use tokio_util::sync::CancellationToken;

use self::membership::Membership;
use super::{options::Options, stats::Counters};
use crate::{
    factory::SharedInformerFactory,
    informer::{SharedIndexInformer, handler::EventHandlerFuncs},
    key::ObjectKey,
    leader_election::Leadership,
    scope::{Scope, ScopedInformer, ScopedLister},
    sharding::{
        labels::{drain_label, shard_label},
        metadata_access::{MetadataCache, OnChange},
        resource_type::ResourceType,
        ring::ControllerRing,
    },
    workqueue::{RateLimitingQueue, default_controller_rate_limiter},
};

/// What the workers check.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum WorkItem {
    /// The shard Lease of this name (and, with it, the ring's membership).
    Lease(String),
    /// An object of the watched resource at this index.
    Object { resource: usize, key: ObjectKey },
    /// The objects in the namespace of this name (its labels changed).
    Namespace(String),
}

/// What to do with an item after a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Nothing more (until its next event).
    Done,
    /// Check it again after this delay (a Lease's next state change).
    After(Duration),
    /// Check it again after the rate limiter's delay (a failed write).
    Retry,
}

/// A watched resource of the ring.
struct Watched {
    resource: ResourceType,
    /// Whether its objects follow their controller (a controlled resource): they move at
    /// once, without a drain.
    controlled: bool,
    cache: Arc<dyn MetadataCache>,
}

/// What the workers of one term share.
struct Shared {
    client: kube::Client,
    ring: Arc<ControllerRing>,
    /// The namespaces' metadata, for the ring's namespace selector (`None` when the ring has
    /// no namespaced resource).
    namespaces: Option<SharedIndexInformer<PartialObjectMeta<Namespace>>>,
    options: Options,
    counters: Arc<Counters>,
    shard_label: String,
    drain_label: String,
    stop: CancellationToken,
    leadership: Option<Leadership>,
    queue: Arc<RateLimitingQueue<WorkItem>>,
    leases: ScopedLister<Lease>,
    watched: Vec<Watched>,
    membership: RwLock<Arc<Membership>>,
    /// The resourceVersion each item had when the sharder last changed it, until the cache
    /// holds a newer one: a check of the older version would write again and get a 409.
    written: Mutex<HashMap<WorkItem, Option<String>>>,
    /// Dead shards whose objects wait for the sharder to hold their Lease before they move.
    hold_requests: Mutex<HashSet<String>>,
}

/// What a term is run with: the sharder's configuration and counters.
pub(super) struct Setup<'a> {
    pub(super) client: &'a kube::Client,
    pub(super) ring: &'a Arc<ControllerRing>,
    pub(super) leases: &'a Scope<Lease>,
    pub(super) options: &'a Options,
    pub(super) counters: &'a Arc<Counters>,
}

/// Runs one term of a sharder until `stop` is cancelled or `leadership` ends.
pub(super) async fn run(sharder: Setup<'_>, stop: CancellationToken, leadership: Option<Leadership>) {
    let stop = stop.child_token();
    // The sharder reads names, labels, owner references and resource versions: the rest of
    // the metadata (managed fields, annotations such as last-applied-configuration) is not
    // cached, so its memory per object stays small.
    let factory = SharedInformerFactory::builder(sharder.client.clone())
        .transform_metadata(|metadata| {
            metadata.managed_fields = None;
            metadata.annotations = None;
        })
        .build();
    // a term dropped before its end (its task aborted) stops its informers all the same
    let _shutdown = factory.shutdown_guard();
    let queue = Arc::new(RateLimitingQueue::new(default_controller_rate_limiter()));
    let span = tracing::info_span!("sharder", ring = %sharder.ring.name());
    let run = async {
        match Shared::watch(&sharder, &factory, &queue, stop.clone(), leadership.clone()) {
            Ok(shared) => shared.run(&factory).await,
            Err(error) => {
                tracing::error!(%error, "failed to register the sharder's event handlers; the term ends")
            }
        }
    };
    tokio::select! {
        () = tracing::Instrument::instrument(run, span) => {}
        () = ended(leadership.as_ref(), &stop) => {}
    }
    stop.cancel();
    queue.shut_down();
    factory.shutdown().await;
}

/// Completes when `stop` is cancelled or `leadership` ends.
async fn ended(leadership: Option<&Leadership>, stop: &CancellationToken) {
    match leadership {
        Some(leadership) => tokio::select! {
            () = leadership.lost() => {}
            () = stop.cancelled() => {}
        },
        None => stop.cancelled().await,
    }
}

impl Shared {
    /// Creates the term's informers with their handlers, which feed `queue`.
    fn watch(
        sharder: &Setup<'_>,
        factory: &SharedInformerFactory,
        queue: &Arc<RateLimitingQueue<WorkItem>>,
        stop: CancellationToken,
        leadership: Option<Leadership>,
    ) -> crate::informer::Result<Self> {
        let leases = factory.informer_in(sharder.leases);
        watch_leases(&leases, queue)?;
        let mut watched = Vec::new();
        for ring_resource in sharder.ring.resources() {
            let controlled = ring_resource
                .controlled()
                .iter()
                .map(|controlled| (controlled, true));
            for (resource, controlled) in std::iter::once((ring_resource.resource(), false)).chain(controlled)
            {
                let index = watched.len();
                let queue = Arc::clone(queue);
                let on_change: OnChange =
                    Arc::new(move |key| queue.add(WorkItem::Object { resource: index, key }));
                let cache = resource.access.watch(factory, Selector::default(), on_change)?;
                watched.push(Watched {
                    resource: resource.clone(),
                    controlled,
                    cache,
                });
            }
        }
        let namespaces = sharder
            .ring
            .all_types()
            .any(ResourceType::is_namespaced)
            .then(|| watch_namespaces(factory, queue))
            .transpose()?;
        Ok(Self {
            client: sharder.client.clone(),
            ring: Arc::clone(sharder.ring),
            namespaces,
            shard_label: shard_label(sharder.ring.name()),
            drain_label: drain_label(sharder.ring.name()),
            options: sharder.options.clone(),
            counters: Arc::clone(sharder.counters),
            stop,
            leadership,
            queue: Arc::clone(queue),
            leases: leases.lister(),
            watched,
            membership: RwLock::new(Arc::new(Membership::empty())),
            written: Mutex::default(),
            hold_requests: Mutex::default(),
        })
    }

    /// Starts the informers, waits for their caches, then works until the term ends.
    async fn run(self, factory: &SharedInformerFactory) {
        factory.start();
        let report = factory
            .wait_for_cache_sync_until(self.stop.clone().cancelled_owned())
            .await;
        if !report.all_synced() {
            if !self.stop.is_cancelled() {
                tracing::error!(%report, "the sharder's caches did not sync; the term ends");
            }
            return;
        }
        tracing::info!("sharder caches synced");
        self.refresh_membership();
        self.enqueue_everything();
        let shared = Arc::new(self);
        let workers = (0..shared.options.concurrent_moves).map(|_| Arc::clone(&shared).work());
        tokio::join!(futures::future::join_all(workers), shared.resync());
    }

    /// Takes items off the queue until it shuts down.
    async fn work(self: Arc<Self>) {
        while let Some(item) = self.queue.get().await {
            let outcome = AssertUnwindSafe(self.check(&item)).catch_unwind().await;
            match outcome {
                Ok(Outcome::Done) => self.queue.forget(&item),
                Ok(Outcome::After(delay)) => {
                    self.queue.forget(&item);
                    self.queue.add_after(item.clone(), delay);
                }
                Ok(Outcome::Retry) => self.queue.add_rate_limited(item.clone()),
                Err(panic) => {
                    Counters::bump(&self.counters.errors);
                    let message = crate::user_panic::panic_message(panic.as_ref());
                    tracing::error!(?item, panic = %message, "the sharder panicked checking an item; retrying it later");
                    self.queue.add_rate_limited(item.clone());
                }
            }
            self.queue.done(&item);
        }
    }

    async fn check(&self, item: &WorkItem) -> Outcome {
        match item {
            WorkItem::Lease(name) => self.check_lease(name).await,
            WorkItem::Object { resource, key } => self.check_object(*resource, key).await,
            WorkItem::Namespace(name) => {
                self.enqueue_objects_in(name);
                Outcome::Done
            }
        }
    }

    /// Every resync period, checks every Lease and object again.
    async fn resync(&self) {
        if self.options.resync_period.is_zero() {
            return;
        }
        let mut tick = tokio::time::interval(self.options.resync_period);
        tick.tick().await;
        loop {
            tokio::select! {
                () = self.stop.cancelled() => return,
                _ = tick.tick() => {
                    tracing::debug!("resync of every object");
                    self.enqueue_everything();
                }
            }
        }
    }

    fn enqueue_everything(&self) {
        for lease in self.leases.list_in_scope(&Default::default()) {
            if let Some(name) = &lease.metadata.name {
                self.queue.add(WorkItem::Lease(name.clone()));
            }
        }
        self.enqueue_objects();
    }

    fn enqueue_objects(&self) {
        for (resource, watched) in self.watched.iter().enumerate() {
            for key in watched.cache.keys() {
                self.queue.add(WorkItem::Object { resource, key });
            }
        }
    }

    /// Queues the objects in `namespace` (whose labels changed: it may have joined or left
    /// the ring).
    fn enqueue_objects_in(&self, namespace: &str) {
        for (resource, watched) in self.watched.iter().enumerate() {
            let keys = watched.cache.keys().into_iter();
            for key in keys.filter(|key| key.namespace() == Some(namespace)) {
                self.queue.add(WorkItem::Object { resource, key });
            }
        }
    }

    /// The labels of `namespace`, if the sharder's cache holds it.
    fn namespace_labels(&self, namespace: &str) -> Option<std::collections::BTreeMap<String, String>> {
        let namespaces = self.namespaces.as_ref()?;
        let cached = namespaces.store().get_by_key(&ObjectKey::new("", namespace))?;
        Some(cached.metadata.labels.clone().unwrap_or_default())
    }

    /// The membership as last computed.
    fn membership(&self) -> Arc<Membership> {
        Arc::clone(&self.membership.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Recomputes the membership from the cached Leases; when the available shards changed,
    /// queues every object to be checked against the new ring.
    fn refresh_membership(&self) {
        let leases = self.leases.list_in_scope(&Default::default());
        let mut membership = self.membership.write().unwrap_or_else(|e| e.into_inner());
        let next = Membership::from_leases(
            &leases,
            Timestamp::now(),
            self.options.orphan_after,
            self.options.virtual_nodes,
            &membership,
        );
        let changed = next.available() != membership.available();
        *membership = Arc::new(next);
        drop(membership);
        if changed {
            let members = self.membership();
            let count = u64::try_from(members.available().len()).unwrap_or(u64::MAX);
            self.counters.ring_members.store(count, Ordering::Relaxed);
            tracing::info!(shards = ?members.available(), "the ring's available shards changed; checking every object");
            self.enqueue_objects();
        }
    }

    /// Whether the cache still holds the version of `item` the sharder changed last (its
    /// `resource_version` then): its watch event is on the way, and it is checked then.
    fn awaits_own_write(&self, item: &WorkItem, resource_version: Option<&String>) -> bool {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        match written.get(item) {
            Some(before) if before.as_ref() == resource_version => true,
            Some(_) => {
                written.remove(item);
                false
            }
            None => false,
        }
    }

    /// Records that the sharder changed `item`, which had `resource_version`.
    fn wrote(&self, item: WorkItem, resource_version: Option<String>) {
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(item, resource_version);
    }

    /// Forgets what the sharder wrote to `item` (it is gone).
    fn forget_write(&self, item: &WorkItem) {
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(item);
    }

    /// Whether this term may still write: not stopped, and still leading.
    fn may_write(&self) -> bool {
        let may = !self.stop.is_cancelled() && self.leadership.as_ref().is_none_or(Leadership::is_current);
        if !may {
            Counters::bump(&self.counters.writes_skipped);
            tracing::debug!("not leading any more; not writing");
        }
        may
    }

    /// The outcome of a failed write of `what`: 409 re-checks from the cache later, 404 drops
    /// the item, anything else is retried with backoff.
    fn failed(&self, what: &str, error: &kube::Error) -> Outcome {
        let code = match error {
            kube::Error::Api(status) => Some(status.code),
            _ => None,
        };
        match code {
            Some(409) => {
                Counters::bump(&self.counters.conflicts);
                tracing::debug!(%error, "conflict on {what}; checking again from the cache");
                Outcome::Retry
            }
            Some(404) => {
                tracing::debug!("{what}: gone");
                Outcome::Done
            }
            _ => {
                Counters::bump(&self.counters.errors);
                tracing::warn!(%error, "failed to {what}; retrying");
                Outcome::Retry
            }
        }
    }
}

/// The metadata-only informer of the namespaces, whose every change queues a check of the
/// objects in it (as `WorkItem::Namespace`, checked by a worker: the handler does not walk
/// the caches).
fn watch_namespaces(
    factory: &SharedInformerFactory,
    queue: &Arc<RateLimitingQueue<WorkItem>>,
) -> crate::informer::Result<SharedIndexInformer<PartialObjectMeta<Namespace>>> {
    let informer = factory.metadata_informer::<Namespace>();
    let name_of =
        |namespace: &PartialObjectMeta<Namespace>| namespace.metadata.name.clone().unwrap_or_default();
    let (on_add, on_update, on_delete) = (Arc::clone(queue), Arc::clone(queue), Arc::clone(queue));
    informer.add_event_handler(
        EventHandlerFuncs::new()
            .added(move |namespace: Arc<PartialObjectMeta<Namespace>>, _| {
                on_add.add(WorkItem::Namespace(name_of(&namespace)));
            })
            .updated(
                move |old: Arc<PartialObjectMeta<Namespace>>, new: Arc<PartialObjectMeta<Namespace>>| {
                    if old.metadata.labels != new.metadata.labels {
                        on_update.add(WorkItem::Namespace(name_of(&new)));
                    }
                },
            )
            .deleted(move |namespace| on_delete.add(WorkItem::Namespace(namespace.key().name().to_owned()))),
    )?;
    Ok(informer)
}

/// Registers the handler that queues a Lease on each of its changes.
fn watch_leases(
    leases: &ScopedInformer<Lease>,
    queue: &Arc<RateLimitingQueue<WorkItem>>,
) -> crate::informer::Result<()> {
    let name_of = |lease: &Lease| lease.metadata.name.clone().unwrap_or_default();
    let (on_add, on_update, on_delete) = (Arc::clone(queue), Arc::clone(queue), Arc::clone(queue));
    leases.add_event_handler(
        EventHandlerFuncs::new()
            .added(move |lease: Arc<Lease>, _| on_add.add(WorkItem::Lease(name_of(&lease))))
            .updated(move |_, lease: Arc<Lease>| on_update.add(WorkItem::Lease(name_of(&lease))))
            .deleted(move |lease| on_delete.add(WorkItem::Lease(lease.key().name().to_owned()))),
    )?;
    Ok(())
}
