//! The columns of core kinds that are not workloads: services and their endpoints, config maps,
//! secrets, namespaces, service accounts, resource quotas and component statuses.

use serde_json::{Value, json};

use super::cells::{Column, age_column, builtin, count, int, items, labels, name_column, text, with_more};

/// The columns of a core kind; `None` for other kinds.
pub(crate) fn columns(group: &str, plural: &str) -> Option<Vec<Column>> {
    if !group.is_empty() {
        return None;
    }
    let columns = match plural {
        "services" => vec![
            name_column(),
            builtin("Type", "string", 0, |o| text(&o["spec"]["type"], "ClusterIP")),
            builtin("Cluster-IP", "string", 0, |o| {
                let first = &o["spec"]["clusterIPs"][0];
                text(
                    if first.is_string() {
                        first
                    } else {
                        &o["spec"]["clusterIP"]
                    },
                    "<none>",
                )
            }),
            builtin("External-IP", "string", 0, external_ips),
            builtin("Port(s)", "string", 0, service_ports),
            age_column(),
            builtin("Selector", "string", 1, |o| labels(&o["spec"]["selector"])),
        ],
        "endpoints" => vec![
            name_column(),
            builtin("Endpoints", "string", 0, endpoints),
            age_column(),
        ],
        "configmaps" => vec![
            name_column(),
            builtin("Data", "string", 0, |o| {
                json!(count(&o["data"]) + count(&o["binaryData"]))
            }),
            age_column(),
        ],
        "secrets" => vec![
            name_column(),
            builtin("Type", "string", 0, |o| text(&o["type"], "Opaque")),
            builtin("Data", "string", 0, |o| json!(count(&o["data"]))),
            age_column(),
        ],
        "namespaces" => vec![
            name_column(),
            builtin("Status", "string", 0, |o| text(&o["status"]["phase"], "Active")),
            age_column(),
        ],
        "serviceaccounts" => vec![
            name_column(),
            builtin("Secrets", "string", 0, |o| json!(count(&o["secrets"]))),
            age_column(),
        ],
        "resourcequotas" => vec![
            name_column(),
            builtin("Request", "string", 0, |o| quota(o, false)),
            builtin("Limit", "string", 0, |o| quota(o, true)),
            age_column(),
        ],
        "componentstatuses" => vec![
            name_column(),
            builtin("Status", "string", 0, |o| {
                json!(match healthy_condition(o) {
                    Some(c) if c["status"] == "True" => "Healthy",
                    Some(_) => "Unhealthy",
                    None => "Unknown",
                })
            }),
            builtin("Message", "string", 0, |o| {
                text(&healthy_condition(o).unwrap_or(&Value::Null)["message"], "")
            }),
            builtin("Error", "string", 0, |o| {
                text(&healthy_condition(o).unwrap_or(&Value::Null)["error"], "")
            }),
        ],
        _ => return None,
    };
    Some(columns)
}

fn healthy_condition(status: &Value) -> Option<&Value> {
    items(&status["conditions"]).find(|c| c["type"] == "Healthy")
}

/// The load balancer's IPs (or host names), sorted and without repeats.
pub(crate) fn load_balancer(status: &Value) -> Vec<String> {
    let mut ips: Vec<String> = items(&status["loadBalancer"]["ingress"])
        .filter_map(|i| {
            i["ip"]
                .as_str()
                .filter(|ip| !ip.is_empty())
                .or(i["hostname"].as_str().filter(|h| !h.is_empty()))
                .map(str::to_owned)
        })
        .collect();
    ips.sort();
    ips.dedup();
    ips
}

fn external_ips(service: &Value) -> Value {
    let spec = &service["spec"];
    let external: Vec<String> = items(&spec["externalIPs"])
        .filter_map(|ip| ip.as_str().map(str::to_owned))
        .collect();
    match spec["type"].as_str().unwrap_or("ClusterIP") {
        "ClusterIP" | "NodePort" if external.is_empty() => json!("<none>"),
        "ClusterIP" | "NodePort" => json!(external.join(",")),
        "LoadBalancer" => {
            let mut all = load_balancer(&service["status"]);
            all.extend(external);
            json!(if all.is_empty() {
                "<pending>".to_owned()
            } else {
                all.join(",")
            })
        }
        "ExternalName" => text(&spec["externalName"], ""),
        _ => json!("<unknown>"),
    }
}

fn service_ports(service: &Value) -> Value {
    let ports: Vec<String> = items(&service["spec"]["ports"])
        .map(|p| {
            let port = p["port"].as_i64().unwrap_or(0);
            let protocol = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64().filter(|n| *n > 0) {
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

/// `ip:port` of every address and port (`ip` when a subset has no ports), three at most.
fn endpoints(object: &Value) -> Value {
    let subsets: Vec<&Value> = items(&object["subsets"]).collect();
    if subsets.is_empty() {
        return json!("<none>");
    }
    let mut all = Vec::new();
    for subset in subsets {
        let addresses: Vec<&str> = items(&subset["addresses"])
            .map(|a| a["ip"].as_str().unwrap_or_default())
            .collect();
        let ports: Vec<i64> = items(&subset["ports"])
            .map(|p| p["port"].as_i64().unwrap_or(0))
            .collect();
        if ports.is_empty() {
            all.extend(addresses.iter().map(|ip| (*ip).to_owned()));
        }
        for port in ports {
            all.extend(addresses.iter().map(|ip| host_port(ip, port)));
        }
    }
    with_more(&all, 3, "")
}

/// Go's `net.JoinHostPort`: IPv6 addresses in brackets.
pub(crate) fn host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A quota's `resource: used/hard` pairs, sorted; `limits.*` resources in the `Limit` column,
/// the others in `Request`.
fn quota(object: &Value, limits: bool) -> Value {
    let hard = object["status"]["hard"].as_object();
    let mut resources: Vec<&String> = hard.into_iter().flat_map(|h| h.keys()).collect();
    resources.sort();
    let written: Vec<String> = resources
        .into_iter()
        .filter(|r| r.starts_with("limits.") == limits)
        .map(|r| {
            let used = &object["status"]["used"][r.as_str()];
            let used = used.as_str().map_or_else(|| int(used).to_string(), str::to_owned);
            let hard = &object["status"]["hard"][r.as_str()];
            let hard = hard.as_str().map_or_else(|| int(hard).to_string(), str::to_owned);
            format!("{r}: {used}/{hard}")
        })
        .collect();
    json!(written.join(", "))
}
