//! Leader election on a `coordination.k8s.io/v1` Lease: of several replicas of a controller,
//! one leads, and another takes over soon after it stops (client-go's
//! `tools/leaderelection`).
//!
//! A [`LeaderElector`] campaigns for the lease with a [`Config`]; while it holds the lease it
//! renews it, and [`LeaderElector::leading`] gives its [`Leadership`]: the [`Term`] and a
//! `CancellationToken` cancelled the moment the leadership ends. The usual shape is a warm
//! standby: informers run on every replica, so a new leader starts with synced caches, and the
//! controllers run only while leading:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use informer_runtime::leader_election::{Config, LeaderElector};
//! use tokio_util::sync::CancellationToken;
//! # let server = informer_testserver::TestServer::start().await?;
//! # let client = server.client()?;
//!
//! let elector = LeaderElector::new(client, Config::new("my-controller", "default", "replica-1"))?;
//! let shutdown = CancellationToken::new();
//! let election = tokio::spawn({
//!     let (elector, shutdown) = (elector.clone(), shutdown.clone());
//!     async move { elector.run(shutdown).await }
//! });
//!
//! // Each time this replica becomes the leader, run the controllers until the term ends.
//! # let mut terms = 0;
//! while let Ok(leadership) = elector.leading().await {
//!     println!("{} began", leadership.term());
//!     assert!(elector.is_leader());
//!     let token = leadership.token();
//!     // run_controllers(token.clone()).await: they stop when the token is cancelled
//! #   terms += 1;
//! #   shutdown.cancel();
//!     token.cancelled().await;
//! }
//! election.await??;
//! # assert_eq!(terms, 1);
//! # Ok(())
//! # }
//! ```
//!
//! The loop ends when the election ends ([`LeaderElector::leading`] fails with
//! [`Error::Stopped`]). [`LeaderElector::watch_leader`] follows who leads (client-go's
//! `OnNewLeader`); [`LeaderElector::stats`] counts acquisitions, renewals and failures.
//!
//! # The algorithm
//!
//! Every retry period (with jitter, see [`JITTER_FACTOR`]) a follower reads the lease. It takes
//! the lease over when nobody holds it, or when its content has not changed for a whole lease
//! duration by the follower's own clock: it writes itself as the holder, the acquire and renew
//! times, and `leaseTransitions` plus one, with the resourceVersion it read, so that of two
//! replicas trying at once, one gets 409 Conflict. The leader rewrites the renew time every
//! retry period. If its renewals keep failing until the renew deadline has passed since the
//! start of its last successful one, it stops leading: it cancels the token and campaigns
//! again. On cancel with [`Config::release_on_cancel`], it writes what client-go's release
//! writes (if the lease is still the version it wrote): `holderIdentity: ""`,
//! `leaseDurationSeconds: 1`, the acquire and renew times now and `leaseTransitions` kept; the
//! next replica takes over at its next attempt.
//!
//! # Clocks
//!
//! Expiry is never computed from the timestamps in the lease: they were written by another
//! machine's clock. Each replica measures time since it observed the last change of the lease,
//! on its own monotonic clock. Clocks therefore need not agree on the time of day, only tick at
//! nearly the same rate: the leader stops at most `renew_deadline` after sending its last
//! successful renewal, while a follower waits `lease_duration` from when it saw that renewal
//! (later than it was sent). The gap between the two durations is what keeps an old leader
//! from still acting when a new one starts; it absorbs a difference of clock rates up to
//! `(lease_duration - renew_deadline) / lease_duration` (a third with the defaults), and it is
//! the reason a leader must stop acting as soon as its token is cancelled, or check
//! [`Leadership::is_current`] before each action.
//!
//! This is not a fencing guarantee. A leader paused longer than the gap (a stopped process, a
//! stalled machine) can resume and finish an action after another replica took over. Writes
//! that must never come from two leaders need fencing at the storage they go to, for example
//! by carrying the [`Term`] and rejecting older terms.
//!
//! All replicas must use the same durations, and `lease_duration` should comfortably exceed
//! the latency of a request to the API server.

mod config;
mod elector;
mod error;
mod leadership;
mod lease_lock;
mod stats;

pub use config::Config;
pub use elector::LeaderElector;
pub use error::{Error, Result};
pub use leadership::{Leadership, Term};
pub use stats::LeaderElectionStats;

/// How much the wait between two acquisition attempts may grow at random: the waits are
/// between `retry_period` and `retry_period × (1 + JITTER_FACTOR)`, so that replicas started
/// together do not keep asking at the same instants. The renew deadline must exceed
/// `retry_period × JITTER_FACTOR`.
pub const JITTER_FACTOR: f64 = 1.2;

#[cfg(test)]
mod tests;
