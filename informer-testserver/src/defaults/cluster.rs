//! The defaults of the kinds outside workloads, pods and storage: network policies, endpoint
//! slices, ingress classes, RBAC bindings, autoscalers, priority classes, admission webhooks and CSI drivers.

use serde_json::{Value, json};

use super::fields::{default, is_unset, items, object, set_object, text};

/// The defaulting function of a kind of these groups, if it has defaults.
pub(super) fn defaults_of(group: &str, version: &str, kind: &str) -> Option<fn(&mut Value)> {
    Some(match (group, version, kind) {
        ("networking.k8s.io", "v1", "NetworkPolicy") => network_policy,
        ("networking.k8s.io", "v1", "IngressClass") => ingress_class,
        ("discovery.k8s.io", "v1", "EndpointSlice") => endpoint_slice,
        ("rbac.authorization.k8s.io", "v1", "RoleBinding" | "ClusterRoleBinding") => role_binding,
        ("autoscaling", "v1", "HorizontalPodAutoscaler") => autoscaler_v1,
        ("autoscaling", "v2", "HorizontalPodAutoscaler") => autoscaler_v2,
        ("scheduling.k8s.io", "v1", "PriorityClass") => priority_class,
        ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration") => mutating_webhooks,
        ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration") => validating_webhooks,
        ("storage.k8s.io", "v1", "CSIDriver") => csi_driver,
        _ => return None,
    })
}

/// A NetworkPolicy: TCP ports; it governs ingress, and egress when it has egress rules,
/// unless it names its policy types.
fn network_policy(policy: &mut Value) {
    let Some(spec) = object(policy, "spec") else {
        return;
    };
    for direction in ["ingress", "egress"] {
        for rule in items(spec, direction) {
            for port in items(rule, "ports") {
                default(port, "protocol", || json!("TCP"));
            }
        }
    }
    if spec["policyTypes"].as_array().is_none_or(Vec::is_empty) {
        let egress = spec["egress"].as_array().is_some_and(|rules| !rules.is_empty());
        spec["policyTypes"] = if egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
    }
}

/// An EndpointSlice: TCP ports with an empty name.
fn endpoint_slice(slice: &mut Value) {
    for port in items(slice, "ports") {
        default(port, "name", || json!(""));
        default(port, "protocol", || json!("TCP"));
    }
}

/// A RoleBinding or ClusterRoleBinding: the role and the users and groups are RBAC's; service
/// accounts are the core group's.
fn role_binding(binding: &mut Value) {
    if let Some(role) = object(binding, "roleRef") {
        empty_default(role, "apiGroup", "rbac.authorization.k8s.io");
    }
    for subject in items(binding, "subjects") {
        let group = match text(subject, "kind") {
            "User" | "Group" => "rbac.authorization.k8s.io",
            _ => continue,
        };
        empty_default(subject, "apiGroup", group);
    }
}

/// Sets a text field Go reads as unset when empty.
fn empty_default(parent: &mut Value, field: &str, value: &str) {
    if text(parent, field).is_empty() {
        parent[field] = json!(value);
    }
}

/// An `autoscaling/v1` HorizontalPodAutoscaler: at least one replica, 80 % CPU.
fn autoscaler_v1(autoscaler: &mut Value) {
    if let Some(spec) = object(autoscaler, "spec") {
        default(spec, "minReplicas", || json!(1));
        default(spec, "targetCPUUtilizationPercentage", || json!(80));
    }
}

/// An IngressClass: parameters are cluster-scoped unless they say otherwise.
fn ingress_class(class: &mut Value) {
    if let Some(parameters) = set_object(class, "spec").and_then(|s| set_object(s, "parameters")) {
        default(parameters, "scope", || json!("Cluster"));
    }
}

/// An `autoscaling/v2` HorizontalPodAutoscaler: at least one replica, 80 % CPU when it names
/// no metric, and the scaling rules of a behavior it sets.
fn autoscaler_v2(autoscaler: &mut Value) {
    let Some(spec) = object(autoscaler, "spec") else {
        return;
    };
    default(spec, "minReplicas", || json!(1));
    if spec["metrics"].as_array().is_none_or(Vec::is_empty) {
        spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
    }
    let Some(behavior) = set_object(spec, "behavior") else {
        return;
    };
    if let Some(up) = object(behavior, "scaleUp") {
        default(up, "stabilizationWindowSeconds", || json!(0));
        default(up, "selectPolicy", || json!("Max"));
        default(up, "policies", || {
            json!([{"type": "Pods", "value": 4, "periodSeconds": 15},
                   {"type": "Percent", "value": 100, "periodSeconds": 15}])
        });
    }
    if let Some(down) = object(behavior, "scaleDown") {
        default(down, "selectPolicy", || json!("Max"));
        default(
            down,
            "policies",
            || json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
        );
    }
}

/// A PriorityClass: it preempts lower priorities.
fn priority_class(class: &mut Value) {
    default(class, "preemptionPolicy", || json!("PreemptLowerPriority"));
}

/// A MutatingWebhookConfiguration: each webhook's defaults, never reinvoked.
fn mutating_webhooks(configuration: &mut Value) {
    for hook in items(configuration, "webhooks") {
        webhook(hook);
        default(hook, "reinvocationPolicy", || json!("Never"));
    }
}

/// A ValidatingWebhookConfiguration: each webhook's defaults.
fn validating_webhooks(configuration: &mut Value) {
    for hook in items(configuration, "webhooks") {
        webhook(hook);
    }
}

/// A webhook: it fails closed, matches equivalent requests, selects every namespace and
/// object, waits ten seconds, calls port 443, and its rules cover every scope.
fn webhook(hook: &mut Value) {
    default(hook, "failurePolicy", || json!("Fail"));
    default(hook, "matchPolicy", || json!("Equivalent"));
    default(hook, "namespaceSelector", || json!({}));
    default(hook, "objectSelector", || json!({}));
    default(hook, "timeoutSeconds", || json!(10));
    for rule in items(hook, "rules") {
        default(rule, "scope", || json!("*"));
    }
    if let Some(service) = set_object(hook, "clientConfig").and_then(|c| set_object(c, "service")) {
        default(service, "port", || json!(443));
    }
}

/// A CSIDriver: attached before use, no pod info on mount, no capacity tracking, file system
/// groups applied for ReadWriteOnce volumes with a file system type, persistent volumes only.
fn csi_driver(driver: &mut Value) {
    let Some(spec) = object(driver, "spec") else {
        return;
    };
    default(spec, "attachRequired", || json!(true));
    default(spec, "podInfoOnMount", || json!(false));
    default(spec, "storageCapacity", || json!(false));
    default(spec, "fsGroupPolicy", || json!("ReadWriteOnceWithFSType"));
    default(spec, "requiresRepublish", || json!(false));
    if is_unset(spec, "volumeLifecycleModes") {
        spec["volumeLifecycleModes"] = json!(["Persistent"]);
    }
}
