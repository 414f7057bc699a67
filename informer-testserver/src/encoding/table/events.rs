//! An event's columns (core v1 and events.k8s.io alike): when it was last seen, its type,
//! reason, object (`kind/name`) and message; with `-o wide` its subobject, source, first time,
//! count and name.

use serde_json::{Value, json};

use super::cells::{Column, builtin, name_column, since, text};

/// The columns of events; core v1 and events.k8s.io/v1 name some fields differently, and both
/// are read.
pub(crate) fn event_columns() -> Vec<Column> {
    vec![
        builtin("Last Seen", "string", 0, last_seen),
        builtin("Type", "string", 0, |o| text(&o["type"], "")),
        builtin("Reason", "string", 0, |o| text(&o["reason"], "")),
        builtin("Object", "string", 0, |o| {
            let regarding = regarding(o);
            let kind = regarding["kind"].as_str().unwrap_or_default().to_lowercase();
            json!(match regarding["name"].as_str().filter(|n| !n.is_empty()) {
                Some(name) => format!("{kind}/{name}"),
                None => kind,
            })
        }),
        builtin("Subobject", "string", 1, |o| text(&regarding(o)["fieldPath"], "")),
        builtin("Source", "string", 1, source),
        builtin("Message", "string", 0, |o| {
            json!(either(o, "message", "note").as_str().unwrap_or_default().trim())
        }),
        builtin("First Seen", "string", 1, first_seen),
        builtin("Count", "string", 1, |o| {
            if o["series"].is_object() {
                return json!(o["series"]["count"].as_i64().unwrap_or(0));
            }
            // singleton events of the new API have no count
            match either(o, "count", "deprecatedCount").as_i64().unwrap_or(0) {
                0 => json!(1),
                count => json!(count),
            }
        }),
        Column {
            priority: 1,
            ..name_column()
        },
    ]
}

/// The core v1 field `core`, else the events.k8s.io field `events`.
fn either<'a>(event: &'a Value, core: &str, events: &str) -> &'a Value {
    match &event[core] {
        Value::Null => &event[events],
        value => value,
    }
}

fn regarding(event: &Value) -> &Value {
    either(event, "involvedObject", "regarding")
}

fn first_seen(event: &Value) -> Value {
    match either(event, "firstTimestamp", "deprecatedFirstTimestamp") {
        Value::String(_) => since(either(event, "firstTimestamp", "deprecatedFirstTimestamp")),
        _ => since(&event["eventTime"]),
    }
}

fn last_seen(event: &Value) -> Value {
    if event["series"].is_object() {
        return since(&event["series"]["lastObservedTime"]);
    }
    match either(event, "lastTimestamp", "deprecatedLastTimestamp") {
        last @ Value::String(_) => since(last),
        _ => first_seen(event),
    }
}

/// `component, host`: the source's, else the reporting controller and instance.
fn source(event: &Value) -> Value {
    let source = either(event, "source", "deprecatedSource");
    let first = |value: &Value, fallback: &str| {
        value
            .as_str()
            .filter(|s| !s.is_empty())
            .or(event[fallback].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let component = first(&source["component"], "reportingController");
    let host = first(&source["host"], "reportingInstance");
    json!(if host.is_empty() {
        component
    } else {
        format!("{component}, {host}")
    })
}
