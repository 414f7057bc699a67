//! The failures of leader election: an invalid [`Config`](super::Config) and the lease
//! requests that did not succeed.

use std::time::Duration;

use super::JITTER_FACTOR;

/// A `Result` of leader election.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in leader election.
///
/// Validation errors come from [`Config::validate`](super::Config::validate) and
/// [`LeaderElector::new`](super::LeaderElector::new). Lease requests that fail while the
/// elector runs ([`Error::Api`], [`Error::Timeout`]) are logged and retried, not returned:
/// they only show in the logs and in [`LeaderElectionStats`](super::LeaderElectionStats).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A required name is empty.
    #[error("failed to validate the leader election config: the {field} is empty")]
    EmptyField {
        /// `lease name`, `lease namespace` or `holder identity`.
        field: &'static str,
    },
    /// A duration is zero.
    #[error("failed to validate the leader election config: {field} must be greater than zero")]
    ZeroDuration {
        /// `lease_duration`, `renew_deadline` or `retry_period`.
        field: &'static str,
    },
    /// The lease would expire before its holder gives up renewing it.
    #[error(
        "failed to validate the leader election config: lease_duration ({lease_duration:?}) must be greater than renew_deadline ({renew_deadline:?})"
    )]
    LeaseDurationTooShort {
        /// The configured lease duration.
        lease_duration: Duration,
        /// The configured renew deadline.
        renew_deadline: Duration,
    },
    /// The renew deadline leaves no room for a retry.
    #[error(
        "failed to validate the leader election config: renew_deadline ({renew_deadline:?}) must be greater than retry_period ({retry_period:?}) × {JITTER_FACTOR}"
    )]
    RenewDeadlineTooShort {
        /// The configured renew deadline.
        renew_deadline: Duration,
        /// The configured retry period.
        retry_period: Duration,
    },
    /// The API server answered a lease request with an error, or the request failed.
    #[error("failed to {action} lease {lease}")]
    Api {
        /// `get`, `create`, `update` or `release`.
        action: &'static str,
        /// `namespace/name` of the lease.
        lease: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
    /// A lease request had no answer in time.
    #[error("failed to {action} lease {lease}: no answer within {timeout:?}")]
    Timeout {
        /// What was attempted: `acquire`, `renew` or `release`.
        action: &'static str,
        /// `namespace/name` of the lease.
        lease: String,
        /// How long the elector waited.
        timeout: Duration,
    },
    /// [`LeaderElector::run`](super::LeaderElector::run) was called while it already runs.
    #[error("failed to run the leader elector of lease {lease}: it is already running")]
    AlreadyRunning {
        /// `namespace/name` of the lease.
        lease: String,
    },
    /// [`LeaderElector::leading`](super::LeaderElector::leading) waited for a leadership
    /// that cannot come: the elector's run ended.
    #[error("failed to wait for the leadership of lease {lease}: the elector stopped")]
    Stopped {
        /// `namespace/name` of the lease.
        lease: String,
    },
}

impl Error {
    /// The HTTP status code of an API error (409 for a conflict, 500, ...), if the server
    /// answered.
    pub fn status_code(&self) -> Option<u16> {
        match self {
            Self::Api {
                source: kube::Error::Api(status),
                ..
            } => Some(status.code),
            _ => None,
        }
    }

    /// Whether another writer changed the lease first: a 409 answer (`Conflict` on update,
    /// `AlreadyExists` on create), which means another replica won this round.
    pub fn is_conflict(&self) -> bool {
        self.status_code() == Some(409)
    }
}
