//! The labels of the sharding protocol (kubernetes-controller-sharding's
//! `sharding.timebertt.dev/v1alpha1` conventions), so that its Go sharder can drive our shards
//! and our sharder can drive its shards.

/// On a shard Lease: the name of the ring the shard belongs to.
pub const RING_LABEL: &str = "alpha.sharding.timebertt.dev/controllerring";

/// On a shard Lease: the state the sharder last saw it in (`ready`, `expired`, `uncertain`,
/// `dead`, `orphaned`), for people and dashboards; shards ignore it.
pub const STATE_LABEL: &str = "alpha.sharding.timebertt.dev/state";

/// The prefix of the assignment label: `shard.alpha.sharding.timebertt.dev/<ring>=<shard>`.
pub const SHARD_LABEL_PREFIX: &str = "shard.alpha.sharding.timebertt.dev/";

/// The prefix of the drain label: `drain.alpha.sharding.timebertt.dev/<ring>` (any value).
pub const DRAIN_LABEL_PREFIX: &str = "drain.alpha.sharding.timebertt.dev/";

/// The holder identity the sharder writes into the Lease of a shard it declares dead.
pub const SHARDER_IDENTITY: &str = "shardlease-controller";

/// The label naming the shard an object of `ring` is assigned to.
///
/// ```
/// use informer_runtime::sharding::labels::shard_label;
///
/// assert_eq!(shard_label("web"), "shard.alpha.sharding.timebertt.dev/web");
/// ```
pub fn shard_label(ring: &str) -> String {
    format!("{SHARD_LABEL_PREFIX}{ring}")
}

/// The label that asks the shard an object of `ring` is assigned to to let it go: the shard
/// stops reconciling it and removes this label and the [shard label](shard_label).
pub fn drain_label(ring: &str) -> String {
    format!("{DRAIN_LABEL_PREFIX}{ring}")
}
