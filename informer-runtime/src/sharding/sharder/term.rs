//! One term of a sharder: its own factory and informers, and the controllers that check
//! them (the runtime's [`Controller`]s): one of the ring's shard Leases and one of each watched
//! resource's objects (metadata only). Everything ends with the term.

mod leases;
mod membership;
mod objects;

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    convert::Infallible,
    sync::{Arc, Mutex, RwLock},
    time::Duration,
};

use futures::{FutureExt, Stream, StreamExt, future::BoxFuture};
use k8s_openapi::{
    api::{coordination::v1::Lease, core::v1::Namespace},
    jiff::Timestamp,
};
use kube::core::{PartialObjectMeta, Selector};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use self::membership::Membership;
use super::{
    controller_metrics::{ControllerMetrics, lease_controller_name, object_controller_name},
    options::Options,
    stats::Counters,
};
use crate::{
    controller::{self, Action, Controller},
    factory::SharedInformerFactory,
    key::ObjectKey,
    leader_election::Leadership,
    scope::{Scope, ScopedLister},
    sharding::{
        labels::{drain_label, shard_label},
        metadata_access::{CheckObject, MetadataCache, ObjectController},
        resource_type::ResourceType,
        ring::ControllerRing,
    },
};

/// What the sharder changed, keyed for [`Shared::wrote`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum WorkItem {
    /// The shard Lease of this name.
    Lease(String),
    /// An object of the watched resource at this index.
    Object { resource: usize, key: ObjectKey },
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

impl Outcome {
    /// The controller's action for this outcome.
    fn action(self) -> Action {
        match self {
            Self::Done => Action::await_change(),
            Self::After(delay) => Action::requeue(delay),
            Self::Retry => Action::requeue_with_backoff(),
        }
    }
}

/// A watched resource of the ring.
struct Watched {
    resource: ResourceType,
    /// Whether its objects follow their controller (a controlled resource): they move at
    /// once, without a drain.
    controlled: bool,
    cache: Arc<dyn MetadataCache>,
}

/// What the checks of one term share.
struct Shared {
    client: kube::Client,
    ring: Arc<ControllerRing>,
    /// The namespaces' metadata, for the ring's namespace selector (`None` when the ring has
    /// no namespaced resource).
    namespaces: Option<ScopedLister<PartialObjectMeta<Namespace>>>,
    options: Options,
    counters: Arc<Counters>,
    shard_label: String,
    drain_label: String,
    stop: CancellationToken,
    leadership: Option<Leadership>,
    leases: ScopedLister<Lease>,
    watched: Vec<Watched>,
    membership: RwLock<Arc<Membership>>,
    /// Asks the Lease controller to check a Lease.
    lease_checks: mpsc::UnboundedSender<ObjectKey>,
    /// The Leases with a delayed check on the way: a burst of moves off one shard asks once.
    delayed_lease_checks: Arc<Mutex<HashSet<ObjectKey>>>,
    /// Asks every object controller to check every object.
    object_checks: watch::Sender<()>,
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
    pub(super) metrics: &'a Arc<ControllerMetrics>,
}

/// Runs one term of a sharder until `stop` is cancelled or `leadership` ends.
///
/// # Errors
///
/// The error of a controller of the term that stopped (its informer stopped).
pub(super) async fn run(
    sharder: Setup<'_>,
    stop: CancellationToken,
    leadership: Option<Leadership>,
) -> controller::Result<()> {
    let stop = stop.child_token();
    // The sharder reads names, labels, owner references and resource versions: the rest of
    // the metadata (managed fields, annotations such as last-applied-configuration) is not
    // cached, so its memory per object stays small. Each resync checks every Lease and
    // object again.
    let factory = SharedInformerFactory::builder(sharder.client.clone())
        .transform_metadata(|metadata| {
            metadata.managed_fields = None;
            metadata.annotations = None;
        })
        .resync(sharder.options.resync_period)
        .build();
    // a term dropped before its end (its task aborted) stops its informers all the same
    let _shutdown = factory.shutdown_guard();
    let span = tracing::info_span!("sharder", ring = %sharder.ring.name());
    let run = Term::new(&sharder, &factory, stop.clone(), leadership.clone()).run(&factory);
    let result = tokio::select! {
        result = tracing::Instrument::instrument(run, span) => result,
        () = ended(leadership.as_ref(), &stop) => Ok(()),
    };
    stop.cancel();
    factory.shutdown().await;
    result
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

/// A term's checks and the controllers that run them.
struct Term {
    shared: Arc<Shared>,
    controllers: Vec<(String, BoxFuture<'static, controller::Result<()>>)>,
}

impl Term {
    /// Creates the term's informers (the factory's) and its controllers.
    fn new(
        sharder: &Setup<'_>,
        factory: &SharedInformerFactory,
        stop: CancellationToken,
        leadership: Option<Leadership>,
    ) -> Self {
        let (lease_checks, lease_requests) = mpsc::unbounded_channel();
        let (object_checks, _) = watch::channel(());
        let watched = watch_resources(sharder.ring, factory);
        let namespaces = sharder
            .ring
            .all_types()
            .any(ResourceType::is_namespaced)
            .then(|| {
                factory
                    .informer_in(&Scope::<PartialObjectMeta<Namespace>>::all())
                    .lister()
            });
        let shared = Arc::new(Shared {
            client: sharder.client.clone(),
            ring: Arc::clone(sharder.ring),
            namespaces,
            shard_label: shard_label(sharder.ring.name()),
            drain_label: drain_label(sharder.ring.name()),
            options: sharder.options.clone(),
            counters: Arc::clone(sharder.counters),
            stop,
            leadership,
            leases: factory.informer_in(sharder.leases).lister(),
            watched,
            membership: RwLock::new(Arc::new(Membership::empty())),
            lease_checks,
            delayed_lease_checks: Arc::default(),
            object_checks,
            written: Mutex::default(),
            hold_requests: Mutex::default(),
        });
        let mut controllers = vec![lease_controller(
            &shared,
            factory,
            sharder.leases,
            lease_requests,
            sharder.metrics,
        )];
        controllers.extend(object_controllers(&shared, factory, sharder.metrics));
        Self { shared, controllers }
    }

    /// Starts the informers, waits for their caches, computes the ring, then runs the
    /// controllers until the term ends or one of them fails (the others stop then).
    async fn run(self, factory: &SharedInformerFactory) -> controller::Result<()> {
        let shared = self.shared;
        factory.start();
        let report = factory
            .wait_for_cache_sync_until(shared.stop.clone().cancelled_owned())
            .await;
        if !report.all_synced() {
            if shared.stop.is_cancelled() {
                return Ok(());
            }
            tracing::error!(%report, "the sharder's caches did not sync; the term ends");
            return Err(controller::Error::InformerStopped {
                controller: format!("sharder {}", shared.ring.name()),
                informer: report.to_string(),
            });
        }
        tracing::info!("sharder caches synced");
        // the ring is known before the first object is checked
        shared.refresh_membership();
        let runs = self.controllers.into_iter().map(|(name, run)| async move {
            run.await.inspect_err(|error| {
                tracing::error!(controller = %name, %error, "a sharder controller stopped; the term ends");
            })
        });
        futures::future::try_join_all(runs).await.map(drop)
    }
}

/// The caches of every watched resource (the ring's resources and their controlled ones).
fn watch_resources(ring: &ControllerRing, factory: &SharedInformerFactory) -> Vec<Watched> {
    let mut watched = Vec::new();
    for ring_resource in ring.resources() {
        let controlled = ring_resource
            .controlled()
            .iter()
            .map(|controlled| (controlled, true));
        for (resource, controlled) in std::iter::once((ring_resource.resource(), false)).chain(controlled) {
            watched.push(Watched {
                resource: resource.clone(),
                controlled,
                cache: resource.access.cache(factory, Selector::default()),
            });
        }
    }
    watched
}

/// The controller of the shard Leases: checks each on its changes and resyncs, and when the
/// object checks ask for it.
fn lease_controller(
    shared: &Arc<Shared>,
    factory: &SharedInformerFactory,
    leases: &Scope<Lease>,
    requests: mpsc::UnboundedReceiver<ObjectKey>,
    metrics: &ControllerMetrics,
) -> (String, BoxFuture<'static, controller::Result<()>>) {
    let name = lease_controller_name(&shared.ring);
    let mut controller = Controller::new_in(factory, leases)
        .name(name.clone())
        .concurrency(shared.options.concurrent_moves)
        .wait_for_own_writes(None)
        .reconcile_on(received(requests));
    if let Some((queue, reconciles)) = metrics.get(&name) {
        controller = controller.metrics(queue, reconciles);
    }
    let check = Arc::clone(shared);
    let reconcile = move |lease: Arc<Lease>, _: Arc<()>| {
        let shared = Arc::clone(&check);
        async move {
            let name = lease.metadata.name.clone().unwrap_or_default();
            Ok::<_, Infallible>(shared.check_lease(&name).await.action())
        }
    };
    let error_policy = |_: Arc<Lease>, error: &Infallible, _: Arc<()>| match *error {};
    let runner = controller.into_runner(reconcile, error_policy, Arc::new(()));
    let (stop, leadership) = (shared.stop.clone(), shared.leadership.clone());
    (name, Box::pin(async move { runner.run(stop, leadership).await }))
}

/// The controller of each watched resource's objects: checks each on its changes and
/// resyncs, every one when the ring's shards change, and the ones in a namespace whose labels
/// change.
fn object_controllers(
    shared: &Arc<Shared>,
    factory: &SharedInformerFactory,
    metrics: &ControllerMetrics,
) -> Vec<(String, BoxFuture<'static, controller::Result<()>>)> {
    let follows_namespaces = shared.namespaces.is_some();
    let mut controllers = Vec::new();
    for (index, watched) in shared.watched.iter().enumerate() {
        let name = object_controller_name(&shared.ring, &watched.resource);
        let for_check = Arc::clone(shared);
        let check: CheckObject = Arc::new(move |key| {
            let shared = Arc::clone(&for_check);
            async move { shared.check_object(index, &key).await.action() }.boxed()
        });
        let settings = ObjectController {
            name: name.clone(),
            labels: Selector::default(),
            concurrency: shared.options.concurrent_moves,
            check_all_on: changes(shared.object_checks.subscribe()).boxed(),
            follows_namespaces: follows_namespaces && watched.resource.is_namespaced(),
            check,
            stop: shared.stop.clone(),
            leadership: shared.leadership.clone(),
            metrics: metrics.get(&name),
        };
        controllers.push((name, watched.resource.access.controller(factory, settings)));
    }
    controllers
}

/// The items received on `receiver`.
fn received<T: Send + 'static>(receiver: mpsc::UnboundedReceiver<T>) -> impl Stream<Item = T> + Send {
    futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    })
}

/// One item for each change of `receiver`'s value (changes in a burst may make one).
fn changes(receiver: watch::Receiver<()>) -> impl Stream<Item = ()> + Send {
    futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.changed().await.ok().map(|()| ((), receiver))
    })
}

impl Shared {
    /// Asks every object controller to check every object again.
    fn check_every_object(&self) {
        self.object_checks.send_replace(());
    }

    /// Asks the Lease controller to check the Lease of `shard`, after `delay` (once, however
    /// often it is asked while a delayed check is on the way).
    fn check_lease_of(&self, shard: &str, delay: Duration) {
        let Some(lease) = self.lease_of(shard) else {
            return;
        };
        let key = ObjectKey::of(&*lease);
        if delay.is_zero() {
            let _ = self.lease_checks.send(key);
            return;
        }
        let delayed = Arc::clone(&self.delayed_lease_checks);
        if !delayed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone())
        {
            return;
        }
        let (checks, stop) = (self.lease_checks.clone(), self.stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(delay) => {
                    delayed.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
                    let _ = checks.send(key);
                }
                () = stop.cancelled() => {}
            }
        });
    }

    /// The labels of `namespace`, if the sharder's cache holds it.
    fn namespace_labels(&self, namespace: &str) -> Option<BTreeMap<String, String>> {
        let namespaces = self.namespaces.as_ref()?;
        let cached = namespaces.cached(&ObjectKey::new("", namespace))?;
        Some(cached.metadata.labels.clone().unwrap_or_default())
    }

    /// The membership as last computed.
    fn membership(&self) -> Arc<Membership> {
        Arc::clone(&self.membership.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Recomputes the membership from the cached Leases; when the available shards changed,
    /// has every object checked against the new ring.
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
            self.counters.ring_members.set(count);
            tracing::info!(shards = ?members.available(), "the ring's available shards changed; checking every object");
            self.check_every_object();
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
            self.counters.writes_skipped.bump();
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
                self.counters.conflicts.bump();
                tracing::debug!(%error, "conflict on {what}; checking again from the cache");
                Outcome::Retry
            }
            Some(404) => {
                tracing::debug!("{what}: gone");
                Outcome::Done
            }
            _ => {
                self.counters.errors.bump();
                tracing::warn!(%error, "failed to {what}; retrying");
                Outcome::Retry
            }
        }
    }
}
