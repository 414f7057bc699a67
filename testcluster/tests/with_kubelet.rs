//! The controllers with the default server's simulated kubelet: nothing in these tests sets a
//! pod's status. Deployments roll out to Available, Jobs complete, DaemonSets cover the
//! simulated nodes, StatefulSets start in order, Services get the running pods' IPs.

mod support;

use std::collections::BTreeSet;

use informer_testcluster::{DEFAULT_NODES, TestCluster};
use informer_testserver::kubelet::{PodMatch, Stage};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Endpoints, Service};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use support::{TestResult, pods, wait_for};

async fn cluster() -> TestCluster {
    TestCluster::start().await.expect("the cluster starts")
}

fn template(app: &str, image: &str) -> serde_json::Value {
    json!({
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": image}]},
    })
}

async fn create<K>(api: &Api<K>, object: serde_json::Value) -> TestResult
where
    K: kube::Resource
        + Clone
        + k8s_openapi::serde::Serialize
        + k8s_openapi::serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    api.create(&PostParams::default(), &serde_json::from_value(object)?)
        .await?;
    Ok(())
}

fn condition_is(deployment: &Deployment, type_: &str, status: &str, reason: &str) -> bool {
    let conditions = deployment.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.is_some_and(|conditions| {
        conditions.iter().any(|c| {
            c.type_.as_deref() == Some(type_)
                && c.status.as_deref() == Some(status)
                && c.reason.as_deref() == Some(reason)
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_rolls_out_to_available_and_then_to_a_new_template() -> TestResult {
    let cluster = cluster().await;
    let deployments: Api<Deployment> = Api::default_namespaced(cluster.client());
    let web = json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template("web", "nginx:1")},
    });
    create(&deployments, web).await?;
    wait_for("the deployment to be available", async || {
        deployments.get("web").await.is_ok_and(|d| {
            condition_is(&d, "Available", "True", "MinimumReplicasAvailable")
                && condition_is(&d, "Progressing", "True", "NewReplicaSetAvailable")
                && d.status.as_ref().and_then(|s| s.available_replicas) == Some(3)
        })
    })
    .await;
    let running = pods(&cluster.client(), "default", "app=web").await;
    let nodes: BTreeSet<_> = running
        .iter()
        .filter_map(|p| p.spec.as_ref()?.node_name.clone())
        .collect();
    assert_eq!(
        nodes.len(),
        DEFAULT_NODES,
        "spread over the simulated nodes: {nodes:?}"
    );

    let new_image =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}}}});
    deployments
        .patch("web", &PatchParams::default(), &Patch::Strategic(new_image))
        .await?;
    wait_for("the new template to be rolled out", async || {
        deployments.get("web").await.is_ok_and(|d| {
            let status = d.status.clone().unwrap_or_default();
            status.observed_generation == d.metadata.generation
                && status.updated_replicas == Some(3)
                && status.replicas == Some(3)
                && status.available_replicas == Some(3)
                && condition_is(&d, "Progressing", "True", "NewReplicaSetAvailable")
        })
    })
    .await;
    let revision = deployments
        .get("web")
        .await?
        .metadata
        .annotations
        .unwrap_or_default();
    assert_eq!(revision["deployment.kubernetes.io/revision"], "2");
    wait_for("only the new pods to be left", async || {
        let left = pods(&cluster.client(), "default", "app=web").await;
        left.len() == 3
            && left.iter().all(|p| {
                let image = p.spec.as_ref().map(|s| s.containers[0].image.clone());
                image == Some(Some("nginx:2".to_owned())) && p.metadata.deletion_timestamp.is_none()
            })
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_whose_pods_never_become_ready_is_not_available() -> TestResult {
    let cluster = cluster().await;
    let kubelet = cluster
        .server()
        .kubelet()
        .expect("the default server runs a kubelet");
    kubelet.set_stage(PodMatch::labels("app=stuck")?, Stage::NotReady);
    let deployments: Api<Deployment> = Api::default_namespaced(cluster.client());
    let stuck = json!({
        "metadata": {"name": "stuck"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "stuck"}}, "template": template("stuck", "app")},
    });
    create(&deployments, stuck).await?;
    wait_for("the pods to run without being ready", async || {
        let running = pods(&cluster.client(), "default", "app=stuck").await;
        running.len() == 2
            && running
                .iter()
                .all(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
    })
    .await;
    wait_for("the deployment to say it is unavailable", async || {
        deployments.get("stuck").await.is_ok_and(|d| {
            condition_is(&d, "Available", "False", "MinimumReplicasUnavailable")
                && d.status.as_ref().and_then(|s| s.unavailable_replicas) == Some(2)
        })
    })
    .await;
    let status = deployments.get("stuck").await?.status.unwrap_or_default();
    assert_eq!(status.available_replicas.unwrap_or_default(), 0);
    cluster.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_completes_when_the_kubelet_completes_its_pods() -> TestResult {
    let cluster = cluster().await;
    let jobs: Api<Job> = Api::default_namespaced(cluster.client());
    let mut pod_template = template("batch", "busybox");
    pod_template["spec"]["restartPolicy"] = json!("Never");
    let job = json!({
        "metadata": {"name": "batch"},
        "spec": {"completions": 3, "parallelism": 2, "template": pod_template},
    });
    create(&jobs, job).await?;
    wait_for("the job to complete", async || {
        jobs.get("batch").await.is_ok_and(|job| {
            let status = job.status.unwrap_or_default();
            let complete = status
                .conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Complete" && c.status == "True");
            complete && status.succeeded == Some(3) && status.completion_time.is_some()
        })
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_set_runs_a_ready_pod_on_every_simulated_node() -> TestResult {
    let cluster = cluster().await;
    let daemon_sets: Api<DaemonSet> = Api::default_namespaced(cluster.client());
    let agent = json!({
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template("agent", "agent")},
    });
    create(&daemon_sets, agent).await?;
    let expected = i32::try_from(DEFAULT_NODES)?;
    wait_for("a ready pod on every node", async || {
        daemon_sets.get("agent").await.is_ok_and(|ds| {
            let status = ds.status.unwrap_or_default();
            status.desired_number_scheduled == expected && status.number_ready == expected
        })
    })
    .await;
    let running = pods(&cluster.client(), "default", "app=agent").await;
    let nodes: BTreeSet<_> = running
        .iter()
        .filter_map(|p| p.spec.as_ref()?.node_name.clone())
        .collect();
    let simulated: BTreeSet<_> = cluster
        .server()
        .kubelet()
        .expect("a kubelet")
        .node_names()
        .into_iter()
        .collect();
    assert_eq!(nodes, simulated);
    cluster.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_set_starts_its_pods_in_order_and_a_service_gets_their_addresses() -> TestResult {
    let cluster = cluster().await;
    let services: Api<Service> = Api::default_namespaced(cluster.client());
    let service = json!({
        "metadata": {"name": "db"},
        "spec": {"selector": {"app": "db"}, "ports": [{"port": 5432}]},
    });
    create(&services, service).await?;
    let stateful_sets: Api<StatefulSet> = Api::default_namespaced(cluster.client());
    let db = json!({
        "metadata": {"name": "db"},
        "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}}, "template": template("db", "postgres")},
    });
    create(&stateful_sets, db).await?;
    wait_for("every replica to be ready", async || {
        stateful_sets
            .get("db")
            .await
            .is_ok_and(|s| s.status.and_then(|s| s.ready_replicas) == Some(3))
    })
    .await;
    let running = pods(&cluster.client(), "default", "app=db").await;
    let names: Vec<_> = running.iter().filter_map(|p| p.metadata.name.clone()).collect();
    assert_eq!(names, ["db-0", "db-1", "db-2"]);
    let started = |name: &str| {
        let pod = running.iter().find(|p| p.metadata.name.as_deref() == Some(name));
        pod.and_then(|p| p.metadata.creation_timestamp.clone())
    };
    assert!(started("db-0") <= started("db-1") && started("db-1") <= started("db-2"));
    let ips: BTreeSet<String> = running
        .iter()
        .filter_map(|p| p.status.as_ref()?.pod_ip.clone())
        .collect();
    assert_eq!(ips.len(), 3, "each pod has its own IP: {ips:?}");

    let endpoints: Api<Endpoints> = Api::default_namespaced(cluster.client());
    wait_for("the service's endpoints to hold the pods' IPs", async || {
        endpoints.get("db").await.is_ok_and(|e| {
            let addresses: BTreeSet<String> = e
                .subsets
                .unwrap_or_default()
                .iter()
                .flat_map(|s| s.addresses.clone().unwrap_or_default())
                .map(|a| a.ip)
                .collect();
            addresses == ips
        })
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}
