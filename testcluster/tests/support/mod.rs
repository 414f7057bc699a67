//! What the integration tests share: a stand-in for the kubelet that sets pod status through
//! the status subresource, and waiting for what the controllers do.
#![allow(dead_code, unreachable_pub)]

use std::{
    sync::atomic::{AtomicU32, Ordering},
    time::Duration,
};

use informer_testcluster::{Controllers, TestCluster};
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams},
};
use serde_json::json;

/// How long a test waits for a controller at most.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A result of a test.
pub type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Starts a cluster with every controller, a Job pod failure backoff of milliseconds, and no
/// kubelet: the test plays it ([`Kubelet`]), to choose when each pod runs and is ready.
pub async fn cluster() -> TestCluster {
    let controllers = Controllers::all().job_pod_failure_backoff(Duration::from_millis(50));
    TestCluster::builder()
        .server(TestServer::builder())
        .controllers(controllers)
        .start()
        .await
        .expect("the cluster starts")
}

/// Waits until `condition` holds, for at most [`TIMEOUT`], checking it every few
/// milliseconds.
pub async fn wait_for(what: &str, condition: impl AsyncFnMut() -> bool) {
    informer_testserver::wait::eventually_async(what, TIMEOUT, condition)
        .await
        .unwrap_or_else(|timed_out| panic!("{timed_out}"));
}

/// The pods of `namespace` matching `labels` (`app=web`), sorted by name.
pub async fn pods(client: &kube::Client, namespace: &str, labels: &str) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut pods = api
        .list(&ListParams::default().labels(labels))
        .await
        .expect("pods list")
        .items;
    pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    pods
}

/// Whether the stand-in [`Kubelet`] runs the pod: a new pod is only `Pending`.
pub fn is_running(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

/// Sets pod status as a kubelet would: what the controllers count is the pod's phase, its
/// `Ready` condition, its IP and its containers' statuses.
pub struct Kubelet {
    pods: Api<Pod>,
    next_ip: AtomicU32,
}

impl Kubelet {
    /// A kubelet for the pods of `namespace`.
    pub fn new(client: &kube::Client, namespace: &str) -> Self {
        Self {
            pods: Api::namespaced(client.clone(), namespace),
            next_ip: AtomicU32::new(1),
        }
    }

    /// The pod runs, with an IP, and its `Ready` condition is `ready`.
    pub async fn run(&self, name: &str, ready: bool) {
        let ip = self.next_ip.fetch_add(1, Ordering::Relaxed);
        let status = json!({
            "phase": "Running",
            "podIP": format!("10.0.{}.{}", ip / 250, ip % 250 + 1),
            "conditions": [condition("Ready", ready), condition("ContainersReady", ready)],
            "containerStatuses": [{"name": "main", "ready": ready, "restartCount": 0, "image": "app", "imageID": "", "started": true, "state": {"running": {}}}],
        });
        self.patch(name, status).await;
    }

    /// The running pod's `Ready` condition turns to `ready`.
    pub async fn set_ready(&self, name: &str, ready: bool) {
        let status = json!({"conditions": [condition("Ready", ready), condition("ContainersReady", ready)]});
        self.patch(name, status).await;
    }

    /// Every pod of `pods` runs and is ready.
    pub async fn run_all(&self, pods: &[Pod]) {
        for pod in pods {
            self.run(pod.metadata.name.as_deref().unwrap_or_default(), true)
                .await;
        }
    }

    /// The pod's containers ended: `Succeeded` or `Failed`.
    pub async fn finish(&self, name: &str, succeeded: bool) {
        let (phase, exit_code) = if succeeded {
            ("Succeeded", 0)
        } else {
            ("Failed", 1)
        };
        let status = json!({
            "phase": phase,
            "conditions": [condition("Ready", false), condition("ContainersReady", false)],
            "containerStatuses": [{"name": "main", "ready": false, "restartCount": 0, "image": "app", "imageID": "", "state": {"terminated": {"exitCode": exit_code}}}],
        });
        self.patch(name, status).await;
    }

    /// Sets the pod's status; a pod a controller deleted meanwhile has none to set, as for a
    /// real kubelet.
    async fn patch(&self, name: &str, status: serde_json::Value) {
        let patched = self
            .pods
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": status})),
            )
            .await;
        match patched {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(error) => panic!("failed to set the status of pod {name}: {error}"),
        }
    }
}

fn condition(type_: &str, status: bool) -> serde_json::Value {
    let now = k8s_openapi::jiff::Timestamp::now().as_second();
    let now = k8s_openapi::jiff::Timestamp::from_second(now)
        .map(|t| t.to_string())
        .unwrap_or_default();
    json!({"type": type_, "status": if status { "True" } else { "False" }, "lastTransitionTime": now})
}
