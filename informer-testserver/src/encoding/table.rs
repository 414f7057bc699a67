//! `Table` answers (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), what `kubectl get`
//! prints: a column definition per column and a row of cells per object, with the columns
//! kube-apiserver's printers give the common built-in kinds, a CRD version's
//! `additionalPrinterColumns`, and `Name` and `Created At` for every other type.
//!
//! Each row carries the object as `includeObject` asks: `Metadata` (the default) a
//! `PartialObjectMetadata`, `Object` the whole object, `None` nothing.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::encoding::partial_metadata;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::State;

/// One column: its name, type and format, what it shows, and its priority (0: always shown;
/// 1: with `-o wide`).
#[derive(Debug, Clone)]
pub(crate) struct Column {
    name: String,
    kind: &'static str,
    format: &'static str,
    description: String,
    priority: i64,
    cell: Cell,
}

/// How a column's cell is computed from an object.
#[derive(Debug, Clone)]
enum Cell {
    Name,
    Age,
    /// A CRD column's JSON path; dates stay timestamps, for the client to format.
    Path(String),
    /// A built-in printer's cell.
    Builtin(fn(&Value) -> Value),
}

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

fn column(name: &str, kind: &'static str, priority: i64, description: &str, cell: Cell) -> Column {
    let format = match cell {
        Cell::Name => "name",
        _ => "",
    };
    Column {
        name: name.to_owned(),
        kind,
        format,
        description: description.to_owned(),
        priority,
        cell,
    }
}

fn name_column() -> Column {
    column(
        "Name",
        "string",
        0,
        "Name must be unique within a namespace.",
        Cell::Name,
    )
}

fn age_column() -> Column {
    column(
        "Age",
        "string",
        0,
        "The time since the object was created.",
        Cell::Age,
    )
}

fn builtin(name: &str, kind: &'static str, priority: i64, cell: fn(&Value) -> Value) -> Column {
    column(name, kind, priority, name, Cell::Builtin(cell))
}

/// The columns of `rt`'s objects; `printer_columns` are a CRD version's
/// `additionalPrinterColumns` (`None` for types not defined by a CRD).
pub(crate) fn columns(rt: &ResourceType, printer_columns: Option<&Value>) -> Vec<Column> {
    if let Some(printer_columns) = printer_columns {
        return crd_columns(printer_columns);
    }
    let mut columns = vec![name_column()];
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("", "pods") => columns.extend(pod_columns()),
        ("apps", "deployments") => columns.extend([
            builtin("Ready", "string", 0, |o| ratio(o, "readyReplicas", "replicas")),
            builtin("Up-to-date", "integer", 0, |o| {
                int(&o["status"]["updatedReplicas"])
            }),
            builtin("Available", "integer", 0, |o| {
                int(&o["status"]["availableReplicas"])
            }),
            age_column(),
            builtin("Containers", "string", 1, |o| container_field(o, "name")),
            builtin("Images", "string", 1, |o| container_field(o, "image")),
            builtin("Selector", "string", 1, |o| selector(&o["spec"]["selector"])),
        ]),
        ("apps", "replicasets") => columns.extend([
            builtin("Desired", "integer", 0, |o| int(&o["spec"]["replicas"])),
            builtin("Current", "integer", 0, |o| int(&o["status"]["replicas"])),
            builtin("Ready", "integer", 0, |o| int(&o["status"]["readyReplicas"])),
            age_column(),
            builtin("Containers", "string", 1, |o| container_field(o, "name")),
            builtin("Images", "string", 1, |o| container_field(o, "image")),
            builtin("Selector", "string", 1, |o| selector(&o["spec"]["selector"])),
        ]),
        ("apps", "statefulsets") => columns.extend([
            builtin("Ready", "string", 0, |o| ratio(o, "readyReplicas", "replicas")),
            age_column(),
            builtin("Containers", "string", 1, |o| container_field(o, "name")),
            builtin("Images", "string", 1, |o| container_field(o, "image")),
        ]),
        ("", "services") => columns.extend([
            builtin("Type", "string", 0, |o| text(&o["spec"]["type"], "ClusterIP")),
            builtin("Cluster-IP", "string", 0, |o| {
                text(&o["spec"]["clusterIP"], "<none>")
            }),
            builtin("External-IP", "string", 0, external_ips),
            builtin("Port(s)", "string", 0, service_ports),
            age_column(),
            builtin("Selector", "string", 1, |o| selector(&o["spec"]["selector"])),
        ]),
        ("", "configmaps") => columns.extend([
            builtin("Data", "integer", 0, |o| {
                json!(count(&o["data"]) + count(&o["binaryData"]))
            }),
            age_column(),
        ]),
        ("", "secrets") => columns.extend([
            builtin("Type", "string", 0, |o| text(&o["type"], "Opaque")),
            builtin("Data", "integer", 0, |o| {
                json!(count(&o["data"]) + count(&o["stringData"]))
            }),
            age_column(),
        ]),
        ("", "namespaces") => columns.extend([
            builtin("Status", "string", 0, |o| text(&o["status"]["phase"], "Active")),
            age_column(),
        ]),
        ("", "nodes") => columns.extend([
            builtin("Status", "string", 0, node_status),
            age_column(),
            builtin("Version", "string", 0, |o| {
                text(&o["status"]["nodeInfo"]["kubeletVersion"], "")
            }),
        ]),
        ("batch", "jobs") => columns.extend([
            builtin("Completions", "string", 0, |o| {
                let done = o["status"]["succeeded"].as_i64().unwrap_or(0);
                let want = o["spec"]["completions"].as_i64().unwrap_or(1);
                json!(format!("{done}/{want}"))
            }),
            age_column(),
            builtin("Containers", "string", 1, |o| container_field(o, "name")),
            builtin("Images", "string", 1, |o| container_field(o, "image")),
        ]),
        ("batch", "cronjobs") => columns.extend([
            builtin("Schedule", "string", 0, |o| text(&o["spec"]["schedule"], "")),
            builtin("Suspend", "boolean", 0, |o| {
                json!(o["spec"]["suspend"].as_bool().unwrap_or(false))
            }),
            builtin("Active", "integer", 0, |o| json!(count(&o["status"]["active"]))),
            age_column(),
        ]),
        ("coordination.k8s.io", "leases") => columns.extend([
            builtin("Holder", "string", 0, |o| text(&o["spec"]["holderIdentity"], "")),
            age_column(),
        ]),
        ("", "serviceaccounts") => columns.extend([
            builtin("Secrets", "integer", 0, |o| json!(count(&o["secrets"]))),
            age_column(),
        ]),
        _ => columns.push(column(
            "Created At",
            "date",
            0,
            "CreationTimestamp is a timestamp representing the server time when this object was created.",
            Cell::Path(".metadata.creationTimestamp".into()),
        )),
    }
    columns
}

fn pod_columns() -> [Column; 7] {
    [
        builtin("Ready", "string", 0, |o| {
            let total = o["spec"]["containers"].as_array().map_or(0, Vec::len);
            let ready = statuses(o).filter(|s| s["ready"] == true).count();
            json!(format!("{ready}/{total}"))
        }),
        builtin("Status", "string", 0, |o| {
            if o["metadata"]["deletionTimestamp"].is_string() {
                return json!("Terminating");
            }
            let reason = o["status"]["reason"].as_str();
            json!(reason.or(o["status"]["phase"].as_str()).unwrap_or("Pending"))
        }),
        builtin("Restarts", "string", 0, |o| {
            let restarts: i64 = statuses(o).filter_map(|s| s["restartCount"].as_i64()).sum();
            json!(restarts.to_string())
        }),
        age_column(),
        builtin("IP", "string", 1, |o| text(&o["status"]["podIP"], "<none>")),
        builtin("Node", "string", 1, |o| text(&o["spec"]["nodeName"], "<none>")),
        builtin("Nominated Node", "string", 1, |o| {
            text(&o["status"]["nominatedNodeName"], "<none>")
        }),
    ]
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

fn statuses(pod: &Value) -> impl Iterator<Item = &Value> {
    pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
}

fn int(value: &Value) -> Value {
    json!(value.as_i64().unwrap_or(0))
}

fn text(value: &Value, default: &str) -> Value {
    json!(value.as_str().filter(|s| !s.is_empty()).unwrap_or(default))
}

fn count(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.len(),
        Value::Array(list) => list.len(),
        _ => 0,
    }
}

fn ratio(object: &Value, ready: &str, desired: &str) -> Value {
    let ready = object["status"][ready].as_i64().unwrap_or(0);
    let desired = object["spec"][desired].as_i64().unwrap_or(0);
    json!(format!("{ready}/{desired}"))
}

fn container_field(object: &Value, field: &str) -> Value {
    let containers = object["spec"]["template"]["spec"]["containers"].as_array();
    let values: Vec<&str> = containers
        .into_iter()
        .flatten()
        .filter_map(|c| c[field].as_str())
        .collect();
    json!(values.join(","))
}

/// A `LabelSelector` or a map of labels as kubectl prints it.
fn selector(selector: &Value) -> Value {
    let labels = selector.get("matchLabels").unwrap_or(selector);
    let pairs: Vec<String> = labels
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    json!(if pairs.is_empty() {
        "<none>".to_owned()
    } else {
        pairs.join(",")
    })
}

fn external_ips(service: &Value) -> Value {
    let ingress = service["status"]["loadBalancer"]["ingress"].as_array();
    let mut ips: Vec<String> = ingress
        .into_iter()
        .flatten()
        .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()).map(str::to_owned))
        .collect();
    ips.extend(
        service["spec"]["externalIPs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|ip| ip.as_str().map(str::to_owned)),
    );
    match (ips.is_empty(), service["spec"]["type"].as_str()) {
        (true, Some("LoadBalancer")) => json!("<pending>"),
        (true, _) => json!("<none>"),
        (false, _) => json!(ips.join(",")),
    }
}

fn service_ports(service: &Value) -> Value {
    let ports: Vec<String> = service["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let port = p["port"].as_i64().unwrap_or(0);
            let protocol = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64() {
                Some(node_port) => format!("{port}:{node_port}/{protocol}"),
                None => format!("{port}/{protocol}"),
            }
        })
        .collect();
    json!(if ports.is_empty() {
        "<none>".to_owned()
    } else {
        ports.join(",")
    })
}

fn node_status(node: &Value) -> Value {
    let conditions = node["status"]["conditions"].as_array();
    let ready = conditions
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready")
        .map(|c| c["status"] == "True");
    let status = match ready {
        Some(true) => "Ready",
        Some(false) => "NotReady",
        None => "Unknown",
    };
    if node["spec"]["unschedulable"] == true {
        json!(format!("{status},SchedulingDisabled"))
    } else {
        json!(status)
    }
}

/// kube's `HumanDuration`: `45s`, `3m20s`, `25m`, `5h10m`, `3d4h`, `400d`, `3y20d`.
pub(crate) fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    let seconds = seconds.max(0);
    let (minutes, hours) = (seconds / 60, seconds / 3600);
    let days = hours / 24;
    match () {
        () if seconds < 120 => format!("{seconds}s"),
        () if minutes < 10 && seconds % 60 != 0 => format!("{minutes}m{}s", seconds % 60),
        () if minutes < 180 => format!("{minutes}m"),
        () if hours < 8 && minutes % 60 != 0 => format!("{hours}h{}m", minutes % 60),
        () if hours < 48 => format!("{hours}h"),
        () if hours < 24 * 8 && hours % 24 != 0 => format!("{days}d{}h", hours % 24),
        () if hours < 24 * 365 * 2 => format!("{days}d"),
        () if hours < 24 * 365 * 8 && days % 365 != 0 => format!("{}y{}d", days / 365, days % 365),
        () => format!("{}y", days / 365),
    }
}

fn age(object: &Value) -> Value {
    let created = object["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(|t| t.parse::<Timestamp>().ok());
    match created {
        Some(created) => json!(human_duration(Timestamp::now().as_second() - created.as_second())),
        None => json!("<unknown>"),
    }
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
        Cell::Age => age(object),
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
    fn durations_read_as_kubectl_prints_them() {
        // cases of apimachinery's TestHumanDuration
        for (seconds, want) in [
            (1, "1s"),
            (70, "70s"),
            (190, "3m10s"),
            (70 * 60, "70m"),
            (47 * 3600, "47h"),
            (3 * 24 * 3600 + 4 * 3600, "3d4h"),
            (49 * 3600, "2d1h"),
            (8 * 24 * 3600, "8d"),
            (367 * 24 * 3600, "367d"),
            (3 * 365 * 24 * 3600 + 20 * 24 * 3600, "3y20d"),
            (-5, "<invalid>"),
        ] {
            assert_eq!(human_duration(seconds), want, "{seconds}");
        }
    }

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
                "Nominated Node"
            ]
        );
        let pod = json!({
            "metadata": {"name": "p", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [{"ready": true, "restartCount": 2}, {"ready": false, "restartCount": 1}]},
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
