//! A minimal OpenAPI v3 (`/openapi/v3`, `/openapi/v3/{api/v1 | apis/group/version}`).
//!
//! Only what kubectl reads to learn that the server validates fields itself: one PATCH
//! operation per resource, tagged with `x-kubernetes-group-version-kind` and listing the
//! `fieldValidation` query parameter. With it `kubectl apply`/`create -f` validate server-side
//! (the server accepts any fields); schemas are not served, so `kubectl explain` does not work.
//! `/openapi/v2` is not served (404).

use serde_json::{Map, Value, json};

use crate::registry::Registry;

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: the group versions and where their documents are.
pub(crate) fn root(registry: &Registry, hash: u64) -> Value {
    let mut paths = Map::new();
    let mut gvs = vec![(String::new(), "v1".to_string())];
    for (group, versions) in registry.groups() {
        gvs.extend(versions.into_iter().map(|v| (group.clone(), v)));
    }
    for (group, version) in gvs {
        let path = gv_path(&group, &version);
        paths.insert(
            path.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash:016X}")}),
        );
    }
    json!({"paths": paths})
}

/// `/openapi/v3/{path}`, or `None` when no group version is served there.
pub(crate) fn group_version(registry: &Registry, path: &str) -> Option<Value> {
    let (group, version) = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["api", version] => (String::new(), version.to_string()),
        ["apis", group, version] => (group.to_string(), version.to_string()),
        _ => return None,
    };
    let mut paths = Map::new();
    for rt in registry.in_group_version(&group, &version) {
        let scope = if rt.namespaced {
            "namespaces/{namespace}/"
        } else {
            ""
        };
        let url = format!("/{}/{scope}{}/{{name}}", gv_path(&group, &version), rt.plural);
        paths.insert(
            url,
            json!({
                "patch": {
                    "operationId": format!("patch{}", rt.kind),
                    "parameters": [
                        {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
                        {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
                        {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
                        {"name": "force", "in": "query", "schema": {"type": "boolean"}},
                    ],
                    "responses": {"200": {"description": "OK"}},
                    "x-kubernetes-action": "patch",
                    "x-kubernetes-group-version-kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
                }
            }),
        );
    }
    if paths.is_empty() && !(group.is_empty() && version == "v1") {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtin_types;

    #[test]
    fn documents_list_patch_operations() {
        let reg = Registry::with_types(builtin_types());
        let root = root(&reg, 7);
        assert_eq!(
            root["paths"]["api/v1"]["serverRelativeURL"],
            "/openapi/v3/api/v1?hash=0000000000000007"
        );
        assert!(root["paths"]["apis/apps/v1"].is_object());
        let core = group_version(&reg, "api/v1").expect("core");
        let cm = &core["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"];
        assert_eq!(cm["x-kubernetes-group-version-kind"]["kind"], "ConfigMap");
        assert!(group_version(&reg, "apis/nope/v1").is_none());
        assert!(group_version(&reg, "elsewhere").is_none());
    }
}
