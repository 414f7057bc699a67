//! What kube-apiserver serves by default at the Kubernetes version of k8s-openapi's newest
//! module (1.37): the built-in resources beyond the first table of [`crate::registry`], each
//! resource's verbs and categories, and each group version's discovery priority.
//!
//! kube-apiserver enables every GA group version by default and no beta or alpha one (the
//! `stableAPIGroupVersionsEnabledByDefault` lists of `pkg/controlplane`); the priorities are the
//! `groupPriorityMinimum`/`versionPriority` of the APIServices the aggregator registers for
//! them, which order `/apis` (higher first, then by name) and the versions of a group.

/// (group, version, kind, plural, namespaced, short names, status subresource), as the rows of
/// the first built-in table.
pub(crate) type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    bool,
);

/// The built-in resources served besides the first table's.
#[rustfmt::skip]
pub(crate) const MORE_BUILTINS: &[Row] = &[
    ("", "v1", "Binding", "bindings", true, &[], false),
    ("", "v1", "ComponentStatus", "componentstatuses", false, &["cs"], false),
    ("apiregistration.k8s.io", "v1", "APIService", "apiservices", false, &[], true),
    ("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", false, &[], false),
    ("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", false, &[], false),
    ("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", true, &[], false),
    ("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", false, &[], false),
    ("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", false, &[], false),
    ("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", false, &[], false),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, &["hpa"], true),
    ("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, &["hpa"], true),
    ("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", false, &["csr"], true),
    ("certificates.k8s.io", "v1", "ClusterTrustBundle", "clustertrustbundles", false, &[], false),
    ("certificates.k8s.io", "v1", "PodCertificateRequest", "podcertificaterequests", true, &[], true),
    ("networking.k8s.io", "v1", "IPAddress", "ipaddresses", false, &["ip"], false),
    ("networking.k8s.io", "v1", "IngressClass", "ingressclasses", false, &[], false),
    ("networking.k8s.io", "v1", "Ingress", "ingresses", true, &["ing"], true),
    ("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", true, &["netpol"], false),
    ("networking.k8s.io", "v1", "ServiceCIDR", "servicecidrs", false, &[], true),
    ("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true, &["pdb"], true),
    ("storage.k8s.io", "v1", "CSIDriver", "csidrivers", false, &[], false),
    ("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", true, &[], false),
    ("storage.k8s.io", "v1", "StorageClass", "storageclasses", false, &["sc"], false),
    ("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", false, &[], true),
    ("storage.k8s.io", "v1", "VolumeAttributesClass", "volumeattributesclasses", false, &["vac"], false),
    ("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", false, &[], false),
    ("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", false, &[], false),
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false, &[], false),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", false, &[], true),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", false, &[], false),
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false, &[], false),
    ("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", false, &["pc"], false),
    ("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", false, &[], false),
    ("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", true, &[], false),
    ("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas", false, &[], true),
    ("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration", "prioritylevelconfigurations", false, &[], true),
    ("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", false, &[], false),
    ("resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", false, &[], true),
    ("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", true, &[], true),
    ("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", true, &[], false),
    ("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", false, &[], false),
    ("storagemigration.k8s.io", "v1", "StorageVersionMigration", "storageversionmigrations", false, &[], true),
];

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

/// Whether the resource `group`/`plural` is one of the reviews, answered and never stored.
pub(crate) fn is_review(group: &str, plural: &str) -> bool {
    matches!(
        (group, plural),
        ("authentication.k8s.io", "tokenreviews" | "selfsubjectreviews")
            | (
                "authorization.k8s.io",
                "subjectaccessreviews"
                    | "selfsubjectaccessreviews"
                    | "localsubjectaccessreviews"
                    | "selfsubjectrulesreviews"
            )
    )
}

/// The verbs kube-apiserver serves on the resource `group`/`plural` (discovery lists them;
/// others answer `405`).
pub(crate) fn verbs(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        _ if is_review(group, plural) => CREATE_ONLY,
        ("", "bindings") => CREATE_ONLY,
        ("", "componentstatuses") => READ_ONLY,
        ("", "namespaces") => NAMESPACE_VERBS,
        _ => ALL_VERBS,
    }
}

/// Whether the resource `group`/`plural` serves the `approval` subresource
/// (CertificateSigningRequests).
pub(crate) fn has_approval(group: &str, plural: &str) -> bool {
    (group, plural) == ("certificates.k8s.io", "certificatesigningrequests")
}

/// The categories discovery lists for the resource `group`/`plural` (`kubectl get all` reads
/// `all`).
pub(crate) fn categories(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        ("", "pods" | "services" | "replicationcontrollers")
        | ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets")
        | ("batch", "jobs" | "cronjobs")
        | ("autoscaling", "horizontalpodautoscalers") => &["all"],
        ("apiregistration.k8s.io", "apiservices")
        | ("apiextensions.k8s.io", "customresourcedefinitions")
        | (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations"
            | "validatingwebhookconfigurations"
            | "validatingadmissionpolicies"
            | "validatingadmissionpolicybindings"
            | "mutatingadmissionpolicies"
            | "mutatingadmissionpolicybindings",
        ) => &["api-extensions"],
        _ => &[],
    }
}

/// (group, version, groupPriorityMinimum, versionPriority) of the built-in group versions.
#[rustfmt::skip]
const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apiregistration.k8s.io", "v1", 17800, 15),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v1", 17500, 15),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("resource.k8s.io", "v1", 16200, 21),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
    ("storagemigration.k8s.io", "v1", 15800, 15),
];

/// The priorities of a group version of a CRD or of a type registered by a test, as
/// kube-apiserver gives the APIServices of CRD groups.
const OTHER_PRIORITY: (i64, i64) = (1000, 100);

/// `(groupPriorityMinimum, versionPriority)` of a group version.
pub(crate) fn priority(group: &str, version: &str) -> (i64, i64) {
    PRIORITIES
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)
        .map(|&(_, _, g, v)| (g, v))
        .unwrap_or(OTHER_PRIORITY)
}

/// Orders groups (each with its versions) as the aggregator does: by group priority, higher
/// first, then by name; versions by version priority, higher first. Equal ones keep their
/// order (CRD groups: registration order; a CRD's versions: the CRD's order).
pub(crate) fn order_groups(groups: &mut [(String, Vec<String>)]) {
    let group_priority = |(g, vs): &(String, Vec<String>)| {
        vs.iter()
            .map(|v| priority(g, v).0)
            .max()
            .unwrap_or(OTHER_PRIORITY.0)
    };
    for (g, versions) in groups.iter_mut() {
        versions.sort_by_key(|v| std::cmp::Reverse(priority(g, v).1));
    }
    groups.sort_by(|a, b| {
        group_priority(b).cmp(&group_priority(a)).then_with(|| {
            match (group_priority(a) == OTHER_PRIORITY.0, &a.0, &b.0) {
                (true, _, _) => std::cmp::Ordering::Equal,
                (false, a, b) => a.cmp(b),
            }
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{ResourceType, builtin_types};

    /// The resources of k8s-openapi's GA group versions that kube-apiserver serves as top-level
    /// resources (subresource types such as Scale, Eviction and TokenRequest are not).
    fn k8s_openapi_resources() -> Vec<ResourceType> {
        use k8s_openapi::api::*;
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
        use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;
        vec![
            ResourceType::of::<admissionregistration::v1::MutatingAdmissionPolicy>(),
            ResourceType::of::<admissionregistration::v1::MutatingAdmissionPolicyBinding>(),
            ResourceType::of::<admissionregistration::v1::MutatingWebhookConfiguration>(),
            ResourceType::of::<admissionregistration::v1::ValidatingAdmissionPolicy>(),
            ResourceType::of::<admissionregistration::v1::ValidatingAdmissionPolicyBinding>(),
            ResourceType::of::<admissionregistration::v1::ValidatingWebhookConfiguration>(),
            ResourceType::of::<apiextensions::CustomResourceDefinition>(),
            ResourceType::of::<apiregistration::APIService>(),
            ResourceType::of::<apps::v1::ControllerRevision>(),
            ResourceType::of::<apps::v1::DaemonSet>(),
            ResourceType::of::<apps::v1::Deployment>(),
            ResourceType::of::<apps::v1::ReplicaSet>(),
            ResourceType::of::<apps::v1::StatefulSet>(),
            ResourceType::of::<authentication::v1::SelfSubjectReview>(),
            ResourceType::of::<authentication::v1::TokenReview>(),
            ResourceType::of::<authorization::v1::LocalSubjectAccessReview>(),
            ResourceType::of::<authorization::v1::SelfSubjectAccessReview>(),
            ResourceType::of::<authorization::v1::SelfSubjectRulesReview>(),
            ResourceType::of::<authorization::v1::SubjectAccessReview>(),
            ResourceType::of::<autoscaling::v1::HorizontalPodAutoscaler>(),
            ResourceType::of::<autoscaling::v2::HorizontalPodAutoscaler>(),
            ResourceType::of::<batch::v1::CronJob>(),
            ResourceType::of::<batch::v1::Job>(),
            ResourceType::of::<certificates::v1::CertificateSigningRequest>(),
            ResourceType::of::<certificates::v1::ClusterTrustBundle>(),
            ResourceType::of::<certificates::v1::PodCertificateRequest>(),
            ResourceType::of::<coordination::v1::Lease>(),
            ResourceType::of::<discovery::v1::EndpointSlice>(),
            ResourceType::of::<events::v1::Event>(),
            ResourceType::of::<flowcontrol::v1::FlowSchema>(),
            ResourceType::of::<flowcontrol::v1::PriorityLevelConfiguration>(),
            ResourceType::of::<networking::v1::IPAddress>(),
            ResourceType::of::<networking::v1::Ingress>(),
            ResourceType::of::<networking::v1::IngressClass>(),
            ResourceType::of::<networking::v1::NetworkPolicy>(),
            ResourceType::of::<networking::v1::ServiceCIDR>(),
            ResourceType::of::<node::v1::RuntimeClass>(),
            ResourceType::of::<policy::v1::PodDisruptionBudget>(),
            ResourceType::of::<rbac::v1::ClusterRole>(),
            ResourceType::of::<rbac::v1::ClusterRoleBinding>(),
            ResourceType::of::<rbac::v1::Role>(),
            ResourceType::of::<rbac::v1::RoleBinding>(),
            ResourceType::of::<resource::v1::DeviceClass>(),
            ResourceType::of::<resource::v1::DeviceTaintRule>(),
            ResourceType::of::<resource::v1::ResourceClaim>(),
            ResourceType::of::<resource::v1::ResourceClaimTemplate>(),
            ResourceType::of::<resource::v1::ResourceSlice>(),
            ResourceType::of::<scheduling::v1::PriorityClass>(),
            ResourceType::of::<storage::v1::CSIDriver>(),
            ResourceType::of::<storage::v1::CSINode>(),
            ResourceType::of::<storage::v1::CSIStorageCapacity>(),
            ResourceType::of::<storage::v1::StorageClass>(),
            ResourceType::of::<storage::v1::VolumeAttachment>(),
            ResourceType::of::<storage::v1::VolumeAttributesClass>(),
            ResourceType::of::<storagemigration::v1::StorageVersionMigration>(),
            ResourceType::of::<core::v1::Binding>(),
            ResourceType::of::<core::v1::ComponentStatus>(),
            ResourceType::of::<core::v1::ConfigMap>(),
            ResourceType::of::<core::v1::Endpoints>(),
            ResourceType::of::<core::v1::Event>(),
            ResourceType::of::<core::v1::LimitRange>(),
            ResourceType::of::<core::v1::Namespace>(),
            ResourceType::of::<core::v1::Node>(),
            ResourceType::of::<core::v1::PersistentVolume>(),
            ResourceType::of::<core::v1::PersistentVolumeClaim>(),
            ResourceType::of::<core::v1::Pod>(),
            ResourceType::of::<core::v1::PodTemplate>(),
            ResourceType::of::<core::v1::ReplicationController>(),
            ResourceType::of::<core::v1::ResourceQuota>(),
            ResourceType::of::<core::v1::Secret>(),
            ResourceType::of::<core::v1::Service>(),
            ResourceType::of::<core::v1::ServiceAccount>(),
        ]
    }

    #[test]
    fn every_ga_resource_of_k8s_openapi_is_served_with_its_kind_and_scope() {
        let served = builtin_types();
        let expected = k8s_openapi_resources();
        for typed in &expected {
            let found = served
                .iter()
                .find(|b| b.group == typed.group && b.version == typed.version && b.plural == typed.plural)
                .unwrap_or_else(|| panic!("{} {} is not served", typed.api_version(), typed.plural));
            assert_eq!(
                (&found.kind, found.namespaced),
                (&typed.kind, typed.namespaced),
                "{}",
                typed.plural
            );
        }
        assert_eq!(
            served.len(),
            expected.len(),
            "a built-in type not in the list above"
        );
    }

    /// The kinds newer than k8s-pb's messages: answered in JSON even when protobuf is asked
    /// for first (clients that ask for protobuf also accept JSON).
    const WITHOUT_PROTOBUF: &[&str] = &[
        "certificates.k8s.io/v1 ClusterTrustBundle",
        "certificates.k8s.io/v1 PodCertificateRequest",
        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding",
        "resource.k8s.io/v1 DeviceTaintRule",
        "storagemigration.k8s.io/v1 StorageVersionMigration",
    ];

    #[test]
    fn every_built_in_kind_but_the_newest_has_a_protobuf_form() {
        let missing: Vec<String> = builtin_types()
            .iter()
            .filter(|rt| {
                let object = serde_json::json!({
                    "apiVersion": rt.api_version(),
                    "kind": rt.kind,
                    "metadata": {"name": "x"},
                });
                crate::encoding::protobuf::encode_answer(&object).is_none()
            })
            .map(|rt| format!("{} {}", rt.api_version(), rt.kind))
            .collect();
        assert_eq!(missing, WITHOUT_PROTOBUF);
    }

    #[test]
    fn field_validation_knows_every_built_in_kind() {
        let unknown: Vec<String> = builtin_types()
            .iter()
            .filter(|rt| {
                crate::admission::builtin_schema::root_of(&rt.group, &rt.version, &rt.kind).is_none()
            })
            .map(|rt| format!("{} {}", rt.api_version(), rt.kind))
            .collect();
        assert!(unknown.is_empty(), "{unknown:?}");
    }

    #[test]
    fn every_served_group_version_has_an_upstream_priority() {
        for rt in builtin_types() {
            assert_ne!(
                priority(&rt.group, &rt.version),
                OTHER_PRIORITY,
                "{}",
                rt.api_version()
            );
        }
    }

    #[test]
    fn groups_are_ordered_by_priority_then_name_and_crd_groups_last() {
        let mut groups = vec![
            ("example.com".to_string(), vec!["v1".to_string()]),
            ("apps".to_string(), vec!["v1".to_string()]),
            (
                "autoscaling".to_string(),
                vec!["v1".to_string(), "v2".to_string()],
            ),
            ("apiregistration.k8s.io".to_string(), vec!["v1".to_string()]),
            ("a.example.com".to_string(), vec!["v1".to_string()]),
        ];
        order_groups(&mut groups);
        let names: Vec<&str> = groups.iter().map(|(g, _)| g.as_str()).collect();
        assert_eq!(
            names,
            [
                "apiregistration.k8s.io",
                "apps",
                "autoscaling",
                "example.com",
                "a.example.com"
            ]
        );
        assert_eq!(groups[2].1, ["v2", "v1"]);
    }

    #[test]
    fn verbs_of_create_only_and_read_only_resources() {
        let of = |group: &str, plural: &str| {
            let rt = builtin_types()
                .into_iter()
                .find(|rt| rt.group == group && rt.plural == plural)
                .expect("served");
            verbs(&rt.group, &rt.plural)
        };
        assert_eq!(of("authentication.k8s.io", "tokenreviews"), ["create"]);
        assert_eq!(of("", "bindings"), ["create"]);
        assert_eq!(of("", "componentstatuses"), ["get", "list"]);
        assert!(!of("", "namespaces").contains(&"deletecollection"));
        assert_eq!(of("", "pods"), ALL_VERBS);
    }
}
