//! The `rbac.authorization.k8s.io` group.

use super::description::BuiltinResource;

pub(crate) const ROLE: BuiltinResource =
    BuiltinResource::namespaced("rbac.authorization.k8s.io", "v1", "Role", "roles");

pub(crate) const ROLE_BINDING: BuiltinResource =
    BuiltinResource::namespaced("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings");

pub(crate) const CLUSTER_ROLE: BuiltinResource =
    BuiltinResource::cluster("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles");

pub(crate) const CLUSTER_ROLE_BINDING: BuiltinResource = BuiltinResource::cluster(
    "rbac.authorization.k8s.io",
    "v1",
    "ClusterRoleBinding",
    "clusterrolebindings",
);
