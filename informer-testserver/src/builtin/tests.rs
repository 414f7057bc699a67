//! The descriptions against k8s-openapi's types: every GA resource is served, with its kind
//! and scope, and the verbs of the computed ones.

use std::any::TypeId;

use k8s_openapi::NamespaceResourceScope;

use super::{ALL, ALL_VERBS, find};

/// (group, version, kind, plural, namespaced) of a k8s-openapi type.
type Typed = (String, String, String, String, bool);

fn typed<K>() -> Typed
where
    K: kube::Resource<DynamicType = ()>,
    K::Scope: 'static,
{
    let namespaced = TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>();
    (
        K::group(&()).into(),
        K::version(&()).into(),
        K::kind(&()).into(),
        K::plural(&()).into(),
        namespaced,
    )
}

/// The resources of k8s-openapi's GA group versions that kube-apiserver serves as top-level
/// resources (subresource types such as Scale, Eviction and TokenRequest are not).
fn k8s_openapi_resources() -> Vec<Typed> {
    use k8s_openapi::api::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;
    vec![
        typed::<admissionregistration::v1::MutatingAdmissionPolicy>(),
        typed::<admissionregistration::v1::MutatingAdmissionPolicyBinding>(),
        typed::<admissionregistration::v1::MutatingWebhookConfiguration>(),
        typed::<admissionregistration::v1::ValidatingAdmissionPolicy>(),
        typed::<admissionregistration::v1::ValidatingAdmissionPolicyBinding>(),
        typed::<admissionregistration::v1::ValidatingWebhookConfiguration>(),
        typed::<apiextensions::CustomResourceDefinition>(),
        typed::<apiregistration::APIService>(),
        typed::<apps::v1::ControllerRevision>(),
        typed::<apps::v1::DaemonSet>(),
        typed::<apps::v1::Deployment>(),
        typed::<apps::v1::ReplicaSet>(),
        typed::<apps::v1::StatefulSet>(),
        typed::<authentication::v1::SelfSubjectReview>(),
        typed::<authentication::v1::TokenReview>(),
        typed::<authorization::v1::LocalSubjectAccessReview>(),
        typed::<authorization::v1::SelfSubjectAccessReview>(),
        typed::<authorization::v1::SelfSubjectRulesReview>(),
        typed::<authorization::v1::SubjectAccessReview>(),
        typed::<autoscaling::v1::HorizontalPodAutoscaler>(),
        typed::<autoscaling::v2::HorizontalPodAutoscaler>(),
        typed::<batch::v1::CronJob>(),
        typed::<batch::v1::Job>(),
        typed::<certificates::v1::CertificateSigningRequest>(),
        typed::<certificates::v1::ClusterTrustBundle>(),
        typed::<certificates::v1::PodCertificateRequest>(),
        typed::<coordination::v1::Lease>(),
        typed::<discovery::v1::EndpointSlice>(),
        typed::<events::v1::Event>(),
        typed::<flowcontrol::v1::FlowSchema>(),
        typed::<flowcontrol::v1::PriorityLevelConfiguration>(),
        typed::<networking::v1::IPAddress>(),
        typed::<networking::v1::Ingress>(),
        typed::<networking::v1::IngressClass>(),
        typed::<networking::v1::NetworkPolicy>(),
        typed::<networking::v1::ServiceCIDR>(),
        typed::<node::v1::RuntimeClass>(),
        typed::<policy::v1::PodDisruptionBudget>(),
        typed::<rbac::v1::ClusterRole>(),
        typed::<rbac::v1::ClusterRoleBinding>(),
        typed::<rbac::v1::Role>(),
        typed::<rbac::v1::RoleBinding>(),
        typed::<resource::v1::DeviceClass>(),
        typed::<resource::v1::DeviceTaintRule>(),
        typed::<resource::v1::ResourceClaim>(),
        typed::<resource::v1::ResourceClaimTemplate>(),
        typed::<resource::v1::ResourceSlice>(),
        typed::<scheduling::v1::PriorityClass>(),
        typed::<storage::v1::CSIDriver>(),
        typed::<storage::v1::CSINode>(),
        typed::<storage::v1::CSIStorageCapacity>(),
        typed::<storage::v1::StorageClass>(),
        typed::<storage::v1::VolumeAttachment>(),
        typed::<storage::v1::VolumeAttributesClass>(),
        typed::<storagemigration::v1::StorageVersionMigration>(),
        typed::<core::v1::Binding>(),
        typed::<core::v1::ComponentStatus>(),
        typed::<core::v1::ConfigMap>(),
        typed::<core::v1::Endpoints>(),
        typed::<core::v1::Event>(),
        typed::<core::v1::LimitRange>(),
        typed::<core::v1::Namespace>(),
        typed::<core::v1::Node>(),
        typed::<core::v1::PersistentVolume>(),
        typed::<core::v1::PersistentVolumeClaim>(),
        typed::<core::v1::Pod>(),
        typed::<core::v1::PodTemplate>(),
        typed::<core::v1::ReplicationController>(),
        typed::<core::v1::ResourceQuota>(),
        typed::<core::v1::Secret>(),
        typed::<core::v1::Service>(),
        typed::<core::v1::ServiceAccount>(),
    ]
}

#[test]
fn every_ga_resource_of_k8s_openapi_is_served_with_its_kind_and_scope() {
    let expected = k8s_openapi_resources();
    for (group, version, kind, plural, namespaced) in &expected {
        let found = find(group, version, plural)
            .unwrap_or_else(|| panic!("{group}/{version} {plural} is not served"));
        assert_eq!(
            (found.kind, found.namespaced),
            (kind.as_str(), *namespaced),
            "{plural}"
        );
    }
    assert_eq!(
        ALL.len(),
        expected.len(),
        "a built-in resource not in the list above"
    );
}

#[test]
fn descriptions_are_named_once() {
    for (i, b) in ALL.iter().enumerate() {
        let first = ALL
            .iter()
            .position(|other| (other.group, other.version, other.plural) == (b.group, b.version, b.plural));
        assert_eq!(
            first,
            Some(i),
            "{} {} is described twice",
            b.api_version(),
            b.plural
        );
    }
}

#[test]
fn verbs_of_create_only_and_read_only_resources() {
    let of = |group: &str, plural: &str| find(group, "v1", plural).expect("served").verbs;
    assert_eq!(of("authentication.k8s.io", "tokenreviews"), ["create"]);
    assert_eq!(of("", "bindings"), ["create"]);
    assert_eq!(of("", "componentstatuses"), ["get", "list"]);
    assert!(!of("", "namespaces").contains(&"deletecollection"));
    assert_eq!(of("", "pods"), ALL_VERBS);
}
