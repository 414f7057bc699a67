//! Realistic pods, deterministic from a seed.
//!
//! Each pod looks like one a Deployment creates on a real cluster (about 6 KB of JSON): seven
//! labels, five annotations, an owner reference to its ReplicaSet, two `managedFields` entries
//! with `fieldsV1`, two containers with env, ports, resources, probes and volume mounts, a
//! configMap and a projected volume, tolerations, and a status with conditions and container
//! statuses. Pods are built as JSON values, so the rendered bytes are exactly what the
//! generator says; a test checks that every field survives a round trip through
//! `k8s_openapi::api::core::v1::Pod`.

use serde_json::{Value, json};

/// How many distinct values the `app` label takes.
pub(crate) const APPS: usize = 50;

/// Generates pod `index` of a population spread over `namespaces` namespaces.
#[derive(Debug, Clone)]
pub(crate) struct PodGenerator {
    seed: u64,
    namespaces: usize,
}

/// What identifies one generated pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PodId {
    /// The namespace.
    pub(crate) namespace: String,
    /// The name.
    pub(crate) name: String,
}

impl PodId {
    /// The store key (`namespace/name`).
    pub(crate) fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn token(rng: &mut fastrand::Rng, len: usize) -> String {
    (0..len)
        .map(|_| char::from(ALPHABET[rng.usize(..ALPHABET.len())]))
        .collect()
}

fn timestamp(second: u64) -> String {
    // 2025-01-01T00:00:00Z plus `second`, without a date library: days never exceed 28.
    let day = 1 + (second / 86_400) % 28;
    let hour = (second / 3600) % 24;
    let minute = (second / 60) % 60;
    let sec = second % 60;
    format!("2025-01-{day:02}T{hour:02}:{minute:02}:{sec:02}Z")
}

impl PodGenerator {
    /// A generator of pods over `namespaces` namespaces.
    pub(crate) fn new(seed: u64, namespaces: usize) -> Self {
        Self {
            seed,
            namespaces: namespaces.max(1),
        }
    }

    fn rng(&self, index: usize) -> fastrand::Rng {
        fastrand::Rng::with_seed(self.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    /// The namespace of pod `index`.
    pub(crate) fn namespace(&self, index: usize) -> String {
        format!("ns-{:03}", index % self.namespaces)
    }

    /// The `app` label of pod `index`.
    pub(crate) fn app(&self, index: usize) -> String {
        format!("app-{:02}", (index / self.namespaces) % APPS)
    }

    /// The namespace and name of pod `index`.
    pub(crate) fn id(&self, index: usize) -> PodId {
        let mut rng = self.rng(index);
        let hash = token(&mut rng, 10);
        let suffix = token(&mut rng, 5);
        PodId {
            namespace: self.namespace(index),
            name: format!("{}-{hash}-{suffix}-{index}", self.app(index)),
        }
    }

    /// Pod `index` at `resource_version`; `generation` varies the fields a kubelet changes
    /// (status times, restart counts), as a MODIFIED event would.
    pub(crate) fn pod(&self, index: usize, resource_version: u64, generation: u64) -> Value {
        let mut rng = self.rng(index);
        let hash = token(&mut rng, 10);
        let _suffix = token(&mut rng, 5); // keeps the sequence of `id`
        let id = self.id(index);
        let app = self.app(index);
        let replica_set = format!("{app}-{hash}");
        let uid = format!(
            "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
            rng.u32(..),
            rng.u16(..),
            rng.u16(..0x1000),
            rng.u16(..0x1000),
            rng.u64(..1 << 48)
        );
        let owner_uid = format!(
            "{:08x}-{:04x}-4{:03x}-b{:03x}-{:012x}",
            rng.u32(..),
            rng.u16(..),
            rng.u16(..0x1000),
            rng.u16(..0x1000),
            rng.u64(..1 << 48)
        );
        let created = rng.u64(0..86_400 * 20);
        let changed = created + 60 + generation * 7;
        let node = format!("node-{:03}", rng.usize(0..200));
        let ip = format!("10.{}.{}.{}", rng.u8(0..=255), rng.u8(0..=255), rng.u8(1..255));
        let version = format!("1.{}.{}", rng.u8(0..30), rng.u8(0..10));
        let image = format!("registry.example.com/{app}/server:{version}");
        let restarts = generation % 3;
        let container = |name: &str, port: u16, memory: &str, image: &str| {
            json!({
                "name": name,
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "args": ["--config=/etc/config/app.yaml", format!("--port={port}"), "--log-format=json"],
                "env": [
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                    {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
                    {"name": "LOG_LEVEL", "value": "info"},
                    {"name": "APP_VERSION", "value": version},
                ],
                "ports": [
                    {"name": "http", "containerPort": port, "protocol": "TCP"},
                    {"name": "metrics", "containerPort": port + 1000, "protocol": "TCP"},
                ],
                "resources": {
                    "limits": {"cpu": "1", "memory": memory},
                    "requests": {"cpu": "250m", "memory": memory},
                },
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
                    "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 1,
                    "successThreshold": 1, "failureThreshold": 3,
                },
                "readinessProbe": {
                    "httpGet": {"path": "/readyz", "port": port, "scheme": "HTTP"},
                    "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3,
                },
                "volumeMounts": [
                    {"name": "config", "mountPath": "/etc/config", "readOnly": true},
                    {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true},
                ],
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            })
        };
        let status_of = |name: &str, image: &str, id: u64| {
            json!({
                "name": name,
                "image": image,
                "imageID": format!("{image}@sha256:{id:016x}{id:016x}{id:016x}{id:016x}"),
                "containerID": format!("containerd://{id:016x}{:016x}", id.rotate_left(17)),
                "ready": true,
                "started": true,
                "restartCount": restarts,
                "state": {"running": {"startedAt": timestamp(changed)}},
            })
        };
        let sidecar_image = "registry.example.com/platform/proxy:2.4.1";
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": id.name,
                "generateName": format!("{replica_set}-"),
                "namespace": id.namespace,
                "uid": uid,
                "resourceVersion": resource_version.to_string(),
                "creationTimestamp": timestamp(created),
                "labels": {
                    "app": app,
                    "pod-template-hash": hash,
                    "app.kubernetes.io/name": app,
                    "app.kubernetes.io/instance": format!("{app}-{}", id.namespace),
                    "app.kubernetes.io/version": version,
                    "app.kubernetes.io/component": "server",
                    "team": format!("team-{}", index % 7),
                },
                "annotations": {
                    "kubectl.kubernetes.io/restartedAt": timestamp(created),
                    "prometheus.io/scrape": "true",
                    "prometheus.io/port": "9080",
                    "cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
                    "example.com/revision": format!("{}", generation),
                },
                "ownerReferences": [{
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": replica_set,
                    "uid": owner_uid,
                    "controller": true,
                    "blockOwnerDeletion": true,
                }],
                "managedFields": [
                    {
                        "manager": "kube-controller-manager",
                        "operation": "Update",
                        "apiVersion": "v1",
                        "time": timestamp(created),
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {
                            "f:metadata": {
                                "f:generateName": {},
                                "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:team": {}},
                                "f:ownerReferences": {".": {}, format!("k:{{\"uid\":\"{owner_uid}\"}}"): {}},
                            },
                            "f:spec": {
                                "f:containers": {"k:{\"name\":\"server\"}": {".": {}, "f:image": {}, "f:name": {}, "f:ports": {}, "f:resources": {}}},
                                "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {},
                                "f:terminationGracePeriodSeconds": {}, "f:volumes": {},
                            },
                        },
                    },
                    {
                        "manager": "kubelet",
                        "operation": "Update",
                        "apiVersion": "v1",
                        "time": timestamp(changed),
                        "fieldsType": "FieldsV1",
                        "subresource": "status",
                        "fieldsV1": {
                            "f:status": {
                                "f:conditions": {
                                    "k:{\"type\":\"Ready\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}},
                                    "k:{\"type\":\"ContainersReady\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}},
                                },
                                "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {},
                                "f:podIPs": {".": {}, format!("k:{{\"ip\":\"{ip}\"}}"): {".": {}, "f:ip": {}}},
                                "f:startTime": {},
                            },
                        },
                    },
                ],
            },
            "spec": {
                "containers": [
                    container("server", 8080, "512Mi", &image),
                    container("proxy", 15001, "128Mi", sidecar_image),
                ],
                "volumes": [
                    {"name": "config", "configMap": {"name": format!("{app}-config"), "defaultMode": 420}},
                    {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
                    ]}},
                ],
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
                "serviceAccountName": app,
                "serviceAccount": app,
                "nodeName": node,
                "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "fsGroup": 2000},
                "schedulerName": "default-scheduler",
                "tolerations": [
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                ],
                "priority": 0,
                "enableServiceLinks": true,
                "preemptionPolicy": "PreemptLowerPriority",
            },
            "status": {
                "phase": "Running",
                "conditions": [
                    {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": timestamp(created + 3)},
                    {"type": "Initialized", "status": "True", "lastTransitionTime": timestamp(created + 1)},
                    {"type": "Ready", "status": "True", "lastTransitionTime": timestamp(changed)},
                    {"type": "ContainersReady", "status": "True", "lastTransitionTime": timestamp(changed)},
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": timestamp(created)},
                ],
                "hostIP": format!("192.168.{}.{}", rng.u8(0..=255), rng.u8(1..255)),
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "startTime": timestamp(created),
                "containerStatuses": [
                    status_of("proxy", sidecar_image, rng.u64(..)),
                    status_of("server", &image, rng.u64(..)),
                ],
                "qosClass": "Burstable",
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;

    use super::*;

    #[test]
    fn pods_are_deterministic_realistic_and_lossless() {
        let generator = PodGenerator::new(7, 100);
        let pod = generator.pod(42, 1000, 3);
        assert_eq!(pod, PodGenerator::new(7, 100).pod(42, 1000, 3));
        assert_ne!(pod, generator.pod(42, 1001, 4));
        let bytes = serde_json::to_vec(&pod).expect("a pod serializes");
        assert!((5_000..8_000).contains(&bytes.len()), "{} bytes", bytes.len());
        let typed: Pod = serde_json::from_value(pod.clone()).expect("a generated pod is a Pod");
        assert_eq!(serde_json::to_value(&typed).expect("a Pod serializes"), pod);
        assert_eq!(typed.metadata.name, Some(generator.id(42).name));
    }
}
