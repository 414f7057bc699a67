//! What the parent sees of the hand-over: the pods' shard and drain labels and the shards'
//! Leases, through informers of its own on the test server, checked every [`POLL`].

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use informer_runtime::key::ObjectKey;
use informer_runtime::{
    SharedInformerFactory,
    informer::SharedIndexInformer,
    sharding::labels::{SHARDER_IDENTITY, drain_label, shard_label},
};
use k8s_openapi::api::{coordination::v1::Lease, core::v1::Pod};
use kube::core::{PartialObjectMeta, Selector};

use super::{LEASE_NAMESPACE, RING};
use informer_runtime::sharding::hash_ring::HashRing;

use crate::sharding::assignment::pod_key;

/// How often a condition is checked: the resolution of every time of the phase.
pub(crate) const POLL: Duration = Duration::from_millis(100);

/// The parent's informers of the pods (metadata only) and of the Leases.
pub(crate) struct Observer {
    factory: SharedInformerFactory,
    pods: SharedIndexInformer<PartialObjectMeta<Pod>>,
    leases: SharedIndexInformer<Lease>,
    shard_label: String,
    drain_label: String,
}

/// Where every pod is: its hash key and the shard its label names.
pub(crate) type Placement = HashMap<String, Option<String>>;

impl Observer {
    /// Starts the informers and waits until they synced.
    pub(crate) async fn start(client: kube::Client) -> Result<Self, String> {
        let factory = SharedInformerFactory::new(client);
        let pods = factory.metadata_informer::<Pod>();
        let leases = factory.unscoped_informer::<Lease>();
        factory.start();
        let report = factory
            .wait_for_cache_sync_timeout(Duration::from_secs(300))
            .await;
        if !report.all_synced() {
            return Err(format!("the observer did not sync: {report}"));
        }
        Ok(Self {
            factory,
            pods,
            leases,
            shard_label: shard_label(RING),
            drain_label: drain_label(RING),
        })
    }

    fn pods(&self) -> Vec<Arc<PartialObjectMeta<Pod>>> {
        self.pods.lister().list(&Selector::default())
    }

    /// Every pod's key and shard.
    pub(crate) fn placement(&self) -> Placement {
        self.pods()
            .iter()
            .map(|pod| {
                let meta = &pod.metadata;
                let key = pod_key(
                    meta.namespace.as_deref().unwrap_or_default(),
                    meta.name.as_deref().unwrap_or_default(),
                );
                let shard = meta
                    .labels
                    .as_ref()
                    .and_then(|labels| labels.get(&self.shard_label))
                    .cloned();
                (key, shard)
            })
            .collect()
    }

    /// Whether every one of `pods` pods is on the shard `ring` chooses for it and none carries
    /// the drain label.
    pub(crate) fn balanced(&self, ring: &HashRing, pods: usize) -> bool {
        let cached = self.pods();
        cached.len() == pods
            && cached.iter().all(|pod| {
                let meta = &pod.metadata;
                let labels = meta.labels.as_ref();
                if labels.is_some_and(|labels| labels.contains_key(&self.drain_label)) {
                    return false;
                }
                let key = pod_key(
                    meta.namespace.as_deref().unwrap_or_default(),
                    meta.name.as_deref().unwrap_or_default(),
                );
                labels
                    .and_then(|labels| labels.get(&self.shard_label))
                    .map(String::as_str)
                    == ring.lookup(&key)
            })
    }

    /// The holder of shard `shard`'s Lease, if the Lease exists.
    pub(crate) fn lease_holder(&self, shard: &str) -> Option<String> {
        let lease = self
            .leases
            .lister()
            .get_by_key(&ObjectKey::new(LEASE_NAMESPACE, shard))?;
        lease.spec.as_ref()?.holder_identity.clone()
    }

    /// Each shard Lease as `name: holder, transitions`, by name.
    pub(crate) fn lease_summary(&self) -> Vec<String> {
        let mut leases: Vec<String> = self
            .leases
            .lister()
            .list(&Selector::default())
            .iter()
            .map(|lease| {
                let spec = lease.spec.as_ref();
                format!(
                    "{}: held by {}, {} transitions",
                    lease.metadata.name.as_deref().unwrap_or_default(),
                    spec.and_then(|spec| spec.holder_identity.as_deref())
                        .unwrap_or("nobody"),
                    spec.and_then(|spec| spec.lease_transitions).unwrap_or_default(),
                )
            })
            .collect();
        leases.sort();
        leases
    }

    /// Whether shard `shard` holds its own Lease.
    pub(crate) fn holds_lease(&self, shard: &str) -> bool {
        self.lease_holder(shard).as_deref() == Some(shard)
    }

    /// Whether the sharder holds shard `shard`'s Lease (it declared the shard dead).
    pub(crate) fn lease_taken_over(&self, shard: &str) -> bool {
        self.lease_holder(shard).as_deref() == Some(SHARDER_IDENTITY)
    }

    /// Stops the informers.
    pub(crate) async fn stop(self) {
        self.factory.shutdown().await;
    }
}

/// Waits until `condition` holds, checking every [`POLL`]; the time it took from `since`, or
/// `None` once `timeout` passed.
pub(crate) async fn wait_until(
    since: Instant,
    timeout: Duration,
    condition: impl Fn() -> bool,
) -> Option<Duration> {
    loop {
        if condition() {
            return Some(since.elapsed());
        }
        if since.elapsed() >= timeout {
            return None;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Pods whose shard differs between two placements.
pub(crate) fn moved(before: &Placement, after: &Placement) -> usize {
    after
        .iter()
        .filter(|(key, shard)| before.get(*key) != Some(*shard))
        .count()
}
