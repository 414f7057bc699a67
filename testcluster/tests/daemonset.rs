//! The DaemonSet controller over HTTP: a pod per fitting node, pinned to it.

mod support;

use k8s_openapi::api::{
    apps::v1::DaemonSet,
    core::v1::{Node, Pod},
};
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};
use support::{Kubelet, TestResult, pods, wait_for};

async fn node(client: &kube::Client, name: &str, labels: Value, taints: Value) {
    let node: Node = serde_json::from_value(
        json!({"metadata": {"name": name, "labels": labels}, "spec": {"taints": taints}}),
    )
    .expect("a valid node");
    Api::<Node>::all(client.clone())
        .create(&PostParams::default(), &node)
        .await
        .expect("the node");
}

/// The nodes the daemon set's pods are pinned to, sorted.
async fn pinned_nodes(client: &kube::Client) -> Vec<String> {
    let mut nodes: Vec<String> = pods(client, "default", "app=agent")
        .await
        .iter()
        .filter_map(pinned_to)
        .collect();
    nodes.sort();
    nodes
}

fn pinned_to(pod: &Pod) -> Option<String> {
    let affinity = pod.spec.as_ref()?.affinity.as_ref()?.node_affinity.as_ref()?;
    let terms = &affinity
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    let field = terms.first()?.match_fields.as_ref()?.first()?;
    (field.key == "metadata.name").then(|| field.values.as_ref()?.first().cloned())?
}

async fn status(api: &Api<DaemonSet>) -> (i32, i32, i32, i32) {
    let status = api
        .get("agent")
        .await
        .expect("the daemon set")
        .status
        .unwrap_or_default();
    (
        status.desired_number_scheduled,
        status.current_number_scheduled,
        status.number_ready,
        status.number_misscheduled,
    )
}

// kube: pkg/controller/daemon/daemon_controller_test.go, TestSimpleDaemonSetLaunchesPods,
// TestNodeAffinityDaemonLaunchesPods, TestTaintedNodeDaemonDoesNotLaunchIntolerantPods and
// TestSelectorDaemonDeletesUnselectedPods, over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_one_pod_per_fitting_node() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    node(&client, "ssd-1", json!({"disk": "ssd"}), json!([])).await;
    node(
        &client,
        "ssd-gpu",
        json!({"disk": "ssd"}),
        json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
    )
    .await;
    node(
        &client,
        "plain",
        json!({}),
        json!([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
    )
    .await;
    let ds: DaemonSet = serde_json::from_value(json!({
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"nodeSelector": {"disk": "ssd"}, "containers": [{"name": "main", "image": "agent:1"}]},
            },
        },
    }))?;
    let api: Api<DaemonSet> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &ds).await?;
    wait_for("a pod on ssd-1", async || {
        pinned_nodes(&client).await == ["ssd-1"]
    })
    .await;
    let tolerations = pods(&client, "default", "app=agent").await[0]
        .spec
        .clone()
        .and_then(|s| s.tolerations)
        .unwrap_or_default();
    assert!(
        tolerations
            .iter()
            .any(|t| t.key.as_deref() == Some("node.kubernetes.io/unschedulable"))
    );

    // the unschedulable node joins once it has the label: daemon pods tolerate unschedulable
    let nodes: Api<Node> = Api::all(client.clone());
    nodes
        .patch(
            "plain",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"disk": "ssd"}}})),
        )
        .await?;
    wait_for("pods on ssd-1 and plain", async || {
        pinned_nodes(&client).await == ["plain", "ssd-1"]
    })
    .await;
    wait_for("desired 2", async || status(&api).await == (2, 2, 0, 0)).await;

    let kubelet = Kubelet::new(&client, "default");
    for pod in pods(&client, "default", "app=agent").await {
        kubelet.run(&pod.name_any(), true).await;
    }
    wait_for("two ready", async || status(&api).await == (2, 2, 2, 0)).await;

    nodes
        .patch(
            "ssd-1",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"disk": null}}})),
        )
        .await?;
    wait_for("the pod on ssd-1 deleted", async || {
        pinned_nodes(&client).await == ["plain"]
    })
    .await;
    wait_for("desired 1", async || status(&api).await.0 == 1).await;
    cluster.shutdown().await?;
    Ok(())
}

// kube: pkg/controller/daemon/update_test.go, TestDaemonSetUpdatesPods: a template change
// replaces the pods, at most maxUnavailable (1) at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_change_replaces_pods_one_at_a_time() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    for name in ["a", "b", "c"] {
        node(&client, name, json!({}), json!([])).await;
    }
    let ds: DaemonSet = serde_json::from_value(json!({
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "main", "image": "agent:1"}]}},
        },
    }))?;
    let api: Api<DaemonSet> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &ds).await?;
    let kubelet = Kubelet::new(&client, "default");
    wait_for("three pods", async || {
        pods(&client, "default", "app=agent").await.len() == 3
    })
    .await;
    for pod in pods(&client, "default", "app=agent").await {
        kubelet.run(&pod.name_any(), true).await;
    }
    wait_for("three ready", async || status(&api).await == (3, 3, 3, 0)).await;
    let first: Vec<String> = pods(&client, "default", "app=agent")
        .await
        .iter()
        .map(|p| p.labels()["controller-revision-hash"].clone())
        .collect();
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "agent:2"}]}}}});
    api.patch("agent", &PatchParams::default(), &Patch::Strategic(&patch))
        .await?;

    wait_for("every pod replaced", async || {
        let current = pods(&client, "default", "app=agent").await;
        let not_ready = current.iter().filter(|p| !support::is_running(p)).count();
        assert!(
            not_ready <= 1
                || current
                    .iter()
                    .all(|p| p.labels()["controller-revision-hash"] != first[0]),
            "more than one pod unavailable"
        );
        for pod in current.iter().filter(|p| !support::is_running(p)) {
            kubelet.run(&pod.name_any(), true).await;
        }
        current.len() == 3
            && current
                .iter()
                .all(|p| p.labels()["controller-revision-hash"] != first[0] && support::is_running(p))
    })
    .await;
    wait_for("three updated", async || {
        api.get("agent")
            .await
            .expect("the daemon set")
            .status
            .and_then(|s| s.updated_number_scheduled)
            == Some(3)
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}
