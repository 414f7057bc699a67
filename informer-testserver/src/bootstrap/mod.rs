//! The objects a fresh kube-apiserver holds before anyone writes, created when the server starts:
//!
//! - the namespaces `default`, `kube-system`, `kube-public` and `kube-node-lease`, `Active`
//!   with the `kubernetes` finalizer, as kube-apiserver's system namespaces controller creates
//!   them;
//! - the `default/kubernetes` Service with its Endpoints and EndpointSlice, which point at the
//!   server itself ([`apiserver_service`]);
//! - the bootstrap RBAC ClusterRoles and ClusterRoleBindings a cluster has for its users
//!   (`cluster-admin`, `admin`, `edit`, `view`, ...), marked as kube-apiserver marks them
//!   ([`rbac`]);
//! - an APIService per served group version ([`api_services`]), as the aggregator registers
//!   the local ones;
//! - the PriorityClasses `system-node-critical` and `system-cluster-critical`.
//!
//! They are created as any create request creates objects, so each has its own
//! resourceVersion, uid and creationTimestamp, and a watch from resourceVersion 0 sees them
//! as ADDED events.

pub(crate) mod api_services;
mod apiserver_service;
mod object;
mod rbac;

use std::net::SocketAddr;

use object::BootstrapObject;

use crate::status::ApiError;
use crate::storage::state::State;

/// The namespaces kube-apiserver creates at start.
pub(crate) const SYSTEM_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// The namespaces kube-apiserver creates at start.
fn namespaces() -> Vec<BootstrapObject> {
    SYSTEM_NAMESPACES
        .iter()
        .map(|name| {
            BootstrapObject::new(
                "",
                "v1",
                "namespaces",
                serde_json::json!({"metadata": {"name": name}}),
            )
        })
        .collect()
}

/// The PriorityClasses kube-apiserver creates at start, for the pods the cluster cannot do
/// without.
fn priority_classes() -> Vec<BootstrapObject> {
    [
        ("system-node-critical", 2_000_001_000, "Used for system critical pods that must not be moved from their current node."),
        ("system-cluster-critical", 2_000_000_000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
    ]
    .into_iter()
    .map(|(name, value, description)| {
        BootstrapObject::new(
            "scheduling.k8s.io",
            "v1",
            "priorityclasses",
            serde_json::json!({"metadata": {"name": name}, "value": value, "description": description}),
        )
    })
    .collect()
}

/// Every object of a fresh kube-apiserver listening on `address`, in the order they are
/// created: namespaces first, then what lives in them, then the cluster-wide RBAC objects and
/// PriorityClasses.
pub(crate) fn bootstrap_objects(address: SocketAddr) -> Vec<BootstrapObject> {
    let mut objects = namespaces();
    objects.extend(apiserver_service::objects(address));
    objects.extend(rbac::cluster_roles());
    objects.extend(rbac::cluster_role_bindings());
    objects.extend(priority_classes());
    objects
}

/// Creates the objects of a fresh kube-apiserver listening on `address` in `state`. Objects
/// of resources the server does not serve are left out. Fails with the first object the
/// store refuses, named by `plural/namespace/name`.
pub(crate) fn create_bootstrap_objects(
    state: &mut State,
    address: SocketAddr,
) -> Result<(), (String, Box<ApiError>)> {
    for item in bootstrap_objects(address) {
        let Some(rt) = state.registry.get(item.group, item.version, item.plural).cloned() else {
            continue;
        };
        let name = item.describe();
        let ns = item.object["metadata"]["namespace"].as_str().map(str::to_string);
        state
            .write()
            .create_with_status(&rt, ns.as_deref(), item.object)
            .map_err(|e| (name, Box::new(e)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
