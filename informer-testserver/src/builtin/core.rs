//! The core group (`/api/v1`): pods, services, nodes, namespaces and the rest of `pkg/registry/core`.

use super::description::{BuiltinResource, Generation, NAMESPACE_VERBS, ServedAs};
use super::subresource::{
    NODE_SUBRESOURCES, POD_SUBRESOURCES, SERVICE_ACCOUNT_SUBRESOURCES, SERVICE_SUBRESOURCES,
};

pub(crate) const NAMESPACE: BuiltinResource = BuiltinResource::cluster("", "v1", "Namespace", "namespaces")
    .short_names(&["ns"])
    .verbs(NAMESPACE_VERBS)
    .status();

pub(crate) const POD: BuiltinResource = BuiltinResource::namespaced("", "v1", "Pod", "pods")
    .short_names(&["po"])
    .categories(&["all"])
    .status()
    .subresources(POD_SUBRESOURCES)
    .generation(Generation::Spec);

pub(crate) const CONFIG_MAP: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "ConfigMap", "configmaps").short_names(&["cm"]);

pub(crate) const SECRET: BuiltinResource = BuiltinResource::namespaced("", "v1", "Secret", "secrets");

pub(crate) const SERVICE: BuiltinResource = BuiltinResource::namespaced("", "v1", "Service", "services")
    .short_names(&["svc"])
    .categories(&["all"])
    .status()
    .subresources(SERVICE_SUBRESOURCES);

pub(crate) const NODE: BuiltinResource = BuiltinResource::cluster("", "v1", "Node", "nodes")
    .short_names(&["no"])
    .status()
    .subresources(NODE_SUBRESOURCES);

pub(crate) const EVENT: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "Event", "events").short_names(&["ev"]);

pub(crate) const SERVICE_ACCOUNT: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "ServiceAccount", "serviceaccounts")
        .short_names(&["sa"])
        .subresources(SERVICE_ACCOUNT_SUBRESOURCES);

pub(crate) const ENDPOINTS: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "Endpoints", "endpoints").short_names(&["ep"]);

pub(crate) const PERSISTENT_VOLUME: BuiltinResource =
    BuiltinResource::cluster("", "v1", "PersistentVolume", "persistentvolumes")
        .short_names(&["pv"])
        .status();

pub(crate) const PERSISTENT_VOLUME_CLAIM: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims")
        .short_names(&["pvc"])
        .status();

pub(crate) const REPLICATION_CONTROLLER: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "ReplicationController", "replicationcontrollers")
        .short_names(&["rc"])
        .categories(&["all"])
        .status()
        .scale()
        .generation(Generation::Spec);

pub(crate) const RESOURCE_QUOTA: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "ResourceQuota", "resourcequotas")
        .short_names(&["quota"])
        .status();

pub(crate) const LIMIT_RANGE: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "LimitRange", "limitranges").short_names(&["limits"]);

pub(crate) const POD_TEMPLATE: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "PodTemplate", "podtemplates").generation(Generation::Spec);

pub(crate) const BINDING: BuiltinResource =
    BuiltinResource::namespaced("", "v1", "Binding", "bindings").served_as(ServedAs::LegacyBindings);

pub(crate) const COMPONENT_STATUS: BuiltinResource =
    BuiltinResource::cluster("", "v1", "ComponentStatus", "componentstatuses")
        .short_names(&["cs"])
        .served_as(ServedAs::ComponentStatuses);
