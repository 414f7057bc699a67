//! Sharding: replicas that each cache and reconcile a share of the objects, on the protocol of
//! kubernetes-controller-sharding (github timebertt), so that its Go sharder can drive our
//! shards and our [sharder](Sharder) can drive its shards.
//!
//! Leader election gives one active replica holding every object in memory; sharding divides
//! the cache and the work, using the API server as its only coordinator:
//!
//! - **Shard Leases.** Each replica holds its own `coordination.k8s.io/v1` Lease, named after
//!   the replica (its holder identity), labelled
//!   `alpha.sharding.timebertt.dev/controllerring=<ring>`, renewed as leader election renews
//!   and released on a graceful shutdown. A shard that cannot renew stops reconciling at its
//!   renew deadline, before its Lease can expire.
//! - **Assignment.** The sharder labels each object of the ring
//!   `shard.alpha.sharding.timebertt.dev/<ring>=<shard>`, choosing the shard on a
//!   consistent-hash ring of the available shards (controlled objects follow their
//!   controller). Each shard lists and watches the ring's resources with that label selector,
//!   so it caches only its share.
//! - **Hand-over.** To move an object off a live shard, the sharder adds
//!   `drain.alpha.sharding.timebertt.dev/<ring>`. The shard stops reconciling the object and
//!   removes both labels (drain events pass every predicate); only then does the sharder
//!   assign it to its new shard. Objects of a shard that released its Lease, or whose expired
//!   Lease the sharder acquired, move at once. No two shards reconcile one object at once.
//!
//! A sharded controller is an unsharded one plus the ring, given to the manager:
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use futures::FutureExt;
//! use informer_runtime::{
//!     controller::{Action, Controller},
//!     manager::Manager,
//!     sharding::{ControllerRing, RingResource, Shard},
//! };
//! use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//!
//! async fn reconcile(_: Arc<ConfigMap>, _: Arc<()>) -> Result<Action, kube::Error> {
//!     Ok(Action::await_change())
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let ring = ControllerRing::new("replicator")?
//!     .resource(RingResource::of::<ConfigMap>().controls::<Secret>())?;
//! let shard = Shard::new(ring, &std::env::var("POD_NAME")?, "default")?;
//! let mut manager = Manager::builder(kube::Client::try_default().await?).shard(shard).build()?;
//! // caches only this shard's config maps and the secrets they control
//! let controller = Controller::<ConfigMap>::new(manager.factory()).owns::<Secret>();
//! manager.add_controller(controller, reconcile, |_, _, _| Action::requeue_with_backoff(), Arc::new(()));
//! manager.run(tokio::signal::ctrl_c().map(drop)).await?;
//! # Ok(())
//! # }
//! ```

mod drain_sweep;
mod error;
mod hash_key;
mod hash_ring;
pub mod labels;
mod lease_state;
mod metadata_access;
mod rbac;
mod resource_type;
mod ring;
mod shard;
mod sharder;

pub use error::{Error, Result};
pub use hash_key::hash_key_for_object;
pub use hash_ring::{DEFAULT_VIRTUAL_NODES, GO_SHARDER_VIRTUAL_NODES, HashFn, HashRing, xxhash64};
pub use lease_state::{
    DEFAULT_LEASE_DURATION, DEFAULT_ORPHAN_AFTER, LeaseTimes, ShardState, UnknownShardState,
};
pub use rbac::RingRbac;
pub use resource_type::ResourceType;
pub use ring::{ControllerRing, DEFAULT_NAMESPACE_SELECTOR, RingResource};
pub use shard::Shard;
pub use sharder::{DEFAULT_CONCURRENT_MOVES, DEFAULT_RESYNC_PERIOD, Sharder, SharderStats};

pub(crate) use drain_sweep::{Claims, DrainSweep};
pub(crate) use shard::Assignment;
