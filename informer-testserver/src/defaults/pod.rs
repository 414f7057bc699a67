//! A pod's defaults, and those of every pod template (ReplicaSets, Deployments, StatefulSets,
//! DaemonSets, Jobs, CronJobs, ReplicationControllers, PodTemplates): what a controller reads
//! back from kube-apiserver although it never wrote it, and must not take for drift.

use serde_json::{Value, json};

use super::fields::{default, is_unset, items, object, same_quantity, set_object, text};
use super::storage::claim_spec;

/// The lists of containers a pod spec holds.
const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// A pod: its spec's defaults, requests taken from limits, service links on.
pub(super) fn pod(pod: &mut Value) {
    let Some(spec) = object(pod, "spec") else {
        return;
    };
    pod_spec(spec);
    default(spec, "enableServiceLinks", || json!(true));
    for list in ["initContainers", "containers"] {
        for container in items(spec, list) {
            requests_from_limits(container);
        }
    }
    if spec["hostNetwork"] == true {
        for list in CONTAINER_LISTS {
            for container in items(spec, list) {
                for port in items(container, "ports") {
                    let container_port = port["containerPort"].clone();
                    default(port, "hostPort", || container_port);
                }
            }
        }
    }
}

/// A pod template (`spec.template` of the workload kinds): its spec's defaults.
pub(super) fn template(template: &mut Value) {
    if let Some(spec) = object(template, "spec") {
        pod_spec(spec);
    }
}

/// kube's `SetDefaults_PodSpec` and what it applies to the spec's parts.
fn pod_spec(spec: &mut Value) {
    default(spec, "dnsPolicy", || json!("ClusterFirst"));
    default(spec, "restartPolicy", || json!("Always"));
    default(spec, "securityContext", || json!({}));
    default(spec, "terminationGracePeriodSeconds", || json!(30));
    default(spec, "schedulerName", || json!("default-scheduler"));
    for list in CONTAINER_LISTS {
        for container in items(spec, list) {
            self::container(container);
        }
    }
    for volume in items(spec, "volumes") {
        self::volume(volume);
    }
}

/// A container's pull policy, termination message, ports, probes, hooks and environment.
fn container(container: &mut Value) {
    let policy = pull_policy(text(container, "image"));
    default(container, "imagePullPolicy", || json!(policy));
    default(container, "terminationMessagePath", || {
        json!("/dev/termination-log")
    });
    default(container, "terminationMessagePolicy", || json!("File"));
    for port in items(container, "ports") {
        default(port, "protocol", || json!("TCP"));
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = set_object(container, probe) {
            self::probe(probe);
        }
    }
    if let Some(lifecycle) = set_object(container, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(handler) = set_object(lifecycle, hook) {
                http_get(handler);
            }
        }
    }
    for variable in items(container, "env") {
        if let Some(source) = set_object(variable, "valueFrom") {
            field_ref(source);
        }
    }
}

/// kube's rule for `imagePullPolicy`: `Always` for the `latest` tag, or no tag and no digest;
/// else `IfNotPresent`.
pub(super) fn pull_policy(image: &str) -> &'static str {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    // The tag follows the last ':' after the last '/' (a registry's port is not a tag).
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rsplit_once(':') {
        Some((_, "latest")) => "Always",
        Some(_) => "IfNotPresent",
        None if digest => "IfNotPresent",
        None => "Always",
    }
}

/// A probe's timing and its HTTP action's path and scheme.
fn probe(probe: &mut Value) {
    default(probe, "timeoutSeconds", || json!(1));
    default(probe, "periodSeconds", || json!(10));
    default(probe, "successThreshold", || json!(1));
    default(probe, "failureThreshold", || json!(3));
    http_get(probe);
    if let Some(grpc) = set_object(probe, "grpc") {
        default(grpc, "service", || json!(""));
    }
}

/// The path and scheme of a handler's `httpGet`, when it has one.
fn http_get(handler: &mut Value) {
    if let Some(action) = set_object(handler, "httpGet") {
        default(action, "path", || json!("/"));
        default(action, "scheme", || json!("HTTP"));
    }
}

/// The API version of a `fieldRef` (in an environment variable or a downward API item).
fn field_ref(source: &mut Value) {
    if let Some(field_ref) = set_object(source, "fieldRef") {
        default(field_ref, "apiVersion", || json!("v1"));
    }
}

/// For each resource a container limits but does not request, the request is the limit.
fn requests_from_limits(container: &mut Value) {
    let Some(limits) = container["resources"]["limits"].as_object().cloned() else {
        return;
    };
    if limits.is_empty() {
        return;
    }
    let Some(requests) = object(container, "resources").and_then(|r| object(r, "requests")) else {
        return;
    };
    for (resource, quantity) in limits {
        default(requests, &resource, || quantity);
    }
}

/// A volume: `emptyDir` when it names no source, file modes, token expiry, claim templates.
fn volume(volume: &mut Value) {
    let sourced = volume.as_object().is_some_and(|map| {
        map.iter()
            .any(|(field, value)| field != "name" && !value.is_null())
    });
    if !sourced {
        default(volume, "emptyDir", || json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(source) = set_object(volume, source) {
            default(source, "defaultMode", || json!(0o644));
        }
    }
    if let Some(downward) = set_object(volume, "downwardAPI") {
        for item in items(downward, "items") {
            field_ref(item);
        }
    }
    if let Some(projected) = set_object(volume, "projected") {
        for source in items(projected, "sources") {
            projection(source);
        }
    }
    if let Some(host_path) = set_object(volume, "hostPath") {
        default(host_path, "type", || json!(""));
    }
    if let Some(spec) = set_object(volume, "ephemeral")
        .and_then(|e| set_object(e, "volumeClaimTemplate"))
        .and_then(|t| set_object(t, "spec"))
    {
        claim_spec(spec);
    }
    legacy_sources(volume);
}

/// One source of a projected volume.
fn projection(source: &mut Value) {
    if let Some(token) = set_object(source, "serviceAccountToken") {
        default(token, "expirationSeconds", || json!(3600));
    }
    if let Some(downward) = set_object(source, "downwardAPI") {
        for item in items(downward, "items") {
            field_ref(item);
        }
    }
}

/// The defaults of the in-tree volume plugins kube still defaults.
fn legacy_sources(volume: &mut Value) {
    if let Some(iscsi) = set_object(volume, "iscsi") {
        default(iscsi, "iscsiInterface", || json!("default"));
    }
    if let Some(rbd) = set_object(volume, "rbd") {
        default(rbd, "pool", || json!("rbd"));
        default(rbd, "user", || json!("admin"));
        default(rbd, "keyring", || json!("/etc/ceph/keyring"));
    }
    if let Some(azure) = set_object(volume, "azureDisk") {
        default(azure, "cachingMode", || json!("ReadWrite"));
        default(azure, "fsType", || json!("ext4"));
        default(azure, "readOnly", || json!(false));
        default(azure, "kind", || json!("Shared"));
    }
    if let Some(scale_io) = set_object(volume, "scaleIO") {
        default(scale_io, "storageMode", || json!("ThinProvisioned"));
        default(scale_io, "fsType", || json!("xfs"));
    }
}

/// A new pod's status where the body leaves it unset: `Pending`, with its QoS class, and not
/// scheduled while it has scheduling gates.
pub(super) fn new_status(pod: &mut Value) {
    let class = qos_class(&pod["spec"]);
    let gated = pod["spec"]["schedulingGates"]
        .as_array()
        .is_some_and(|gates| !gates.is_empty());
    let Some(status) = object(pod, "status") else {
        return;
    };
    default(status, "phase", || json!("Pending"));
    default(status, "qosClass", || json!(class));
    if gated {
        default(status, "conditions", || {
            json!([{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
                "lastProbeTime": null, "lastTransitionTime": null}])
        });
    }
}

/// The pod's QoS class, as kube's `GetPodQOS` reads its containers' CPU and memory: no request
/// nor limit is `BestEffort`; a limit on both for every container, any request equal to it,
/// `Guaranteed`; anything else `Burstable`.
pub(crate) fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .filter_map(|field| spec[field].as_array())
        .flatten()
        .collect();
    let set = |c: &Value, kind: &str, resource: &str| !is_unset(&c["resources"][kind], resource);
    let any = containers.iter().any(|c| {
        ["cpu", "memory"]
            .iter()
            .any(|r| set(c, "requests", r) || set(c, "limits", r))
    });
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            set(c, "limits", r)
                && (!set(c, "requests", r)
                    || same_quantity(&c["resources"]["requests"][r], &c["resources"]["limits"][r]))
        })
    });
    if guaranteed { "Guaranteed" } else { "Burstable" }
}
