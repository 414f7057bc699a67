//! The StatefulSet controller over HTTP: ordered creation, scale down, rolling update.

mod support;

use k8s_openapi::api::{apps::v1::StatefulSet, core::v1::PersistentVolumeClaim};
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;
use support::{Kubelet, TestResult, pods, wait_for};

fn stateful_set(policy: &str, replicas: i32) -> StatefulSet {
    serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "main", "image": "db:1"}]}},
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }],
        },
    }))
    .expect("a valid stateful set")
}

async fn names(client: &kube::Client) -> Vec<String> {
    pods(client, "default", "app=db")
        .await
        .iter()
        .map(ResourceExt::name_any)
        .collect()
}

// kube: pkg/controller/statefulset/stateful_set_control_test.go, CreatesPods and
// ScalesDown (OrderedReady), over HTTP: each pod waits for the one before to be ready, and
// gets its claim from volumeClaimTemplates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordered_ready_creates_and_removes_pods_in_order() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<StatefulSet> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &stateful_set("OrderedReady", 3))
        .await?;
    let kubelet = Kubelet::new(&client, "default");

    for (ordinal, expected) in [["db-0"].as_slice(), &["db-0", "db-1"], &["db-0", "db-1", "db-2"]]
        .into_iter()
        .enumerate()
    {
        wait_for("the next pod", async || names(&client).await == expected).await;
        kubelet.run(&format!("db-{ordinal}"), true).await;
    }
    let db1 = pods(&client, "default", "app=db").await.remove(1);
    let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(client.clone());
    let claim = claims.get("data-db-1").await?;
    assert_eq!(claim.labels().get("app").map(String::as_str), Some("db"));
    let volumes = db1
        .spec
        .as_ref()
        .and_then(|s| s.volumes.clone())
        .unwrap_or_default();
    let data = volumes
        .iter()
        .find(|v| v.name == "data")
        .and_then(|v| v.persistent_volume_claim.clone());
    assert_eq!(data.map(|c| c.claim_name).as_deref(), Some("data-db-1"));
    assert_eq!(
        db1.labels()
            .get("statefulset.kubernetes.io/pod-name")
            .map(String::as_str),
        Some("db-1")
    );
    assert_eq!(
        db1.labels()
            .get("apps.kubernetes.io/pod-index")
            .map(String::as_str),
        Some("1")
    );
    let spec = db1.spec.clone().unwrap_or_default();
    assert_eq!(
        (spec.hostname.as_deref(), spec.subdomain.as_deref()),
        (Some("db-1"), Some("db"))
    );
    wait_for("three ready", async || {
        let status = api
            .get("db")
            .await
            .expect("the stateful set")
            .status
            .unwrap_or_default();
        status.replicas == 3
            && status.ready_replicas == Some(3)
            && status.current_revision == status.update_revision
    })
    .await;
    let revision = api
        .get("db")
        .await?
        .status
        .and_then(|s| s.update_revision)
        .unwrap_or_default();
    assert!(revision.starts_with("db-"));
    assert_eq!(db1.labels().get("controller-revision-hash"), Some(&revision));

    api.patch(
        "db",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"replicas": 1}})),
    )
    .await?;
    wait_for("db-2, then db-1 removed", async || {
        let left = names(&client).await;
        assert!(
            !left.contains(&"db-2".to_owned()) || left.contains(&"db-1".to_owned()),
            "db-1 went before db-2"
        );
        left == ["db-0"]
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}

// kube: stateful_set_control_test.go, TestStatefulSetControl_getSetRevisions and
// UpdateStatefulSet's RollingUpdate cases: pods are replaced from the highest ordinal down,
// each once the others are ready, and the current revision follows at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_pods_start_at_once_and_update_from_the_highest_ordinal() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<StatefulSet> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &stateful_set("Parallel", 3))
        .await?;
    wait_for("three pods at once", async || {
        names(&client).await == ["db-0", "db-1", "db-2"]
    })
    .await;
    let kubelet = Kubelet::new(&client, "default");
    for name in names(&client).await {
        kubelet.run(&name, true).await;
    }
    wait_for("three ready", async || {
        api.get("db")
            .await
            .expect("sts")
            .status
            .and_then(|s| s.ready_replicas)
            == Some(3)
    })
    .await;
    let old = api
        .get("db")
        .await?
        .status
        .and_then(|s| s.current_revision)
        .unwrap_or_default();

    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "db:2"}]}}}});
    api.patch("db", &PatchParams::default(), &Patch::Strategic(&patch))
        .await?;
    let mut replaced = Vec::new();
    wait_for("every pod updated", async || {
        let current = pods(&client, "default", "app=db").await;
        for pod in &current {
            let updated = pod.labels().get("controller-revision-hash") != Some(&old);
            if updated && !replaced.contains(&pod.name_any()) {
                replaced.push(pod.name_any());
            }
            if !support::is_running(pod) {
                kubelet.run(&pod.name_any(), true).await;
            }
        }
        replaced.len() == 3 && current.iter().all(support::is_running)
    })
    .await;
    assert_eq!(replaced, ["db-2", "db-1", "db-0"]);
    wait_for("the current revision updated", async || {
        let status = api.get("db").await.expect("sts").status.unwrap_or_default();
        status.current_revision != Some(old.clone())
            && status.current_revision == status.update_revision
            && status.updated_replicas == Some(3)
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}
