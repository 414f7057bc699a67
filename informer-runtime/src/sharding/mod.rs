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
//!
//! # Deploying a ring
//!
//! **Shards.** Each replica is a shard named after its pod: pass the pod name from the
//! downward API as the shard name, so that the Lease name, the holder identity and the shard
//! label value are the pod's name (as the Go sharder expects):
//!
//! ```yaml
//! env:
//! - name: POD_NAME
//!   valueFrom:
//!     fieldRef:
//!       fieldPath: metadata.name
//! ```
//!
//! Run the shards as a **StatefulSet** or a **Deployment**; the choice is how a rollout moves
//! objects:
//!
//! - A StatefulSet's pods keep their names (`replicator-0`, `replicator-1`, …), so each shard
//!   keeps its Lease and its places on the hash ring. A pod that stops moves its objects to
//!   the other shards; when it is back under the same name, the same objects are drained off
//!   them and come back: after a rollout or a restart, the assignment is the one before. The
//!   returning pod does not wait for its Lease: the sharder holds a stopped shard's Lease
//!   only while that shard's objects move, and gives it back as soon as they all moved (see
//!   the table below). `podManagementPolicy: Parallel` starts the shards at once.
//! - A Deployment's pods get new names on every rollout (and every rescheduling): each new
//!   pod is a new shard at new places on the ring, and each old one leaves it for good. A
//!   rollout reassigns every object to a ring of new shards, moving most of them (some more
//!   than once, as pods come and go); new pods reconcile as soon as they hold their new
//!   Lease, without waiting for an old one. The Leases of the old pods are deleted once
//!   orphaned (one minute after they expired, [`Sharder::orphan_after`]).
//!
//! Both move a stopping shard's objects at once; the trade-off is what follows. A StatefulSet
//! keeps each shard's share across rollouts and restarts (stable Lease names, a fixed set of
//! Leases, per-shard state and dashboards that stay meaningful), at the price of moving a
//! restarting shard's objects away and back. A Deployment's new shards start at once, but
//! every rollout deals the objects out anew. Either way, shut the manager down on `SIGTERM` (what Kubernetes sends;
//! `tokio::signal::unix::signal(SignalKind::terminate())`), and give the pod a
//! `terminationGracePeriodSeconds` longer than the manager's
//! [graceful shutdown timeout](crate::manager::Builder::graceful_shutdown_timeout) (30 s), so
//! that the shard releases its Lease before it is killed and its objects move at once.
//!
//! **The sharder.** Run one active sharder per ring (more would fight over the labels), in
//! one of two places:
//!
//! - Its own Deployment of 2 replicas: a [`Manager`](crate::manager::Manager) with
//!   [`leader_election`](crate::manager::Builder::leader_election) and
//!   `manager.add(Sharder::new(manager.client(), ring)?)`. The sharder is a
//!   leader-only runnable: it runs on the leader, once per term, and its writes are refused
//!   once the term ends. The sharder's caches are its own and start with each term: a new
//!   leader lists the ring's objects (metadata only) before it acts.
//! - Inside the shards' manager. A shard's manager holds its shard Lease instead of electing
//!   a leader, and runs leader-only runnables on every shard: a sharder added as is would run
//!   on every shard at once. Give it its own election instead
//!   ([`Sharder::leader_election`], on a Lease of its own, the pod name as identity): it then
//!   runs on every replica and acts only on the one that wins. Build it on
//!   [`unfenced_client`](crate::manager::Manager::unfenced_client), so that its writes
//!   follow its own leadership and not the shard Lease (see the example below). This saves a
//!   Deployment; a shard's rollout then also moves the sharder now and then.
//!
//! **Leases.** Each shard holds its Lease in the namespace given to [`Shard::new`], usually
//! the controller's own; the sharder finds the shard Leases of its ring in every namespace by
//! their ring label, as the Go sharder does ([`Sharder::lease_namespace`] narrows it to one,
//! for a sharder whose role reads Leases there only). Keep the Lease namespace (and
//! `kube-system`) out of the ring's [namespace selector](ControllerRing::namespace_selector).
//!
//! **RBAC.** [`ControllerRing::rbac`] renders the least the shards and the sharder need for a
//! ring, bound to their service accounts ([`RingRbac`](rbac::RingRbac)); bind the controllers' own rules (what
//! they create, update or delete) separately. Clusters where the Go sharder assigns the
//! objects take the ring's [`manifest`](ControllerRing::manifest) instead of a sharder.
//!
//! ```
//! use informer_runtime::sharding::{ControllerRing, RingResource, rbac::RingRbac};
//! use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//! use serde_json::json;
//!
//! let ring = ControllerRing::new("replicator")?
//!     .resource(RingResource::of::<ConfigMap>().controls::<Secret>())?;
//! // the shards and the sharder inside them as `controllers/replicator`, their Leases in
//! // `controllers`, the sharder electing itself on `controllers/replicator-sharder`
//! let rbac = ring.rbac(
//!     &RingRbac::new("controllers", "replicator").sharder_election("controllers", "replicator-sharder"),
//! );
//! // for `kubectl apply -f -`
//! let list = json!({"apiVersion": "v1", "kind": "List", "items": rbac});
//! assert_eq!(list["items"][0]["metadata"]["name"], "sharding:replicator:shard");
//! // for clusters that run the Go sharder instead
//! assert_eq!(ring.manifest()["kind"], "ControllerRing");
//! # Ok::<(), informer_runtime::sharding::Error>(())
//! ```
//!
//! The sharder inside the shards' manager, electing itself:
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use futures::FutureExt;
//! use informer_runtime::{
//!     leader_election,
//!     manager::Manager,
//!     sharding::{ControllerRing, RingResource, Shard, Sharder},
//! };
//! use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let pod = std::env::var("POD_NAME")?;
//! let ring = Arc::new(
//!     ControllerRing::new("replicator")?.resource(RingResource::of::<ConfigMap>().controls::<Secret>())?,
//! );
//! let shard = Shard::new(Arc::clone(&ring), &pod, "controllers")?;
//! let mut manager = Manager::builder(kube::Client::try_default().await?).shard(shard).build()?;
//! let election =
//!     leader_election::Config::new("replicator-sharder", "controllers", &pod).release_on_cancel(true);
//! let sharder = Sharder::new(manager.unfenced_client(), ring)?.leader_election(election);
//! manager.add(sharder);
//! // … add the controllers as above
//! manager.run(tokio::signal::ctrl_c().map(drop)).await?;
//! # Ok(())
//! # }
//! ```
//!
//! **Failover.** With a lease duration *D*, a renew deadline *R* and a retry period *P*
//! ([`Shard::lease_duration`], [`Shard::renew_deadline`], [`Shard::retry_period`]; by default
//! *D* = 15 s, *R* = 10 s, *P* = 2 s), objects move, and are reconciled again by their new
//! shard, at these points (plus the watch events and writes of the move itself, with
//! [`concurrent_moves`](Sharder::concurrent_moves) objects moved at once):
//!
//! | Event | Its objects move | Default leases |
//! |---|---|---|
//! | A shard crashes, or loses the API server | once the sharder acquires its expired Lease: the Lease expires *D* after the last renewal, turns uncertain *D* later, and the sharder takes it then, so about 2 × *D* after the last renewal (the shard itself stopped reconciling *R* after it) | 2 × 15 s = 30 s after the last renewal, so 28 to 30 s after the crash with a renewal every *P* = 2 s |
//! | A shard stops gracefully | at once after it releases its Lease (once its running reconciles ended): the sharder takes the released Lease, moves them, and gives the Lease back | no Lease wait |
//! | A shard joins | after the drains are acknowledged: the sharder adds the drain label, the old shard lets each object go (after a reconcile of it in progress ends), then the sharder assigns it to the new shard | no Lease wait |
//! | A shard comes back under its name (StatefulSet) | back to it (drained off the shards they moved to) once it holds its Lease again: at once if the Lease still names it (a crashed shard back before the sharder took its Lease, within about 2 × *D* of its last renewal: its objects never moved) or was given back; while the sharder still moves its objects, at its next try after the sharder gave the Lease back, within *P* | at once, or within 2 s of the moves' end |
//! | The active sharder stops | none: assigned objects stay with their shards; new objects and moves wait for the next sharder, which takes over about *P* after a graceful release (its election's [`release_on_cancel`](crate::leader_election::Config::release_on_cancel)) or about *D* after a crashed one's last renewal, and first syncs its caches | about 2 s, or about 15 s after the last renewal |
//!
//! Measured with 4 shard processes, 2 000 pods and 15 s Leases (renew deadline 11.25 s, retry
//! 3.75 s; `bench/README.md`, the hand-over): a crash moved the shard's 396 pods 29.1 s after
//! the kill, a graceful stop its 468 pods 0.53 s after the stop, a join balanced the ring
//! 2.1 s after the new process started, and a shard restarted under its name held its Lease
//! 0.75 s after its start (4.6 s in a run where it started while its objects still moved: one
//! retry period).

mod child_assignment;
mod drain_sweep;
mod error;
mod hash_key;
pub mod hash_ring;
pub mod labels;
pub mod lease_state;
mod metadata_access;
pub mod rbac;
mod resource_type;
mod ring;
mod shard;
mod sharded_controller;
mod sharder;
mod term_fence;

pub use error::{Error, Result};
pub use resource_type::ResourceType;
pub use ring::{ControllerRing, RingResource};
pub use shard::Shard;
pub use sharder::{Sharder, SharderStats};

pub(crate) use child_assignment::assign_children;
pub(crate) use drain_sweep::{Claims, DrainSweep};
pub(crate) use shard::Assignment;
