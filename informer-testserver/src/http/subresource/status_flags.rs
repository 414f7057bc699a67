//! Which built-in resources serve a `status` subresource in kube-apiserver (1.33), checked
//! against the built-in table: a type listed there must serve `.../status` exactly when
//! kube-apiserver does.

use crate::registry::builtin_types;

/// (group, plural) of every built-in resource kube-apiserver serves `status` for.
const UPSTREAM_STATUS: &[(&str, &str)] = &[
    ("", "namespaces"),
    ("", "nodes"),
    ("", "persistentvolumeclaims"),
    ("", "persistentvolumes"),
    ("", "pods"),
    ("", "replicationcontrollers"),
    ("", "resourcequotas"),
    ("", "services"),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    ("apiregistration.k8s.io", "apiservices"),
    ("apps", "daemonsets"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("autoscaling", "horizontalpodautoscalers"),
    ("batch", "cronjobs"),
    ("batch", "jobs"),
    ("certificates.k8s.io", "certificatesigningrequests"),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"),
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"),
    ("internal.apiserver.k8s.io", "storageversions"),
    ("networking.k8s.io", "ingresses"),
    ("networking.k8s.io", "servicecidrs"),
    ("policy", "poddisruptionbudgets"),
    ("resource.k8s.io", "resourceclaims"),
    ("storage.k8s.io", "volumeattachments"),
    ("storagemigration.k8s.io", "storageversionmigrations"),
];

#[test]
fn builtin_status_flags_match_kube_apiserver() {
    for rt in builtin_types() {
        let upstream = UPSTREAM_STATUS.contains(&(rt.group.as_str(), rt.plural.as_str()));
        assert_eq!(
            rt.status_subresource, upstream,
            "{}/{} {}: status subresource",
            rt.group, rt.version, rt.plural
        );
    }
}
