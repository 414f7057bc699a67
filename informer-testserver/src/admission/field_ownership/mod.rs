//! Field ownership and server-side apply, as kube-apiserver's field manager does them:
//! `metadata.managedFields` records, per manager and operation (`Apply` or `Update`), the
//! fields it set, in the `FieldsV1` form.
//!
//! - An **apply** (a `PATCH` of type `application/apply-patch+yaml` with a `fieldManager`)
//!   merges the applied configuration into the object by the schema's list types, fails with
//!   409 when it would change a field another manager owns (unless `force=true`, which takes
//!   the field over), removes the fields the manager applied before but no longer applies
//!   (unless another manager owns them too), and makes the manager own exactly what it applied.
//! - Every other write over HTTP (create, update, patch) is an **update**: the writer (its
//!   `fieldManager`, else the start of its `User-Agent`) takes the fields it changed, from
//!   whoever owned them, without conflicts.
//!
//! Objects written through the Rust API of [`TestServer`](crate::TestServer) keep the
//! `managedFields` they have.

pub(crate) mod field_set;
mod hooks;

pub(crate) use hooks::{ManagedFields, required_field_manager, writer_of, writes_status};
pub(crate) mod list_types;
pub(crate) mod values;

use serde_json::{Value, json};

use crate::status::ApiError;
use crate::storage::state::now_rfc3339;
use field_set::{FieldPath, FieldSet};
use list_types::ListTypes;
use values::{differs, merge_applied, remove_at, value_at};

/// Who writes, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Writer {
    /// The field manager.
    pub(crate) manager: String,
    /// The `apiVersion` the write used.
    pub(crate) api_version: String,
    /// `status` for writes of the status subresource.
    pub(crate) subresource: Option<String>,
}

/// One `managedFields` entry.
#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    time: String,
    subresource: Option<String>,
    fields: FieldSet,
}

impl Entry {
    fn of(value: &Value) -> Self {
        let text = |field: &str| value[field].as_str().unwrap_or_default().to_owned();
        Self {
            manager: text("manager"),
            operation: text("operation"),
            api_version: text("apiVersion"),
            time: text("time"),
            subresource: value["subresource"].as_str().map(str::to_owned),
            fields: FieldSet::from_fields_v1(&value["fieldsV1"]),
        }
    }

    fn to_json(&self) -> Value {
        let mut entry = json!({
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": self.fields.to_fields_v1(),
        });
        if let Some(subresource) = &self.subresource {
            entry["subresource"] = json!(subresource);
        }
        entry
    }

    fn is(&self, writer: &Writer, operation: &str) -> bool {
        self.manager == writer.manager
            && self.operation == operation
            && self.subresource == writer.subresource
            && (operation == "Apply" || self.api_version == writer.api_version)
    }
}

fn entries(object: &Value) -> Vec<Entry> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(Entry::of)
        .collect()
}

fn write_entries(object: &mut Value, entries: Vec<Entry>) {
    let kept: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(Entry::to_json)
        .collect();
    let meta = crate::storage::store::metadata_mut(object);
    if kept.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), json!(kept));
    }
}

/// Puts `fields` in the writer's entry of `operation`, creating it if needed.
fn own(entries: &mut Vec<Entry>, writer: &Writer, operation: &str, fields: FieldSet, replace: bool) {
    let time = now_rfc3339();
    match entries.iter_mut().find(|e| e.is(writer, operation)) {
        Some(entry) => {
            entry.fields = if replace {
                fields
            } else {
                entry.fields.union(&fields)
            };
            entry.time = time;
            entry.api_version.clone_from(&writer.api_version);
        }
        None => entries.push(Entry {
            manager: writer.manager.clone(),
            operation: operation.to_owned(),
            api_version: writer.api_version.clone(),
            time,
            subresource: writer.subresource.clone(),
            fields,
        }),
    }
}

/// A field path as kube-apiserver prints it in conflicts: `.spec.containers[name="c"].image`.
pub(crate) fn render_path(path: &[String]) -> String {
    let mut out = String::new();
    for element in path {
        if let Some(field) = element.strip_prefix("f:") {
            out.push('.');
            out.push_str(field);
        } else if let Some(key) = element.strip_prefix("k:") {
            let map: serde_json::Map<String, Value> = serde_json::from_str(key).unwrap_or_default();
            let pairs: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("[{}]", pairs.join(",")));
        } else if let Some(value) = element.strip_prefix("v:") {
            out.push_str(&format!("[={value}]"));
        }
    }
    out
}

/// The 409 of an apply that would change fields other managers own.
fn conflict_error(conflicts: &[(String, String, FieldPath)]) -> ApiError {
    let count = conflicts.len();
    let message = if let [(manager, api_version, path)] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with \"{manager}\" using {api_version}: {}",
            render_path(path)
        )
    } else {
        let mut groups: Vec<(String, String, Vec<String>)> = Vec::new();
        for (manager, api_version, path) in conflicts {
            match groups.iter_mut().find(|g| &g.0 == manager && &g.1 == api_version) {
                Some(group) => group.2.push(render_path(path)),
                None => groups.push((manager.clone(), api_version.clone(), vec![render_path(path)])),
            }
        }
        let listed: Vec<String> = groups
            .iter()
            .map(|(manager, api_version, paths)| {
                let word = if paths.len() == 1 { "conflict" } else { "conflicts" };
                format!(
                    "{word} with \"{manager}\" using {api_version}:\n- {}",
                    paths.join("\n- ")
                )
            })
            .collect();
        format!("Apply failed with {count} conflicts: {}", listed.join("\n"))
    };
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(manager, api_version, path)| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with \"{manager}\" using {api_version}"),
                "field": render_path(path),
            })
        })
        .collect();
    ApiError::new(409, "Conflict", message).with_details(json!({"causes": causes}))
}

/// What an apply needs besides the objects.
pub(crate) struct Apply<'a> {
    /// Who applies.
    pub(crate) writer: &'a Writer,
    /// Whether conflicting fields are taken over.
    pub(crate) force: bool,
    /// The list types of the object's schema.
    pub(crate) list_types: &'a dyn ListTypes,
    /// Whether `status` counts (the status subresource, or types without one).
    pub(crate) with_status: bool,
}

/// Applies `config` to `live` (`{}` for a new object) and returns the object to store, with its
/// `managedFields`; 409 when it would change fields others own, without `force`.
pub(crate) fn apply(live: &Value, config: &Value, apply: &Apply<'_>) -> Result<Value, ApiError> {
    let mut all = entries(live);
    let applied = FieldSet::of_object(config, apply.list_types, apply.with_status);
    let previous = all
        .iter()
        .find(|e| e.is(apply.writer, "Apply"))
        .map(|e| e.fields.clone())
        .unwrap_or_default();
    let others = |all: &[Entry]| {
        all.iter()
            .filter(|e| e.manager != apply.writer.manager)
            .fold(FieldSet::default(), |set, e| set.union(&e.fields))
    };
    let mut merged = merge_applied(live, config, &mut Vec::new(), apply.list_types);
    let owned_by_others = others(&all);
    for path in previous.difference(&applied).paths() {
        if !owned_by_others.touches(&path) {
            remove_at(&mut merged, &path);
        }
    }
    let mut conflicts = Vec::new();
    for entry in all.iter().filter(|e| e.manager != apply.writer.manager) {
        for path in entry.fields.intersection(&applied).paths() {
            if differs(live, &merged, &path) {
                conflicts.push((entry.manager.clone(), entry.api_version.clone(), path));
            }
        }
    }
    if !conflicts.is_empty() {
        if !apply.force {
            return Err(conflict_error(&conflicts));
        }
        let taken = conflicts
            .iter()
            .fold(FieldSet::default(), |mut set, (_, _, path)| {
                set.insert(path);
                set
            });
        for entry in all.iter_mut().filter(|e| e.manager != apply.writer.manager) {
            entry.fields = entry.fields.difference(&taken);
        }
    }
    own(&mut all, apply.writer, "Apply", applied, true);
    write_entries(&mut merged, all);
    Ok(merged)
}

/// Records an update from `old` (`None` for a create) to `new` by `writer`: it takes the
/// fields whose values it changed. `new` keeps the `managedFields` it was sent with when they
/// differ from the old ones (a client resetting them), else gets the old ones.
pub(crate) fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    writer: &Writer,
    list_types: &dyn ListTypes,
    with_status: bool,
) {
    let empty = json!({});
    let old = old.unwrap_or(&empty);
    if old["metadata"].get("managedFields").is_some() && new["metadata"].get("managedFields").is_none() {
        crate::storage::store::metadata_mut(new)
            .insert("managedFields".into(), old["metadata"]["managedFields"].clone());
    }
    let sent = value_at(new, &["f:metadata".into(), "f:managedFields".into()]).cloned();
    let mut all = match sent {
        Some(sent) if Some(&sent) != old["metadata"].get("managedFields") => entries(new),
        _ => entries(old),
    };
    let before = FieldSet::of_object(old, list_types, with_status);
    let after = FieldSet::of_object(new, list_types, with_status);
    let mut changed = FieldSet::default();
    for path in before.union(&after).paths() {
        if differs(old, new, &path) {
            changed.insert(&path);
        }
    }
    if changed.is_empty() {
        write_entries(new, all);
        return;
    }
    for entry in &mut all {
        entry.fields = entry.fields.difference(&changed);
    }
    own(&mut all, writer, "Update", changed.intersection(&after), false);
    write_entries(new, all);
}

#[cfg(test)]
mod tests;
