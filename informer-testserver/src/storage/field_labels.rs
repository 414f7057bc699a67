//! The fields each resource can be selected by (`fieldSelector`), as kube-apiserver registers
//! them: `metadata.name` and `metadata.namespace` everywhere, a few more per built-in kind, and
//! for custom resources the `selectableFields` of the CRD version. Any other field is a 400
//! `field label not supported: <field>`, where a list filtered by it would otherwise come back
//! empty.

use crate::registry::ResourceType;
use crate::selector::FieldSelector;
use crate::status::ApiError;
use crate::storage::state::State;

/// Fields every resource supports.
const COMMON: [&str; 2] = ["metadata.name", "metadata.namespace"];

const EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// The fields a built-in resource supports beyond [`COMMON`].
fn builtin_fields(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        ("", "pods") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        ("" | "events.k8s.io", "events") => EVENT_FIELDS,
        ("", "secrets") => &["type"],
        ("", "nodes") => &["spec.unschedulable"],
        ("", "namespaces") => &["status.phase"],
        ("", "services") => &["spec.clusterIP", "spec.type"],
        ("", "replicationcontrollers") | ("apps", "replicasets") => &["status.replicas"],
        ("batch", "jobs") => &["status.successful"],
        ("certificates.k8s.io", "certificatesigningrequests" | "clustertrustbundles") => &["spec.signerName"],
        ("certificates.k8s.io", "podcertificaterequests") => {
            &["spec.signerName", "spec.podName", "spec.nodeName"]
        }
        ("resource.k8s.io", "resourceslices") => &["spec.nodeName", "spec.driver"],
        _ => &[],
    }
}

/// The `selectableFields` of the CRD version serving `rt`, as field paths (`spec.color`).
fn selectable_fields(state: &State, rt: &ResourceType) -> Vec<String> {
    let Some(crd_name) = state.registry.crd_of(rt) else {
        return Vec::new();
    };
    let Some(crd_type) = state
        .registry
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return Vec::new();
    };
    let Some(crd) = state.store.get(crd_type, &(String::new(), crd_name.to_string())) else {
        return Vec::new();
    };
    crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["name"] == rt.version.as_str())
        .flat_map(|v| v["selectableFields"].as_array().into_iter().flatten())
        .filter_map(|f| f["jsonPath"].as_str())
        .map(|path| path.trim_start_matches('.').to_string())
        .collect()
}

/// Checks that every field of `selector` can select objects of `rt`.
pub(crate) fn check(state: &State, rt: &ResourceType, selector: &FieldSelector) -> Result<(), ApiError> {
    let mut custom: Option<Vec<String>> = None;
    for field in selector.fields() {
        if COMMON.contains(&field) || builtin_fields(&rt.group, &rt.plural).contains(&field) {
            continue;
        }
        let custom = custom.get_or_insert_with(|| selectable_fields(state, rt));
        if !custom.iter().any(|f| f == field) {
            return Err(ApiError::bad_request(format!(
                "field label not supported: {field}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Registry, builtin_types};
    use crate::selector::parse_field_selector;
    use serde_json::json;

    fn check_str(state: &State, rt: &ResourceType, s: &str) -> Result<(), ApiError> {
        check(state, rt, &parse_field_selector(s).expect("parses"))
    }

    #[test]
    fn builtin_fields_and_the_common_ones() {
        let s = State::new(Registry::with_types(builtin_types()), 10);
        let pods = s.registry.get("", "v1", "pods").cloned().expect("pods");
        let cms = s
            .registry
            .get("", "v1", "configmaps")
            .cloned()
            .expect("configmaps");
        assert!(
            check_str(
                &s,
                &pods,
                "spec.nodeName=n1,status.phase!=Running,metadata.name=p"
            )
            .is_ok()
        );
        assert!(check_str(&s, &cms, "metadata.namespace=ns").is_ok());
        let err = check_str(&s, &cms, "spec.nodeName=n1").expect_err("unsupported");
        assert_eq!(
            (err.code, err.message.as_str()),
            (400, "field label not supported: spec.nodeName")
        );
    }

    #[test]
    fn crd_selectable_fields() {
        let mut s = State::new(Registry::with_types(builtin_types()), 10);
        let crd_type = s
            .registry
            .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .cloned()
            .expect("crds");
        s.write()
            .create(
                &crd_type,
                None,
                json!({
                    "metadata": {"name": "widgets.example.com"},
                    "spec": {"group": "example.com", "scope": "Namespaced",
                        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                        "versions": [{"name": "v1", "served": true, "storage": true,
                            "selectableFields": [{"jsonPath": ".spec.color"}]}]}
                }),
            )
            .expect("crd");
        let widgets = s
            .registry
            .get("example.com", "v1", "widgets")
            .cloned()
            .expect("served");
        assert!(check_str(&s, &widgets, "spec.color=red,metadata.name=w").is_ok());
        assert!(check_str(&s, &widgets, "spec.size=3").is_err());
    }
}
