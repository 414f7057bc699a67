//! A horizontal pod autoscaler's `Targets` cell: each metric's current value over its target
//! (`cpu: 40%/80%`, `2/5 (avg)`), two at most, then `+ N more...`.

use serde_json::{Value, json};

use super::cells::items;

/// The `Targets` cell of an autoscaling/v2 (`spec.metrics`) or v1
/// (`spec.targetCPUUtilizationPercentage`) autoscaler.
pub(crate) fn targets(hpa: &Value) -> Value {
    let spec = &hpa["spec"];
    if let Some(target) = spec["targetCPUUtilizationPercentage"].as_i64() {
        let current = match hpa["status"]["currentCPUUtilizationPercentage"].as_i64() {
            Some(current) => format!("{current}%"),
            None => "<unknown>".into(),
        };
        return json!(format!("cpu: {current}/{target}%"));
    }
    let specs: Vec<&Value> = items(&spec["metrics"]).collect();
    if specs.is_empty() {
        return json!("<none>");
    }
    let statuses: Vec<&Value> = items(&hpa["status"]["currentMetrics"]).collect();
    let written: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, metric)| metric_target(metric, statuses.get(i).copied()))
        .collect();
    let max = 2;
    let shown = written[..written.len().min(max)].join(", ");
    json!(if written.len() > max {
        format!("{shown} + {} more...", written.len() - max)
    } else {
        shown
    })
}

fn quantity(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => "0".into(),
    }
}

/// One metric: `current/target`, the current value `<unknown>` until the status has it.
fn metric_target(metric: &Value, status: Option<&Value>) -> String {
    let kind = metric["type"].as_str().unwrap_or_default();
    let field = match kind {
        "External" => "external",
        "Pods" => "pods",
        "Object" => "object",
        "Resource" => "resource",
        "ContainerResource" => "containerResource",
        _ => return "<unknown type>".into(),
    };
    let source = &metric[field];
    let target = &source["target"];
    let current = status.map(|s| &s[field]["current"]).filter(|c| c.is_object());
    let current_of = |key: &str| {
        current
            .map(|c| &c[key])
            .filter(|v| !v.is_null())
            .map_or_else(|| "<unknown>".to_owned(), quantity)
    };
    match kind {
        "Pods" => format!(
            "{}/{}",
            current_of("averageValue"),
            quantity(&target["averageValue"])
        ),
        "External" | "Object" if !target["averageValue"].is_null() => format!(
            "{}/{} (avg)",
            current_of("averageValue"),
            quantity(&target["averageValue"])
        ),
        "External" | "Object" => format!("{}/{}", current_of("value"), quantity(&target["value"])),
        _ => {
            let name = source["name"].as_str().unwrap_or_default();
            if !target["averageValue"].is_null() {
                return format!(
                    "{name}: {}/{}",
                    current_of("averageValue"),
                    quantity(&target["averageValue"])
                );
            }
            let current = current
                .and_then(|c| c["averageUtilization"].as_i64())
                .map_or_else(|| "<unknown>".to_owned(), |u| format!("{u}%"));
            let target = target["averageUtilization"]
                .as_i64()
                .map_or_else(|| "<auto>".to_owned(), |u| format!("{u}%"));
            format!("{name}: {current}/{target}")
        }
    }
}
