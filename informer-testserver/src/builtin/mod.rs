//! What kube-apiserver serves built in, one named description per resource, as its
//! `pkg/registry/<group>/<resource>`: group, version, kind, plural, scope, short names,
//! categories, verbs, subresources and what its strategy does with `metadata.generation`. One
//! file per API group; [`ALL`] lists them in the order the server registers them.
//!
//! What is served is what kube-apiserver enables by default at the Kubernetes version of
//! k8s-openapi's newest module (1.37): every GA group version and no beta or alpha one (the
//! `stableAPIGroupVersionsEnabledByDefault` lists of `pkg/controlplane`).
//!
//! Everything about one resource is read from its description: the registry builds its
//! [`ResourceType`](crate::ResourceType) from it, discovery lists its verbs, categories and
//! subresources, routing finds its subresources' handlers, and writes its generation rule.

mod admissionregistration;
mod apiextensions;
mod apiregistration;
mod apps;
mod authentication;
mod authorization;
mod autoscaling;
mod batch;
mod certificates;
mod coordination;
mod core;
mod description;
mod discovery;
mod events;
mod flowcontrol;
mod networking;
mod node;
mod policy;
pub(crate) mod priority;
mod rbac;
mod resource;
mod scheduling;
mod storage;
mod storagemigration;
pub(crate) mod subresource;

pub(crate) use self::description::{ALL_VERBS, BuiltinResource, Generation, ServedAs};

/// Every built-in resource, in the order the server registers them.
pub(crate) const ALL: &[&BuiltinResource] = &[
    &self::core::NAMESPACE,
    &self::core::POD,
    &self::core::CONFIG_MAP,
    &self::core::SECRET,
    &self::core::SERVICE,
    &self::core::NODE,
    &self::core::EVENT,
    &self::core::SERVICE_ACCOUNT,
    &self::core::ENDPOINTS,
    &self::core::PERSISTENT_VOLUME,
    &self::core::PERSISTENT_VOLUME_CLAIM,
    &self::core::REPLICATION_CONTROLLER,
    &self::core::RESOURCE_QUOTA,
    &self::core::LIMIT_RANGE,
    &self::core::POD_TEMPLATE,
    &apps::DEPLOYMENT,
    &apps::REPLICA_SET,
    &apps::STATEFUL_SET,
    &apps::DAEMON_SET,
    &apps::CONTROLLER_REVISION,
    &batch::JOB,
    &batch::CRON_JOB,
    &coordination::LEASE,
    &events::EVENT,
    &rbac::ROLE,
    &rbac::ROLE_BINDING,
    &rbac::CLUSTER_ROLE,
    &rbac::CLUSTER_ROLE_BINDING,
    &storage::CSI_NODE,
    &apiextensions::CUSTOM_RESOURCE_DEFINITION,
    &self::core::BINDING,
    &self::core::COMPONENT_STATUS,
    &apiregistration::API_SERVICE,
    &authentication::SELF_SUBJECT_REVIEW,
    &authentication::TOKEN_REVIEW,
    &authorization::LOCAL_SUBJECT_ACCESS_REVIEW,
    &authorization::SELF_SUBJECT_ACCESS_REVIEW,
    &authorization::SELF_SUBJECT_RULES_REVIEW,
    &authorization::SUBJECT_ACCESS_REVIEW,
    &autoscaling::HORIZONTAL_POD_AUTOSCALER_V2,
    &autoscaling::HORIZONTAL_POD_AUTOSCALER_V1,
    &certificates::CERTIFICATE_SIGNING_REQUEST,
    &certificates::CLUSTER_TRUST_BUNDLE,
    &certificates::POD_CERTIFICATE_REQUEST,
    &networking::IP_ADDRESS,
    &networking::INGRESS_CLASS,
    &networking::INGRESS,
    &networking::NETWORK_POLICY,
    &networking::SERVICE_CIDR,
    &policy::POD_DISRUPTION_BUDGET,
    &storage::CSI_DRIVER,
    &storage::CSI_STORAGE_CAPACITY,
    &storage::STORAGE_CLASS,
    &storage::VOLUME_ATTACHMENT,
    &storage::VOLUME_ATTRIBUTES_CLASS,
    &admissionregistration::MUTATING_ADMISSION_POLICY,
    &admissionregistration::MUTATING_ADMISSION_POLICY_BINDING,
    &admissionregistration::MUTATING_WEBHOOK_CONFIGURATION,
    &admissionregistration::VALIDATING_ADMISSION_POLICY,
    &admissionregistration::VALIDATING_ADMISSION_POLICY_BINDING,
    &admissionregistration::VALIDATING_WEBHOOK_CONFIGURATION,
    &scheduling::PRIORITY_CLASS,
    &node::RUNTIME_CLASS,
    &discovery::ENDPOINT_SLICE,
    &flowcontrol::FLOW_SCHEMA,
    &flowcontrol::PRIORITY_LEVEL_CONFIGURATION,
    &resource::DEVICE_CLASS,
    &resource::DEVICE_TAINT_RULE,
    &resource::RESOURCE_CLAIM,
    &resource::RESOURCE_CLAIM_TEMPLATE,
    &resource::RESOURCE_SLICE,
    &storagemigration::STORAGE_VERSION_MIGRATION,
];

/// The built-in resource served at `group/version/plural`, if any.
pub(crate) fn find(group: &str, version: &str, plural: &str) -> Option<&'static BuiltinResource> {
    ALL.iter()
        .copied()
        .find(|b| b.group == group && b.version == version && b.plural == plural)
}

#[cfg(test)]
mod tests;
