//! [`Controller::shard`]: a controller that reconciles only its shard's objects, and hands
//! over the ones the sharder drains. A [`ShardGate`], the shard and the controller's type, is
//! the controller's [`Gate`](crate::controller::gate::Gate).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    shard::{Assignment, Shard},
    term_fence::Standing,
};
use crate::{
    controller::{
        Controller,
        gate::{Decision, Gate},
    },
    factory::TypedResource,
};

/// How soon an object cached before the term is tried again while the term's list has not
/// answered.
const FENCE_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

/// The gate of a sharded controller of objects of one group and kind.
struct ShardGate {
    shard: Shard,
    group: String,
    kind: String,
}

impl Gate for ShardGate {
    /// An object labelled for this shard is reconciled, unless the shard's
    /// [term fence](super::term_fence) says a newer version of it may have left the shard; a
    /// drained one is let go (its shard and drain labels removed, conditional on the version
    /// read); any other is left alone.
    fn decide(&self, metadata: &ObjectMeta) -> Decision {
        match self.shard.assignment(metadata) {
            Assignment::Ours => {
                match self
                    .shard
                    .current_fence()
                    .standing(&self.group, &self.kind, metadata)
                {
                    Standing::Current => Decision::Reconcile,
                    Standing::Unknown => Decision::Later(FENCE_RETRY),
                    Standing::Moved => {
                        tracing::debug!(shard = %self.shard.name(), object = ?metadata.name, "not reconciled: the shard's list at the start of its term no longer held it");
                        Decision::NotAssigned
                    }
                }
            }
            Assignment::NotOurs => Decision::NotAssigned,
            Assignment::Draining => {
                Decision::HandOver(self.shard.acknowledge_patch(metadata.resource_version.as_deref()))
            }
        }
    }

    fn passes_anyway(&self, metadata: &ObjectMeta) -> bool {
        self.shard.is_drained(metadata)
    }
}

impl<K: TypedResource> Controller<K> {
    /// Runs the controller as `shard` of its ring (see [`sharding`](crate::sharding)): it
    /// reconciles only the objects labelled for this shard; an object the sharder drains is
    /// not reconciled, the controller removes its shard and drain labels instead (the drain's
    /// events pass every predicate). A [manager with a shard](crate::manager::Builder::shard)
    /// sets this on its controllers; the factory must be
    /// [restricted to the shard](Shard::restrict_factory) for the cache to hold only the
    /// shard's objects (it does on such a manager).
    pub fn shard(self, shard: &Shard) -> Self {
        if !shard.ring().contains::<K>() {
            tracing::warn!(controller = %self.controller_name(), ring = shard.ring().name(), "a controller of a resource the ring does not divide: every shard reconciles every object");
            return self;
        }
        self.gated(std::sync::Arc::new(ShardGate {
            shard: shard.clone(),
            group: K::group(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
        }))
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

    fn shard() -> ShardGate {
        let ring = ControllerRing::new("operator")
            .and_then(|ring| ring.resource(RingResource::of::<ConfigMap>()))
            .expect("a valid ring");
        ShardGate {
            shard: Shard::new(ring, "operator-0", "default").expect("a valid shard"),
            group: String::new(),
            kind: "ConfigMap".into(),
        }
    }

    fn labelled(labels: &[(String, &str)]) -> ObjectMeta {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(key, value)| (key.clone(), (*value).to_owned()))
            .collect();
        ObjectMeta {
            labels: Some(labels),
            resource_version: Some("7".to_owned()),
            ..ObjectMeta::default()
        }
    }

    // kubernetes-controller-sharding: pkg/shard/controller/predicate_test.go, "should handle
    // drained objects" and "should handle assigned and drained objects" (whatever the main
    // predicate says), and "should not handle assigned objects" when the main predicate
    // returns false: the gate lets drains through and leaves the rest to the predicates.
    #[test]
    fn drains_pass_whatever_the_predicates_say_and_nothing_else_does() {
        let shard = shard();
        let ours = (shard_label("operator"), "operator-0");
        let drain = (drain_label("operator"), "true");
        assert!(shard.passes_anyway(&labelled(std::slice::from_ref(&drain))));
        assert!(shard.passes_anyway(&labelled(&[ours.clone(), drain])));
        assert!(!shard.passes_anyway(&labelled(&[ours])));
        assert!(!shard.passes_anyway(&ObjectMeta::default()));
        let other_ring = (drain_label("other"), "true");
        assert!(!shard.passes_anyway(&labelled(&[other_ring])));
    }

    // kubernetes-controller-sharding: pkg/shard/controller/reconciler.go: a drained object is
    // not reconciled; its shard and drain labels are removed with an optimistic lock.
    #[test]
    fn the_shard_reconciles_its_objects_and_hands_over_drained_ones_at_the_version_read() {
        let shard = shard();
        let ours = (shard_label("operator"), "operator-0");
        let drain = (drain_label("operator"), "true");
        assert_eq!(
            shard.decide(&labelled(std::slice::from_ref(&ours))),
            Decision::Reconcile
        );
        let theirs = (shard_label("operator"), "operator-1");
        assert_eq!(shard.decide(&labelled(&[theirs])), Decision::NotAssigned);
        let Decision::HandOver(patch) = shard.decide(&labelled(&[ours, drain])) else {
            panic!("a drained object of this shard is handed over");
        };
        assert_eq!(patch["metadata"]["resourceVersion"], "7");
        assert!(patch["metadata"]["labels"][shard_label("operator")].is_null());
        assert!(patch["metadata"]["labels"][drain_label("operator")].is_null());
    }
}
