//! [`ShardGate`]: a sharded controller reconciles only the objects assigned to its shard, and
//! hands over the ones the sharder drains (see [`sharding`](crate::sharding)).

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Api,
    api::{Patch, PatchParams},
};

use crate::{
    factory::TypedResource,
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

/// The shard a controller runs in.
pub(crate) struct ShardGate {
    shard: Shard,
}

impl ShardGate {
    pub(crate) fn new(shard: Shard) -> Arc<Self> {
        Arc::new(Self { shard })
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
