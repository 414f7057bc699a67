//! [`ShardState`]: what a shard's Lease says about the shard (ready, expired, uncertain, dead,
//! orphaned), as the Go sharder's `leases.ToState` reads it, and [`LeaseTimes`], when it will
//! say something else.

use std::{fmt, time::Duration};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// The lease duration assumed for a Lease that lacks its acquire time, renew time or duration.
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);

/// How long after its expiry a dead shard's Lease becomes orphaned (and is deleted).
pub const DEFAULT_ORPHAN_AFTER: Duration = Duration::from_secs(60);

/// The state of one shard, from its Lease. Ordered from the least to the most alive.
///
/// ```
/// use informer_runtime::sharding::lease_state::ShardState;
///
/// assert!(ShardState::Uncertain.is_available());
/// assert!(!ShardState::Dead.is_available());
/// assert_eq!("expired".parse::<ShardState>().unwrap(), ShardState::Expired);
/// assert_eq!(ShardState::from_label("bogus"), ShardState::Unknown);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShardState {
    /// No Lease (or a state label the sharder does not know).
    Unknown,
    /// Dead for longer than the orphan delay past its expiry: the Lease is deleted.
    Orphaned,
    /// Released by the shard (empty holder) or acquired by the sharder: its objects move.
    Dead,
    /// Expired at least one lease duration ago: the sharder acquires the Lease next.
    Uncertain,
    /// Expired less than one lease duration ago.
    Expired,
    /// Held by the shard and not expired.
    Ready,
}

impl ShardState {
    /// The state `lease` is in at `now`.
    pub fn of(lease: &Lease, now: Timestamp) -> Self {
        Self::from_times(lease, &LeaseTimes::of(lease, now))
    }

    /// The state of `lease` with its `times` read already.
    pub fn from_times(lease: &Lease, times: &LeaseTimes) -> Self {
        let name = lease.metadata.name.as_deref().unwrap_or_default();
        let holder = holder(lease);
        if holder.is_empty() || holder != name {
            return if times.to_orphaned <= SignedDuration::ZERO {
                Self::Orphaned
            } else {
                Self::Dead
            };
        }
        if times.to_uncertain <= SignedDuration::ZERO {
            Self::Uncertain
        } else if times.to_expired <= SignedDuration::ZERO {
            Self::Expired
        } else {
            Self::Ready
        }
    }

    /// Whether objects are assigned to a shard in this state (ready, expired, uncertain).
    pub fn is_available(self) -> bool {
        self >= Self::Uncertain
    }

    /// The value of the state label (`unknown` for [`Unknown`](Self::Unknown)).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Orphaned => "orphaned",
            Self::Dead => "dead",
            Self::Uncertain => "uncertain",
            Self::Expired => "expired",
            Self::Ready => "ready",
        }
    }

    /// The state a state label names; [`Unknown`](Self::Unknown) for anything else.
    pub fn from_label(value: &str) -> Self {
        value.parse().unwrap_or(Self::Unknown)
    }
}

impl fmt::Display for ShardState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ShardState {
    type Err = UnknownShardState;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        [
            Self::Unknown,
            Self::Orphaned,
            Self::Dead,
            Self::Uncertain,
            Self::Expired,
            Self::Ready,
        ]
        .into_iter()
        .find(|state| state.as_str() == value)
        .ok_or_else(|| UnknownShardState(value.to_owned()))
    }
}

/// A string that names no [`ShardState`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "failed to parse {0:?} as a shard state: expected one of unknown, orphaned, dead, uncertain, expired, ready"
)]
pub struct UnknownShardState(pub String);

/// The times of a shard Lease, relative to a moment `now` (Go's `leases.Times`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTimes {
    /// When the Lease expires: its renew time plus its duration (`now` if it lacks its acquire
    /// time, renew time or duration).
    pub expiration: Timestamp,
    /// Its `leaseDurationSeconds` (15 s if it lacks one of the three fields).
    pub lease_duration: Duration,
    /// From `now` until it expires (negative once expired).
    pub to_expired: SignedDuration,
    /// Until it becomes uncertain: one lease duration after it expired.
    pub to_uncertain: SignedDuration,
    /// Until it becomes orphaned if it is dead: the orphan delay after it expired.
    pub to_orphaned: SignedDuration,
}

impl LeaseTimes {
    /// The times of `lease` at `now`, orphaned [1 minute](DEFAULT_ORPHAN_AFTER) after expiry.
    pub fn of(lease: &Lease, now: Timestamp) -> Self {
        Self::with_orphan_after(lease, now, DEFAULT_ORPHAN_AFTER)
    }

    /// The times of `lease` at `now`, orphaned `orphan_after` after expiry.
    pub fn with_orphan_after(lease: &Lease, now: Timestamp, orphan_after: Duration) -> Self {
        let spec = lease.spec.as_ref();
        let acquired = spec.and_then(|spec| spec.acquire_time.as_ref());
        let renewed = spec.and_then(|spec| spec.renew_time.as_ref());
        let seconds = spec.and_then(|spec| spec.lease_duration_seconds);
        let (lease_duration, expiration) = match (acquired, renewed, seconds) {
            (Some(_), Some(renewed), Some(seconds)) => {
                let duration = SignedDuration::from_secs(i64::from(seconds));
                (duration, renewed.0.saturating_add(duration).unwrap_or(renewed.0))
            }
            _ => (signed(DEFAULT_LEASE_DURATION), now),
        };
        let to_expired = expiration.duration_since(now);
        Self {
            expiration,
            lease_duration: Duration::try_from(lease_duration).unwrap_or(Duration::ZERO),
            to_expired,
            to_uncertain: to_expired.saturating_add(lease_duration),
            to_orphaned: to_expired.saturating_add(signed(orphan_after)),
        }
    }
}

/// The holder named in `lease` (empty if none).
pub(crate) fn holder(lease: &Lease) -> &str {
    lease
        .spec
        .as_ref()
        .and_then(|spec| spec.holder_identity.as_deref())
        .unwrap_or_default()
}

/// `duration` as a signed duration (saturating, which no lease duration reaches).
pub(crate) fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}

#[cfg(test)]
mod tests;
