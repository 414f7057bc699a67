//! The ReplicaSet controller over HTTP: scaling, adoption, status.

mod support;

use k8s_openapi::api::{apps::v1::ReplicaSet, core::v1::Pod};
use kube::{
    Api,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::json;
use support::{Kubelet, TestResult, pods, wait_for};

fn replica_set(name: &str, replicas: i32) -> ReplicaSet {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "tier": "fe"}},
                "spec": {"containers": [{"name": "main", "image": "app"}]},
            },
        },
    }))
    .expect("a valid replica set")
}

async fn status_of(api: &Api<ReplicaSet>, name: &str) -> (i32, i32, i32, i32) {
    let rs = api.get(name).await.expect("the replica set");
    let status = rs.status.unwrap_or_default();
    (
        status.replicas,
        status.fully_labeled_replicas.unwrap_or(0),
        status.ready_replicas.unwrap_or(0),
        status.available_replicas.unwrap_or(0),
    )
}

async fn scale(api: &Api<ReplicaSet>, name: &str, replicas: i32) {
    let patch = json!({"spec": {"replicas": replicas}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("scaled");
}

// kube: pkg/controller/replicaset/replica_set_test.go, TestSyncReplicaSetCreateFailures and
// TestSyncReplicaSetDormancy (creation and status counts), over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_pods_from_the_template_and_counts_them() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<ReplicaSet> = Api::default_namespaced(client.clone());
    let rs = api.create(&PostParams::default(), &replica_set("web", 3)).await?;

    wait_for("three pods", async || {
        pods(&client, "default", "app=web").await.len() == 3
    })
    .await;
    let created = pods(&client, "default", "app=web").await;
    for pod in &created {
        assert!(
            pod.metadata.generate_name.as_deref() == Some("web-"),
            "{:?}",
            pod.metadata
        );
        let owner = &pod.metadata.owner_references.as_ref().expect("an owner")[0];
        assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("ReplicaSet", "web"));
        assert_eq!(owner.uid, rs.metadata.uid.clone().unwrap_or_default());
        assert_eq!(
            (owner.controller, owner.block_owner_deletion),
            (Some(true), Some(true))
        );
        assert_eq!(
            pod.metadata.labels.as_ref().map(|labels| labels["tier"].as_str()),
            Some("fe")
        );
    }
    wait_for("status replicas 3, none ready", async || {
        status_of(&api, "web").await == (3, 3, 0, 0)
    })
    .await;

    let kubelet = Kubelet::new(&client, "default");
    kubelet.run_all(&created[..2]).await;
    kubelet
        .run(created[2].metadata.name.as_deref().unwrap_or_default(), false)
        .await;
    wait_for("two ready and available", async || {
        status_of(&api, "web").await == (3, 3, 2, 2)
    })
    .await;
    let observed = api
        .get("web")
        .await?
        .status
        .and_then(|status| status.observed_generation);
    assert_eq!(observed, api.get("web").await?.metadata.generation);
    cluster.shutdown().await?;
    Ok(())
}

// kube: replica_set_test.go, TestSyncReplicaSetDeletes and the deletion order of
// controller_utils_test.go's TestSortingActivePods: the not-ready pod goes first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scales_down_deleting_pods_that_are_not_ready_first() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<ReplicaSet> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &replica_set("api", 3)).await?;
    wait_for("three pods", async || {
        pods(&client, "default", "app=api").await.len() == 3
    })
    .await;
    let created = pods(&client, "default", "app=api").await;
    let kubelet = Kubelet::new(&client, "default");
    let not_ready = created[1].metadata.name.clone().unwrap_or_default();
    kubelet
        .run(created[0].metadata.name.as_deref().unwrap_or_default(), true)
        .await;
    kubelet.run(&not_ready, false).await;
    kubelet
        .run(created[2].metadata.name.as_deref().unwrap_or_default(), true)
        .await;
    wait_for("two ready", async || status_of(&api, "api").await.2 == 2).await;

    scale(&api, "api", 2).await;
    wait_for("two pods", async || {
        pods(&client, "default", "app=api").await.len() == 2
    })
    .await;
    let left = pods(&client, "default", "app=api").await;
    assert!(
        left.iter()
            .all(|pod| pod.metadata.name.as_deref() != Some(not_ready.as_str()))
    );
    wait_for("status of two ready pods", async || {
        status_of(&api, "api").await == (2, 2, 2, 2)
    })
    .await;

    scale(&api, "api", 0).await;
    wait_for("no pods", async || {
        pods(&client, "default", "app=api").await.is_empty()
    })
    .await;
    wait_for("status of no pods", async || {
        status_of(&api, "api").await == (0, 0, 0, 0)
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}

// kube: replica_set_test.go, TestPodControllerLookup, and the adoption of ClaimPods
// (controller_ref_manager.go): orphans matching the selector are adopted, not duplicated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopts_matching_orphans_and_leaves_other_pods_alone() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let pods_api: Api<Pod> = Api::default_namespaced(client.clone());
    for (name, app) in [("orphan-1", "db"), ("orphan-2", "db"), ("stranger", "cache")] {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"app": app}},
            "spec": {"containers": [{"name": "main", "image": "app"}]},
        }))?;
        pods_api.create(&PostParams::default(), &pod).await?;
    }
    let api: Api<ReplicaSet> = Api::default_namespaced(client.clone());
    let rs = api.create(&PostParams::default(), &replica_set("db", 2)).await?;
    let uid = rs.metadata.uid.unwrap_or_default();

    wait_for("the orphans adopted", async || {
        pods(&client, "default", "app=db").await.iter().all(|pod| {
            pod.metadata
                .owner_references
                .as_deref()
                .unwrap_or_default()
                .iter()
                .any(|owner| owner.uid == uid && owner.controller == Some(true))
        })
    })
    .await;
    wait_for("status replicas 2", async || status_of(&api, "db").await.0 == 2).await;
    assert_eq!(
        pods(&client, "default", "app=db").await.len(),
        2,
        "no pod was created besides the orphans"
    );
    let stranger = pods_api.get("stranger").await?;
    assert!(stranger.metadata.owner_references.is_none());
    cluster.shutdown().await?;
    Ok(())
}

// kube: replica_set_test.go, TestDeletionTimestamp: a pod being deleted does not count, so it
// is replaced at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaces_terminating_pods() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<ReplicaSet> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &replica_set("worker", 1))
        .await?;
    wait_for("one pod", async || {
        pods(&client, "default", "app=worker").await.len() == 1
    })
    .await;
    let first = pods(&client, "default", "app=worker").await.remove(0);
    let name = first.metadata.name.clone().unwrap_or_default();
    let pods_api: Api<Pod> = Api::default_namespaced(client.clone());
    // a finalizer keeps the deleted pod, terminating, as a kubelet would while it stops
    let hold = json!({"metadata": {"finalizers": ["example.com/hold"]}});
    pods_api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&hold))
        .await?;
    pods_api.delete(&name, &DeleteParams::default()).await?;

    wait_for("a replacement", async || {
        pods(&client, "default", "app=worker").await.len() == 2
    })
    .await;
    wait_for("status replicas 1", async || {
        status_of(&api, "worker").await.0 == 1
    })
    .await;
    let release = json!({"metadata": {"finalizers": null}});
    pods_api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&release))
        .await?;
    cluster.shutdown().await?;
    Ok(())
}
