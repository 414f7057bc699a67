//! The Deployment and ReplicaSet controllers together over HTTP: rollouts, revisions, history,
//! conditions.

mod support;

use std::collections::BTreeMap;

use k8s_openapi::api::{
    apps::v1::{Deployment, DeploymentCondition, ReplicaSet},
    core::v1::Pod,
};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};
use support::{Kubelet, TestResult, pods, wait_for};

fn deployment(name: &str, replicas: i32, strategy: Value) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": strategy,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "app:1"}]},
            },
        },
    }))
    .expect("a valid deployment")
}

fn rolling(surge: Value, unavailable: Value) -> Value {
    json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}})
}

async fn replica_sets(client: &kube::Client, app: &str) -> Vec<ReplicaSet> {
    let api: Api<ReplicaSet> = Api::default_namespaced(client.clone());
    let mut sets = api
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .expect("replica sets")
        .items;
    sets.sort_by_key(|rs| rs.annotations().get("deployment.kubernetes.io/revision").cloned());
    sets
}

fn condition<'a>(d: &'a Deployment, type_: &str) -> Option<&'a DeploymentCondition> {
    let conditions = d.status.as_ref()?.conditions.as_deref()?;
    conditions.iter().find(|c| c.type_.as_deref() == Some(type_))
}

fn reason(d: &Deployment, type_: &str) -> Option<String> {
    condition(d, type_).and_then(|c| c.reason.clone())
}

/// What `kubectl rollout status` waits for: the newest spec observed, every replica updated
/// and available, no old replica left.
fn rolled_out(d: &Deployment) -> bool {
    let Some(status) = d.status.as_ref() else {
        return false;
    };
    let desired = d.spec.replicas.unwrap_or(1);
    status.observed_generation >= d.metadata.generation
        && status.updated_replicas.unwrap_or(0) == desired
        && status.replicas.unwrap_or(0) == desired
        && status.available_replicas.unwrap_or(0) == desired
        && reason(d, "Progressing").as_deref() == Some("NewReplicaSetAvailable")
}

/// Plays the kubelet until the deployment rolled out: each round makes one pod that is not
/// ready yet run and become ready, and calls `observe` with the replica sets and pods first.
async fn roll_out(client: &kube::Client, name: &str, mut observe: impl FnMut(&[ReplicaSet], &[Pod])) {
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    let kubelet = Kubelet::new(client, "default");
    wait_for("the rollout", async || {
        let sets = replica_sets(client, name).await;
        let pods = pods(client, "default", &format!("app={name}")).await;
        observe(&sets, &pods);
        if let Some(pod) = pods.iter().find(|pod| !is_ready(pod)) {
            kubelet.run(&pod.name_any(), true).await;
        }
        rolled_out(&api.get(name).await.expect("the deployment"))
    })
    .await;
}

fn is_ready(pod: &Pod) -> bool {
    let conditions = pod
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_deref())
        .unwrap_or_default();
    conditions
        .iter()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

async fn change_image(client: &kube::Client, name: &str, image: &str) {
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}});
    api.patch(name, &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .expect("the template changed");
}

fn annotation(object: &impl ResourceExt, key: &str) -> Option<String> {
    object.annotations().get(key).cloned()
}

// kube: pkg/controller/deployment/sync_test.go and test/integration/deployment's
// TestNewDeployment: a deployment gets one replica set and becomes Available.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_rolls_out_to_available() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    api.create(
        &PostParams::default(),
        &deployment("web", 3, rolling(json!("25%"), json!("25%"))),
    )
    .await?;

    wait_for("a replica set", async || {
        replica_sets(&client, "web").await.len() == 1
    })
    .await;
    let rs = replica_sets(&client, "web").await.remove(0);
    let hash = rs
        .labels()
        .get("pod-template-hash")
        .cloned()
        .expect("the hash label");
    assert_eq!(rs.name_any(), format!("web-{hash}"));
    assert_eq!(
        rs.spec
            .selector
            .match_labels
            .as_ref()
            .map(|l| l["pod-template-hash"].clone()),
        Some(hash.clone())
    );
    assert_eq!(
        annotation(&rs, "deployment.kubernetes.io/revision").as_deref(),
        Some("1")
    );
    assert_eq!(
        annotation(&rs, "deployment.kubernetes.io/desired-replicas").as_deref(),
        Some("3")
    );
    assert_eq!(
        annotation(&rs, "deployment.kubernetes.io/max-replicas").as_deref(),
        Some("4")
    );
    wait_for("progressing, not yet available", async || {
        let d = api.get("web").await.expect("the deployment");
        let progressing = condition(&d, "Progressing").and_then(|c| c.status.as_deref()) == Some("True");
        let reason = reason(&d, "Progressing");
        let created = matches!(
            reason.as_deref(),
            Some("NewReplicaSetCreated" | "ReplicaSetUpdated")
        );
        progressing
            && created
            && condition(&d, "Available").and_then(|c| c.reason.as_deref())
                == Some("MinimumReplicasUnavailable")
    })
    .await;

    roll_out(&client, "web", |_, _| {}).await;
    let d = api.get("web").await?;
    let status = d.status.clone().unwrap_or_default();
    assert_eq!(
        (
            status.replicas,
            status.updated_replicas,
            status.ready_replicas,
            status.available_replicas
        ),
        (Some(3), Some(3), Some(3), Some(3))
    );
    assert_eq!(status.unavailable_replicas.unwrap_or(0), 0);
    assert_eq!(status.observed_generation, d.metadata.generation);
    assert_eq!(
        reason(&d, "Available").as_deref(),
        Some("MinimumReplicasAvailable")
    );
    assert_eq!(
        condition(&d, "Available").and_then(|c| c.status.as_deref()),
        Some("True")
    );
    assert_eq!(
        annotation(&d, "deployment.kubernetes.io/revision").as_deref(),
        Some("1")
    );
    for pod in pods(&client, "default", "app=web").await {
        assert_eq!(pod.labels().get("pod-template-hash"), Some(&hash));
    }
    cluster.shutdown().await?;
    Ok(())
}

/// Rolls `name` out, changes its image, and checks during the second rollout that the
/// replica sets never ask for more than `max_total` pods and that at least `min_ready` pods
/// stay ready; returns the most pods asked for and the fewest ready seen.
async fn observe_rollout(
    client: &kube::Client,
    name: &str,
    max_total: i32,
    min_ready: usize,
) -> (i32, usize) {
    roll_out(client, name, |_, _| {}).await;
    change_image(client, name, "app:2").await;
    let (mut most, mut fewest) = (0, usize::MAX);
    roll_out(client, name, |sets, pods| {
        let total: i32 = sets.iter().map(|rs| rs.spec.replicas.unwrap_or(0)).sum();
        let ready = pods.iter().filter(|pod| is_ready(pod)).count();
        assert!(
            total <= max_total,
            "the replica sets ask for {total} pods, more than {max_total}"
        );
        assert!(ready >= min_ready, "{ready} pods ready, fewer than {min_ready}");
        most = most.max(total);
        fewest = fewest.min(ready);
    })
    .await;
    (most, fewest)
}

// kube: rolling_test.go, TestDeploymentController_reconcileNewReplicaSet and
// reconcileOldReplicaSets, observed end to end: maxSurge 1, maxUnavailable 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_change_surges_within_max_surge() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    api.create(
        &PostParams::default(),
        &deployment("surge", 4, rolling(json!(1), json!(0))),
    )
    .await?;
    let (most, fewest) = observe_rollout(&client, "surge", 5, 4).await;
    assert_eq!(most, 5, "the rollout used its surge");
    assert_eq!(fewest, 4);

    let sets = replica_sets(&client, "surge").await;
    assert_eq!(sets.len(), 2);
    let revisions: Vec<_> = sets
        .iter()
        .map(|rs| annotation(rs, "deployment.kubernetes.io/revision"))
        .collect();
    assert_eq!(revisions, [Some("1".to_owned()), Some("2".to_owned())]);
    assert_eq!((sets[0].spec.replicas, sets[1].spec.replicas), (Some(0), Some(4)));
    assert_eq!(
        annotation(&api.get("surge").await?, "deployment.kubernetes.io/revision").as_deref(),
        Some("2")
    );
    cluster.shutdown().await?;
    Ok(())
}

// The same with maxSurge 0 and maxUnavailable 50%: pods are replaced two at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_change_stays_within_max_unavailable() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    api.create(
        &PostParams::default(),
        &deployment("unavail", 4, rolling(json!(0), json!("50%"))),
    )
    .await?;
    let (most, fewest) = observe_rollout(&client, "unavail", 4, 2).await;
    assert_eq!(most, 4);
    assert_eq!(fewest, 2, "the rollout used its unavailability budget");
    cluster.shutdown().await?;
    Ok(())
}

// kube: sync_test.go, TestDeploymentController_cleanupDeployment: beyond
// revisionHistoryLimit, the oldest scaled-down replica sets are deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_replica_sets_beyond_the_history_limit_are_deleted() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    let mut history = deployment("history", 1, rolling(json!(1), json!(0)));
    history.spec.revision_history_limit = Some(1);
    api.create(&PostParams::default(), &history).await?;
    roll_out(&client, "history", |_, _| {}).await;
    for image in ["app:2", "app:3"] {
        change_image(&client, "history", image).await;
        roll_out(&client, "history", |_, _| {}).await;
    }
    wait_for("two replica sets left", async || {
        replica_sets(&client, "history").await.len() == 2
    })
    .await;
    let revisions: BTreeMap<_, _> = replica_sets(&client, "history")
        .await
        .iter()
        .map(|rs| {
            (
                annotation(rs, "deployment.kubernetes.io/revision"),
                rs.spec.replicas,
            )
        })
        .collect();
    assert_eq!(
        revisions,
        BTreeMap::from([(Some("2".to_owned()), Some(0)), (Some("3".to_owned()), Some(1))])
    );
    cluster.shutdown().await?;
    Ok(())
}

// kube: recreate_test.go, TestScaleDownOldReplicaSets / TestOldPodsRunning: the new replica
// set is created only once the old pods are gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_replaces_every_pod_at_once() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    api.create(
        &PostParams::default(),
        &deployment("batch", 2, json!({"type": "Recreate"})),
    )
    .await?;
    roll_out(&client, "batch", |_, _| {}).await;
    change_image(&client, "batch", "app:2").await;
    roll_out(&client, "batch", |sets, _| {
        let active = sets.iter().filter(|rs| rs.spec.replicas.unwrap_or(0) > 0).count();
        assert!(active <= 1, "old and new replica sets run at once");
    })
    .await;
    assert_eq!(replica_sets(&client, "batch").await.len(), 2);
    cluster.shutdown().await?;
    Ok(())
}

// kube: progress_test.go, TestSyncRolloutStatus's deadline cases: no progress within
// progressDeadlineSeconds sets Progressing=False, ProgressDeadlineExceeded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_rollout_exceeds_its_progress_deadline() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    let mut stuck = deployment("stuck", 1, rolling(json!(1), json!(0)));
    stuck.spec.progress_deadline_seconds = Some(1);
    api.create(&PostParams::default(), &stuck).await?;
    // On a loaded machine the deadline may pass before the pod is even created; creating it is
    // progress, which sets Progressing back to True as kube does. Once the pod exists nothing
    // more can happen (no kubelet runs it), so the deadline is waited for after that.
    wait_for("the deadline exceeded with the pod created", async || {
        let d = api.get("stuck").await.expect("the deployment");
        let updated = d.status.as_ref().and_then(|s| s.updated_replicas);
        updated == Some(1) && reason(&d, "Progressing").as_deref() == Some("ProgressDeadlineExceeded")
    })
    .await;
    let d = api.get("stuck").await?;
    assert_eq!(
        condition(&d, "Progressing").and_then(|c| c.status.as_deref()),
        Some("False")
    );
    assert_eq!(
        reason(&d, "Available").as_deref(),
        Some("MinimumReplicasUnavailable")
    );
    cluster.shutdown().await?;
    Ok(())
}

// kube's checkPausedConditions (pkg/controller/deployment/progress.go): a paused deployment
// does not roll out a changed template and says so in Progressing; resumed, it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_deployment_does_not_roll_out() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    api.create(
        &PostParams::default(),
        &deployment("held", 1, rolling(json!(1), json!(0))),
    )
    .await?;
    roll_out(&client, "held", |_, _| {}).await;
    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"paused": true}})),
    )
    .await?;
    change_image(&client, "held", "app:2").await;
    wait_for("the paused condition", async || {
        reason(&api.get("held").await.expect("the deployment"), "Progressing").as_deref()
            == Some("DeploymentPaused")
    })
    .await;
    assert_eq!(replica_sets(&client, "held").await.len(), 1);

    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"paused": false}})),
    )
    .await?;
    roll_out(&client, "held", |_, _| {}).await;
    assert_eq!(replica_sets(&client, "held").await.len(), 2);
    cluster.shutdown().await?;
    Ok(())
}

/// A kubeconfig for `url` in a file of its own.
fn kubeconfig(url: &str, test: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "informer-testcluster-{test}-{}.kubeconfig",
        std::process::id()
    ));
    let config = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: test, cluster: {{server: \"{url}\"}}}}]\nusers: [{{name: test, user: {{}}}}]\ncontexts: [{{name: test, context: {{cluster: test, user: test, namespace: default}}}}]\ncurrent-context: test\n"
    );
    std::fs::write(&path, config).expect("the kubeconfig written");
    path
}

// `kubectl rollout status` reads what the controllers write: it returns once the rollout is
// complete. Skipped, saying so, where kubectl is not installed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_rollout_status_follows_the_rollout() -> TestResult {
    if std::process::Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_err()
    {
        eprintln!("skipped: kubectl is not installed");
        return Ok(());
    }
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    api.create(
        &PostParams::default(),
        &deployment("kubectl", 2, rolling(json!(1), json!(0))),
    )
    .await?;
    let config = kubeconfig(&cluster.server().url(), "rollout");
    let status = {
        let config = config.clone();
        tokio::task::spawn_blocking(move || {
            std::process::Command::new("kubectl")
                .args(["rollout", "status", "deployment/kubectl", "--timeout=20s"])
                .env("KUBECONFIG", &config)
                .output()
        })
    };
    roll_out(&client, "kubectl", |_, _| {}).await;
    let output = status.await??;
    let _ = std::fs::remove_file(&config);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "kubectl failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("successfully rolled out"), "{stdout}");
    cluster.shutdown().await?;
    Ok(())
}

// kube: sync_test.go, TestScale, end to end: a deployment scaled in the middle of a rollout
// scales both replica sets in proportion, then completes the rollout at its new size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_during_a_rollout_is_proportional() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    api.create(
        &PostParams::default(),
        &deployment("grow", 4, rolling(json!(2), json!(0))),
    )
    .await?;
    roll_out(&client, "grow", |_, _| {}).await;
    change_image(&client, "grow", "app:2").await;
    // the new replica set surged to 2 next to the old 4
    wait_for("the surge", async || {
        let sets = replica_sets(&client, "grow").await;
        sets.len() == 2 && sets[1].spec.replicas == Some(2) && sets[0].spec.replicas == Some(4)
    })
    .await;
    api.patch(
        "grow",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"replicas": 8}})),
    )
    .await?;
    // 8 + a surge of 2 allows 10, 4 more: each grows by its share of 6 -> 10, 4 -> 7 and 2 -> 3
    wait_for("both replica sets grown", async || {
        let sets = replica_sets(&client, "grow").await;
        sets.len() == 2 && sets[0].spec.replicas == Some(7) && sets[1].spec.replicas == Some(3)
    })
    .await;
    roll_out(&client, "grow", |_, _| {}).await;
    let sets = replica_sets(&client, "grow").await;
    assert_eq!((sets[0].spec.replicas, sets[1].spec.replicas), (Some(0), Some(8)));
    cluster.shutdown().await?;
    Ok(())
}
