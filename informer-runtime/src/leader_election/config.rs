//! The configuration of a [`LeaderElector`](super::LeaderElector): which lease, who we are, and
//! the three durations that pace the election.

use std::{collections::BTreeMap, time::Duration};

use super::error::{Error, Result};

/// Which lease to compete for, under which identity, and how fast.
///
/// Every replica competing for a lease must use the same durations: each one decides that the
/// leader is gone from its own `lease_duration`.
///
/// ```
/// use std::time::Duration;
///
/// use informer_runtime::leader_election::Config;
///
/// let config = Config::new("my-controller", "kube-system", "my-controller-7d9f8-x2k4p")
///     .lease_duration(Duration::from_secs(15))
///     .renew_deadline(Duration::from_secs(10))
///     .retry_period(Duration::from_secs(2))
///     .release_on_cancel(true);
/// config.validate()?;
/// # Ok::<(), informer_runtime::leader_election::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub(crate) lease_name: String,
    pub(crate) namespace: String,
    pub(crate) identity: String,
    pub(crate) lease_duration: Duration,
    pub(crate) renew_deadline: Duration,
    pub(crate) retry_period: Duration,
    pub(crate) release_on_cancel: bool,
    pub(crate) name: String,
    pub(crate) labels: BTreeMap<String, String>,
}

impl Config {
    /// Competes for the `coordination.k8s.io/v1` Lease `lease_name` in `namespace` as
    /// `identity` (unique per replica: the pod name, or the host name and a random suffix).
    /// Durations default to client-go's: lease 15 s, renew deadline 10 s, retry 2 s; the lease
    /// is not released on cancel; the name in logs is the lease name.
    pub fn new(lease_name: &str, namespace: &str, identity: &str) -> Self {
        Self {
            lease_name: lease_name.to_string(),
            namespace: namespace.to_string(),
            identity: identity.to_string(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
            name: lease_name.to_string(),
            labels: BTreeMap::new(),
        }
    }

    /// How long followers wait, from the last change of the lease they observed, before they
    /// take it over (default 15 s). It bounds the time to a new leader after the leader dies
    /// without releasing.
    pub fn lease_duration(mut self, duration: Duration) -> Self {
        self.lease_duration = duration;
        self
    }

    /// How long the leader keeps leading without a successful renewal (default 10 s), counted
    /// from the start of its last successful one. It must be shorter than the lease duration:
    /// the difference is the margin that keeps the old leader from acting when a new one takes
    /// over.
    pub fn renew_deadline(mut self, duration: Duration) -> Self {
        self.renew_deadline = duration;
        self
    }

    /// The wait between two attempts to acquire (with jitter, see [`JITTER_FACTOR`](super::JITTER_FACTOR)) or to
    /// renew (default 2 s).
    pub fn retry_period(mut self, duration: Duration) -> Self {
        self.retry_period = duration;
        self
    }

    /// Whether the leader gives the lease up when it is cancelled (default false), so that
    /// another replica takes over at once instead of after the lease duration. Only set it if
    /// the work done as leader stops when the leadership's token is cancelled.
    pub fn release_on_cancel(mut self, release: bool) -> Self {
        self.release_on_cancel = release;
        self
    }

    /// The name in logs (default: the lease name).
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    /// Puts label `key=value` on the lease: set when the lease is created, and put back on
    /// each renewal if it went missing (other labels on the lease are kept). A shard's Lease
    /// carries its ring's name this way (see [`sharding`](crate::sharding)).
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }

    /// The holder identity of this replica.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// `namespace/name` of the lease.
    pub fn lease(&self) -> String {
        format!("{}/{}", self.namespace, self.lease_name)
    }

    /// Checks the configuration as client-go does: names are not empty, every duration is
    /// positive, `lease_duration > renew_deadline > retry_period × JITTER_FACTOR`.
    pub fn validate(&self) -> Result<()> {
        for (field, value) in [
            ("lease name", &self.lease_name),
            ("lease namespace", &self.namespace),
            ("holder identity", &self.identity),
        ] {
            if value.is_empty() {
                return Err(Error::EmptyField { field });
            }
        }
        for (field, value) in [
            ("lease_duration", self.lease_duration),
            ("renew_deadline", self.renew_deadline),
            ("retry_period", self.retry_period),
        ] {
            if value.is_zero() {
                return Err(Error::ZeroDuration { field });
            }
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(Error::LeaseDurationTooShort {
                lease_duration: self.lease_duration,
                renew_deadline: self.renew_deadline,
            });
        }
        // renew_deadline > retry_period × 1.2, in integers (no rounding, no overflow)
        if self.renew_deadline.as_nanos() * 5 <= self.retry_period.as_nanos() * 6 {
            return Err(Error::RenewDeadlineTooShort {
                renew_deadline: self.renew_deadline,
                retry_period: self.retry_period,
            });
        }
        Ok(())
    }

    /// `leaseDurationSeconds` as written to the lease: the lease duration rounded up to whole
    /// seconds, at least 1, saturating at `i32::MAX`.
    pub(crate) fn lease_duration_seconds(&self) -> i32 {
        let seconds = self
            .lease_duration
            .as_secs()
            .saturating_add(u64::from(self.lease_duration.subsec_nanos() > 0));
        i32::try_from(seconds.max(1)).unwrap_or(i32::MAX)
    }
}
