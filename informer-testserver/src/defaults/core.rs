//! The defaults of the core group's kinds other than pods and storage: Services, Endpoints,
//! Secrets, ReplicationControllers, PodTemplates, Nodes and LimitRanges.

use serde_json::{Map, Value, json};

use super::fields::{default, items, object, set_object, text};
use super::pod::template;

/// A Service: no session affinity, `ClusterIP`, TCP ports whose target is the port, traffic
/// policies `Cluster`, node ports for load balancers.
pub(super) fn service(service: &mut Value) {
    let Some(spec) = object(service, "spec") else {
        return;
    };
    default(spec, "type", || json!("ClusterIP"));
    default(spec, "sessionAffinity", || json!("None"));
    match text(spec, "sessionAffinity") {
        "None" => {
            if let Some(map) = spec.as_object_mut() {
                map.remove("sessionAffinityConfig");
            }
        }
        "ClientIP" if spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"].is_null() => {
            spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
        }
        _ => {}
    }
    for port in items(spec, "ports") {
        default(port, "protocol", || json!("TCP"));
        let target = &port["targetPort"];
        if target.is_null() || *target == json!(0) || *target == json!("") {
            port["targetPort"] = port["port"].clone();
        }
    }
    let kind = text(spec, "type").to_owned();
    let external_ips = spec["externalIPs"].as_array().is_some_and(|ips| !ips.is_empty());
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer") || (kind == "ClusterIP" && external_ips) {
        default(spec, "externalTrafficPolicy", || json!("Cluster"));
    }
    if matches!(kind.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        default(spec, "internalTrafficPolicy", || json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        default(spec, "allocateLoadBalancerNodePorts", || json!(true));
        let balancer = set_object(service, "status").and_then(|s| set_object(s, "loadBalancer"));
        for ingress in balancer.into_iter().flat_map(|b| items(b, "ingress")) {
            if !text(ingress, "ip").is_empty() {
                default(ingress, "ipMode", || json!("VIP"));
            }
        }
    }
}

/// Endpoints: TCP ports.
pub(super) fn endpoints(endpoints: &mut Value) {
    for subset in items(endpoints, "subsets") {
        for port in items(subset, "ports") {
            default(port, "protocol", || json!("TCP"));
        }
    }
}

/// A Secret: `Opaque`.
pub(super) fn secret(secret: &mut Value) {
    default(secret, "type", || json!("Opaque"));
}

/// A ReplicationController: one replica; its selector and labels are its template's labels
/// when it has none.
pub(super) fn replication_controller(controller: &mut Value) {
    let labels = controller["spec"]["template"]["metadata"]["labels"].clone();
    let empty = |value: &Value| value.as_object().is_none_or(Map::is_empty);
    if labels.is_object() {
        if empty(&controller["metadata"]["labels"])
            && let Some(meta) = object(controller, "metadata")
        {
            meta["labels"] = labels.clone();
        }
        if empty(&controller["spec"]["selector"])
            && let Some(spec) = object(controller, "spec")
        {
            spec["selector"] = labels;
        }
    }
    let Some(spec) = object(controller, "spec") else {
        return;
    };
    default(spec, "replicas", || json!(1));
    if let Some(pod) = set_object(spec, "template") {
        template(pod);
    }
}

/// A PodTemplate: its template's defaults.
pub(super) fn pod_template(pod_template: &mut Value) {
    if let Some(pod) = object(pod_template, "template") {
        template(pod);
    }
}

/// A Node: what it can allocate is its capacity when it says nothing else.
pub(super) fn node(node: &mut Value) {
    let capacity = node["status"]["capacity"].clone();
    if capacity.is_object()
        && let Some(status) = object(node, "status")
    {
        default(status, "allocatable", || capacity);
    }
}

/// A LimitRange: for containers, the default limit is the maximum, the default request the
/// default limit, else the minimum, resource by resource.
pub(super) fn limit_range(limit_range: &mut Value) {
    let Some(spec) = object(limit_range, "spec") else {
        return;
    };
    for limit in items(spec, "limits") {
        if text(limit, "type") != "Container" {
            continue;
        }
        let max = limit["max"].as_object().cloned().unwrap_or_default();
        fill(limit, "default", &max);
        let limits = limit["default"].as_object().cloned().unwrap_or_default();
        fill(limit, "defaultRequest", &limits);
        let min = limit["min"].as_object().cloned().unwrap_or_default();
        fill(limit, "defaultRequest", &min);
    }
}

/// Adds to the map at `parent[field]` each of `from`'s resources it lacks, creating it only
/// when there is one to add.
fn fill(parent: &mut Value, field: &str, from: &Map<String, Value>) {
    if from.is_empty() {
        return;
    }
    if let Some(target) = object(parent, field) {
        for (resource, quantity) in from {
            default(target, resource, || quantity.clone());
        }
    }
}
