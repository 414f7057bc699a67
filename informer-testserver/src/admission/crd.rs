//! CustomResourceDefinitions: the resource types a CRD object defines, and the status the
//! apiextensions controller would write (`Established`, `NamesAccepted`, `acceptedNames`).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::admission::context::WriteContext;
use crate::admission::crd_schema;
use crate::admission::plugin::{Cascade, Plugin};
use crate::registry::{ResourceType, ScaleSubresource};
use crate::status::{ApiError, FieldCause};
use crate::storage::state::{State, now_rfc3339};
use crate::storage::store::meta_str;

/// What is wrong with the `openAPIV3Schema` of version `index`, as apiextensions v1 validates
/// it: every version needs a schema (a CRD written with `schema: {}`, as kopium's
/// `schema = "disabled"` writes, is refused), and a structural one: an object at the root, a
/// type for every property.
fn schema_causes(schema: &Value, index: usize) -> Vec<FieldCause> {
    let path = format!("spec.versions[{index}].schema.openAPIV3Schema");
    if !schema.is_object() {
        return vec![FieldCause::required(&path, "schemas are required")];
    }
    let root_type = format!("{path}.type");
    let mut causes = Vec::new();
    match schema["type"].as_str().filter(|t| !t.is_empty()) {
        None => causes.push(FieldCause::required(&root_type, "must not be empty at the root")),
        Some("object") => {}
        Some(other) => causes.push(FieldCause::invalid(
            &root_type,
            other,
            "must be object at the root",
        )),
    }
    let properties = crd_schema::non_structural(schema, &path)
        .into_iter()
        .filter(|field| *field != root_type)
        .map(|field| FieldCause::required(&field, "must not be empty for specified object fields"));
    causes.extend(properties);
    causes
}

/// The resource types served for a CRD object (one per served version), validated.
pub(crate) fn resource_types(crd_type: &ResourceType, crd: &Value) -> Result<Vec<ResourceType>, ApiError> {
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    let invalid =
        |field: &str, detail: &str| ApiError::invalid(crd_type, name, field, "Required value", detail);
    let spec = &crd["spec"];
    let group = spec["group"]
        .as_str()
        .filter(|g| !g.is_empty())
        .ok_or_else(|| invalid("spec.group", ""))?;
    let names = &spec["names"];
    let plural = names["plural"]
        .as_str()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| invalid("spec.names.plural", ""))?;
    let kind = names["kind"]
        .as_str()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| invalid("spec.names.kind", ""))?;
    let expected = format!("{plural}.{group}");
    if name != expected {
        return Err(ApiError::invalid(
            crd_type,
            name,
            "metadata.name",
            "Invalid value",
            &format!("\"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    let namespaced = match spec["scope"].as_str() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        _ => {
            return Err(ApiError::invalid(
                crd_type,
                name,
                "spec.scope",
                "Unsupported value",
                "supported values: \"Cluster\", \"Namespaced\"",
            ));
        }
    };
    let singular = names["singular"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let short_names: Vec<String> = names["shortNames"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let versions = spec["versions"]
        .as_array()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            invalid(
                "spec.versions",
                "must have exactly one version marked as storage version",
            )
        })?;
    let causes: Vec<FieldCause> = versions
        .iter()
        .enumerate()
        .flat_map(|(index, version)| schema_causes(&version["schema"]["openAPIV3Schema"], index))
        .collect();
    if !causes.is_empty() {
        return Err(ApiError::invalid_causes(crd_type, name, &causes));
    }
    let mut types = Vec::new();
    for version in versions {
        let Some(v) = version["name"].as_str().filter(|v| !v.is_empty()) else {
            return Err(invalid("spec.versions[].name", ""));
        };
        if version["served"].as_bool() == Some(false) {
            continue;
        }
        let mut rt = ResourceType::new(group, v, kind, plural, namespaced)
            .with_status_subresource(version["subresources"]["status"].is_object())
            .with_scale_subresource(scale_subresource(&version["subresources"]["scale"]));
        if let Some(singular) = &singular {
            rt.singular = singular.clone();
        }
        rt.short_names = short_names.clone();
        types.push(rt);
    }
    Ok(types)
}

/// Sets the status the apiextensions controller writes once the names are accepted.
pub(crate) fn set_established(crd: &mut Value, now: &str) {
    let names = crd["spec"]["names"].clone();
    let stored: Vec<Value> = crd["spec"]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"].as_bool() == Some(true))
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    let mut accepted = names;
    if accepted["singular"].as_str().is_none_or(str::is_empty)
        && let Some(kind) = accepted["kind"].as_str()
    {
        accepted["singular"] = json!(kind.to_ascii_lowercase());
    }
    if accepted["listKind"].as_str().is_none_or(str::is_empty)
        && let Some(kind) = accepted["kind"].as_str()
    {
        accepted["listKind"] = json!(format!("{kind}List"));
    }
    let condition = |type_: &str, reason: &str, message: &str| json!({"type": type_, "status": "True", "lastTransitionTime": now, "reason": reason, "message": message});
    if let Some(object) = crd.as_object_mut() {
        object.insert(
            "status".into(),
            json!({
                "conditions": [
                    condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                    condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
                ],
                "acceptedNames": accepted,
                "storedVersions": stored,
            }),
        );
    }
}

impl State {
    /// The version of the CRD that defines `rt`, if a CRD does.
    pub(crate) fn crd_version(&self, rt: &ResourceType) -> Option<Value> {
        let crd = self.registry.crd_of(rt)?;
        let crd_type = ResourceType::new(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
        );
        let definition = self.store.get(&crd_type, &(String::new(), crd.to_owned()))?;
        definition["spec"]["versions"]
            .as_array()?
            .iter()
            .find(|v| v["name"] == rt.version.as_str())
            .cloned()
    }
}

/// Whether `rt` is the CustomResourceDefinitions resource.
fn is_crd(rt: &ResourceType) -> bool {
    rt.group == "apiextensions.k8s.io" && rt.plural == "customresourcedefinitions"
}

/// CustomResourceDefinitions as a write plugin: a CRD is validated and established when
/// written, and the resource types it defines are served while it exists.
pub(crate) struct CustomResourceDefinitions;

impl Plugin for CustomResourceDefinitions {
    fn admit_create(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        if is_crd(rt) {
            resource_types(rt, object)?;
            set_established(object, &now_rfc3339());
        }
        Ok(())
    }

    fn admit_update(
        &self,
        _state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        _old: &Value,
        new: &mut Value,
    ) -> Result<(), ApiError> {
        if is_crd(rt) {
            resource_types(rt, new)?;
        }
        Ok(())
    }

    fn stored(&self, writes: &mut dyn Cascade, rt: &ResourceType, object: &Value) {
        if !is_crd(rt) || writes.is_dry_run() {
            return;
        }
        let name = meta_str(object, "name").unwrap_or_default().to_owned();
        // admitted, so valid
        let types = resource_types(rt, object).unwrap_or_default();
        let state = writes.state();
        let before = state.registry.remove_crd(&name);
        for t in &types {
            state.registry.add(t.clone(), Some(name.clone()));
        }
        let groups = before.iter().chain(&types).map(|t| t.group.clone());
        for group in groups.collect::<BTreeSet<_>>() {
            sync_api_services(writes, &group);
        }
    }

    fn removed(&self, writes: &mut dyn Cascade, rt: &ResourceType, object: &Value) {
        if !is_crd(rt) || writes.is_dry_run() {
            return;
        }
        let name = meta_str(object, "name").unwrap_or_default();
        let state = writes.state();
        let removed = state.registry.remove_crd(name);
        for t in &removed {
            let storage = t.storage_key();
            if !state.registry.has_storage(&storage) {
                state.store.remove_all(&storage);
            }
        }
        let groups: BTreeSet<String> = removed.iter().map(|t| t.group.clone()).collect();
        for group in groups {
            sync_api_services(writes, &group);
        }
    }
}

/// The label of the APIServices the server keeps in step with the CRDs.
const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";

/// Keeps the APIServices of a CRD group in step with the versions CRDs serve, as
/// kube-apiserver's CRD registration controller does: one `VERSION.GROUP` per served version
/// (group priority 1000, version priority 100, served locally), removed once no CRD serves it.
/// APIServices a test created itself (without the label) are left alone.
fn sync_api_services(writes: &mut dyn Cascade, group: &str) {
    let state = writes.state();
    let Some(api_services) = state
        .registry
        .get("apiregistration.k8s.io", "v1", "apiservices")
        .cloned()
    else {
        return;
    };
    let served: BTreeSet<String> = state
        .registry
        .iter()
        .filter(|t| t.group == group)
        .map(|t| t.version.clone())
        .collect();
    let existing: Vec<(String, Value)> = state
        .store
        .snapshot(&api_services, None)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, o)| o["spec"]["group"] == group)
        .map(|((_, name), o)| (name, o))
        .collect();
    for (name, service) in &existing {
        let version = service["spec"]["version"].as_str().unwrap_or_default();
        if service["metadata"]["labels"][AUTOMANAGED] == "true" && !served.contains(version) {
            let _ = writes.delete(&api_services, None, name, &Value::Null);
        }
    }
    for version in served {
        let name = format!("{version}.{group}");
        if existing.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let service = json!({
            "metadata": {"name": name, "labels": {AUTOMANAGED: "true"}},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": 1000, "versionPriority": 100},
            "status": {"conditions": [{
                "type": "Available",
                "status": "True",
                "lastTransitionTime": now_rfc3339(),
                "reason": "Local",
                "message": "Local APIServices are always available",
            }]},
        });
        let _ = writes.create_as_server(&api_services, service);
    }
}

/// A version's `subresources.scale`, if it declares one with its replica paths.
fn scale_subresource(scale: &Value) -> Option<ScaleSubresource> {
    let path = |field: &str| scale[field].as_str().filter(|p| !p.is_empty()).map(str::to_owned);
    Some(ScaleSubresource {
        spec_replicas_path: path("specReplicasPath")?,
        status_replicas_path: path("statusReplicasPath")?,
        label_selector_path: path("labelSelectorPath"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd_type() -> ResourceType {
        ResourceType::new(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
        )
    }

    fn crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "foos.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "foos", "singular": "foo", "kind": "Foo", "shortNames": ["fo"]},
                "versions": [
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                     "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                    {"name": "v2", "served": false, "storage": false,
                     "schema": {"openAPIV3Schema": {"type": "object"}}},
                ],
            },
        })
    }

    #[test]
    fn served_versions_become_types() {
        let types = resource_types(&crd_type(), &crd()).expect("valid crd");
        assert_eq!(types.len(), 1);
        let rt = &types[0];
        assert_eq!(
            (rt.api_version().as_str(), rt.kind.as_str(), rt.plural.as_str()),
            ("example.com/v1", "Foo", "foos")
        );
        assert!(rt.namespaced && rt.status_subresource);
        assert_eq!(rt.short_names, vec!["fo".to_string()]);
    }

    #[test]
    fn invalid_crds_are_rejected() {
        let mut bad = crd();
        bad["metadata"]["name"] = json!("wrong");
        assert_eq!(
            resource_types(&crd_type(), &bad).map_err(|e| e.code).err(),
            Some(422)
        );
        let mut bad = crd();
        bad["spec"]["scope"] = json!("Galaxy");
        assert_eq!(
            resource_types(&crd_type(), &bad)
                .map_err(|e| e.reason)
                .err()
                .as_deref(),
            Some("Invalid")
        );
    }

    #[test]
    fn every_version_needs_a_structural_schema_with_an_object_at_its_root() {
        let refused = |schema: Value| {
            let mut crd = crd();
            crd["spec"]["versions"][0]["schema"] = schema;
            let err = resource_types(&crd_type(), &crd).expect_err("refused");
            assert_eq!(err.code, 422);
            err.message
        };
        // kopium's `schema = "disabled"` writes an empty schema
        let message = refused(json!({}));
        assert!(
            message.contains("spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"),
            "{message}"
        );
        let message = refused(json!({"openAPIV3Schema": {"x-kubernetes-preserve-unknown-fields": true}}));
        assert!(
            message.contains("openAPIV3Schema.type: Required value: must not be empty at the root"),
            "{message}"
        );
        let message = refused(json!({"openAPIV3Schema": {"type": "string"}}));
        assert!(
            message.contains("openAPIV3Schema.type: Invalid value: \"string\": must be object at the root"),
            "{message}"
        );
        let message = refused(json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {}}}}));
        assert!(
            message.contains("openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"),
            "{message}"
        );
        let mut accepted = crd();
        accepted["spec"]["versions"][0]["schema"] =
            json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
        assert!(resource_types(&crd_type(), &accepted).is_ok());
    }

    #[test]
    fn established_status() {
        let mut c = crd();
        set_established(&mut c, "2024-01-01T00:00:00Z");
        assert_eq!(c["status"]["conditions"][1]["type"], "Established");
        assert_eq!(c["status"]["acceptedNames"]["listKind"], "FooList");
        assert_eq!(c["status"]["storedVersions"], json!(["v1"]));
    }
}
