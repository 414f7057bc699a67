//! `Table` answers (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), what `kubectl get`
//! prints: a column definition per column and a row of cells per object, with the columns
//! kube-apiserver's printers give the common built-in kinds, a CRD version's
//! `additionalPrinterColumns`, and `Name` and `Created At` for every other type.
//!
//! Each row carries the object as `includeObject` asks: `Metadata` (the default) a
//! `PartialObjectMetadata`, `Object` the whole object, `None` nothing.

mod autoscaling;
mod cells;
mod cluster;
mod core;
mod events;
mod networking;
mod pod;
mod rbac;
mod resource;
mod storage;
mod workloads;

use serde_json::{Value, json};

pub(crate) use self::cells::Column;
use self::cells::{Cell, age_column, column, name_column};
use crate::encoding::partial_metadata;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::State;

/// What each row carries (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    None,
    Metadata,
    Object,
}

impl IncludeObject {
    /// The `includeObject` query parameter; an unknown value is a 400.
    pub(crate) fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value {
            None | Some("" | "Metadata") => Ok(Self::Metadata),
            Some("None") => Ok(Self::None),
            Some("Object") => Ok(Self::Object),
            Some(other) => Err(ApiError::bad_request(format!(
                "includeObject: Unsupported value: {other:?}: supported values: \"Metadata\", \"None\", \"Object\""
            ))),
        }
    }
}

impl State {
    /// The columns of `rt`'s tables: a CRD-defined type's come from its CRD's version.
    pub(crate) fn table_columns(&self, rt: &ResourceType) -> Vec<Column> {
        let printer_columns = self
            .crd_version(rt)
            .map(|version| version["additionalPrinterColumns"].clone());
        columns(rt, printer_columns.as_ref())
    }
}

/// The columns of `rt`'s objects; `printer_columns` are a CRD version's
/// `additionalPrinterColumns` (`None` for types not defined by a CRD).
pub(crate) fn columns(rt: &ResourceType, printer_columns: Option<&Value>) -> Vec<Column> {
    if let Some(printer_columns) = printer_columns {
        return crd_columns(printer_columns);
    }
    builtin_columns(&rt.group, &rt.plural).unwrap_or_else(|| {
        vec![
            name_column(),
            column(
                "Created At",
                "date",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
                Cell::Path(".metadata.creationTimestamp".into()),
            ),
        ]
    })
}

/// The columns kube-apiserver's printers give a built-in kind; `None` for kinds without a
/// printer.
fn builtin_columns(group: &str, plural: &str) -> Option<Vec<Column>> {
    if plural == "events" && (group.is_empty() || group == "events.k8s.io") {
        return Some(events::event_columns());
    }
    workloads::columns(group, plural)
        .or_else(|| self::core::columns(group, plural))
        .or_else(|| networking::columns(group, plural))
        .or_else(|| storage::columns(group, plural))
        .or_else(|| rbac::columns(group, plural))
        .or_else(|| cluster::columns(group, plural))
        .or_else(|| resource::columns(group, plural))
}

fn crd_columns(printer_columns: &Value) -> Vec<Column> {
    let mut columns = vec![name_column()];
    let declared = printer_columns.as_array().filter(|c| !c.is_empty());
    let Some(declared) = declared else {
        columns.push(age_column());
        return columns;
    };
    for declared in declared {
        let kind = match declared["type"].as_str().unwrap_or("string") {
            "integer" => "integer",
            "number" => "number",
            "boolean" => "boolean",
            "date" => "date",
            _ => "string",
        };
        columns.push(Column {
            name: declared["name"].as_str().unwrap_or_default().to_owned(),
            kind,
            format: "",
            description: declared["description"].as_str().unwrap_or_default().to_owned(),
            priority: declared["priority"].as_i64().unwrap_or(0),
            cell: Cell::Path(declared["jsonPath"].as_str().unwrap_or_default().to_owned()),
        });
    }
    columns
}

/// The values a simple JSON path (`.a.b`, `.a[0].b`, `.a[?(@.k=="v")].b`) selects.
fn select<'a>(object: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut current = vec![object];
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    for segment in split_path(path) {
        current = current
            .into_iter()
            .flat_map(|value| step(value, &segment))
            .collect();
    }
    current
}

fn split_path(path: &str) -> Vec<String> {
    let mut segments = Vec::new();
    let mut buffer = String::new();
    let mut depth = 0;
    for ch in path.chars() {
        match ch {
            '[' => {
                if !buffer.is_empty() {
                    segments.push(std::mem::take(&mut buffer));
                }
                depth += 1;
                buffer.push(ch);
            }
            ']' => {
                depth -= 1;
                buffer.push(ch);
                if depth == 0 {
                    segments.push(std::mem::take(&mut buffer));
                }
            }
            '.' if depth == 0 => {
                if !buffer.is_empty() {
                    segments.push(std::mem::take(&mut buffer));
                }
            }
            _ => buffer.push(ch),
        }
    }
    if !buffer.is_empty() {
        segments.push(buffer);
    }
    segments
}

fn step<'a>(value: &'a Value, segment: &str) -> Vec<&'a Value> {
    let Some(inner) = segment.strip_prefix('[').and_then(|s| s.strip_suffix(']')) else {
        return value.get(segment).into_iter().collect();
    };
    let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
    if inner == "*" {
        return items.iter().collect();
    }
    if let Ok(index) = inner.parse::<usize>() {
        return items.get(index).into_iter().collect();
    }
    let filter = inner.trim_start_matches("?(").trim_end_matches(')');
    let Some((field, wanted)) = filter.split_once("==") else {
        return Vec::new();
    };
    let field = field.trim().trim_start_matches("@.");
    let wanted = wanted.trim().trim_matches(|c| c == '"' || c == '\'');
    items
        .iter()
        .filter(|item| match &item[field] {
            Value::String(text) => text == wanted,
            other => *other == wanted.parse::<Value>().unwrap_or(Value::Null),
        })
        .collect()
}

fn cell(column: &Column, object: &Value) -> Value {
    match &column.cell {
        Cell::Name => object["metadata"]["name"].clone(),
        Cell::Age => cells::age(object),
        Cell::Builtin(compute) => compute(object),
        Cell::Path(path) => match select(object, path).as_slice() {
            [] => Value::Null,
            [one] => (*one).clone(),
            many => json!(
                many.iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        },
    }
}

fn definitions(columns: &[Column]) -> Vec<Value> {
    columns
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "type": c.kind,
                "format": c.format,
                "description": c.description,
                "priority": c.priority,
            })
        })
        .collect()
}

fn row(columns: &[Column], object: &Value, include: IncludeObject, version: &str) -> Value {
    let cells: Vec<Value> = columns.iter().map(|c| cell(c, object)).collect();
    match include {
        IncludeObject::None => json!({"cells": cells}),
        IncludeObject::Metadata => {
            json!({"cells": cells, "object": partial_metadata::object(object, version)})
        }
        IncludeObject::Object => json!({"cells": cells, "object": object}),
    }
}

/// A watch event line with its object as a `Table` of one row (column definitions only when
/// `with_definitions`); `ERROR` events pass unchanged, a bookmark's object becomes a `Table`
/// without rows that carries its resource version.
pub(crate) fn watch_line(
    line: bytes::Bytes,
    columns: &[Column],
    include: IncludeObject,
    version: &str,
    with_definitions: bool,
) -> bytes::Bytes {
    crate::storage::watch::reshape_event(line, |kind, object| {
        let metadata = json!({"resourceVersion": object["metadata"]["resourceVersion"]});
        let rows: &[Value] = if kind == "BOOKMARK" {
            &[]
        } else {
            std::slice::from_ref(&object)
        };
        table(columns, rows, metadata, include, version, with_definitions)
    })
}

/// A `Table` of `objects` (with or without column definitions), with `metadata` (a list's
/// resource version and continue token).
pub(crate) fn table(
    columns: &[Column],
    objects: &[Value],
    metadata: Value,
    include: IncludeObject,
    version: &str,
    with_definitions: bool,
) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| row(columns, o, include, version))
        .collect();
    let definitions = if with_definitions {
        definitions(columns)
    } else {
        Vec::new()
    };
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata,
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths_select_fields_indices_and_filters() {
        let object = json!({"status": {"conditions": [
            {"type": "Ready", "status": "True"},
            {"type": "Synced", "status": "False"},
        ]}, "spec": {"replicas": 3}});
        assert_eq!(select(&object, ".spec.replicas"), [&json!(3)]);
        assert_eq!(select(&object, ".status.conditions[1].type"), [&json!("Synced")]);
        assert_eq!(
            select(&object, r#".status.conditions[?(@.type=="Ready")].status"#),
            [&json!("True")]
        );
        assert!(select(&object, ".spec.missing").is_empty());
    }

    #[test]
    fn pods_get_kubectl_columns() {
        let pods = ResourceType::new("", "v1", "Pod", "pods", true);
        let columns = columns(&pods, None);
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Name",
                "Ready",
                "Status",
                "Restarts",
                "Age",
                "IP",
                "Node",
                "Nominated Node",
                "Readiness Gates"
            ]
        );
        let pod = json!({
            "metadata": {"name": "p", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [{"ready": true, "restartCount": 2, "state": {"running": {}}}, {"ready": false, "restartCount": 1}]},
        });
        let table = table(&columns, &[pod], json!({}), IncludeObject::None, "v1", true);
        let cells = &table["rows"][0]["cells"];
        assert_eq!(cells[0], "p");
        assert_eq!(cells[1], "1/2");
        assert_eq!(cells[2], "Running");
        assert_eq!(cells[3], "3");
        assert!(
            cells[4]
                .as_str()
                .is_some_and(|age| age.ends_with('y') || age.contains('y'))
        );
        assert_eq!(table["columnDefinitions"][0]["format"], "name");
    }
}
