//! [`Sharder`]: assigns the objects of a ring to its shards, drains objects off live shards
//! before they move, and keeps the shards' Leases (declaring dead shards, deleting orphaned
//! Leases): kubernetes-controller-sharding's sharder and shardlease controller, in process.

mod controller_metrics;
mod options;
mod stats;
mod term;

use std::{fmt, sync::Arc, time::Duration};

use k8s_openapi::api::coordination::v1::Lease;
use tokio_util::sync::CancellationToken;

use controller_metrics::ControllerMetrics;
use options::Options;
pub use stats::SharderStats;

use super::{
    error::{Error, Result},
    hash_ring::DEFAULT_VIRTUAL_NODES,
    labels::RING_LABEL,
    lease_state::DEFAULT_ORPHAN_AFTER,
    ring::ControllerRing,
};
use crate::{
    leader_election::{self, LeaderElector, Leadership},
    scope::Scope,
};

/// The sharder of a [`ControllerRing`]: it watches the ring's shard Leases and every object of
/// the ring (metadata only), and labels each object for the shard the
/// [consistent-hash ring](super::hash_ring::HashRing) of the available shards chooses.
///
/// - A new object is assigned as soon as its watch event arrives (there is no admission
///   webhook): `shard.alpha.sharding.timebertt.dev/<ring>=<shard>`. Only objects the ring
///   holds are assigned: in the namespaces its
///   [namespace selector](ControllerRing::namespace_selector) selects (watched, metadata only),
///   and selected by their resource's [object selector](super::RingResource::labels).
///   An object that leaves the ring is drained off its live shard, then left unlabelled.
/// - When the available shards change (and every [resync period](Self::resync_period)), every
///   object is checked again. An object of a ring resource that must leave a live shard gets
///   the drain label; the shard lets it go by removing both labels, and the sharder then
///   assigns it to its new shard. Controlled objects move at once.
/// - A shard Lease that expired one lease duration ago, or that its shard released while it
///   still has objects, is acquired by the sharder (holder `shardlease-controller`, for twice
///   the shard's lease duration), which declares the shard dead. The objects of a dead shard
///   move only while the sharder holds its Lease (with a quarter of the hold to spare), so the
///   shard cannot come back and reconcile an object while it moves. Once every object of the
///   shard moved, the sharder gives the Lease back (written as a released Lease), so the shard
///   restarting under the same name takes it at once. Objects of a shard with no Lease move at
///   once. A dead shard's Lease is deleted once [orphaned](Self::orphan_after). The
///   `alpha.sharding.timebertt.dev/state` label of each Lease tells its state.
/// - Shard Leases are read in every namespace, by their ring label, as the Go sharder reads
///   them ([`lease_namespace`](Self::lease_namespace) narrows that to one).
///
/// # Where it differs from the Go sharder, and how to match it
///
/// The protocol is the same (labels, Leases, drains, hash keys and ring), so either sharder
/// drives either's shards. Three differences are on purpose:
///
/// - **It holds a dead shard's Lease while the shard's objects move**, released Leases
///   included. The Go sharder moves a released shard's objects without the Lease; a shard
///   restarting under the same name could then take its Lease back and reconcile an object
///   that is moving to another shard. The hold costs a same-name restart nothing: the Lease is
///   given back as soon as the objects moved. There is no switch to Go's behaviour.
/// - **1000 virtual nodes per shard** ([`DEFAULT_VIRTUAL_NODES`]) instead of Go's 100: the
///   largest of 4 shards gets 4% more than its fair share instead of 18%
///   (`bench/README.md`). [`virtual_nodes`](Self::virtual_nodes) with
///   [`GO_SHARDER_VIRTUAL_NODES`](super::hash_ring::GO_SHARDER_VIRTUAL_NODES) chooses exactly the
///   shards the Go sharder chooses, for a ring both may drive.
/// - **No admission webhook**: new objects are assigned from the sharder's watch, a few
///   milliseconds after their creation, instead of in the create request. A shard therefore
///   sees a new object once it is labelled, not with the create. To assign in the request,
///   run the Go sharder's webhook (its `MutatingWebhookConfiguration` and the
///   [`manifest`](ControllerRing::manifest) of the ring); our sharder then only moves objects.
///   Controlled objects that a shard creates (a child with a controller reference to an
///   object of the ring) are assigned in the request all the same: a sharded
///   [manager's client](crate::manager::Manager::client) labels them for the shard.
///
/// It is built on the runtime's own machinery, as the Go sharder is built on
/// controller-runtime: in each term, one [`Controller`](crate::controller::Controller) of the
/// shard Leases and one metadata-only controller of each watched resource's objects, with
/// their priority queues, rate-limited retries, panic catching and leadership checks (no check
/// starts once the term ended).
///
/// Every write carries the object's resourceVersion: a 409 is re-checked from the cache.
///
/// # Running it
///
/// A sharder is a [runnable](crate::manager::Runnable) of a
/// [`Manager`](crate::manager::Manager), and runs no other way. Run one active sharder per
/// ring:
///
/// - in a manager of its own: with the manager's
///   [`leader_election`](crate::manager::Builder::leader_election), it runs on the leader, in
///   each of its terms;
/// - inside the shards' managers (which hold shard Leases instead of electing a leader): give
///   it its own [`leader_election`](Self::leader_election), and every replica campaigns for it.
///
/// Write through the manager's [`client`](crate::manager::Manager::client) for a sharder that
/// runs on the leader (its writes are refused once the term ended), and through the
/// [`unfenced_client`](crate::manager::Manager::unfenced_client) for one that elects itself
/// inside a shard's manager (the sharder checks its own election before each write).
///
/// ```no_run
/// use futures::FutureExt;
/// use informer_runtime::{
///     leader_election,
///     manager::Manager,
///     sharding::{ControllerRing, RingResource, Sharder},
/// };
/// use k8s_openapi::api::core::v1::{ConfigMap, Secret};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let pod = std::env::var("POD_NAME")?;
/// let ring = ControllerRing::new("replicator")?
///     .resource(RingResource::of::<ConfigMap>().controls::<Secret>())?;
/// let mut manager = Manager::builder(kube::Client::try_default().await?)
///     .leader_election(leader_election::Config::new("replicator-sharder", "sharding-system", &pod))
///     .build()?;
/// manager.add(Sharder::new(manager.client(), ring)?.concurrent_moves(10));
/// manager.run(tokio::signal::ctrl_c().map(drop)).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Sharder {
    client: kube::Client,
    ring: Arc<ControllerRing>,
    leases: Scope<Lease>,
    options: Options,
    election: Option<leader_election::Config>,
    counters: Arc<stats::Counters>,
    /// Where its controllers report (registered by the manager that runs it).
    metrics: Arc<ControllerMetrics>,
    /// `sharder <ring>`, the name a manager knows it by.
    name: String,
}

impl fmt::Debug for Sharder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sharder")
            .field("ring", &self.ring.name())
            .field("leases", &self.leases)
            .field("options", &self.options)
            .field(
                "election",
                &self.election.as_ref().map(leader_election::Config::lease),
            )
            .finish_non_exhaustive()
    }
}

impl Sharder {
    /// How many objects a sharder drains or moves at once by default.
    pub const DEFAULT_CONCURRENT_MOVES: usize = 5;

    /// How often a sharder re-checks every object by default (the Go sharder's sync period).
    pub const DEFAULT_RESYNC_PERIOD: Duration = Duration::from_secs(5 * 60);

    /// The sharder of `ring`. It reads the shard Leases labelled for the ring in every
    /// namespace, as the Go sharder does (a shard is known by its Lease's name); see
    /// [`lease_namespace`](Self::lease_namespace) for a sharder allowed to read one namespace.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRing`] if the ring lists no resources.
    pub fn new(client: kube::Client, ring: impl Into<Arc<ControllerRing>>) -> Result<Self> {
        let ring = ring.into().checked()?;
        let leases = Scope::all().labels(&format!("{RING_LABEL}={}", ring.name()))?;
        Ok(Self {
            client,
            name: format!("sharder {}", ring.name()),
            ring,
            leases,
            options: Options {
                virtual_nodes: DEFAULT_VIRTUAL_NODES,
                concurrent_moves: Self::DEFAULT_CONCURRENT_MOVES,
                resync_period: Self::DEFAULT_RESYNC_PERIOD,
                orphan_after: DEFAULT_ORPHAN_AFTER,
            },
            election: None,
            counters: Arc::default(),
            metrics: Arc::default(),
        })
    }

    /// Reads the shard Leases in `namespace` only (every namespace by default): for a sharder
    /// whose role lets it list Leases in one namespace. Shards holding their Leases elsewhere
    /// are then unknown to it.
    ///
    /// # Errors
    ///
    /// [`Error::LeaseScope`] if `namespace` is not a namespace name.
    pub fn lease_namespace(mut self, namespace: &str) -> Result<Self> {
        self.leases = self.leases.namespace(namespace)?;
        Ok(self)
    }

    /// Tokens per shard on the hash ring (default [`DEFAULT_VIRTUAL_NODES`], 1000, for even
    /// shares; [`GO_SHARDER_VIRTUAL_NODES`](super::hash_ring::GO_SHARDER_VIRTUAL_NODES), 100, chooses the
    /// shards the Go sharder chooses, when both may drive one ring). 0 means the default.
    #[must_use]
    pub fn virtual_nodes(mut self, virtual_nodes: usize) -> Self {
        self.options.virtual_nodes = if virtual_nodes == 0 {
            DEFAULT_VIRTUAL_NODES
        } else {
            virtual_nodes
        };
        self
    }

    /// How many objects of each watched resource are assigned, drained or moved at once, and
    /// how many shard Leases are checked at once (default [`Self::DEFAULT_CONCURRENT_MOVES`]; at
    /// least 1): the concurrency of each of the sharder's controllers.
    #[must_use]
    pub fn concurrent_moves(mut self, workers: usize) -> Self {
        self.options.concurrent_moves = workers.max(1);
        self
    }

    /// How often every object and Lease is checked again, also without a change (default
    /// 5 minutes).
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.options.resync_period = period;
        self
    }

    /// How long after its expiry a dead shard's Lease is deleted (default 1 minute).
    #[must_use]
    pub fn orphan_after(mut self, delay: Duration) -> Self {
        self.options.orphan_after = delay;
        self
    }

    /// Lets the sharder's replicas elect the active one on the Lease of `config`; the others
    /// wait. For a sharder inside the shards' managers, which elect no leader; without it, the
    /// sharder runs as the manager's other runnables do (on the leader, or at once in a
    /// manager without leader election).
    #[must_use]
    pub fn leader_election(mut self, config: leader_election::Config) -> Self {
        self.election = Some(config);
        self
    }

    /// The ring.
    pub fn ring(&self) -> &Arc<ControllerRing> {
        &self.ring
    }

    /// What the sharder (and its clones) did so far.
    pub fn stats(&self) -> SharderStats {
        self.counters.snapshot()
    }

    /// `sharder <ring>`.
    pub(crate) fn runnable_name(&self) -> &str {
        &self.name
    }

    /// The names of the controllers each term runs: the shard Leases' and each watched
    /// resource's.
    #[cfg(feature = "metrics")]
    pub(crate) fn controller_names(&self) -> Vec<String> {
        let objects = self
            .ring
            .all_types()
            .map(|resource| controller_metrics::object_controller_name(&self.ring, resource));
        std::iter::once(controller_metrics::lease_controller_name(&self.ring))
            .chain(objects)
            .collect()
    }

    /// Reports the controller `name` (one of [`controller_names`](Self::controller_names)) to
    /// `queue` and `reconciles` from the next term on.
    #[cfg(feature = "metrics")]
    pub(crate) fn report_controller(
        &self,
        name: &str,
        queue: Arc<dyn crate::workqueue::QueueMetrics>,
        reconciles: Arc<dyn crate::controller::ReconcileMetrics>,
    ) {
        self.metrics.set(name, (queue, reconciles));
    }

    /// Whether the sharder elects its active replica itself.
    pub(crate) fn elects_itself(&self) -> bool {
        self.election.is_some()
    }

    /// Runs until `stop` is cancelled, electing itself if configured.
    pub(crate) async fn run_until(&self, stop: CancellationToken) -> Result<()> {
        match &self.election {
            Some(config) => self.run_elected(config.clone(), stop).await,
            None => self.run_term(stop, None).await,
        }
    }

    /// One term: acts until `stop` is cancelled or `leadership` ends, and writes only while
    /// `leadership` is [current](Leadership::is_current) (always without one).
    ///
    /// # Errors
    ///
    /// [`Error::Sharder`] if one of its controllers stopped (an informer stopped).
    pub(crate) async fn run_term(
        &self,
        stop: CancellationToken,
        leadership: Option<Leadership>,
    ) -> Result<()> {
        let setup = term::Setup {
            client: &self.client,
            ring: &self.ring,
            leases: &self.leases,
            options: &self.options,
            counters: &self.counters,
            metrics: &self.metrics,
        };
        term::run(setup, stop, leadership)
            .await
            .map_err(|source| Error::Sharder {
                ring: self.ring.name().to_owned(),
                source,
            })
    }

    async fn run_elected(&self, config: leader_election::Config, stop: CancellationToken) -> Result<()> {
        let elector = LeaderElector::new(self.client.clone(), config)?;
        let terms = async {
            while let Ok(leadership) = elector.leading().await {
                tracing::info!(ring = %self.ring.name(), term = %leadership.term(), "sharder leads");
                if let Err(error) = self.run_term(stop.child_token(), Some(leadership)).await {
                    stop.cancel();
                    return Err(error);
                }
            }
            Ok(())
        };
        let (election, terms) = tokio::join!(elector.run(stop.clone()), terms);
        terms?;
        election.map_err(Error::from)
    }
}

#[cfg(test)]
mod tests;
