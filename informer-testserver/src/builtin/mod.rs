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

use self::subresource::Subresource;

/// A built-in resource as kube-apiserver serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BuiltinResource {
    /// API group, empty for the core group.
    pub(crate) group: &'static str,
    /// Version within the group.
    pub(crate) version: &'static str,
    /// Kind of its objects.
    pub(crate) kind: &'static str,
    /// Plural name in URLs.
    pub(crate) plural: &'static str,
    /// Whether its objects live in namespaces.
    pub(crate) namespaced: bool,
    /// Short names discovery lists (`kubectl get po`).
    pub(crate) short_names: &'static [&'static str],
    /// Categories discovery lists (`kubectl get all` reads `all`).
    pub(crate) categories: &'static [&'static str],
    /// The verbs served; others answer `405`.
    pub(crate) verbs: &'static [&'static str],
    /// Whether it is stored or computed.
    pub(crate) served_as: ServedAs,
    /// Whether the `status` subresource is served.
    pub(crate) status: bool,
    /// Whether the `scale` subresource is served (of `.spec.replicas`).
    pub(crate) scale: bool,
    /// The other subresources, in discovery's order.
    pub(crate) subresources: &'static [Subresource],
    /// What its strategy does with `metadata.generation`.
    pub(crate) generation: Generation,
}

/// How a resource's requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServedAs {
    /// From the store, by the verbs' handlers.
    Stored,
    /// A review (TokenReview, the access reviews): created and answered, never stored.
    Review,
    /// `componentstatuses`: read-only, computed on each read.
    ComponentStatuses,
    /// The legacy `bindings` resource, the form of `pods/binding` without a pod in the URL.
    LegacyBindings,
}

/// What a kind's strategy does with `metadata.generation` (`write/generation.rs` applies it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generation {
    /// Nothing: the kind keeps no generation.
    None,
    /// 1 on create, +1 when anything but `metadata` and `status` changes (the `spec`, or the
    /// `webhooks` of a webhook configuration, the `endpoints` of an EndpointSlice).
    Spec,
    /// As [`Spec`](Self::Spec), and +1 when this field of the metadata changes: a Deployment's
    /// `annotations` (its controller copies them to its ReplicaSets), an EndpointSlice's
    /// `labels`.
    SpecAnd(&'static str),
    /// 1 on create, never bumped (a PriorityClass, whose spec cannot change).
    OnCreate,
    /// 1 on create, +1 when anything but `metadata` changes: a custom resource without a
    /// `status` subresource, whose status is part of what its clients write.
    AllButMetadata,
}

/// Every verb of a stored resource.
pub(crate) const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// The verbs of resources that are only created and answered, never stored (the reviews,
/// `bindings`).
const CREATE_ONLY: &[&str] = &["create"];
/// The verbs of `componentstatuses`.
const READ_ONLY: &[&str] = &["get", "list"];
/// The verbs of `namespaces`: no delete-collection.
const NAMESPACE_VERBS: &[&str] = &["create", "delete", "get", "list", "patch", "update", "watch"];

impl BuiltinResource {
    /// A stored resource of objects in namespaces, with every verb and nothing else.
    const fn namespaced(
        group: &'static str,
        version: &'static str,
        kind: &'static str,
        plural: &'static str,
    ) -> Self {
        Self {
            group,
            version,
            kind,
            plural,
            namespaced: true,
            short_names: &[],
            categories: &[],
            verbs: ALL_VERBS,
            served_as: ServedAs::Stored,
            status: false,
            scale: false,
            subresources: &[],
            generation: Generation::None,
        }
    }

    /// A stored resource of cluster-scoped objects, with every verb and nothing else.
    const fn cluster(
        group: &'static str,
        version: &'static str,
        kind: &'static str,
        plural: &'static str,
    ) -> Self {
        Self {
            namespaced: false,
            ..Self::namespaced(group, version, kind, plural)
        }
    }

    /// The same resource served at another version of its group.
    const fn at_version(self, version: &'static str) -> Self {
        Self { version, ..self }
    }

    const fn short_names(self, short_names: &'static [&'static str]) -> Self {
        Self { short_names, ..self }
    }

    const fn categories(self, categories: &'static [&'static str]) -> Self {
        Self { categories, ..self }
    }

    const fn verbs(self, verbs: &'static [&'static str]) -> Self {
        Self { verbs, ..self }
    }

    /// Computed rather than stored: the verbs follow (create only, or read only).
    const fn served_as(self, served_as: ServedAs) -> Self {
        let verbs = match served_as {
            ServedAs::Stored => self.verbs,
            ServedAs::Review | ServedAs::LegacyBindings => CREATE_ONLY,
            ServedAs::ComponentStatuses => READ_ONLY,
        };
        Self {
            served_as,
            verbs,
            ..self
        }
    }

    const fn status(self) -> Self {
        Self { status: true, ..self }
    }

    const fn scale(self) -> Self {
        Self { scale: true, ..self }
    }

    const fn subresources(self, subresources: &'static [Subresource]) -> Self {
        Self { subresources, ..self }
    }

    const fn generation(self, generation: Generation) -> Self {
        Self { generation, ..self }
    }

    /// `v1` or `group/version`.
    #[cfg(test)]
    pub(crate) fn api_version(&self) -> String {
        match self.group {
            "" => self.version.to_string(),
            group => format!("{group}/{}", self.version),
        }
    }

    /// The subresource `name` besides `status` and `scale`, if served.
    pub(crate) fn subresource(&self, name: &str) -> Option<&'static Subresource> {
        self.subresources.iter().find(|s| s.name == name)
    }
}

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
