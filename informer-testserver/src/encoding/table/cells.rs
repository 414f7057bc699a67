//! The pieces every kind's columns are made of: a column definition, how its cell is computed,
//! and the ways kube-apiserver's printers write values (ages, label selectors, lists of
//! containers, "N more").

use jiff::Timestamp;
use serde_json::{Value, json};

/// One column: its name, type and format, what it shows, and its priority (0: always shown;
/// 1: with `-o wide`).
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub(crate) name: String,
    pub(crate) kind: &'static str,
    pub(crate) format: &'static str,
    pub(crate) description: String,
    pub(crate) priority: i64,
    pub(crate) cell: Cell,
}

/// How a column's cell is computed from an object.
#[derive(Debug, Clone)]
pub(crate) enum Cell {
    Name,
    Age,
    /// A CRD column's JSON path; dates stay timestamps, for the client to format.
    Path(String),
    /// A built-in printer's cell.
    Builtin(fn(&Value) -> Value),
}

/// A column computing `cell`; the name column is formatted `name`.
pub(crate) fn column(name: &str, kind: &'static str, priority: i64, description: &str, cell: Cell) -> Column {
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

/// The `Name` column most kinds start with.
pub(crate) fn name_column() -> Column {
    column(
        "Name",
        "string",
        0,
        "Name must be unique within a namespace.",
        Cell::Name,
    )
}

/// The `Age` column: the time since the object was created.
pub(crate) fn age_column() -> Column {
    column(
        "Age",
        "string",
        0,
        "The time since the object was created.",
        Cell::Age,
    )
}

/// A built-in printer's column.
pub(crate) fn builtin(name: &str, kind: &'static str, priority: i64, cell: fn(&Value) -> Value) -> Column {
    column(name, kind, priority, name, Cell::Builtin(cell))
}

/// An integer, 0 when absent.
pub(crate) fn int(value: &Value) -> Value {
    json!(value.as_i64().unwrap_or(0))
}

/// A string, `default` when absent or empty.
pub(crate) fn text(value: &Value, default: &str) -> Value {
    json!(value.as_str().filter(|s| !s.is_empty()).unwrap_or(default))
}

/// The entries of a map or list.
pub(crate) fn count(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.len(),
        Value::Array(list) => list.len(),
        _ => 0,
    }
}

/// The items of a list (none when absent).
pub(crate) fn items(value: &Value) -> impl Iterator<Item = &Value> {
    value.as_array().into_iter().flatten()
}

/// Go's `True`/`False`.
pub(crate) fn go_bool(value: bool) -> Value {
    json!(if value { "True" } else { "False" })
}

/// `field` of each container, comma-separated (the printers' container layout).
pub(crate) fn containers(containers: &Value, field: &str) -> Value {
    let values: Vec<&str> = items(containers)
        .map(|c| c[field].as_str().unwrap_or_default())
        .collect();
    json!(values.join(","))
}

/// `field` of each container of a pod template at `.spec.template`.
pub(crate) fn template_containers(object: &Value, field: &str) -> Value {
    containers(&object["spec"]["template"]["spec"]["containers"], field)
}

/// A map of labels as `labels.FormatLabels` writes it: sorted `k=v` pairs, `<none>` when empty.
pub(crate) fn labels(map: &Value) -> Value {
    let mut pairs: Vec<String> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    json!(if pairs.is_empty() {
        "<none>".to_owned()
    } else {
        pairs.join(",")
    })
}

/// A `LabelSelector` as a selector string: requirements sorted by key (`k=v`, `k in (a,b)`,
/// `k notin (a)`, `k`, `!k`); empty when it selects everything.
pub(crate) fn selector_string(selector: &Value) -> String {
    let mut requirements: Vec<(String, String)> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())))
        .collect();
    for expression in items(&selector["matchExpressions"]) {
        let key = expression["key"].as_str().unwrap_or_default();
        let mut values: Vec<&str> = items(&expression["values"]).filter_map(Value::as_str).collect();
        values.sort_unstable();
        let values = values.join(",");
        let written = match expression["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other} ({values})"),
        };
        requirements.push((key.to_owned(), written));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    requirements
        .into_iter()
        .map(|(_, written)| written)
        .collect::<Vec<_>>()
        .join(",")
}

/// A `LabelSelector` as `metav1.FormatLabelSelector` writes it: `<none>` when it is empty.
pub(crate) fn label_selector(selector: &Value) -> Value {
    let written = selector_string(selector);
    json!(if written.is_empty() {
        "<none>".to_owned()
    } else {
        written
    })
}

/// Up to `max` values, then ` + N more...`; `empty` when there are none.
pub(crate) fn with_more(values: &[String], max: usize, empty: &str) -> Value {
    if values.is_empty() {
        return json!(empty);
    }
    let shown = values[..values.len().min(max)].join(",");
    json!(if values.len() > max {
        format!("{shown} + {} more...", values.len() - max)
    } else {
        shown
    })
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

/// A timestamp's seconds since the epoch.
pub(crate) fn seconds(timestamp: &Value) -> Option<i64> {
    timestamp
        .as_str()
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map(|t| t.as_second())
}

/// The time since `timestamp` as kubectl prints it; `<unknown>` without one.
pub(crate) fn since(timestamp: &Value) -> Value {
    match seconds(timestamp) {
        Some(then) => json!(ago(then)),
        None => json!("<unknown>"),
    }
}

/// The time since `then` (seconds since the epoch) as kubectl prints it.
pub(crate) fn ago(then: i64) -> String {
    human_duration(Timestamp::now().as_second() - then)
}

/// The time since the object was created.
pub(crate) fn age(object: &Value) -> Value {
    since(&object["metadata"]["creationTimestamp"])
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
    fn label_selectors_read_as_kubectl_prints_them() {
        let selector = json!({
            "matchLabels": {"tier": "web"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "zone", "operator": "DoesNotExist"},
            ],
        });
        assert_eq!(label_selector(&selector), "env in (dev,prod),tier=web,!zone");
        assert_eq!(label_selector(&json!({})), "<none>");
        assert_eq!(labels(&json!({"b": "2", "a": "1"})), "a=1,b=2");
    }
}
