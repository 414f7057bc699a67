//! The columns of cluster-level kinds: nodes, leases, certificate signing requests, API
//! services, priority and runtime classes, admission webhook configurations and API priority
//! and fairness.

use serde_json::{Value, json};

use super::cells::{Column, age_column, builtin, human_duration, int, items, name_column, text};

/// The columns of a cluster-level kind; `None` for other kinds.
pub(crate) fn columns(group: &str, plural: &str) -> Option<Vec<Column>> {
    let columns = match (group, plural) {
        ("", "nodes") => node_columns(),
        ("coordination.k8s.io", "leases") => vec![
            name_column(),
            builtin("Holder", "string", 0, |o| text(&o["spec"]["holderIdentity"], "")),
            age_column(),
        ],
        ("certificates.k8s.io", "certificatesigningrequests") => vec![
            name_column(),
            age_column(),
            builtin("SignerName", "string", 0, |o| {
                text(&o["spec"]["signerName"], "<none>")
            }),
            builtin("Requestor", "string", 0, |o| text(&o["spec"]["username"], "")),
            builtin(
                "RequestedDuration",
                "string",
                0,
                |o| match o["spec"]["expirationSeconds"].as_i64() {
                    Some(seconds) => json!(human_duration(seconds)),
                    None => json!("<none>"),
                },
            ),
            builtin("Condition", "string", 0, csr_condition),
        ],
        ("apiregistration.k8s.io", "apiservices") => vec![
            name_column(),
            builtin("Service", "string", 0, |o| {
                match o["spec"]["service"]["name"].as_str() {
                    Some(name) => json!(format!(
                        "{}/{name}",
                        o["spec"]["service"]["namespace"].as_str().unwrap_or_default()
                    )),
                    None => json!("Local"),
                }
            }),
            builtin("Available", "string", 0, api_service_available),
            age_column(),
        ],
        ("scheduling.k8s.io", "priorityclasses") => vec![
            name_column(),
            builtin("Value", "integer", 0, |o| int(&o["value"])),
            builtin("Global-Default", "boolean", 0, |o| {
                json!(o["globalDefault"].as_bool().unwrap_or(false))
            }),
            age_column(),
            builtin("PreemptionPolicy", "string", 0, |o| {
                text(&o["preemptionPolicy"], "")
            }),
        ],
        ("node.k8s.io", "runtimeclasses") => vec![
            name_column(),
            builtin("Handler", "string", 0, |o| text(&o["handler"], "")),
            age_column(),
        ],
        (
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations" | "mutatingwebhookconfigurations",
        ) => vec![
            name_column(),
            builtin("Webhooks", "integer", 0, |o| json!(items(&o["webhooks"]).count())),
            age_column(),
        ],
        ("admissionregistration.k8s.io", "validatingadmissionpolicies" | "mutatingadmissionpolicies") => {
            vec![
                name_column(),
                if plural == "validatingadmissionpolicies" {
                    builtin("Validations", "integer", 0, |o| {
                        json!(items(&o["spec"]["validations"]).count())
                    })
                } else {
                    builtin("Mutations", "integer", 0, |o| {
                        json!(items(&o["spec"]["mutations"]).count())
                    })
                },
                builtin("ParamKind", "string", 0, |o| {
                    let kind = &o["spec"]["paramKind"];
                    json!(if kind.is_object() {
                        format!(
                            "{}/{}",
                            kind["apiVersion"].as_str().unwrap_or_default(),
                            kind["kind"].as_str().unwrap_or_default()
                        )
                    } else {
                        "<unset>".to_owned()
                    })
                }),
                age_column(),
            ]
        }
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicybindings" | "mutatingadmissionpolicybindings",
        ) => vec![
            name_column(),
            builtin("PolicyName", "string", 0, |o| text(&o["spec"]["policyName"], "")),
            builtin("ParamRef", "string", 0, param_ref),
            age_column(),
        ],
        ("certificates.k8s.io", "clustertrustbundles") => vec![
            name_column(),
            builtin("SignerName", "string", 0, |o| {
                text(&o["spec"]["signerName"], "<none>")
            }),
        ],
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => vec![
            name_column(),
            builtin("PriorityLevel", "string", 0, |o| {
                text(&o["spec"]["priorityLevelConfiguration"]["name"], "")
            }),
            builtin("MatchingPrecedence", "string", 0, |o| {
                int(&o["spec"]["matchingPrecedence"])
            }),
            builtin("DistinguisherMethod", "string", 0, |o| {
                text(&o["spec"]["distinguisherMethod"]["type"], "<none>")
            }),
            age_column(),
            builtin("MissingPL", "string", 0, |o| {
                let dangling = items(&o["status"]["conditions"]).find(|c| c["type"] == "Dangling");
                text(&dangling.unwrap_or(&Value::Null)["status"], "?")
            }),
        ],
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => vec![
            name_column(),
            builtin("Type", "string", 0, |o| text(&o["spec"]["type"], "")),
            builtin("NominalConcurrencyShares", "string", 0, |o| {
                limited(o, |limited| int(&limited["nominalConcurrencyShares"]))
            }),
            builtin("Queues", "string", 0, |o| queuing(o, "queues")),
            builtin("HandSize", "string", 0, |o| queuing(o, "handSize")),
            builtin("QueueLengthLimit", "string", 0, |o| {
                queuing(o, "queueLengthLimit")
            }),
            age_column(),
        ],
        _ => return None,
    };
    Some(columns)
}

/// A policy binding's parameters: `namespace/name`, `*/name` without a namespace, the
/// selector as Go prints the `LabelSelector` struct, or `<unset>`.
fn param_ref(binding: &Value) -> Value {
    let reference = &binding["spec"]["paramRef"];
    if !reference.is_object() {
        return json!("<unset>");
    }
    if let Some(name) = reference["name"].as_str().filter(|n| !n.is_empty()) {
        let namespace = reference["namespace"].as_str().filter(|n| !n.is_empty());
        return json!(format!("{}/{name}", namespace.unwrap_or("*")));
    }
    if reference["selector"].is_object() {
        return json!(go_label_selector(&reference["selector"]));
    }
    json!("<unset>")
}

/// A `LabelSelector` as its generated Go `String()` writes it.
fn go_label_selector(selector: &Value) -> String {
    let mut labels: Vec<String> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {},", v.as_str().unwrap_or_default()))
        .collect();
    labels.sort();
    let requirements: String = items(&selector["matchExpressions"])
        .map(|r| {
            let values: Vec<&str> = items(&r["values"]).filter_map(Value::as_str).collect();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                r["key"].as_str().unwrap_or_default(),
                r["operator"].as_str().unwrap_or_default(),
                values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{}}},MatchExpressions:[]LabelSelectorRequirement{{{requirements}}},}}",
        labels.concat()
    )
}

fn node_columns() -> Vec<Column> {
    vec![
        name_column(),
        builtin("Status", "string", 0, node_status),
        builtin("Roles", "string", 0, node_roles),
        age_column(),
        builtin("Version", "string", 0, |o| {
            text(&o["status"]["nodeInfo"]["kubeletVersion"], "")
        }),
        builtin("Internal-IP", "string", 1, |o| node_address(o, "InternalIP")),
        builtin("External-IP", "string", 1, |o| node_address(o, "ExternalIP")),
        builtin("OS-Image", "string", 1, |o| {
            text(&o["status"]["nodeInfo"]["osImage"], "<unknown>")
        }),
        builtin("Kernel-Version", "string", 1, |o| {
            text(&o["status"]["nodeInfo"]["kernelVersion"], "<unknown>")
        }),
        builtin("Container-Runtime", "string", 1, |o| {
            text(&o["status"]["nodeInfo"]["containerRuntimeVersion"], "<unknown>")
        }),
    ]
}

fn node_status(node: &Value) -> Value {
    let ready = items(&node["status"]["conditions"]).find(|c| c["type"] == "Ready");
    let status = match ready {
        Some(c) if c["status"] == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    };
    if node["spec"]["unschedulable"] == true {
        json!(format!("{status},SchedulingDisabled"))
    } else {
        json!(status)
    }
}

/// The roles of `node-role.kubernetes.io/<role>` labels and the `kubernetes.io/role` label,
/// sorted; `<none>` without any.
fn node_roles(node: &Value) -> Value {
    let mut roles: Vec<&str> = node["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(
            |(key, value)| match key.strip_prefix("node-role.kubernetes.io/") {
                Some(role) => Some(role),
                None if key == "kubernetes.io/role" => value.as_str(),
                None => None,
            },
        )
        .filter(|role| !role.is_empty())
        .collect();
    roles.sort_unstable();
    roles.dedup();
    json!(if roles.is_empty() {
        "<none>".to_owned()
    } else {
        roles.join(",")
    })
}

fn node_address(node: &Value, kind: &str) -> Value {
    let address = items(&node["status"]["addresses"]).find(|a| a["type"] == kind);
    text(&address.unwrap_or(&Value::Null)["address"], "<none>")
}

/// `Denied`, `Approved` or `Pending`, then `,Failed` and `,Issued` when they apply.
fn csr_condition(csr: &Value) -> Value {
    let has = |kind: &str| items(&csr["status"]["conditions"]).any(|c| c["type"] == kind);
    let mut status = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_owned();
    if has("Failed") {
        status.push_str(",Failed");
    }
    if csr["status"]["certificate"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
    {
        status.push_str(",Issued");
    }
    json!(status)
}

fn api_service_available(service: &Value) -> Value {
    let available = items(&service["status"]["conditions"]).find(|c| c["type"] == "Available");
    match available {
        Some(c) if c["status"] == "True" => json!("True"),
        Some(c) => json!(format!(
            "{} ({})",
            c["status"].as_str().unwrap_or("Unknown"),
            c["reason"].as_str().unwrap_or_default()
        )),
        None => json!("Unknown"),
    }
}

/// A limited priority level's value, `<none>` for an exempt one.
fn limited(plc: &Value, value: fn(&Value) -> Value) -> Value {
    match &plc["spec"]["limited"] {
        limited @ Value::Object(_) => value(limited),
        _ => json!("<none>"),
    }
}

/// A queuing setting of a limited priority level, `<none>` without queuing.
fn queuing(plc: &Value, field: &str) -> Value {
    match &plc["spec"]["limited"]["limitResponse"]["queuing"] {
        queuing @ Value::Object(_) => int(&queuing[field]),
        _ => json!("<none>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_param_refs_read_as_kubectl_prints_them() {
        let named = json!({"spec": {"paramRef": {"name": "p", "namespace": "ns"}}});
        assert_eq!(param_ref(&named), "ns/p");
        let selected = json!({"spec": {"paramRef": {"selector": {
            "matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}],
        }}}});
        assert_eq!(
            param_ref(&selected),
            "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}"
        );
        assert_eq!(param_ref(&json!({"spec": {}})), "<unset>");
    }

    #[test]
    fn node_roles_come_from_both_labels() {
        let node = json!({"metadata": {"labels": {
            "node-role.kubernetes.io/worker": "",
            "node-role.kubernetes.io/": "",
            "kubernetes.io/role": "edge",
        }}});
        assert_eq!(node_roles(&node), "edge,worker");
        assert_eq!(node_roles(&json!({})), "<none>");
    }
}
