//! [`Error`]: why a manager failed to start, to run or to stop.

use std::{net::SocketAddr, time::Duration};

use super::runnable::RunnableError;
use crate::leader_election;

/// A manager that failed to start, to run or to stop.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The leader election's configuration was refused.
    #[error("failed to set up leader election: {0}")]
    LeaderElection(#[source] leader_election::Error),
    /// The manager was given both a shard and leader election: a shard's Lease takes the
    /// leader's place.
    #[error(
        "failed to configure the manager: it was given both leader election and a shard; a sharded manager holds its shard's Lease instead of competing for a leader's, so drop `leader_election` (run an unsharded leader-elected part in a manager of its own)"
    )]
    ShardAndLeaderElection,
    /// The factory given to a sharded manager caches resources of the ring unrestricted.
    #[error(
        "failed to configure shard {shard}: the factory given to the manager does not restrict {resources:?} to the shard, so every shard would cache every object; build it with `Shard::restrict_factory`, or let the manager build it"
    )]
    UnrestrictedFactory {
        /// The shard.
        shard: String,
        /// The resources of the ring the factory caches in full, as `plural.group`.
        resources: Vec<String>,
    },
    /// The manager was given a factory and options of the factory it would build otherwise.
    #[error(
        "failed to configure the manager: it was given a factory and `{option}`, an option of the factory it builds; set `{option}` on the factory's builder instead"
    )]
    FactoryOptions {
        /// The option (`encoding`, `skip_fields`).
        option: &'static str,
    },
    /// The probe listener could not be bound.
    #[error("failed to listen for probes on {address}: {source} (is the port taken?)")]
    Listen {
        /// The address asked for.
        address: SocketAddr,
        /// Why binding failed.
        #[source]
        source: std::io::Error,
    },
    /// The leader election stopped with an error while the manager ran.
    #[error("failed to keep leader election running: {0}")]
    Election(#[source] leader_election::Error),
    /// A runnable failed; the manager stopped.
    #[error("failed to run {runnable}: {source}")]
    Runnable {
        /// The runnable's name.
        runnable: String,
        /// Its error.
        #[source]
        source: RunnableError,
    },
    /// Runnables still ran when the graceful shutdown timeout passed; they were cancelled.
    #[error("failed to stop gracefully: {runnables:?} still ran after {timeout:?} and were cancelled")]
    ShutdownTimeout {
        /// The runnables that were cancelled.
        runnables: Vec<String>,
        /// The timeout.
        timeout: Duration,
    },
}

/// The result of a manager's operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;
