//! Admission: what checks and changes an object on its way into storage, and what a write
//! sets off on other objects.
//!
//! Each feature is a [`Plugin`](plugin::Plugin); [`plugins`] lists them in the order a write
//! runs them. The write path (`crate::write`) calls them with the request's
//! [`WriteContext`](context::WriteContext).

pub(crate) mod builtin_schema;
pub(crate) mod context;
pub(crate) mod crd;
pub(crate) mod crd_schema;
pub(crate) mod csr_conditions;
pub(crate) mod custom_resources;
pub(crate) mod default_classes;
pub(crate) mod default_service_accounts;
pub(crate) mod field_ownership;
pub(crate) mod field_validation;
pub(crate) mod finalizers;
pub(crate) mod garbage_collector;
pub(crate) mod graceful_pod_deletion;
pub(crate) mod limit_ranger;
pub(crate) mod namespace_lifecycle;
pub(crate) mod plugin;
pub(crate) mod pod_admission;
pub(crate) mod runtime_class;
pub(crate) mod service_allocation;
pub(crate) mod storage_protection;
pub(crate) mod tolerations;
pub(crate) mod validation;

use plugin::Plugin;

/// The plugins every write runs, in order:
///
/// 1. object metadata (`validation`): names on create, owner references on create and update;
/// 2. namespace lifecycle: a new namespace's phase and finalizer, writes into missing or
///    terminating namespaces, a namespace's deletion and its end once empty;
/// 3. the schemas of custom resources (pruning, validation, `fieldValidation`);
/// 4. what kube-apiserver's default admission adds to a new pod: its service account and
///    token volume, tolerations and priority, its LimitRanges' default resources (which it
///    must then keep within), and its RuntimeClass's overhead and scheduling;
/// 5. the cluster IPs and node ports of Services, the default StorageClass and IngressClass
///    of new claims and Ingresses, and the protection of claims and volumes in use;
/// 6. field ownership (`managedFields`), recorded once the object is final;
/// 7. CustomResourceDefinitions: their validation and status, and the types they serve;
/// 8. CertificateSigningRequests: a new one records its creator;
/// 9. graceful deletion of pods on the simulated kubelet's nodes;
/// 10. garbage collection: a delete's propagation and the dependents of removed objects;
/// 11. the `default` ServiceAccount of every active namespace.
pub(crate) fn plugins() -> &'static [&'static dyn Plugin] {
    &[
        &validation::ObjectMetadata,
        &namespace_lifecycle::NamespaceLifecycle,
        &custom_resources::CustomResourceSchemas,
        &pod_admission::PodAdmission,
        &limit_ranger::LimitRanger,
        &runtime_class::RuntimeClassAdmission,
        &service_allocation::ServiceAllocation,
        &default_classes::DefaultClasses,
        &storage_protection::StorageProtection,
        &field_ownership::ManagedFields,
        &crd::CustomResourceDefinitions,
        &csr_conditions::CertificateSigningRequests,
        &graceful_pod_deletion::GracefulPodDeletion,
        &garbage_collector::GarbageCollector,
        &default_service_accounts::DefaultServiceAccounts,
    ]
}
