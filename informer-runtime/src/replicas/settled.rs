//! Whether a ring has settled, read from the server's store alone (object labels and shard
//! Leases): every object the ring holds is on the shard the consistent-hash ring of the live
//! shards picks, none is drained, every running replica holds its Lease and the sharder has
//! seen it, and the sharder no longer counts a replica that does not run.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use crate::sharding::{
    ControllerRing, ResourceType,
    hash_ring::HashRing,
    labels::{RING_LABEL, STATE_LABEL, drain_label, shard_label},
    lease_state::ShardState,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{api::coordination::v1::Lease, jiff::Timestamp};
use serde_json::Value;

use super::{error::ReplicasError, problem::Problem};
use informer_testserver::TestServer;

/// The ring as the check reads it, with what a shard's Lease and the hash ring need.
pub(super) struct RingView {
    ring: Arc<ControllerRing>,
    lease_namespace: String,
    virtual_nodes: usize,
    /// Every resource of the ring, own and controlled.
    resources: Vec<ResourceType>,
}

impl RingView {
    /// The view of `ring`, whose shards hold their Leases in `lease_namespace` and whose
    /// sharder puts `virtual_nodes` tokens per shard on its hash ring.
    pub(super) fn new(ring: Arc<ControllerRing>, lease_namespace: &str, virtual_nodes: usize) -> Self {
        let resources = ring.all_types().cloned().collect();
        Self {
            ring,
            lease_namespace: lease_namespace.to_owned(),
            virtual_nodes,
            resources,
        }
    }

    /// The ring.
    pub(super) fn ring(&self) -> &Arc<ControllerRing> {
        &self.ring
    }

    /// The namespace of the shards' Leases.
    pub(super) fn lease_namespace(&self) -> &str {
        &self.lease_namespace
    }

    /// The sharder's tokens per shard.
    pub(super) fn virtual_nodes(&self) -> usize {
        self.virtual_nodes
    }

    /// What keeps the ring from being settled now, given the replicas that run (empty when
    /// it is settled).
    pub(super) fn problems(
        &self,
        server: &TestServer,
        running: &[&str],
    ) -> Result<Vec<Problem>, ReplicasError> {
        let read = |what: &str, api_version: &str, kind: &str, namespace: Option<&str>| {
            server
                .list(api_version, kind, namespace)
                .map_err(|source| ReplicasError::Read {
                    what: what.to_owned(),
                    source: Box::new(source),
                })
        };
        let leases: Vec<Lease> = read(
            "leases",
            "coordination.k8s.io/v1",
            "Lease",
            Some(&self.lease_namespace),
        )?
        .into_iter()
        .filter_map(|lease| serde_json::from_value(lease).ok())
        .filter(|lease: &Lease| label(lease.metadata.labels.as_ref(), RING_LABEL) == Some(self.ring.name()))
        .collect();
        let namespaces: BTreeMap<String, BTreeMap<String, String>> =
            read("namespaces", "v1", "Namespace", None)?
                .iter()
                .map(|namespace| {
                    let metadata = &namespace["metadata"];
                    (string(&metadata["name"]).to_owned(), labels(metadata))
                })
                .collect();
        let (mut problems, live) = self.shards(&leases, running, Timestamp::now());
        let hash_ring = HashRing::with_virtual_nodes(self.virtual_nodes, live.iter().cloned());
        for resource in &self.resources {
            let objects = read(resource.plural(), &resource.api_version(), resource.kind(), None)?;
            for object in &objects {
                problems.extend(self.object_problem(resource, object, &namespaces, &live, &hash_ring));
            }
        }
        Ok(problems)
    }

    /// The problems of the shards, and the live ones: running replicas that hold their Lease
    /// (held, not expired, labelled ready by the sharder).
    fn shards(&self, leases: &[Lease], running: &[&str], now: Timestamp) -> (Vec<Problem>, BTreeSet<String>) {
        let by_name: BTreeMap<&str, &Lease> = leases
            .iter()
            .filter_map(|lease| Some((lease.metadata.name.as_deref()?, lease)))
            .collect();
        let mut problems = Vec::new();
        let mut live = BTreeSet::new();
        for &shard in running {
            let not_live = |reason: String| Problem::ShardNotLive {
                shard: shard.to_owned(),
                reason,
            };
            let Some(lease) = by_name.get(shard) else {
                problems.push(not_live("it has no Lease".to_owned()));
                continue;
            };
            let state = ShardState::of(lease, now);
            let labelled = label(lease.metadata.labels.as_ref(), STATE_LABEL).unwrap_or_default();
            if state != ShardState::Ready {
                let holder = lease
                    .spec
                    .as_ref()
                    .and_then(|spec| spec.holder_identity.as_deref())
                    .unwrap_or_default();
                problems.push(not_live(format!("its Lease is {state} (holder {holder:?})")));
            } else if labelled != ShardState::Ready.as_str() {
                problems.push(not_live(format!(
                    "the sharder has not seen it hold its Lease yet (state label {labelled:?})"
                )));
            } else {
                live.insert(shard.to_owned());
            }
        }
        for (&shard, lease) in &by_name {
            let labelled = label(lease.metadata.labels.as_ref(), STATE_LABEL).unwrap_or_default();
            if !running.contains(&shard) && ShardState::from_label(labelled).is_available() {
                problems.push(Problem::StillAvailable {
                    shard: shard.to_owned(),
                    state: labelled.to_owned(),
                });
            }
        }
        (problems, live)
    }

    /// The problems of one object of `resource`, if any.
    fn object_problem(
        &self,
        resource: &ResourceType,
        object: &Value,
        namespaces: &BTreeMap<String, BTreeMap<String, String>>,
        live: &BTreeSet<String>,
        hash_ring: &HashRing,
    ) -> Vec<Problem> {
        let metadata: ObjectMeta = serde_json::from_value(object["metadata"].clone()).unwrap_or_default();
        let labels = metadata.labels.clone().unwrap_or_default();
        let (name, namespace) = (
            metadata.name.as_deref().unwrap_or_default(),
            metadata.namespace.as_deref(),
        );
        let object = match namespace {
            Some(namespace) => format!("{} {namespace}/{name}", resource.plural()),
            None => format!("{} {name}", resource.plural()),
        };
        let shard = labels
            .get(&shard_label(self.ring.name()))
            .filter(|shard| !shard.is_empty())
            .cloned();
        let drained = labels.contains_key(&drain_label(self.ring.name()));
        let namespace_labels = namespace.and_then(|namespace| namespaces.get(namespace));
        if !self.ring.holds_object(resource, &metadata, namespace_labels) {
            return shard
                .map(|shard| Problem::LabelledOutsideRing { object, shard })
                .into_iter()
                .collect();
        }
        // A controlled object without a controller, or with one the sharder cannot read, is
        // not assigned.
        let Ok(Some(key)) = self.ring.hash_key(resource, &metadata) else {
            return Vec::new();
        };
        let mut problems = Vec::new();
        if drained {
            problems.push(Problem::Drained {
                object: object.clone(),
                shard: shard.clone().unwrap_or_default(),
            });
        }
        let expected = hash_ring.lookup(&key).map(str::to_owned);
        match shard {
            None => problems.push(Problem::Unassigned { object }),
            Some(shard) if !live.contains(&shard) => problems.push(Problem::OnDeadShard { object, shard }),
            Some(shard) if expected.as_ref() != Some(&shard) => problems.push(Problem::Misplaced {
                object,
                shard,
                expected,
            }),
            Some(_) => {}
        }
        problems
    }
}

fn string(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn labels(metadata: &Value) -> BTreeMap<String, String> {
    serde_json::from_value(metadata["labels"].clone()).unwrap_or_default()
}

fn label<'a>(labels: Option<&'a BTreeMap<String, String>>, key: &str) -> Option<&'a str> {
    labels.and_then(|labels| labels.get(key)).map(String::as_str)
}

#[cfg(test)]
mod tests;
