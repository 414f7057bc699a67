//! Field selectors through `kube::Client`, as kube-apiserver evaluates them: each type's own
//! field labels, Go's zero values for unset fields, and its `400` for an unsupported label.

mod support;

use informer_testserver::TestServer;
use k8s_openapi::api::{
    apps::v1::ReplicaSet,
    batch::v1::Job,
    core::v1::{Event, Node, Pod, Secret, ServiceAccount},
};
use kube::api::{Api, ListParams, PostParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn object<K: DeserializeOwned>(value: Value) -> K {
    serde_json::from_value(value).expect("valid object")
}

async fn names<K>(api: &Api<K>, selector: &str) -> Vec<String>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let list = api
        .list(&ListParams::default().fields(selector))
        .await
        .unwrap_or_else(|e| panic!("list with {selector}: {e}"));
    let mut names: Vec<String> = list.items.iter().filter_map(|o| o.meta().name.clone()).collect();
    names.sort();
    names
}

async fn refusal<K>(api: &Api<K>, selector: &str) -> (u16, String)
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.list(&ListParams::default().fields(selector)).await {
        Err(kube::Error::Api(status)) => (status.code, status.message),
        other => panic!("expected a Status error for {selector}, got {other:?}"),
    }
}

async fn start() -> (TestServer, Client) {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    (server, client)
}

#[tokio::test]
async fn nodes_without_unschedulable_are_schedulable() {
    let (server, client) = start().await;
    let nodes: Api<Node> = Api::all(client);
    let pp = PostParams::default();
    nodes
        .create(&pp, &object(json!({"metadata": {"name": "plain"}})))
        .await
        .expect("plain");
    nodes
        .create(
            &pp,
            &object(json!({"metadata": {"name": "cordoned"}, "spec": {"unschedulable": true}})),
        )
        .await
        .expect("cordoned");
    assert_eq!(names(&nodes, "spec.unschedulable=false").await, ["plain"]);
    assert_eq!(names(&nodes, "spec.unschedulable==true").await, ["cordoned"]);
    assert_eq!(names(&nodes, "spec.unschedulable!=true").await, ["plain"]);
    // nodes are not namespaced: kube-apiserver's node conversion refuses the namespace label
    assert_eq!(
        refusal(&nodes, "metadata.namespace=default").await,
        (400, "field label not supported: metadata.namespace".to_owned())
    );
    server.shutdown().await;
}

#[tokio::test]
async fn replica_counts_and_job_successes_default_to_zero() {
    let (server, client) = start().await;
    let pp = PostParams::default();
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), "default");
    let template =
        json!({"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
    for name in ["new", "running"] {
        replica_sets
            .create(
                &pp,
                &object(json!({"metadata": {"name": name}, "spec": {
                    "selector": {"matchLabels": {"app": "a"}}, "template": template}})),
            )
            .await
            .expect("replica set");
    }
    let mut running = replica_sets.get_status("running").await.expect("get");
    running.status = Some(object(json!({"replicas": 2})));
    replica_sets
        .replace_status("running", &pp, &running)
        .await
        .expect("status");
    assert_eq!(names(&replica_sets, "status.replicas=0").await, ["new"]);
    assert_eq!(names(&replica_sets, "status.replicas=2").await, ["running"]);

    let jobs: Api<Job> = Api::namespaced(client, "default");
    jobs.create(
        &pp,
        &object(json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}})),
    )
    .await
    .expect("job");
    assert_eq!(names(&jobs, "status.successful=0").await, ["j"]);
    assert_eq!(
        refusal(&jobs, "status.failed=0").await,
        (
            400,
            r#"field label "status.failed" not supported for batchv1.Job"#.to_owned()
        )
    );
    server.shutdown().await;
}

#[tokio::test]
async fn pod_fields_read_as_the_pod_strategy_computes_them() {
    let (server, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pp = PostParams::default();
    let containers = json!([{"name": "c", "image": "i"}]);
    let accounts: Api<ServiceAccount> = Api::namespaced(client, "default");
    accounts
        .create(&pp, &object(json!({"metadata": {"name": "robot"}})))
        .await
        .expect("the pod's service account");
    pods.create(
        &pp,
        &object(json!({"metadata": {"name": "pending"}, "spec": {"containers": containers}})),
    )
    .await
    .expect("pending");
    pods.create(
        &pp,
        &object(json!({"metadata": {"name": "bound"}, "spec": {
            "containers": containers, "nodeName": "n1", "restartPolicy": "Never",
            "schedulerName": "custom", "serviceAccountName": "robot", "hostNetwork": true}})),
    )
    .await
    .expect("bound");
    let mut bound = pods.get_status("bound").await.expect("get");
    bound.status = Some(object(json!({
        "phase": "Running", "podIPs": [{"ip": "10.0.0.7"}], "nominatedNodeName": "n2"})));
    pods.replace_status("bound", &pp, &bound).await.expect("status");

    assert_eq!(names(&pods, "spec.nodeName=").await, ["pending"]);
    assert_eq!(names(&pods, "spec.nodeName=n1").await, ["bound"]);
    // the name old v1 clients send for spec.nodeName
    assert_eq!(names(&pods, "spec.host=n1").await, ["bound"]);
    assert_eq!(names(&pods, "spec.restartPolicy=Never").await, ["bound"]);
    assert_eq!(names(&pods, "spec.schedulerName=custom").await, ["bound"]);
    assert_eq!(names(&pods, "spec.serviceAccountName=robot").await, ["bound"]);
    assert_eq!(names(&pods, "spec.hostNetwork=false").await, ["pending"]);
    assert_eq!(names(&pods, "status.phase=Running").await, ["bound"]);
    // a new pod is Pending, as kube-apiserver's pod strategy makes it
    assert_eq!(names(&pods, "status.phase=Pending").await, ["pending"]);
    assert_eq!(names(&pods, "status.podIP=10.0.0.7").await, ["bound"]);
    assert_eq!(names(&pods, "status.nominatedNodeName=n2").await, ["bound"]);
    // accepted, never computed: always empty
    assert_eq!(names(&pods, "status.podIPs=").await, ["bound", "pending"]);
    assert_eq!(
        refusal(&pods, "spec.priority=1").await,
        (400, "field label not supported: spec.priority".to_owned())
    );
    server.shutdown().await;
}

#[tokio::test]
async fn secrets_and_events_select_by_type_reason_and_involved_object() {
    let (server, client) = start().await;
    let pp = PostParams::default();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    secrets
        .create(
            &pp,
            &object(json!({"metadata": {"name": "tls"}, "type": "kubernetes.io/tls"})),
        )
        .await
        .expect("tls");
    secrets
        .create(&pp, &object(json!({"metadata": {"name": "untyped"}})))
        .await
        .expect("untyped");
    assert_eq!(names(&secrets, "type=kubernetes.io/tls").await, ["tls"]);
    // a secret without a type is Opaque, as kube-apiserver defaults it
    assert_eq!(names(&secrets, "type=Opaque").await, ["untyped"]);

    let events: Api<Event> = Api::namespaced(client, "default");
    events
        .create(
            &pp,
            &object(
                json!({"metadata": {"name": "e1"}, "type": "Warning", "reason": "BackOff",
                "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
                "source": {"component": "kubelet"}}),
            ),
        )
        .await
        .expect("e1");
    events
        .create(
            &pp,
            &object(
                json!({"metadata": {"name": "e2"}, "type": "Normal", "reason": "Scheduled",
                "involvedObject": {"kind": "Node", "name": "n"},
                "reportingComponent": "scheduler"}),
            ),
        )
        .await
        .expect("e2");
    assert_eq!(names(&events, "involvedObject.kind=Pod").await, ["e1"]);
    assert_eq!(
        names(&events, "involvedObject.name=p,involvedObject.namespace=default").await,
        ["e1"]
    );
    assert_eq!(names(&events, "involvedObject.uid=").await, ["e1", "e2"]);
    assert_eq!(names(&events, "reason=Scheduled").await, ["e2"]);
    assert_eq!(names(&events, "type!=Normal").await, ["e1"]);
    assert_eq!(names(&events, "source=kubelet").await, ["e1"]);
    // without source.component, `source` is the reporting controller
    assert_eq!(names(&events, "source=scheduler").await, ["e2"]);
    assert_eq!(names(&events, "reportingComponent=scheduler").await, ["e2"]);
    server.shutdown().await;
}

#[tokio::test]
async fn events_k8s_io_uses_its_own_labels() {
    let (server, client) = start().await;
    let events: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client, "default");
    events
        .create(
            &PostParams::default(),
            &object(
                json!({"metadata": {"name": "e"}, "eventTime": "2024-01-01T00:00:00.000000Z",
                "reportingController": "ctl", "reportingInstance": "ctl-1", "action": "Sync",
                "reason": "Synced", "type": "Normal", "regarding": {"kind": "Pod", "name": "p"}}),
            ),
        )
        .await
        .expect("event");
    assert_eq!(names(&events, "regarding.kind=Pod").await, ["e"]);
    assert_eq!(names(&events, "reportingController=ctl").await, ["e"]);
    assert_eq!(names(&events, "source=ctl").await, ["e"]);
    assert_eq!(
        refusal(&events, "involvedObject.kind=Pod").await,
        (400, "field label not supported: involvedObject.kind".to_owned())
    );
    server.shutdown().await;
}

#[tokio::test]
async fn watches_filter_by_zero_values_too() {
    let (server, client) = start().await;
    let nodes: Api<Node> = Api::all(client);
    let body = support::get(
        server.addr(),
        "/api/v1/nodes?watch=true&timeoutSeconds=1&fieldSelector=spec.unschedulable%3Dfalse",
    );
    nodes
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": "plain"}})),
        )
        .await
        .expect("plain");
    nodes
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": "cordoned"}, "spec": {"unschedulable": true}})),
        )
        .await
        .expect("cordoned");
    let body = body.await;
    let seen: Vec<String> = String::from_utf8_lossy(&body.body)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("event"))
        .filter_map(|e| e["object"]["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(seen, ["plain"]);
    server.shutdown().await;
}
