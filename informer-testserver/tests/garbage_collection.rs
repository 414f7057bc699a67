//! Garbage collection of dependents through `kube::Client`: background, foreground (the
//! `foregroundDeletion` finalizer and `blockOwnerDeletion`) and orphan propagation, dependents
//! with several owners, and Jobs orphaning their pods by default.

use informer_testserver::TestServer;
use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    batch::v1::Job,
    core::v1::{ConfigMap, Pod},
};
use kube::{
    Resource, ResourceExt,
    api::{Api, DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

fn named<K: serde::de::DeserializeOwned>(name: &str) -> K {
    serde_json::from_value(json!({"metadata": {"name": name}})).expect("valid")
}

/// `name` owned by each of `owners` (their kind, name, uid), blocking their deletion if asked.
fn owned<K: serde::de::DeserializeOwned>(name: &str, owners: &[Value]) -> K {
    serde_json::from_value(json!({
        "metadata": {"name": name, "ownerReferences": owners},
    }))
    .expect("valid")
}

fn reference<K: Resource<DynamicType = ()>>(owner: &K, block: bool) -> Value {
    json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "name": owner.name_any(),
        "uid": owner.uid().expect("created objects have a uid"),
        "controller": true,
        "blockOwnerDeletion": block,
    })
}

struct Chain {
    deployments: Api<Deployment>,
    replica_sets: Api<ReplicaSet>,
    pods: Api<Pod>,
}

/// A Deployment `web`, its ReplicaSet `web-1` and two pods of that ReplicaSet.
async fn chain(server: &TestServer, block: bool) -> Chain {
    let client = server.client().expect("client");
    let chain = Chain {
        deployments: Api::default_namespaced(client.clone()),
        replica_sets: Api::default_namespaced(client.clone()),
        pods: Api::default_namespaced(client),
    };
    let pp = PostParams::default();
    let web = chain
        .deployments
        .create(&pp, &named("web"))
        .await
        .expect("deployment");
    let rs: ReplicaSet = owned("web-1", &[reference(&web, block)]);
    let rs = chain.replica_sets.create(&pp, &rs).await.expect("replica set");
    for name in ["web-1-a", "web-1-b"] {
        let pod: Pod = owned(name, &[reference(&rs, block)]);
        chain.pods.create(&pp, &pod).await.expect("pod");
    }
    chain
}

async fn names<K>(api: &Api<K>) -> Vec<String>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let list = api.list(&Default::default()).await.expect("list");
    list.items.iter().map(ResourceExt::name_any).collect()
}

#[tokio::test]
async fn background_deletion_removes_dependents_down_the_chain() {
    let server = TestServer::start().await.expect("start");
    let chain = chain(&server, false).await;
    chain
        .deployments
        .delete("web", &DeleteParams::default())
        .await
        .expect("deleted");
    assert!(names(&chain.deployments).await.is_empty());
    assert!(
        names(&chain.replica_sets).await.is_empty(),
        "the replica set goes"
    );
    assert!(names(&chain.pods).await.is_empty(), "and its pods");
    server.shutdown().await;
}

#[tokio::test]
async fn a_dependent_with_another_owner_stays_without_the_deleted_one() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let maps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let pp = PostParams::default();
    let first = maps.create(&pp, &named("first")).await.expect("owner");
    let second = maps.create(&pp, &named("second")).await.expect("owner");
    // one controller at most, as kube-apiserver requires: the second owner is a plain one
    let mut plain = reference(&second, false);
    plain["controller"] = json!(false);
    let shared: ConfigMap = owned("shared", &[reference(&first, false), plain]);
    maps.create(&pp, &shared).await.expect("dependent");

    maps.delete("first", &DeleteParams::default())
        .await
        .expect("deleted");
    let shared = maps.get("shared").await.expect("kept: second still owns it");
    let owners: Vec<String> = shared.owner_references().iter().map(|r| r.name.clone()).collect();
    assert_eq!(owners, ["second"]);

    maps.delete("second", &DeleteParams::default())
        .await
        .expect("deleted");
    assert!(
        maps.get_opt("shared").await.expect("get").is_none(),
        "no owner left"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn orphan_deletion_keeps_dependents_without_the_reference() {
    let server = TestServer::start().await.expect("start");
    let chain = chain(&server, false).await;
    chain
        .deployments
        .delete("web", &DeleteParams::orphan())
        .await
        .expect("deleted");
    assert!(names(&chain.deployments).await.is_empty());
    let rs = chain
        .replica_sets
        .get("web-1")
        .await
        .expect("orphaned, not deleted");
    assert!(
        rs.owner_references().is_empty(),
        "{:?}",
        rs.metadata.owner_references
    );
    assert_eq!(
        names(&chain.pods).await.len(),
        2,
        "the pods keep their replica set"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let server = TestServer::start().await.expect("start");
    let chain = chain(&server, true).await;
    // One pod holds its own deletion with a finalizer.
    let hold = json!({"metadata": {"finalizers": ["example.com/hold"]}});
    chain
        .pods
        .patch("web-1-a", &PatchParams::default(), &Patch::Merge(&hold))
        .await
        .expect("finalizer added");

    let answer = chain
        .deployments
        .delete("web", &DeleteParams::foreground())
        .await
        .expect("deleted");
    let marked = answer.left().expect("the owner is still there, marked");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.finalizers(), ["foregroundDeletion"]);

    let pod = chain.pods.get("web-1-a").await.expect("held by its finalizer");
    assert!(pod.metadata.deletion_timestamp.is_some(), "but terminating");
    assert_eq!(names(&chain.pods).await, ["web-1-a"], "the other pod went");
    let rs = chain.replica_sets.get("web-1").await.expect("waits for its pod");
    assert_eq!(rs.finalizers(), ["foregroundDeletion"]);
    assert!(chain.deployments.get_opt("web").await.expect("get").is_some());

    let release = json!({"metadata": {"finalizers": null}});
    chain
        .pods
        .patch("web-1-a", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .expect("finalizer removed");
    assert!(names(&chain.pods).await.is_empty());
    assert!(
        names(&chain.replica_sets).await.is_empty(),
        "then the replica set"
    );
    assert!(names(&chain.deployments).await.is_empty(), "then the deployment");
    server.shutdown().await;
}

#[tokio::test]
async fn foreground_deletion_without_blocking_dependents_completes_at_once() {
    let server = TestServer::start().await.expect("start");
    let chain = chain(&server, false).await;
    chain
        .deployments
        .delete("web", &DeleteParams::foreground())
        .await
        .expect("deleted");
    assert!(names(&chain.pods).await.is_empty());
    assert!(names(&chain.replica_sets).await.is_empty());
    assert!(names(&chain.deployments).await.is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn jobs_orphan_their_pods_unless_asked_otherwise() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    let pp = PostParams::default();
    for (job, pod) in [("by-default", "p1"), ("background", "p2")] {
        let created = jobs.create(&pp, &named(job)).await.expect("job");
        let owned_pod: Pod = owned(pod, &[reference(&created, true)]);
        pods.create(&pp, &owned_pod).await.expect("pod");
    }
    jobs.delete("by-default", &DeleteParams::default())
        .await
        .expect("deleted");
    let p1 = pods.get("p1").await.expect("batch/v1 jobs orphan by default");
    assert!(p1.owner_references().is_empty());
    jobs.delete("background", &DeleteParams::background())
        .await
        .expect("deleted");
    assert!(pods.get_opt("p2").await.expect("get").is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn an_unknown_propagation_policy_is_refused() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let maps: Api<ConfigMap> = Api::default_namespaced(client);
    maps.create(&PostParams::default(), &named("x"))
        .await
        .expect("created");
    let request = http::Request::delete("/api/v1/namespaces/default/configmaps/x")
        .header("content-type", "application/json")
        .body(br#"{"propagationPolicy":"Sideways"}"#.to_vec())
        .expect("request");
    let error = server
        .client()
        .expect("client")
        .request::<Value>(request)
        .await
        .expect_err("refused");
    let kube::Error::Api(status) = error else {
        panic!("not an API error: {error:?}");
    };
    assert_eq!(status.code, 422);
    assert!(status.message.contains("propagationPolicy"), "{}", status.message);
    assert!(maps.get_opt("x").await.expect("get").is_some(), "nothing deleted");
    server.shutdown().await;
}
