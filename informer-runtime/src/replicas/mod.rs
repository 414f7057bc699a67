//! Replicas of a sharded controller against a [`TestServer`]: [`Replicas`] starts N replicas
//! of your sharded [`Manager`] and a sharder beside them, lets a test crash, stop, restart and
//! add replicas, and waits until the ring has settled, timing each hand-over.
//!
//! Replicas are named as a StatefulSet names its pods (`shard-0`, `shard-1`, ...; the prefix is
//! [`ReplicasBuilder::prefix`]); each uses [`TestServer::named_client`] with its name, so
//! [`RequestRecord::client`](informer_testserver::RequestRecord::client) tells them apart and
//! [`Failure::client`](informer_testserver::Failure::client) can single one out. The sharder runs on a
//! manager of its own, with the client named [`SHARDER_CLIENT`].
//!
//! - [`crash`](Replicas::crash) aborts a replica's task: its Lease is left to expire, and the
//!   sharder moves its objects once it has declared the shard dead;
//! - [`stop`](Replicas::stop) stops it gracefully: it releases its Lease, and its objects move
//!   at once;
//! - [`restart`](Replicas::restart) starts a crashed or stopped replica again, under its name;
//! - [`add`](Replicas::add) starts the next replica of the StatefulSet;
//! - [`wait_settled`](Replicas::wait_settled) waits until the ring has settled and returns how
//!   long it took since the last of these changes.
//!
//! The ring has settled when, as the server's store shows it (object labels and shard
//! Leases):
//!
//! - every running replica is a live shard: it holds its Lease, unexpired, and the sharder has
//!   labelled the Lease `ready`;
//! - the sharder counts no replica that does not run as available (their Leases are labelled
//!   dead, orphaned, or gone);
//! - every object the ring holds (of its resources, in the namespaces and with the labels it
//!   selects; controlled objects that have a controller) is labelled for the live shard the
//!   consistent-hash ring of the live shards picks, as the sharder picks it, and none carries
//!   the drain label;
//! - no object outside the ring carries a shard label.
//!
//! ```no_run
//! use std::{sync::Arc, time::Duration};
//!
//! use informer_runtime::{
//!     controller::{Action, Controller},
//!     manager::Manager,
//!     replicas::{BuildError, Replicas},
//!     sharding::{ControllerRing, RingResource, Shard},
//! };
//! use informer_testserver::TestServer;
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! async fn reconcile(_: Arc<ConfigMap>, _: Arc<()>) -> Result<Action, kube::Error> {
//!     Ok(Action::await_change())
//! }
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestServer::start().await?;
//! let ring = ControllerRing::new("configmaps")?.resource(RingResource::of::<ConfigMap>())?;
//! let shards = ring.clone();
//! let mut replicas = Replicas::start(&server, ring, 3, move |name: &str, client| -> Result<Manager, BuildError> {
//!     let shard = Shard::new(shards.clone(), name, "default")?
//!         .lease_duration(Duration::from_millis(800))
//!         .renew_deadline(Duration::from_millis(500))
//!         .retry_period(Duration::from_millis(100));
//!     let mut manager = Manager::builder(client).shard(shard).build()?;
//!     let controller = Controller::<ConfigMap>::new(manager.factory());
//!     manager.add_controller(controller, reconcile, |_, _, _| Action::requeue_with_backoff(), Arc::new(()));
//!     Ok(manager)
//! })?;
//! replicas.wait_settled(Duration::from_secs(10)).await?;
//! replicas.crash("shard-1").await?;
//! let hand_over = replicas.wait_settled(Duration::from_secs(10)).await?;
//! println!("shard-1's objects moved {hand_over:?} after its crash");
//! replicas.stop("shard-2").await?;
//! replicas.restart("shard-1")?;
//! let added = replicas.add()?; // shard-3
//! replicas.wait_settled(Duration::from_secs(10)).await?;
//! # let _ = added;
//! replicas.shutdown().await?;
//! # Ok(())
//! # }
//! ```

mod error;
mod problem;
mod settled;

use std::{fmt, sync::Arc, time::Duration};

use crate::{
    manager::{self, Manager},
    sharding::{ControllerRing, Sharder, SharderStats, hash_ring::DEFAULT_VIRTUAL_NODES},
};
use tokio::{sync::oneshot, task::JoinHandle, time::Instant};

pub use error::{BuildError, ReplicasError};
pub use problem::{Problem, Unsettled};

use settled::RingView;

use informer_testserver::{TestServer, wait::POLL_INTERVAL};

/// The name of the sharder's client (see [`TestServer::named_client`]).
pub const SHARDER_CLIENT: &str = "sharder";

/// Builds the manager of the replica of a name, on its client.
type Build = dyn Fn(&str, kube::Client) -> Result<Manager, BuildError> + Send + Sync;

/// Configures the sharder.
type ConfigureSharder = dyn Fn(Sharder) -> Sharder + Send + Sync;

/// Configures [`Replicas`]: see [`Replicas::builder`].
pub struct ReplicasBuilder<'s> {
    server: &'s TestServer,
    ring: Arc<ControllerRing>,
    build: Box<Build>,
    count: usize,
    prefix: String,
    lease_namespace: String,
    virtual_nodes: usize,
    sharder: Box<ConfigureSharder>,
}

impl fmt::Debug for ReplicasBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplicasBuilder")
            .field("ring", &self.ring.name())
            .field("count", &self.count)
            .field("prefix", &self.prefix)
            .field("lease_namespace", &self.lease_namespace)
            .field("virtual_nodes", &self.virtual_nodes)
            .finish_non_exhaustive()
    }
}

impl<'s> ReplicasBuilder<'s> {
    /// How many replicas start (default 3).
    #[must_use]
    pub fn replicas(mut self, count: usize) -> Self {
        self.count = count;
        self
    }

    /// The prefix of the replicas' names, `<prefix>-<ordinal>` (default `shard`).
    #[must_use]
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = prefix.to_owned();
        self
    }

    /// The namespace the shards hold their Leases in (default `default`): the settle check
    /// reads them there, and each replica's shard must use it.
    #[must_use]
    pub fn lease_namespace(mut self, namespace: &str) -> Self {
        self.lease_namespace = namespace.to_owned();
        self
    }

    /// Configures the sharder (its concurrency, resync period, orphan delay, or its own leader
    /// election), for example `|sharder| sharder.concurrent_moves(10)`. Set its virtual nodes
    /// with [`virtual_nodes`](Self::virtual_nodes) instead, which the settle check needs too.
    #[must_use]
    pub fn sharder(mut self, configure: impl Fn(Sharder) -> Sharder + Send + Sync + 'static) -> Self {
        self.sharder = Box::new(configure);
        self
    }

    /// The sharder's tokens per shard on its hash ring (default
    /// [`DEFAULT_VIRTUAL_NODES`]): set on the sharder after [`sharder`](Self::sharder)'s
    /// function, and used by [`Replicas::wait_settled`] to know where each object belongs.
    #[must_use]
    pub fn virtual_nodes(mut self, virtual_nodes: usize) -> Self {
        self.virtual_nodes = virtual_nodes;
        self
    }

    /// Starts the sharder and the replicas (each in a task of the current runtime) and
    /// returns at once.
    ///
    /// # Errors
    ///
    /// [`ReplicasError::NoRuntime`] outside a Tokio runtime; [`ReplicasError::Client`],
    /// [`ReplicasError::Build`], [`ReplicasError::NotSharded`] or
    /// [`ReplicasError::OtherShard`] for a replica that cannot be built or is not the shard
    /// of its name; [`ReplicasError::Sharder`] if the sharder cannot be built.
    pub fn start(self) -> Result<Replicas<'s>, ReplicasError> {
        let Self {
            server,
            ring,
            build,
            count,
            prefix,
            lease_namespace,
            virtual_nodes,
            sharder,
        } = self;
        let view = RingView::new(Arc::clone(&ring), &lease_namespace, virtual_nodes);
        let (sharder_run, stats) = start_sharder(server, &view, &*sharder)?;
        let mut replicas = Replicas {
            server,
            view,
            build,
            prefix,
            replicas: Vec::new(),
            sharder: Some(sharder_run),
            stats,
            changed: Instant::now(),
        };
        for _ in 0..count {
            replicas.add()?;
        }
        replicas.changed = Instant::now();
        Ok(replicas)
    }
}

/// Starts the sharder of `view`'s ring on a manager of its own.
fn start_sharder(
    server: &TestServer,
    view: &RingView,
    configure: &ConfigureSharder,
) -> Result<(Run, Sharder), ReplicasError> {
    let ring = view.ring();
    let failed = |source: BuildError| ReplicasError::Sharder {
        ring: ring.name().to_owned(),
        source,
    };
    let client = server
        .named_client(SHARDER_CLIENT)
        .map_err(|source| ReplicasError::Client {
            what: "the sharder".to_owned(),
            source,
        })?;
    let mut manager = Manager::builder(client)
        .build()
        .map_err(|error| failed(error.into()))?;
    let sharder = Sharder::new(manager.client(), Arc::clone(ring)).map_err(|error| failed(error.into()))?;
    let sharder = configure(sharder).virtual_nodes(view.virtual_nodes());
    let stats = sharder.clone();
    manager.add(sharder);
    Ok((Run::spawn(manager, "the sharder")?, stats))
}

/// A running manager: its task, and what stops it gracefully.
struct Run {
    stop: oneshot::Sender<()>,
    task: JoinHandle<manager::Result<()>>,
}

impl Run {
    /// Runs `manager` in a task of the current runtime until it is told to stop.
    fn spawn(manager: Manager, what: &str) -> Result<Self, ReplicasError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| ReplicasError::NoRuntime {
            what: what.to_owned(),
        })?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = runtime.spawn(manager.run(async move {
            // a dropped sender stops it too; the harness aborts the task first
            let _ = stopped.await;
        }));
        Ok(Self { stop, task })
    }

    /// Aborts the task and waits until it ended; an error if it had ended with one before.
    async fn crash(self, what: &str) -> Result<(), ReplicasError> {
        self.task.abort();
        match self.task.await {
            Err(error) if error.is_cancelled() => Ok(()),
            ended => outcome(ended, what),
        }
    }

    /// Tells the manager to stop and waits until its run returned.
    async fn stop(self, what: &str) -> Result<(), ReplicasError> {
        let _ = self.stop.send(());
        outcome(self.task.await, what)
    }
}

/// The outcome of a run that ended.
fn outcome(
    ended: Result<manager::Result<()>, tokio::task::JoinError>,
    what: &str,
) -> Result<(), ReplicasError> {
    match ended {
        Ok(Ok(())) => Ok(()),
        Ok(Err(source)) => Err(ReplicasError::Manager {
            what: what.to_owned(),
            source: Box::new(source),
        }),
        Err(source) => Err(ReplicasError::Panicked {
            what: what.to_owned(),
            source,
        }),
    }
}

/// A replica: its name, and its run while it runs.
struct Replica {
    name: String,
    run: Option<Run>,
}

/// N replicas of a sharded manager and their sharder, against a [`TestServer`] (see the
/// [module documentation](self)). Dropping it aborts every task it started, as a crash would.
pub struct Replicas<'s> {
    server: &'s TestServer,
    view: RingView,
    build: Box<Build>,
    prefix: String,
    /// Every replica ever started, by ordinal.
    replicas: Vec<Replica>,
    sharder: Option<Run>,
    stats: Sharder,
    /// When the replicas last changed (started, crashed, stopped, restarted, added).
    changed: Instant,
}

impl fmt::Debug for Replicas<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replicas")
            .field("ring", &self.view.ring().name())
            .field("names", &self.names())
            .field("running", &self.running())
            .finish_non_exhaustive()
    }
}

impl<'s> Replicas<'s> {
    /// A builder of replicas of `ring` on `server` (3 by default), each built by `build` from its
    /// name and its [named client](TestServer::named_client): `build` must return a manager
    /// [sharded](crate::manager::Builder::shard) as the shard of that name in
    /// `ring`, holding its Lease in the [Lease namespace](ReplicasBuilder::lease_namespace).
    pub fn builder<F, E>(
        server: &'s TestServer,
        ring: impl Into<Arc<ControllerRing>>,
        build: F,
    ) -> ReplicasBuilder<'s>
    where
        F: Fn(&str, kube::Client) -> Result<Manager, E> + Send + Sync + 'static,
        E: Into<BuildError>,
    {
        ReplicasBuilder {
            server,
            ring: ring.into(),
            build: Box::new(move |name, client| build(name, client).map_err(Into::into)),
            count: 3,
            prefix: "shard".to_owned(),
            lease_namespace: "default".to_owned(),
            virtual_nodes: DEFAULT_VIRTUAL_NODES,
            sharder: Box::new(|sharder| sharder),
        }
    }

    /// Starts `count` replicas (`shard-0`, `shard-1`, ...) of `ring` built by `build`, and the
    /// sharder, with the [builder](Self::builder)'s defaults.
    ///
    /// # Errors
    ///
    /// As [`ReplicasBuilder::start`].
    pub fn start<F, E>(
        server: &'s TestServer,
        ring: impl Into<Arc<ControllerRing>>,
        count: usize,
        build: F,
    ) -> Result<Self, ReplicasError>
    where
        F: Fn(&str, kube::Client) -> Result<Manager, E> + Send + Sync + 'static,
        E: Into<BuildError>,
    {
        Self::builder(server, ring, build).replicas(count).start()
    }

    /// The ring.
    pub fn ring(&self) -> &Arc<ControllerRing> {
        self.view.ring()
    }

    /// Every replica's name, running or not, by ordinal.
    pub fn names(&self) -> Vec<&str> {
        self.replicas
            .iter()
            .map(|replica| replica.name.as_str())
            .collect()
    }

    /// The names of the replicas that run, by ordinal.
    pub fn running(&self) -> Vec<&str> {
        self.replicas
            .iter()
            .filter(|replica| replica.run.is_some())
            .map(|replica| replica.name.as_str())
            .collect()
    }

    /// What the sharder did so far.
    pub fn sharder_stats(&self) -> SharderStats {
        self.stats.stats()
    }

    /// Crashes replica `name`: aborts its task and waits until it ended. Its Lease is left
    /// to expire; the sharder moves its objects once it declared the shard dead.
    ///
    /// # Errors
    ///
    /// [`ReplicasError::Unknown`] or [`ReplicasError::NotRunning`] for a replica that does
    /// not run; [`ReplicasError::Manager`] or [`ReplicasError::Panicked`] if its run had
    /// ended with an error before.
    pub async fn crash(&mut self, name: &str) -> Result<(), ReplicasError> {
        let run = self.take_run("crash", name)?;
        self.changed = Instant::now();
        run.crash(&format!("replica {name}")).await
    }

    /// Stops replica `name` gracefully: its manager stops its controllers and releases its
    /// Lease, so the sharder moves its objects at once. Waits until its run returned.
    ///
    /// # Errors
    ///
    /// [`ReplicasError::Unknown`] or [`ReplicasError::NotRunning`] for a replica that does
    /// not run; [`ReplicasError::Manager`] or [`ReplicasError::Panicked`] if its run ended
    /// with an error.
    pub async fn stop(&mut self, name: &str) -> Result<(), ReplicasError> {
        let run = self.take_run("stop", name)?;
        self.changed = Instant::now();
        run.stop(&format!("replica {name}")).await
    }

    /// Starts the crashed or stopped replica `name` again, with a new manager from the
    /// harness's function; returns at once.
    ///
    /// # Errors
    ///
    /// [`ReplicasError::Unknown`] for a name never started, [`ReplicasError::Running`] for a
    /// replica that runs; as [`ReplicasBuilder::start`] for one that cannot be built.
    pub fn restart(&mut self, name: &str) -> Result<(), ReplicasError> {
        let index = self.index("restart", name)?;
        if self.replicas[index].run.is_some() {
            return Err(ReplicasError::Running {
                replica: name.to_owned(),
            });
        }
        let run = self.spawn(name)?;
        self.replicas[index].run = Some(run);
        self.changed = Instant::now();
        Ok(())
    }

    /// Starts the next replica of the StatefulSet (`<prefix>-<ordinal>`, the ordinal after
    /// the highest so far) and returns its name at once.
    ///
    /// # Errors
    ///
    /// As [`ReplicasBuilder::start`] for a replica that cannot be built.
    pub fn add(&mut self) -> Result<String, ReplicasError> {
        let name = format!("{}-{}", self.prefix, self.replicas.len());
        let run = self.spawn(&name)?;
        self.replicas.push(Replica {
            name: name.clone(),
            run: Some(run),
        });
        self.changed = Instant::now();
        Ok(name)
    }

    /// Waits until the ring has settled (see the [module documentation](self)), checking at
    /// once and then every [`POLL_INTERVAL`], for at most `timeout`. Returns how long it
    /// took since the replicas last changed (started, crashed, stopped, restarted, added): the
    /// hand-over time of that change.
    ///
    /// # Errors
    ///
    /// [`ReplicasError::NotSettled`] with what was not settled at the last check when the ring
    /// has not settled within `timeout`; [`ReplicasError::Read`] if the server does not serve
    /// one of the ring's resources.
    pub async fn wait_settled(&self, timeout: Duration) -> Result<Duration, ReplicasError> {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            let problems = self.view.problems(self.server, &self.running())?;
            if problems.is_empty() {
                return Ok(self.changed.elapsed());
            }
            let left = deadline.map_or(POLL_INTERVAL, |deadline| {
                deadline.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                return Err(ReplicasError::NotSettled {
                    ring: self.view.ring().name().to_owned(),
                    timeout,
                    unsettled: Unsettled { problems },
                });
            }
            tokio::time::sleep(POLL_INTERVAL.min(left)).await;
        }
    }

    /// Stops every replica gracefully, then the sharder.
    ///
    /// # Errors
    ///
    /// The first [`ReplicasError::Manager`] or [`ReplicasError::Panicked`] of a run that
    /// ended with an error (every run is stopped all the same).
    pub async fn shutdown(mut self) -> Result<(), ReplicasError> {
        let mut first = Ok(());
        let replicas = std::mem::take(&mut self.replicas);
        for replica in replicas {
            if let Some(run) = replica.run {
                let stopped = run.stop(&format!("replica {}", replica.name)).await;
                first = first.and(stopped);
            }
        }
        if let Some(sharder) = self.sharder.take() {
            first = first.and(sharder.stop("the sharder").await);
        }
        first
    }

    /// The index of replica `name`.
    fn index(&self, action: &'static str, name: &str) -> Result<usize, ReplicasError> {
        self.replicas
            .iter()
            .position(|replica| replica.name == name)
            .ok_or_else(|| ReplicasError::Unknown {
                action,
                replica: name.to_owned(),
                known: self.names().into_iter().map(str::to_owned).collect(),
            })
    }

    /// Takes the run of replica `name`, which must run.
    fn take_run(&mut self, action: &'static str, name: &str) -> Result<Run, ReplicasError> {
        let index = self.index(action, name)?;
        self.replicas[index]
            .run
            .take()
            .ok_or_else(|| ReplicasError::NotRunning {
                action,
                replica: name.to_owned(),
            })
    }

    /// Builds replica `name`'s manager, checks that it runs the shard of that name, and runs
    /// it.
    fn spawn(&self, name: &str) -> Result<Run, ReplicasError> {
        let client = self
            .server
            .named_client(name)
            .map_err(|source| ReplicasError::Client {
                what: format!("replica {name}"),
                source,
            })?;
        let manager = (self.build)(name, client).map_err(|source| ReplicasError::Build {
            replica: name.to_owned(),
            source,
        })?;
        let shard = manager.shard().ok_or_else(|| ReplicasError::NotSharded {
            replica: name.to_owned(),
        })?;
        let describe =
            |shard: &str, ring: &str, lease: &str| format!("shard {shard} of ring {ring} (Lease {lease})");
        let lease = shard.lease().lease();
        let expected_lease = format!("{}/{name}", self.view.lease_namespace());
        if shard.name() != name || shard.ring() != self.view.ring() || lease != expected_lease {
            return Err(ReplicasError::OtherShard {
                replica: name.to_owned(),
                expected: describe(name, self.view.ring().name(), &expected_lease),
                found: describe(shard.name(), shard.ring().name(), &lease),
            });
        }
        Run::spawn(manager, &format!("replica {name}"))
    }
}

impl Drop for Replicas<'_> {
    fn drop(&mut self) {
        let runs = self.replicas.iter().filter_map(|replica| replica.run.as_ref());
        for run in runs.chain(self.sharder.as_ref()) {
            run.task.abort();
        }
    }
}
