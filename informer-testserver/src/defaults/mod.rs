//! The defaults of built-in kinds: what kube-apiserver sets on the fields a write leaves
//! unset, as its Go types' `SetDefaults_*` functions do when a request body is decoded.
//!
//! A controller reads these fields back although it never wrote them (a pod's
//! `restartPolicy`, a Deployment's `strategy`, a Service's `targetPort`); a test server that
//! left them out would hide the controller that takes them for drift and updates forever.
//!
//! [`set_defaults`] runs on every create and update body of a built-in kind, before the write
//! compares it with the stored object; [`set_new_status`] resets the status a client's create
//! gives, and [`set_create_defaults`] adds what kube-apiserver's strategies set on a new
//! object only (a pod's `Pending` phase, a Job's selector).
//! Custom resources take their defaults from their CRD's schema instead.

mod apps;
mod batch;
mod cluster;
mod core;
mod fields;
mod new_status;
mod pod;
mod storage;
#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::registry::ResourceType;

pub(crate) use fields::{quantity, same_quantity};
pub(crate) use new_status::{GivenStatus, set_new_status};
pub(crate) use pod::qos_class;

/// Sets the defaults of `object`, a body of kind `rt`, when `rt` is a built-in kind.
pub(crate) fn set_defaults(rt: &ResourceType, object: &mut Value) {
    let default: fn(&mut Value) = match (rt.group.as_str(), rt.version.as_str(), rt.kind.as_str()) {
        ("", "v1", "Pod") => pod::pod,
        ("", "v1", "PodTemplate") => core::pod_template,
        ("", "v1", "ReplicationController") => core::replication_controller,
        ("", "v1", "Service") => core::service,
        ("", "v1", "Endpoints") => core::endpoints,
        ("", "v1", "Secret") => core::secret,
        ("", "v1", "Node") => core::node,
        ("", "v1", "LimitRange") => core::limit_range,
        ("", "v1", "PersistentVolume") => storage::volume,
        ("", "v1", "PersistentVolumeClaim") => storage::claim,
        ("apps", "v1", "Deployment") => apps::deployment,
        ("apps", "v1", "ReplicaSet") => apps::replica_set,
        ("apps", "v1", "StatefulSet") => apps::stateful_set,
        ("apps", "v1", "DaemonSet") => apps::daemon_set,
        ("batch", "v1", "Job") => batch::job,
        ("batch", "v1", "CronJob") => batch::cron_job,
        ("storage.k8s.io", "v1", "StorageClass") => storage::class,
        (group, version, kind) => match cluster::defaults_of(group, version, kind) {
            Some(default) => default,
            None => return,
        },
    };
    default(object);
}

/// Sets what kube-apiserver's strategies give a new object of kind `rt` once it has its name
/// and uid, where the body leaves it unset.
pub(crate) fn set_create_defaults(rt: &ResourceType, object: &mut Value) {
    match (rt.group.as_str(), rt.version.as_str(), rt.kind.as_str()) {
        ("", "v1", "Pod") => pod::new_status(object),
        ("batch", "v1", "Job") => batch::new_job(object),
        _ => {}
    }
}
