//! Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/{group}`,
//! `/apis/{group}/{version}` (APIVersions, APIGroupList, APIGroup, APIResourceList), and the
//! aggregated form (`apidiscovery.k8s.io/v2` or `v2beta1` `APIGroupDiscoveryList`) when a client
//! asks for it (see [`crate::encoding::accept`]).

use serde_json::{Value, json};

use crate::builtin::priority;
use crate::builtin::subresource::Subresource;
use crate::encoding::accept::AggregatedVersion;
use crate::registry::{Registry, ResourceType};

/// `/version`
pub(crate) fn version() -> Value {
    json!({
        "major": "1",
        "minor": "37",
        "emulationMajor": "1",
        "emulationMinor": "37",
        "gitVersion": "v1.37.0",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// `/api`
pub(crate) fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_document(name: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{name}/{v}"), "version": v});
    json!({
        "name": name,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv).unwrap_or(Value::Null),
    })
}

/// The served groups with their versions, in kube-apiserver's order (see
/// [`priority::order_groups`]).
fn ordered_groups(registry: &Registry) -> Vec<(String, Vec<String>)> {
    let mut groups = registry.groups();
    priority::order_groups(&mut groups);
    groups
}

/// `/apis`
pub(crate) fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = ordered_groups(registry)
        .iter()
        .map(|(g, vs)| group_document(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`, or `None` when the group is not served.
pub(crate) fn group(registry: &Registry, name: &str) -> Option<Value> {
    let (g, versions) = ordered_groups(registry).into_iter().find(|(g, _)| g == name)?;
    let mut doc = group_document(&g, &versions);
    if let Some(map) = doc.as_object_mut() {
        map.insert("kind".into(), json!("APIGroup"));
        map.insert("apiVersion".into(), json!("v1"));
    }
    Some(doc)
}

fn resource_document(rt: &ResourceType) -> Value {
    let mut doc = json!({
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": rt.verbs(),
    });
    if !rt.short_names.is_empty() {
        doc["shortNames"] = json!(rt.short_names);
    }
    let categories = categories(rt);
    if !categories.is_empty() {
        doc["categories"] = json!(categories);
    }
    doc
}

/// The categories of `rt` (`kubectl get all` reads `all`): a built-in resource's.
fn categories(rt: &ResourceType) -> &'static [&'static str] {
    rt.builtin().map_or(&[], |b| b.categories)
}

/// The discovery document of a subresource of `rt` (legacy `APIResource`).
fn legacy_document(rt: &ResourceType, sub: &Subresource) -> Value {
    let mut doc = json!({
        "name": format!("{}/{}", rt.plural, sub.name),
        "singularName": "",
        "namespaced": rt.namespaced,
    });
    if !sub.group.is_empty() {
        doc["group"] = json!(sub.group);
        doc["version"] = json!(sub.version);
    }
    doc["kind"] = json!(if sub.kind.is_empty() { &rt.kind } else { sub.kind });
    doc["verbs"] = json!(sub.verbs);
    doc
}

/// The aggregated discovery document of a subresource of `rt`.
fn aggregated_document(rt: &ResourceType, sub: &Subresource) -> Value {
    let (group, version) = if sub.group.is_empty() {
        (rt.group.as_str(), rt.version.as_str())
    } else {
        (sub.group, sub.version)
    };
    let kind = if sub.kind.is_empty() { &rt.kind } else { sub.kind };
    json!({
        "subresource": sub.name,
        "responseKind": {"group": group, "version": version, "kind": kind},
        "verbs": sub.verbs,
    })
}

/// `/api/v1` or `/apis/{group}/{version}`, or `None` when nothing is served there.
pub(crate) fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for rt in registry.in_group_version(group, version) {
        resources.push(resource_document(rt));
        let subresources = rt.subresources().into_iter();
        resources.extend(subresources.map(|sub| legacy_document(rt, sub)));
    }
    resources.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    if resources.is_empty() && !(group.is_empty() && version == "v1") {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
    )
}

fn aggregated_group(registry: &Registry, name: &str, versions: &[String]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| {
            let mut types: Vec<&ResourceType> = registry.in_group_version(name, v).collect();
            types.sort_by(|a, b| a.plural.cmp(&b.plural));
            let resources: Vec<Value> = types
                .into_iter()
                .map(|rt| {
                    let kind = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
                    let mut doc = json!({
                        "resource": rt.plural,
                        "responseKind": kind,
                        "scope": if rt.namespaced { "Namespaced" } else { "Cluster" },
                        "singularResource": rt.singular,
                        "verbs": rt.verbs(),
                    });
                    if !rt.short_names.is_empty() {
                        doc["shortNames"] = json!(rt.short_names);
                    }
                    let categories = categories(rt);
                    if !categories.is_empty() {
                        doc["categories"] = json!(categories);
                    }
                    let subresources: Vec<Value> = rt
                        .subresources()
                        .into_iter()
                        .map(|sub| aggregated_document(rt, sub))
                        .collect();
                    if !subresources.is_empty() {
                        doc["subresources"] = json!(subresources);
                    }
                    doc
                })
                .collect();
            json!({"version": v, "resources": resources, "freshness": "Current"})
        })
        .collect();
    json!({"metadata": {"name": name, "creationTimestamp": null}, "versions": versions})
}

/// Aggregated discovery of `/api` (`core`) or `/apis`, in `version`.
pub(crate) fn aggregated(registry: &Registry, core: bool, version: AggregatedVersion) -> Value {
    let items: Vec<Value> = if core {
        vec![aggregated_group(registry, "", &["v1".to_string()])]
    } else {
        ordered_groups(registry)
            .iter()
            .map(|(g, vs)| aggregated_group(registry, g, vs))
            .collect()
    };
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": version.api_version(),
        "metadata": {},
        "items": items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtin_types;

    #[test]
    fn documents_have_kube_apiserver_shapes() {
        let reg = Registry::with_types(builtin_types());
        let core = resource_list(&reg, "", "v1").expect("core");
        assert_eq!(core["groupVersion"], "v1");
        let pods = core["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == "pods"))
            .expect("pods");
        assert_eq!(pods["singularName"], "pod");
        assert_eq!(pods["namespaced"], true);
        assert_eq!(pods["shortNames"], json!(["po"]));
        assert!(
            core["resources"]
                .as_array()
                .is_some_and(|r| r.iter().any(|r| r["name"] == "pods/status"))
        );
        let apps = group(&reg, "apps").expect("apps");
        assert_eq!(
            apps["preferredVersion"],
            json!({"groupVersion": "apps/v1", "version": "v1"})
        );
        assert!(group(&reg, "nope.io").is_none());
        assert!(resource_list(&reg, "apps", "v9").is_none());
        let list = group_list(&reg);
        assert_eq!(list["kind"], "APIGroupList");
        assert!(
            list["groups"]
                .as_array()
                .is_some_and(|g| g.iter().all(|g| g["name"] != ""))
        );
        let agg = aggregated(&reg, false, AggregatedVersion::V2);
        assert_eq!(agg["items"][0]["metadata"]["name"], "apiregistration.k8s.io");
        assert_eq!(agg["items"][1]["metadata"]["name"], "apps");
        assert_eq!(
            agg["items"][1]["versions"][0]["resources"][0]["scope"],
            "Namespaced"
        );
    }
}
