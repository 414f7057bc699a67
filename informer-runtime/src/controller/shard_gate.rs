//! [`ShardGate`]: a sharded controller reconciles only the objects assigned to its shard, and
//! hands over the ones the sharder drains (see [`sharding`](crate::sharding)).

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, PoisonError},
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Api,
    api::{Patch, PatchParams},
};

use crate::{
    factory::TypedResource,
    key::ObjectKey,
    sharding::{Assignment, Shard},
    source::ApiScope,
};

/// What a worker does with an object of a sharded controller.
pub(crate) enum Verdict {
    /// Assigned to this shard: reconcile it.
    Reconcile,
    /// Drained: the shard let it go (or failed to; see the error).
    HandedOver(Result<(), kube::Error>),
    /// Assigned elsewhere: leave it.
    NotAssigned,
}

/// The shard a controller runs in, and the keys its workers are processing now.
pub(crate) struct ShardGate {
    shard: Shard,
    /// Keys a worker is judging or reconciling now: the shard's drain sweep leaves them alone.
    working: Mutex<HashSet<ObjectKey>>,
}

/// Marks a key as being worked on until dropped.
pub(crate) struct Working<'a> {
    gate: &'a ShardGate,
    key: ObjectKey,
}

impl Drop for Working<'_> {
    fn drop(&mut self) {
        self.gate
            .working
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

impl ShardGate {
    pub(crate) fn new(shard: Shard) -> Arc<Self> {
        Arc::new(Self {
            shard,
            working: Mutex::default(),
        })
    }

    /// Marks `key` as being worked on (judged, reconciled) until the guard is dropped.
    pub(crate) fn working_on(&self, key: &ObjectKey) -> Working<'_> {
        self.working
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone());
        Working {
            gate: self,
            key: key.clone(),
        }
    }

    /// Whether a worker is working on `key` now.
    pub(crate) fn is_working_on(&self, key: &ObjectKey) -> bool {
        self.working
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(key)
    }

    /// Whether an event of an object with `metadata` passes whatever the predicates say: a
    /// drain must always be acknowledged.
    pub(crate) fn passes_anyway(&self, metadata: &ObjectMeta) -> bool {
        self.shard.is_drained(metadata)
    }

    /// Decides, and for a drained object acknowledges the drain: removes the shard and drain
    /// labels, conditional on the version read (a 409 when it changed since; its next event
    /// brings it back).
    pub(crate) async fn judge<K: TypedResource>(&self, client: &kube::Client, object: &K) -> Verdict {
        match self.shard.assignment(object.meta()) {
            Assignment::Ours => Verdict::Reconcile,
            Assignment::NotOurs => Verdict::NotAssigned,
            Assignment::Draining => Verdict::HandedOver(self.acknowledge(client, object).await),
        }
    }

    async fn acknowledge<K: TypedResource>(
        &self,
        client: &kube::Client,
        object: &K,
    ) -> Result<(), kube::Error> {
        let metadata = object.meta();
        let name = metadata.name.as_deref().unwrap_or_default();
        let api: Api<K> = <K::Scope as ApiScope>::api::<K>(client.clone(), metadata.namespace.as_deref());
        let patch = self.shard.acknowledge_patch(metadata.resource_version.as_deref());
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::sharding::{
        ControllerRing, RingResource,
        labels::{drain_label, shard_label},
    };

    fn gate() -> Arc<ShardGate> {
        let ring = ControllerRing::new("operator")
            .and_then(|ring| ring.resource(RingResource::of::<ConfigMap>()))
            .expect("a valid ring");
        ShardGate::new(Shard::new(ring, "operator-0", "default").expect("a valid shard"))
    }

    fn labelled(labels: &[(String, &str)]) -> ObjectMeta {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(key, value)| (key.clone(), (*value).to_owned()))
            .collect();
        ObjectMeta {
            labels: Some(labels),
            ..ObjectMeta::default()
        }
    }

    // kubernetes-controller-sharding: pkg/shard/controller/predicate_test.go, "should handle
    // drained objects" and "should handle assigned and drained objects" (whatever the main
    // predicate says), and "should not handle assigned objects" when the main predicate
    // returns false: the gate lets drains through and leaves the rest to the predicates.
    #[test]
    fn drains_pass_whatever_the_predicates_say_and_nothing_else_does() {
        let gate = gate();
        let shard = (shard_label("operator"), "operator-0");
        let drain = (drain_label("operator"), "true");
        assert!(gate.passes_anyway(&labelled(std::slice::from_ref(&drain))));
        assert!(gate.passes_anyway(&labelled(&[shard.clone(), drain])));
        assert!(!gate.passes_anyway(&labelled(&[shard])));
        assert!(!gate.passes_anyway(&ObjectMeta::default()));
        let other_ring = (drain_label("other"), "true");
        assert!(!gate.passes_anyway(&labelled(&[other_ring])));
    }
}
