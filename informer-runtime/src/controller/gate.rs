//! [`Gate`]: decides, before each reconcile, whether this process reconciles an object at all
//! (a shard of a [ring](crate::sharding) reconciles only the objects assigned to it), and
//! [`Gated`], the gate with the keys the workers are working on now.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, PoisonError},
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Api,
    api::{Patch, PatchParams},
};

use crate::{factory::TypedResource, key::ObjectKey, source::ApiScope};

/// What a gate decides for an object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// Reconcile it here.
    Reconcile,
    /// Another process reconciles it: leave it.
    NotAssigned,
    /// Hand it over: send this JSON merge patch to the object instead of reconciling it.
    HandOver(serde_json::Value),
    /// Not decidable yet: ask again after this delay.
    Later(std::time::Duration),
}

/// Decides which objects a controller reconciles (see [`Decision`]).
pub(crate) trait Gate: Send + Sync {
    /// What to do with the object of `metadata`.
    fn decide(&self, metadata: &ObjectMeta) -> Decision;

    /// Whether an event of the object of `metadata` passes whatever the predicates say (a
    /// hand-over must always be made).
    fn passes_anyway(&self, metadata: &ObjectMeta) -> bool;
}

/// What a worker does with a gated object.
pub(crate) enum Verdict {
    /// Reconcile it.
    Reconcile,
    /// Handed over (or failed to; see the error).
    HandedOver(Result<(), kube::Error>),
    /// Reconciled elsewhere: leave it.
    NotAssigned,
    /// Judge it again after this delay.
    Later(std::time::Duration),
}

/// A controller's gate, and the keys its workers are judging or reconciling now.
pub(crate) struct Gated {
    gate: Arc<dyn Gate>,
    /// Keys a worker is working on now (a shard's drain sweep leaves them alone).
    working: Mutex<HashSet<ObjectKey>>,
}

/// Marks a key as being worked on until dropped.
pub(crate) struct Working<'a> {
    gated: &'a Gated,
    key: ObjectKey,
}

impl Drop for Working<'_> {
    fn drop(&mut self) {
        self.gated
            .working
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

impl Gated {
    pub(crate) fn new(gate: Arc<dyn Gate>) -> Arc<Self> {
        Arc::new(Self {
            gate,
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
            gated: self,
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

    /// See [`Gate::passes_anyway`].
    pub(crate) fn passes_anyway(&self, metadata: &ObjectMeta) -> bool {
        self.gate.passes_anyway(metadata)
    }

    /// Decides, and for an object to hand over sends the gate's patch (conditional on the
    /// version read when the gate says so: a 409 when it changed since, and its next event
    /// brings it back).
    pub(crate) async fn judge<K: TypedResource>(&self, client: &kube::Client, object: &K) -> Verdict {
        match self.gate.decide(object.meta()) {
            Decision::Reconcile => Verdict::Reconcile,
            Decision::NotAssigned => Verdict::NotAssigned,
            Decision::HandOver(patch) => Verdict::HandedOver(hand_over(client, object, &patch).await),
            Decision::Later(delay) => Verdict::Later(delay),
        }
    }
}

async fn hand_over<K: TypedResource>(
    client: &kube::Client,
    object: &K,
    patch: &serde_json::Value,
) -> Result<(), kube::Error> {
    let metadata = object.meta();
    let name = metadata.name.as_deref().unwrap_or_default();
    let api: Api<K> = <K::Scope as ApiScope>::api::<K>(client.clone(), metadata.namespace.as_deref());
    api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map(drop)
}
