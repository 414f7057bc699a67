//! `Table` output through `kube::Client` (the request `kubectl get` sends): the standard columns
//! of built-in kinds, a CRD's `additionalPrinterColumns`, `includeObject`, single objects and
//! watches.

use futures::{AsyncBufReadExt, TryStreamExt};
use informer_testserver::TestServer;
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
use kube::{
    Client,
    api::{Api, PostParams},
};
use serde_json::{Value, json};

const KUBECTL_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

async fn get_table(client: &Client, path: &str) -> Value {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, KUBECTL_ACCEPT)
        .body(Vec::new())
        .expect("request");
    client.request::<Value>(request).await.expect("a table")
}

fn column_names(table: &Value) -> Vec<&str> {
    table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect()
}

#[tokio::test]
async fn lists_of_built_in_kinds_get_their_columns() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web-1"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "node-a"},
        "status": {"phase": "Running", "podIP": "10.0.0.7", "containerStatuses": [
            {"name": "c", "ready": true, "restartCount": 4, "image": "nginx", "imageID": ""}
        ]},
    }))
    .expect("valid");
    pods.create(&PostParams::default(), &pod).await.expect("created");

    let table = get_table(&client, "/api/v1/namespaces/default/pods").await;
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        column_names(&table),
        [
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node"
        ]
    );
    let row = &table["rows"][0];
    let cells = row["cells"].as_array().expect("cells");
    assert_eq!(
        cells[..4],
        [json!("web-1"), json!("1/1"), json!("Running"), json!("4")]
    );
    assert_eq!(cells[5..7], [json!("10.0.0.7"), json!("node-a")]);
    assert_eq!(
        row["object"]["kind"], "PartialObjectMetadata",
        "rows carry metadata by default"
    );
    assert!(table["metadata"]["resourceVersion"].is_string());

    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }))
    .expect("valid");
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .expect("created");
    let table = get_table(
        &client,
        "/apis/apps/v1/namespaces/default/deployments/web?includeObject=Object",
    )
    .await;
    assert_eq!(
        column_names(&table),
        [
            "Name",
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let cells = &table["rows"][0]["cells"];
    assert_eq!(cells[1], "2/3");
    assert_eq!(cells[6], "nginx:1.27");
    assert_eq!(cells[7], "app=web");
    assert_eq!(
        table["rows"][0]["object"]["kind"], "Deployment",
        "includeObject=Object"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn custom_resources_get_their_printer_columns() {
    let server = TestServer::start().await.expect("start");
    server
        .seed_str(
            r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
      additionalPrinterColumns:
        - {name: Size, type: integer, jsonPath: .spec.size}
        - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
        - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    - name: v2
      served: true
      storage: false
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 3}
status: {conditions: [{type: Ready, status: "True"}]}
"#,
        )
        .expect("seeded");
    let client = server.client().expect("client");
    let table = get_table(&client, "/apis/example.com/v1/namespaces/default/widgets").await;
    assert_eq!(column_names(&table), ["Name", "Size", "Ready", "Age"]);
    let cells = table["rows"][0]["cells"].as_array().expect("cells");
    assert_eq!(cells[..3], [json!("w1"), json!(3), json!("True")]);
    assert!(
        cells[3].as_str().is_some_and(|t| t.ends_with('Z')),
        "dates stay timestamps"
    );
    // A version without printer columns shows the name and the age.
    let table = get_table(&client, "/apis/example.com/v2/namespaces/default/widgets").await;
    assert_eq!(column_names(&table), ["Name", "Age"]);
    server.shutdown().await;
}

#[tokio::test]
async fn watches_send_tables_with_definitions_first() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let request = http::Request::get("/api/v1/namespaces/default/configmaps?watch=true")
        .header(http::header::ACCEPT, KUBECTL_ACCEPT)
        .body(Vec::new())
        .expect("request");
    let mut lines = client.request_stream(request).await.expect("a watch").lines();
    for name in ["a", "b"] {
        server
            .create(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}))
            .expect("created");
    }
    let first: Value =
        serde_json::from_str(&lines.try_next().await.expect("read").expect("a line")).expect("json");
    let second: Value =
        serde_json::from_str(&lines.try_next().await.expect("read").expect("a line")).expect("json");
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "Table");
    assert_eq!(column_names(&first["object"]), ["Name", "Data", "Age"]);
    let cells = first["object"]["rows"][0]["cells"].as_array().expect("cells");
    assert_eq!(cells[..2], [json!("a"), json!(1)]);
    assert!(
        column_names(&second["object"]).is_empty(),
        "definitions only once"
    );
    assert_eq!(second["object"]["rows"][0]["cells"][0], "b");
    server.shutdown().await;
}
