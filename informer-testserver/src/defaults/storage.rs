//! The defaults of storage: volumes, their claims and classes.

use serde_json::{Value, json};

use super::fields::{default, object};

/// A PersistentVolumeClaim: its spec's, and its status phase `Pending`.
pub(super) fn claim(claim: &mut Value) {
    if let Some(spec) = object(claim, "spec") {
        claim_spec(spec);
    }
    if let Some(status) = object(claim, "status") {
        default(status, "phase", || json!("Pending"));
    }
}

/// The spec of a claim (also in StatefulSets' `volumeClaimTemplates` and ephemeral volumes):
/// a filesystem volume.
pub(super) fn claim_spec(spec: &mut Value) {
    default(spec, "volumeMode", || json!("Filesystem"));
}

/// A PersistentVolume: `Retain`, a filesystem, status phase `Pending`.
pub(super) fn volume(volume: &mut Value) {
    if let Some(spec) = object(volume, "spec") {
        default(spec, "persistentVolumeReclaimPolicy", || json!("Retain"));
        default(spec, "volumeMode", || json!("Filesystem"));
    }
    if let Some(status) = object(volume, "status") {
        default(status, "phase", || json!("Pending"));
    }
}

/// A StorageClass: volumes deleted with their claims, bound at once.
pub(super) fn class(class: &mut Value) {
    default(class, "reclaimPolicy", || json!("Delete"));
    default(class, "volumeBindingMode", || json!("Immediate"));
}
