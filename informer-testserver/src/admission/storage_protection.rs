//! Claims and volumes in use are not deleted from under their users: kube-apiserver's
//! `StorageObjectInUseProtection` admission gives every new PersistentVolumeClaim the
//! `kubernetes.io/pvc-protection` finalizer and every new PersistentVolume the
//! `kubernetes.io/pv-protection` one, and kube-controller-manager's protection controllers
//! remove them from a deleted object once nothing uses it:
//!
//! - a claim while a scheduled pod names it in a `persistentVolumeClaim` volume (until the pod
//!   is gone), or while a pod that is not shut down has it as its generic ephemeral volume;
//! - a volume while it is `Bound`.
//!
//! So deleting an unused claim removes it at once (the delete answers it with its
//! `deletionTimestamp`), and deleting a used one leaves it `Terminating` until its last user
//! goes.

use serde_json::Value;

use crate::admission::context::WriteContext;
use crate::admission::finalizers::{add_finalizer, has_finalizer, remove_finalizer};
use crate::admission::plugin::{Cascade, Plugin};
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::State;
use crate::storage::store::{meta_str, metadata_mut};

/// The finalizer of a claim a pod may use.
pub(crate) const CLAIM_FINALIZER: &str = "kubernetes.io/pvc-protection";
/// The finalizer of a volume a claim may be bound to.
pub(crate) const VOLUME_FINALIZER: &str = "kubernetes.io/pv-protection";

/// The protection of claims and volumes in use, as one write plugin.
pub(crate) struct StorageProtection;

impl Plugin for StorageProtection {
    fn admit_create(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        if let Some(finalizer) = finalizer_of(rt) {
            add_finalizer(metadata_mut(object), finalizer);
        }
        Ok(())
    }

    fn stored(&self, writes: &mut dyn Cascade, rt: &ResourceType, object: &Value) {
        if writes.is_dry_run() || !rt.group.is_empty() {
            return;
        }
        match rt.kind.as_str() {
            "PersistentVolumeClaim" => {
                let namespace = meta_str(object, "namespace").unwrap_or_default().to_owned();
                let name = meta_str(object, "name").unwrap_or_default().to_owned();
                release_claim(writes, &namespace, &name);
            }
            "PersistentVolume" if is_releasable_volume(object) => {
                let name = meta_str(object, "name").unwrap_or_default().to_owned();
                remove_finalizer(writes, rt, &(String::new(), name), VOLUME_FINALIZER);
            }
            "Pod" if is_shut_down(object) => release_claims_of(writes, object),
            _ => {}
        }
    }

    fn removed(&self, writes: &mut dyn Cascade, rt: &ResourceType, object: &Value) {
        if !writes.is_dry_run() && rt.is_core("Pod") {
            release_claims_of(writes, object);
        }
    }
}

fn finalizer_of(rt: &ResourceType) -> Option<&'static str> {
    if rt.is_core("PersistentVolumeClaim") {
        Some(CLAIM_FINALIZER)
    } else if rt.is_core("PersistentVolume") {
        Some(VOLUME_FINALIZER)
    } else {
        None
    }
}

fn is_being_deleted(object: &Value) -> bool {
    object["metadata"]["deletionTimestamp"].is_string()
}

/// A deleted volume that holds the finalizer and is not bound.
fn is_releasable_volume(volume: &Value) -> bool {
    is_being_deleted(volume)
        && has_finalizer(volume, VOLUME_FINALIZER)
        && volume["status"]["phase"] != "Bound"
}

/// Whether the kubelet is done with a pod: it finished, or it was deleted without grace.
fn is_shut_down(pod: &Value) -> bool {
    let phase = &pod["status"]["phase"];
    let force_deleted = is_being_deleted(pod) && pod["metadata"]["deletionGracePeriodSeconds"] == 0;
    force_deleted || phase == "Succeeded" || phase == "Failed"
}

/// Whether `pod` uses the claim `claim`.
fn uses_claim(pod: &Value, claim: &Value) -> bool {
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
        // the kubelet starts no pod whose claim is being deleted: an unscheduled one never will
        return false;
    }
    let pod_name = meta_str(pod, "name").unwrap_or_default();
    let claim_name = meta_str(claim, "name").unwrap_or_default();
    let pod_uid = meta_str(pod, "uid").unwrap_or_default();
    let volumes = pod["spec"]["volumes"].as_array().into_iter().flatten();
    volumes.into_iter().any(|volume| {
        let named = volume["persistentVolumeClaim"]["claimName"] == claim_name;
        let ephemeral = volume["ephemeral"].is_object()
            && !is_shut_down(pod)
            && format!("{pod_name}-{}", volume["name"].as_str().unwrap_or_default()) == claim_name
            && is_controlled_by(claim, pod_uid);
        named || ephemeral
    })
}

fn is_controlled_by(object: &Value, uid: &str) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|owners| owners.iter().any(|o| o["controller"] == true && o["uid"] == uid))
}

/// Removes the protection of the claim `namespace/name` when it is deleted and unused.
fn release_claim(writes: &mut dyn Cascade, namespace: &str, name: &str) {
    let state = writes.state();
    let Some(claims) = state.registry.get("", "v1", "persistentvolumeclaims").cloned() else {
        return;
    };
    let Some(claim) = state.store.get(&claims, &(namespace.to_owned(), name.to_owned())) else {
        return;
    };
    if !is_being_deleted(claim) || !has_finalizer(claim, CLAIM_FINALIZER) {
        return;
    }
    let in_use = state.registry.get("", "v1", "pods").is_some_and(|pods| {
        state
            .store
            .objects(pods)
            .any(|((ns, _), pod)| ns == namespace && uses_claim(pod, claim))
    });
    if !in_use {
        remove_finalizer(
            writes,
            &claims,
            &(namespace.to_owned(), name.to_owned()),
            CLAIM_FINALIZER,
        );
    }
}

/// Checks again the deleted claims `pod` named, now that it is shut down or gone.
fn release_claims_of(writes: &mut dyn Cascade, pod: &Value) {
    let namespace = meta_str(pod, "namespace").unwrap_or_default().to_owned();
    let pod_name = meta_str(pod, "name").unwrap_or_default();
    let claims: Vec<String> = pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(
            |volume| match volume["persistentVolumeClaim"]["claimName"].as_str() {
                Some(claim) => Some(claim.to_owned()),
                None if volume["ephemeral"].is_object() => Some(format!(
                    "{pod_name}-{}",
                    volume["name"].as_str().unwrap_or_default()
                )),
                None => None,
            },
        )
        .collect();
    for claim in claims {
        release_claim(writes, &namespace, &claim);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::namespace_lifecycle::create_test_namespace;
    use crate::registry::{Registry, builtin_types};
    use crate::storage::state::UpdateMode;

    fn state() -> State {
        let mut s = State::new(Registry::with_types(builtin_types()), 100);
        create_test_namespace(&mut s, "ns");
        s
    }

    fn served(s: &State, plural: &str) -> ResourceType {
        s.registry.get("", "v1", plural).cloned().expect("served")
    }

    fn claim(s: &mut State, name: &str) -> Value {
        let rt = served(s, "persistentvolumeclaims");
        let spec = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}});
        s.write()
            .create(&rt, Some("ns"), json!({"metadata": {"name": name}, "spec": spec}))
            .expect("claim created")
    }

    fn pod_using(s: &mut State, name: &str, claim: &str, node: Option<&str>) {
        let rt = served(s, "pods");
        let mut spec = json!({"containers": [{"name": "c", "image": "i"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]});
        if let Some(node) = node {
            spec["nodeName"] = json!(node);
        }
        s.write()
            .create(&rt, Some("ns"), json!({"metadata": {"name": name}, "spec": spec}))
            .expect("pod created");
    }

    fn delete(s: &mut State, plural: &str, ns: Option<&str>, name: &str) -> Value {
        let rt = served(s, plural);
        s.write().delete(&rt, ns, name, &Value::Null).expect("deleted")
    }

    fn exists(s: &State, plural: &str, ns: Option<&str>, name: &str) -> bool {
        s.get(&served(s, plural), ns, name).is_ok()
    }

    // kube: plugin/pkg/admission/storage/storageobjectinuseprotection/admission_test.go,
    // TestAdmit, and pkg/controller/volume/pvcprotection/pvc_protection_controller_test.go,
    // TestPVCProtectionController: its cases of a deleted claim with no pod, with a scheduled
    // pod that uses it and with an unscheduled one.
    #[test]
    fn a_deleted_claim_stays_while_a_scheduled_pod_uses_it() {
        let mut s = state();
        let created = claim(&mut s, "unused");
        assert_eq!(created["metadata"]["finalizers"], json!([CLAIM_FINALIZER]));
        let answer = delete(&mut s, "persistentvolumeclaims", Some("ns"), "unused");
        assert!(
            answer["metadata"]["deletionTimestamp"].is_string(),
            "answered as marked"
        );
        assert!(
            !exists(&s, "persistentvolumeclaims", Some("ns"), "unused"),
            "removed at once"
        );

        claim(&mut s, "data");
        pod_using(&mut s, "pending", "data", None);
        pod_using(&mut s, "web", "data", Some("node-1"));
        delete(&mut s, "persistentvolumeclaims", Some("ns"), "data");
        let held = s
            .get(&served(&s, "persistentvolumeclaims"), Some("ns"), "data")
            .expect("held");
        assert!(held["metadata"]["deletionTimestamp"].is_string());
        delete(&mut s, "pods", Some("ns"), "web");
        assert!(
            !exists(&s, "persistentvolumeclaims", Some("ns"), "data"),
            "released with its user"
        );
    }

    // kube: pkg/controller/volume/pvprotection/pv_protection_controller_test.go,
    // TestPVProtectionController: a deleted volume keeps its finalizer while bound.
    #[test]
    fn a_deleted_volume_stays_while_it_is_bound() {
        let mut s = state();
        let volumes = served(&s, "persistentvolumes");
        let volume = json!({"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}});
        let created = s.write().create(&volumes, None, volume).expect("created");
        assert_eq!(created["metadata"]["finalizers"], json!([VOLUME_FINALIZER]));
        let mut bound = created;
        bound["status"] = json!({"phase": "Bound"});
        s.write()
            .update(&volumes, None, "pv", bound, UpdateMode::Status)
            .expect("bound");
        delete(&mut s, "persistentvolumes", None, "pv");
        let mut held = s.get(&volumes, None, "pv").expect("held while bound");
        held["status"] = json!({"phase": "Released"});
        s.write()
            .update(&volumes, None, "pv", held, UpdateMode::Status)
            .expect("released");
        assert!(!exists(&s, "persistentvolumes", None, "pv"));
    }

    // kube: TestPVCProtectionController's generic ephemeral volume cases: the claim of a pod's
    // ephemeral volume is held until the pod is shut down.
    #[test]
    fn an_ephemeral_claim_stays_until_its_pod_is_shut_down() {
        let mut s = state();
        let pods = served(&s, "pods");
        let spec = json!({"nodeName": "node-1", "containers": [{"name": "c", "image": "i"}],
            "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]});
        let pod = s
            .write()
            .create(
                &pods,
                Some("ns"),
                json!({"metadata": {"name": "job"}, "spec": spec}),
            )
            .expect("pod");
        let claims = served(&s, "persistentvolumeclaims");
        let owner = json!([{"apiVersion": "v1", "kind": "Pod", "name": "job",
            "uid": pod["metadata"]["uid"], "controller": true}]);
        s.write()
            .create(
                &claims,
                Some("ns"),
                json!({"metadata": {"name": "job-scratch", "ownerReferences": owner},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
            )
            .expect("claim");
        delete(&mut s, "persistentvolumeclaims", Some("ns"), "job-scratch");
        assert!(exists(&s, "persistentvolumeclaims", Some("ns"), "job-scratch"));
        let mut done = s.get(&pods, Some("ns"), "job").expect("pod");
        done["status"]["phase"] = json!("Succeeded");
        s.write()
            .update(&pods, Some("ns"), "job", done, UpdateMode::Status)
            .expect("finished");
        assert!(!exists(&s, "persistentvolumeclaims", Some("ns"), "job-scratch"));
    }
}
