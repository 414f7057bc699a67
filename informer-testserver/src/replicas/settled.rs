//! Whether a ring has settled, read from the server's store alone (object labels and shard
//! Leases): every object the ring holds is on the shard the consistent-hash ring of the live
//! shards picks, none is drained, every running replica holds its Lease and the sharder has
//! seen it, and the sharder no longer counts a replica that does not run.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use informer_runtime::sharding::{
    ControllerRing, HashRing, ResourceType, ShardState, hash_key_for_object,
    labels::{RING_LABEL, STATE_LABEL, drain_label, shard_label},
};
use k8s_openapi::{api::coordination::v1::Lease, jiff::Timestamp};
use kube::core::{Selector, SelectorExt};
use serde_json::Value;

use super::{error::ReplicasError, problem::Problem};
use crate::TestServer;

/// A resource of the ring, as the check reads it.
struct Held {
    resource: ResourceType,
    /// Whether objects of it follow their controller (a controlled resource).
    controlled: bool,
    /// The object selector of a ring resource that has one.
    selector: Option<Selector>,
}

/// The ring as the check reads it, with what a shard's Lease and the hash ring need.
pub(super) struct RingView {
    ring: Arc<ControllerRing>,
    lease_namespace: String,
    virtual_nodes: usize,
    resources: Vec<Held>,
}

impl RingView {
    /// The view of `ring`, whose shards hold their Leases in `lease_namespace` and whose
    /// sharder puts `virtual_nodes` tokens per shard on its hash ring.
    pub(super) fn new(
        ring: Arc<ControllerRing>,
        lease_namespace: &str,
        virtual_nodes: usize,
    ) -> Result<Self, ReplicasError> {
        let mut resources = Vec::new();
        for ring_resource in ring.resources() {
            let selector = ring_resource
                .object_selector()
                .map(|selector| {
                    crate::selector::parse_label_selector(selector).map_err(|error| ReplicasError::Selector {
                        ring: ring.name().to_owned(),
                        resource: ring_resource.resource().plural().to_owned(),
                        selector: selector.to_owned(),
                        reason: error.to_string(),
                    })
                })
                .transpose()?;
            resources.push(Held {
                resource: ring_resource.resource().clone(),
                controlled: false,
                selector,
            });
            resources.extend(ring_resource.controlled().iter().map(|controlled| Held {
                resource: controlled.clone(),
                controlled: true,
                selector: None,
            }));
        }
        Ok(Self {
            ring,
            lease_namespace: lease_namespace.to_owned(),
            virtual_nodes,
            resources,
        })
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
        for held in &self.resources {
            let plural = held.resource.plural();
            let objects = read(plural, &held.resource.api_version(), held.resource.kind(), None)?;
            for object in &objects {
                problems.extend(self.object_problem(held, object, &namespaces, &live, &hash_ring));
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

    /// The problems of one object of `held`, if any.
    fn object_problem(
        &self,
        held: &Held,
        object: &Value,
        namespaces: &BTreeMap<String, BTreeMap<String, String>>,
        live: &BTreeSet<String>,
        hash_ring: &HashRing,
    ) -> Vec<Problem> {
        let metadata = &object["metadata"];
        let labels = labels(metadata);
        let (name, namespace) = (string(&metadata["name"]), metadata["namespace"].as_str());
        let resource = &held.resource;
        let object = match namespace {
            Some(namespace) => format!("{} {namespace}/{name}", resource.plural()),
            None => format!("{} {name}", resource.plural()),
        };
        let shard = labels
            .get(&shard_label(self.ring.name()))
            .filter(|shard| !shard.is_empty())
            .cloned();
        let drained = labels.contains_key(&drain_label(self.ring.name()));
        if !self.holds(held, &labels, namespace, namespaces) {
            return shard
                .map(|shard| Problem::LabelledOutsideRing { object, shard })
                .into_iter()
                .collect();
        }
        let key = if held.controlled {
            controller_key(metadata)
        } else {
            Some(hash_key_for_object(
                resource.group(),
                resource.kind(),
                namespace,
                name,
            ))
        };
        // A controlled object without a controller is not assigned.
        let Some(key) = key else { return Vec::new() };
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

    /// Whether the ring holds an object of `held` with `labels` in `namespace`: its namespace
    /// is selected (a namespace by its own labels; cluster-scoped objects always), and a ring
    /// resource's object selector selects it.
    fn holds(
        &self,
        held: &Held,
        labels: &BTreeMap<String, String>,
        namespace: Option<&str>,
        namespaces: &BTreeMap<String, BTreeMap<String, String>>,
    ) -> bool {
        let selector = self.ring.selected_namespaces();
        let resource = &held.resource;
        let namespace_held = if resource.group().is_empty() && resource.plural() == "namespaces" {
            selector.matches(labels)
        } else if resource.is_namespaced() {
            namespace
                .and_then(|namespace| namespaces.get(namespace))
                .is_some_and(|labels| selector.matches(labels))
        } else {
            true
        };
        namespace_held
            && held
                .selector
                .as_ref()
                .is_none_or(|selector| selector.matches(labels))
    }
}

/// The hash key of a controlled object: its controller's (the first owner reference with
/// `controller: true`), as the sharder computes it; `None` without one, or with one the
/// sharder cannot read (it leaves such objects unassigned).
fn controller_key(metadata: &Value) -> Option<String> {
    let references = metadata["ownerReferences"].as_array()?;
    let controller = references
        .iter()
        .find(|reference| reference["controller"] == true)?;
    let (api_version, kind, name) = (
        string(&controller["apiVersion"]),
        string(&controller["kind"]),
        string(&controller["name"]),
    );
    if api_version.is_empty() || kind.is_empty() || name.is_empty() {
        return None;
    }
    let group = match api_version.matches('/').count() {
        0 => "",
        1 => api_version.split_once('/').map_or("", |(group, _)| group),
        _ => return None,
    };
    Some(hash_key_for_object(
        group,
        kind,
        metadata["namespace"].as_str(),
        name,
    ))
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
