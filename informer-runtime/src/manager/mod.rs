//! A [`Manager`] runs a controller process: the informer factory, controllers and other
//! [runnables](Runnable), leader election with warm standby, health and readiness probes and
//! metrics on one HTTP listener, and a graceful shutdown (controller-runtime's `Manager`).
//!
//! ```no_run
//! use std::{sync::Arc, time::Duration};
//!
//! use futures::FutureExt;
//! use informer_runtime::{controller::{Action, Controller}, leader_election, manager::Manager};
//! use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//!
//! struct Context { client: kube::Client }
//!
//! async fn reconcile(_: Arc<ConfigMap>, _: Arc<Context>) -> Result<Action, kube::Error> {
//!     Ok(Action::await_change())
//! }
//!
//! fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<Context>) -> Action {
//!     Action::requeue_with_backoff()
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let identity = std::env::var("POD_NAME")?;
//! let mut manager = Manager::builder(kube::Client::try_default().await?)
//!     .leader_election(leader_election::Config::new("replicator", "default", &identity))
//!     .probe_address(([0, 0, 0, 0], 8081).into())
//!     .build()?;
//! // writes through this client are refused unless this replica leads, and the next
//! // reconcile of an object waits until the caches have seen them
//! let context = Arc::new(Context { client: manager.client() });
//! let controller = Controller::<ConfigMap>::new(manager.factory()).owns::<Secret>();
//! manager.add_controller(controller, reconcile, error_policy, context);
//! manager.run(tokio::signal::ctrl_c().map(drop)).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Warm standby and terms
//!
//! Every replica starts the factory's informers at once and keeps them synced, whether it
//! leads or not. Once the caches synced, it campaigns for the lease. Each time it wins, the
//! runnables that [need leader election](Runnable::needs_leader_election) (controllers do)
//! start, with that term's [`Leadership`](crate::leader_election::Leadership); a controller's first pass replays its warm cache,
//! with no list request. When the term ends (lost, or the renew deadline passed), they stop at
//! once:
//!
//! - no reconcile starts: workers check the leadership before each one, by the clock, even
//!   when the elector's task has not run yet;
//! - no write is sent: the manager's [client](Manager::client) refuses writes
//!   ([`WriteRefused`]) unless the leadership they are made under is current;
//! - running reconciles see their token cancelled ([`RunContext`](crate::controller::RunContext)).
//!
//! The replica then campaigns again; if it wins another term, the runnables start afresh.
//! Runnables that do not need leader election (made with
//! [`on_every_replica`](FnRunnable::on_every_replica)) run once on every replica, from start to
//! shutdown. Without [`leader_election`](Builder::leader_election) every replica acts: the
//! leader-only runnables run once, at once after the caches synced.
//!
//! # Probes
//!
//! With a [`probe_address`](Builder::probe_address), one listener serves:
//!
//! - `/healthz`: the process works: no runnable failed, no informer stopped, leader election
//!   runs;
//! - `/readyz`: the caches synced, leader election runs (leading or standing by), and no
//!   runnable failed;
//! - `/healthz/<check>`, `/readyz/<check>`, and `?verbose` for one line per check;
//!   your own checks through [`add_healthz_check`](Manager::add_healthz_check) and
//!   [`add_readyz_check`](Manager::add_readyz_check);
//! - `/metrics` (feature `metrics`): the informers, the controllers and their queues, the
//!   leader election (`leader_election_master_status`), and whatever you register in
//!   `metrics_registry`.
//!
//! # Shutdown and errors
//!
//! [`run`](Manager::run) returns when its `shutdown` future resolves or a runnable fails. It
//! then stops the runnables and waits for them up to the
//! [graceful shutdown timeout](Builder::graceful_shutdown_timeout) (30 s), releases the lease
//! if the election's config says so, and stops the informers. The first runnable error is
//! returned ([`Error::Runnable`]), never swallowed; so is a shutdown that had to cancel
//! runnables ([`Error::ShutdownTimeout`]).

mod error;
mod fencing;
mod probes;
mod runnable;
mod sharder;
mod state;

use std::{
    fmt,
    future::Future,
    net::{SocketAddr, TcpListener},
    sync::Arc,
    time::Duration,
};

pub use error::{Error, Result};
pub use fencing::{RefusalReason, WriteRefused};
pub use probes::Check;
pub use runnable::{FnRunnable, Runnable, RunnableError, runnable_fn};

use probes::{Checks, MetricsRenderer, Probes};
use state::RunStates;

use crate::{
    controller::{self, Action, Controller},
    factory::{SharedInformerFactory, TypedResource},
    leader_election::{self, LeaderElector},
    sharding::{Claims, DrainSweep, Shard, assign_children},
    source::{Encoding, FieldPath},
};

/// Configures a [`Manager`]: see [`Manager::builder`].
pub struct Builder {
    client: kube::Client,
    factory: Option<SharedInformerFactory>,
    leader_election: Option<leader_election::Config>,
    shard: Option<Shard>,
    probe_address: Option<SocketAddr>,
    graceful_shutdown_timeout: Duration,
    encoding: Option<Encoding>,
    skip_fields: Option<Vec<FieldPath>>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("leader_election", &self.leader_election)
            .field("shard", &self.shard.as_ref().map(Shard::name))
            .field("probe_address", &self.probe_address)
            .field("graceful_shutdown_timeout", &self.graceful_shutdown_timeout)
            .field("encoding", &self.encoding)
            .field("skip_fields", &self.skip_fields)
            .finish_non_exhaustive()
    }
}

impl Builder {
    /// Uses `factory` (one built with scopes, transforms or a resync period) instead of a
    /// default factory on the manager's client.
    pub fn factory(mut self, factory: SharedInformerFactory) -> Self {
        self.factory = Some(factory);
        self
    }

    /// What the manager's factory asks the API server for (see
    /// [`factory::Builder::encoding`](crate::factory::Builder::encoding)): protobuf for
    /// built-in types by default, [`Encoding::Json`] to opt out. For the factory the manager
    /// builds; with [`factory`](Self::factory), set it on that factory's builder.
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) -> Result<(), informer_runtime::manager::Error> {
    /// use informer_runtime::{manager::Manager, source::Encoding};
    ///
    /// let manager = Manager::builder(client).encoding(Encoding::Json).build()?;
    /// # let _ = manager;
    /// # Ok(()) }
    /// ```
    pub fn encoding(mut self, encoding: Encoding) -> Self {
        self.encoding = Some(encoding);
        self
    }

    /// Fields the manager's informers skip as they read objects (see
    /// [`factory::Builder::skip_fields`](crate::factory::Builder::skip_fields)). For the
    /// factory the manager builds; with [`factory`](Self::factory), set them on that factory's
    /// builder.
    pub fn skip_fields(mut self, paths: impl IntoIterator<Item = FieldPath>) -> Self {
        self.skip_fields = Some(paths.into_iter().collect());
        self
    }

    /// Elects a leader among the replicas on the Lease `config` names: leader-only runnables
    /// run only while this replica leads.
    pub fn leader_election(mut self, config: leader_election::Config) -> Self {
        self.leader_election = Some(config);
        self
    }

    /// Runs this replica as `shard` of its ring (see [`sharding`](crate::sharding)), instead
    /// of electing a leader: the manager holds the shard's Lease (labelled with the ring,
    /// released on shutdown) and runs leader-only runnables while it holds it; its factory
    /// caches only the ring's objects assigned to this shard; its controllers reconcile only
    /// those and hand over the ones the sharder drains.
    pub fn shard(mut self, shard: Shard) -> Self {
        self.shard = Some(shard);
        self
    }

    /// Serves `/healthz`, `/readyz` and `/metrics` on `address` (port 0 picks a free one; see
    /// [`Manager::probe_address`]).
    pub fn probe_address(mut self, address: SocketAddr) -> Self {
        self.probe_address = Some(address);
        self
    }

    /// How long [`Manager::run`] waits for runnables to stop at shutdown before cancelling
    /// them (30 s by default).
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.graceful_shutdown_timeout = timeout;
        self
    }

    /// The manager.
    ///
    /// # Errors
    ///
    /// [`Error::LeaderElection`] for an invalid election (or shard Lease) config;
    /// [`Error::ShardAndLeaderElection`] if given both; [`Error::UnrestrictedFactory`] if a
    /// shard's manager was given a factory that caches the ring's resources in full;
    /// [`Error::FactoryOptions`] if given a factory and [`encoding`](Self::encoding) or
    /// [`skip_fields`](Self::skip_fields);
    /// [`Error::Listen`] if the probe address cannot be bound.
    pub fn build(self) -> Result<Manager> {
        let election = match (&self.shard, self.leader_election) {
            (Some(_), Some(_)) => return Err(Error::ShardAndLeaderElection),
            (Some(shard), None) => Some(shard.lease().clone()),
            (None, election) => election,
        };
        let elector = election
            .map(|config| LeaderElector::new(self.client.clone(), config))
            .transpose()
            .map_err(Error::LeaderElection)?;
        if self.factory.is_some() {
            let option = match (&self.encoding, &self.skip_fields) {
                (Some(_), _) => Some("encoding"),
                (None, Some(_)) => Some("skip_fields"),
                (None, None) => None,
            };
            if let Some(option) = option {
                return Err(Error::FactoryOptions { option });
            }
        }
        let mut builder = SharedInformerFactory::builder(self.client.clone());
        if let Some(encoding) = self.encoding {
            builder = builder.encoding(encoding);
        }
        if let Some(paths) = self.skip_fields {
            builder = builder.skip_fields(paths);
        }
        let factory = match (self.factory, &self.shard) {
            (Some(factory), Some(shard)) => {
                let resources = shard.unrestricted_in(&factory);
                if !resources.is_empty() {
                    return Err(Error::UnrestrictedFactory {
                        shard: shard.name().to_owned(),
                        resources,
                    });
                }
                factory
            }
            (Some(factory), None) => factory,
            (None, Some(shard)) => shard.restrict_factory(builder).build(),
            (None, None) => builder.build(),
        };
        let listener = self.probe_address.map(bind).transpose()?;
        // A sharded manager's creates of controlled children carry the shard's label.
        let writer = match &self.shard {
            Some(shard) => assign_children(self.client.clone(), shard),
            None => self.client.clone(),
        };
        // A refused write is never sent, so it records nothing.
        let fenced = fencing::fenced(
            controller::track_writes(writer),
            fencing::Fence::new(elector.clone()),
        );
        let claims = Claims::default();
        let sweep = self
            .shard
            .as_ref()
            .map(|shard| DrainSweep::new(shard, claims.clone(), &factory));
        let mut manager = Manager {
            client: self.client,
            fenced,
            factory,
            elector,
            shard: self.shard,
            claims,
            runnables: Vec::new(),
            healthz: Checks::default(),
            readyz: Checks::default(),
            listener,
            graceful_shutdown_timeout: self.graceful_shutdown_timeout,
            states: RunStates::default(),
            #[cfg(feature = "metrics")]
            registry: prometheus_client::registry::Registry::default(),
        };
        if let Some(sweep) = sweep {
            let sweep = Arc::new(sweep);
            #[cfg(feature = "metrics")]
            crate::metrics::register_drain_sweep(&mut manager.registry, Arc::clone(&sweep));
            let client = manager.fenced.clone();
            manager.add(sharder::SweepRunnable { sweep, client });
        }
        Ok(manager)
    }
}

fn bind(address: SocketAddr) -> Result<TcpListener> {
    let listener = TcpListener::bind(address).map_err(|source| Error::Listen { address, source })?;
    listener
        .set_nonblocking(true)
        .map_err(|source| Error::Listen { address, source })?;
    Ok(listener)
}

/// Runs informers, controllers and other runnables, with leader election, probes and a
/// graceful shutdown (see the [module documentation](self)).
pub struct Manager {
    client: kube::Client,
    fenced: kube::Client,
    factory: SharedInformerFactory,
    elector: Option<LeaderElector>,
    shard: Option<Shard>,
    /// The scopes of the controllers of ring resources, which the shard's drain sweep leaves
    /// to them.
    claims: Claims,
    runnables: Vec<(usize, Arc<dyn Runnable>)>,
    healthz: Checks,
    readyz: Checks,
    listener: Option<TcpListener>,
    graceful_shutdown_timeout: Duration,
    states: RunStates,
    #[cfg(feature = "metrics")]
    registry: prometheus_client::registry::Registry,
}

impl fmt::Debug for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manager")
            .field(
                "leader_election",
                &self.elector.as_ref().map(|e| e.config().lease()),
            )
            .field(
                "runnables",
                &self.runnables.iter().map(|(_, r)| r.name()).collect::<Vec<_>>(),
            )
            .field("probe_address", &self.probe_address())
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager builder on `client`.
    pub fn builder(client: kube::Client) -> Builder {
        Builder {
            client,
            factory: None,
            leader_election: None,
            shard: None,
            probe_address: None,
            graceful_shutdown_timeout: Duration::from_secs(30),
            encoding: None,
            skip_fields: None,
        }
    }

    /// The informer factory: every replica runs its informers, leading or not.
    pub fn factory(&self) -> &SharedInformerFactory {
        &self.factory
    }

    /// The client for controllers' writes: with leader election, a write is sent only while
    /// the leadership it is made under is current, and refused with [`WriteRefused`]
    /// otherwise. Reads always pass. It also [tracks writes](controller::track_writes), so the
    /// next reconcile of an object waits until the caches have seen what the previous one
    /// wrote ([read your own writes](crate::controller#read-your-own-writes)). On a
    /// [sharded](Builder::shard) manager, the controlled objects it creates with a controller
    /// reference to an object of the ring are labelled for the shard in the create request
    /// (where the Go sharder's webhook would label them): they reach the shard's cache at once.
    pub fn client(&self) -> kube::Client {
        self.fenced.clone()
    }

    /// The client the manager was built with, whose writes are never refused: for
    /// runnables that run on every replica.
    pub fn unfenced_client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The elector, when the manager elects a leader.
    pub fn elector(&self) -> Option<&LeaderElector> {
        self.elector.as_ref()
    }

    /// The shard this replica runs as, if [sharded](Builder::shard).
    pub fn shard(&self) -> Option<&Shard> {
        self.shard.as_ref()
    }

    /// Whether this replica may act now: it leads (or there is no election).
    pub fn is_leader(&self) -> bool {
        self.elector.as_ref().is_none_or(LeaderElector::is_leader)
    }

    /// Where the probes are served, if anywhere.
    pub fn probe_address(&self) -> Option<SocketAddr> {
        self.listener
            .as_ref()
            .and_then(|listener| listener.local_addr().ok())
    }

    /// Adds a runnable (with the `metrics` feature, registering its
    /// [metrics](Runnable::register_metrics) in the [manager's registry](Self::metrics_registry)).
    pub fn add(&mut self, runnable: impl Runnable) -> &mut Self {
        #[cfg(feature = "metrics")]
        runnable.register_metrics(&mut self.registry);
        let index = self.states.add(runnable.name());
        self.runnables.push((index, Arc::new(runnable)));
        self
    }

    /// Adds `controller` with its functions, as [`Controller::run`] takes them: it runs on
    /// the leader, once per term (with the `metrics` feature, its metrics are registered in
    /// the [manager's registry](Self::metrics_registry)). Its own
    /// [`graceful_shutdown_on`](Controller::graceful_shutdown_on) signal is not used: the
    /// manager stops it. On a [sharded](Builder::shard) manager, a controller of a resource of
    /// the ring runs as the [shard](Controller::shard).
    pub fn add_controller<K, Ctx, R, Fut, E, P>(
        &mut self,
        controller: Controller<K>,
        reconcile: R,
        error_policy: P,
        context: Arc<Ctx>,
    ) -> &mut Self
    where
        K: TypedResource,
        Ctx: Send + Sync + 'static,
        R: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<Action, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
        P: Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
    {
        let controller = match &self.shard {
            Some(shard) => {
                let controller = controller.shard(shard);
                if shard.ring().is_ring_resource::<K>() {
                    self.claims.add(controller.scope(), controller.busy_probe());
                }
                controller
            }
            None => controller,
        };
        #[cfg(feature = "metrics")]
        let controller = crate::metrics::register_controller(&mut self.registry, controller);
        self.add(controller.into_runner(reconcile, error_policy, context))
    }

    /// Adds a health check, served at `/healthz` and `/healthz/<name>`.
    pub fn add_healthz_check(
        &mut self,
        name: impl Into<String>,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> &mut Self {
        self.healthz.0.push((name.into(), Arc::new(check)));
        self
    }

    /// Adds a readiness check, served at `/readyz` and `/readyz/<name>`.
    pub fn add_readyz_check(
        &mut self,
        name: impl Into<String>,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> &mut Self {
        self.readyz.0.push((name.into(), Arc::new(check)));
        self
    }

    /// The registry `/metrics` serves: the factory's informers and the controllers added
    /// with [`add_controller`](Self::add_controller) are in it; add your own.
    #[cfg(feature = "metrics")]
    pub fn metrics_registry(&mut self) -> &mut prometheus_client::registry::Registry {
        &mut self.registry
    }

    /// Runs everything until `shutdown` resolves or a runnable fails, then stops gracefully
    /// (see the [module documentation](self#shutdown-and-errors)).
    ///
    /// # Errors
    ///
    /// [`Error::Runnable`] for the first runnable that failed, [`Error::Election`] if the
    /// election stopped with an error, [`Error::Listen`] if the probe listener could not be
    /// served, [`Error::ShutdownTimeout`] if runnables had to be cancelled.
    pub async fn run(mut self, shutdown: impl Future<Output = ()> + Send) -> Result<()> {
        let election_stopped = Arc::new(std::sync::OnceLock::new());
        let probes = self.probes(Arc::clone(&election_stopped));
        let parts = running::Parts {
            factory: self.factory,
            elector: self.elector,
            shard: self.shard.map(|shard| (shard, self.client)),
            runnables: self.runnables,
            listener: self.listener,
            probes,
            election_stopped,
            graceful_shutdown_timeout: self.graceful_shutdown_timeout,
            states: self.states,
        };
        running::run(parts, shutdown).await
    }

    /// The probes' checks: the built-in ones first, then the user's.
    fn probes(&mut self, election_stopped: Arc<std::sync::OnceLock<String>>) -> Probes {
        let mut healthz = vec![("ping".to_owned(), Arc::new(|| Ok(())) as Check)];
        let mut readyz = vec![("ping".to_owned(), Arc::new(|| Ok(())) as Check)];
        let runnables: Check = {
            let states = self.states.clone();
            Arc::new(move || {
                states
                    .failure()
                    .map_or(Ok(()), |failure| Err(format!("{failure} failed")))
            })
        };
        let informers_alive: Check = {
            let factory = self.factory.clone();
            Arc::new(move || stopped_informers(&factory))
        };
        let informers_synced: Check = {
            let factory = self.factory.clone();
            Arc::new(move || unsynced_informers(&factory))
        };
        healthz.push(("informers".into(), informers_alive));
        healthz.push(("runnables".into(), Arc::clone(&runnables)));
        readyz.push(("informers-synced".into(), informers_synced));
        readyz.push(("runnables".into(), runnables));
        if self.elector.is_some() {
            let election: Check = Arc::new(move || match election_stopped.get() {
                Some(reason) => Err(format!("leader election stopped: {reason}")),
                None => Ok(()),
            });
            healthz.push(("leader-election".into(), Arc::clone(&election)));
            readyz.push(("leader-election".into(), election));
        }
        healthz.append(&mut self.healthz.0);
        readyz.append(&mut self.readyz.0);
        Probes {
            healthz: Checks(healthz),
            readyz: Checks(readyz),
            metrics: self.metrics_renderer(),
        }
    }

    #[cfg(feature = "metrics")]
    fn metrics_renderer(&mut self) -> Option<MetricsRenderer> {
        crate::metrics::register_factory(&mut self.registry, &self.factory);
        if let Some(elector) = &self.elector {
            crate::metrics::register_leader_election(&mut self.registry, elector);
        }
        let registry = Arc::new(std::mem::take(&mut self.registry));
        Some(Box::new(move || {
            let mut text = String::new();
            prometheus_client::encoding::text::encode(&mut text, &registry)?;
            Ok(text)
        }))
    }

    #[cfg(not(feature = "metrics"))]
    #[allow(clippy::unused_self)]
    fn metrics_renderer(&mut self) -> Option<MetricsRenderer> {
        None
    }
}

fn stopped_informers(factory: &SharedInformerFactory) -> Result<(), String> {
    let stopped: Vec<String> = factory
        .stats()
        .into_iter()
        .filter(|informer| informer.stopped)
        .map(|informer| match informer.failure {
            Some(failure) => format!("{} ({failure})", informer.description),
            None => informer.description,
        })
        .collect();
    if stopped.is_empty() {
        Ok(())
    } else {
        Err(format!("informers stopped: {}", stopped.join(", ")))
    }
}

fn unsynced_informers(factory: &SharedInformerFactory) -> Result<(), String> {
    let unsynced: Vec<String> = factory
        .stats()
        .into_iter()
        .filter(|informer| !informer.synced)
        .map(|informer| informer.description)
        .collect();
    if unsynced.is_empty() {
        Ok(())
    } else {
        Err(format!("caches not synced yet: {}", unsynced.join(", ")))
    }
}

mod running;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod shard_tests;

#[cfg(test)]
mod abort_tests;

#[cfg(test)]
mod shard_children_tests;
