//! [`ReplicasError`]: what can go wrong starting, changing and waiting on
//! [`Replicas`](super::Replicas).

use std::time::Duration;

use super::problem::Unsettled;
use informer_testserver::{ApiError, ServerError};

/// The error a function returns to build a replica's manager (any error, boxed).
pub type BuildError = Box<dyn std::error::Error + Send + Sync>;

/// A failure of the replica harness.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplicasError {
    /// The harness was used outside a Tokio runtime, where it cannot run managers.
    #[error(
        "failed to start {what}: no Tokio runtime is running here; start replicas from async code on a runtime (a `#[tokio::test]`)"
    )]
    NoRuntime {
        /// The replica or the sharder.
        what: String,
    },
    /// The named client of a replica (or of the sharder) could not be made.
    #[error("failed to make the client of {what}: {source}")]
    Client {
        /// The replica or the sharder.
        what: String,
        /// Why.
        #[source]
        source: ServerError,
    },
    /// The function given to the harness failed to build a replica's manager.
    #[error(
        "failed to build the manager of replica {replica}: {source}; check the function given to `Replicas::start` or `Replicas::builder`"
    )]
    Build {
        /// The replica.
        replica: String,
        /// The function's error.
        #[source]
        source: BuildError,
    },
    /// A replica's manager does not run as a shard.
    #[error(
        "failed to run replica {replica} as a shard: its manager is not sharded; build it with `Manager::builder(client).shard(Shard::new(ring, name, lease_namespace)?)`"
    )]
    NotSharded {
        /// The replica.
        replica: String,
    },
    /// A replica's manager runs as a shard of another name, ring or Lease namespace than the
    /// harness gave it.
    #[error(
        "failed to run replica {replica}: its manager runs {found}, not {expected}; build its shard with the name, ring and Lease namespace the harness has"
    )]
    OtherShard {
        /// The replica.
        replica: String,
        /// What the harness expects: the shard, its ring and its Lease.
        expected: String,
        /// What the manager runs.
        found: String,
    },
    /// The sharder could not be built.
    #[error("failed to build the sharder of ring {ring}: {source}")]
    Sharder {
        /// The ring.
        ring: String,
        /// Why (a sharding or manager error).
        #[source]
        source: BuildError,
    },
    /// No replica of that name was ever started.
    #[error("failed to {action} replica {replica}: no replica has that name (replicas: {known:?})")]
    Unknown {
        /// What was asked: `crash`, `stop` or `restart`.
        action: &'static str,
        /// The name asked for.
        replica: String,
        /// The replicas' names.
        known: Vec<String>,
    },
    /// The replica does not run (crashed or stopped before).
    #[error("failed to {action} replica {replica}: it does not run; restart it first")]
    NotRunning {
        /// What was asked: `crash` or `stop`.
        action: &'static str,
        /// The replica.
        replica: String,
    },
    /// The replica runs already.
    #[error("failed to restart replica {replica}: it runs; crash or stop it first")]
    Running {
        /// The replica.
        replica: String,
    },
    /// A replica's (or the sharder's) manager returned an error.
    #[error("failed to run {what}: its manager stopped with an error: {source}")]
    Manager {
        /// The replica or the sharder.
        what: String,
        /// The manager's error.
        #[source]
        source: Box<crate::manager::Error>,
    },
    /// A replica's (or the sharder's) task panicked.
    #[error("failed to run {what}: its task panicked: {source}")]
    Panicked {
        /// The replica or the sharder.
        what: String,
        /// The task's error.
        #[source]
        source: tokio::task::JoinError,
    },
    /// The ring's objects or Leases could not be read from the server.
    #[error(
        "failed to read {what} from the test server: {source}; serve every resource of the ring (`TestServer::register_type`, or a CRD) before waiting for the ring"
    )]
    Read {
        /// What was read: a resource's plural, `leases` or `namespaces`.
        what: String,
        /// The server's answer.
        #[source]
        source: Box<ApiError>,
    },
    /// The ring did not settle within the timeout.
    #[error("failed to wait for ring {ring} to settle within {timeout:?}: {unsettled}")]
    NotSettled {
        /// The ring.
        ring: String,
        /// How long the wait lasted.
        timeout: Duration,
        /// What was not settled at the last check.
        unsettled: Unsettled,
    },
}
