//! The columns of networking kinds: ingresses, ingress classes, network policies and endpoint
//! slices.

use serde_json::{Value, json};

use super::cells::{Column, age_column, builtin, items, label_selector, name_column, text, with_more};
use super::core::load_balancer;

/// The columns of a networking kind; `None` for other kinds.
pub(crate) fn columns(group: &str, plural: &str) -> Option<Vec<Column>> {
    let columns = match (group, plural) {
        ("networking.k8s.io", "ingresses") => vec![
            name_column(),
            builtin("Class", "string", 0, |o| {
                text(&o["spec"]["ingressClassName"], "<none>")
            }),
            builtin("Hosts", "string", 0, hosts),
            builtin("Address", "string", 0, |o| {
                json!(load_balancer(&o["status"]).join(","))
            }),
            builtin("Ports", "string", 0, |o| {
                json!(if items(&o["spec"]["tls"]).next().is_some() {
                    "80, 443"
                } else {
                    "80"
                })
            }),
            age_column(),
        ],
        ("networking.k8s.io", "ingressclasses") => vec![
            name_column(),
            builtin("Controller", "string", 0, |o| text(&o["spec"]["controller"], "")),
            builtin("Parameters", "string", 0, |o| {
                let parameters = &o["spec"]["parameters"];
                if !parameters.is_object() {
                    return json!("<none>");
                }
                let kind = parameters["kind"].as_str().unwrap_or_default();
                let name = parameters["name"].as_str().unwrap_or_default();
                json!(match parameters["apiGroup"].as_str() {
                    Some(group) => format!("{kind}.{group}/{name}"),
                    None => format!("{kind}/{name}"),
                })
            }),
            age_column(),
        ],
        ("networking.k8s.io", "networkpolicies") => vec![
            name_column(),
            builtin("Pod-Selector", "string", 0, |o| {
                label_selector(&o["spec"]["podSelector"])
            }),
            age_column(),
        ],
        ("discovery.k8s.io", "endpointslices") => vec![
            name_column(),
            builtin("AddressType", "string", 0, |o| text(&o["addressType"], "")),
            builtin("Ports", "string", 0, |o| {
                let ports: Vec<String> = items(&o["ports"])
                    .map(|p| match (&p["port"], &p["name"]) {
                        (Value::Number(port), _) => port.to_string(),
                        (_, Value::String(name)) => name.clone(),
                        _ => "*".into(),
                    })
                    .collect();
                with_more(&ports, 3, "<unset>")
            }),
            builtin("Endpoints", "string", 0, |o| {
                let addresses: Vec<String> = items(&o["endpoints"])
                    .flat_map(|e| items(&e["addresses"]))
                    .filter_map(|a| a.as_str().map(str::to_owned))
                    .collect();
                with_more(&addresses, 3, "<unset>")
            }),
            age_column(),
        ],
        ("networking.k8s.io", "servicecidrs") => vec![
            name_column(),
            builtin("CIDRs", "string", 0, |o| {
                let cidrs: Vec<&str> = items(&o["spec"]["cidrs"]).filter_map(Value::as_str).collect();
                json!(cidrs.join(","))
            }),
            age_column(),
        ],
        _ => return None,
    };
    Some(columns)
}

/// The rules' hosts, three at most (rules without a host skipped); `*` when none names one.
fn hosts(ingress: &Value) -> Value {
    let rules: Vec<&Value> = items(&ingress["spec"]["rules"]).collect();
    let max = 3;
    let mut listed: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in &rules {
        if listed.len() == max {
            more = true;
            break;
        }
        listed.extend(rule["host"].as_str().filter(|h| !h.is_empty()));
    }
    if listed.is_empty() {
        return json!("*");
    }
    let shown = listed.join(",");
    json!(if more {
        format!("{shown} + {} more...", rules.len() - max)
    } else {
        shown
    })
}
