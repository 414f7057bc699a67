//! The Node objects of the simulated kubelet: registered Ready, with the capacity, addresses,
//! labels and node info a kubelet reports.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::storage::state::now_rfc3339;

/// The kubelet port every simulated node reports.
pub(crate) const KUBELET_PORT: u16 = 10250;
/// The version the simulated kubelets report.
const KUBELET_VERSION: &str = "v1.37.0";

/// The InternalIP of the `index`-th node (from 0).
pub(crate) fn node_ip(index: usize) -> String {
    format!("10.0.{}.{}", index / 250, index % 250 + 2)
}

/// The Node object of the `index`-th simulated node, named `name`, as its kubelet registers it,
/// with `allocatable` as its capacity and allocatable.
pub(crate) fn node_object(name: &str, index: usize, allocatable: &BTreeMap<String, String>) -> Value {
    let now = now_rfc3339();
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({
            "type": kind,
            "status": status,
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        })
    };
    let resources = json!(allocatable);
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64",
                "type": "simulated",
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"podCIDR": pod_cidr(index), "podCIDRs": [pod_cidr(index)]},
        "status": {
            "capacity": resources.clone(),
            "allocatable": resources,
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [
                {"type": "InternalIP", "address": node_ip(index)},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": KUBELET_PORT}},
            "nodeInfo": {
                "machineID": format!("{:032x}", index + 1),
                "systemUUID": format!("{:032x}", index + 1),
                "bootID": format!("{:032x}", index + 1),
                "kernelVersion": "6.8.0",
                "osImage": "Simulated Linux",
                "containerRuntimeVersion": "containerd://2.1.0",
                "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    })
}

/// The pod CIDR of the `index`-th node: the addresses of its pods.
pub(crate) fn pod_cidr(index: usize) -> String {
    format!("10.244.{index}.0/24")
}

/// The namespace of the nodes' Leases.
pub(crate) const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// Now as a `MicroTime` (RFC 3339 with microseconds), as a kubelet writes `renewTime`.
pub(crate) fn micro_time_now() -> String {
    format!("{:.6}", jiff::Timestamp::now())
}

/// The Lease of a node in `kube-node-lease`, as its kubelet creates it.
pub(crate) fn node_lease(name: &str, node_uid: &str) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "namespace": NODE_LEASE_NAMESPACE,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": node_uid}],
        },
        "spec": {
            "holderIdentity": name,
            "leaseDurationSeconds": 40,
            "renewTime": micro_time_now(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_ready_and_reports_its_kubelet() {
        let node = node_object("node-1", 0, &crate::kubelet::Kubelet::with_nodes(1).allocatable);
        let ready = node["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            (ready["status"].as_str(), ready["reason"].as_str()),
            (Some("True"), Some("KubeletReady"))
        );
        assert_eq!(
            node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"],
            10250
        );
        assert_eq!(node["status"]["addresses"][0]["address"], "10.0.0.2");
        assert_eq!(node["metadata"]["labels"]["kubernetes.io/hostname"], "node-1");
    }

    #[test]
    fn renew_times_are_micro_times() {
        let lease = node_lease("node-1", "uid-1");
        let renewed = lease["spec"]["renewTime"].as_str().unwrap_or_default();
        // 2026-11-29T09:15:17.123456Z
        assert_eq!(renewed.len(), 27, "{renewed}");
        assert!(
            renewed.ends_with('Z') && renewed.as_bytes()[19] == b'.',
            "{renewed}"
        );
        assert!(renewed.parse::<jiff::Timestamp>().is_ok(), "{renewed}");
    }
}
