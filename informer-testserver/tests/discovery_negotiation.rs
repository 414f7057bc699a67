//! Aggregated discovery negotiated from the `Accept` header, as kubectl and client-go send it.

mod support;

use informer_testserver::TestServer;
use kube::discovery::Discovery;
use support::request;

const V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const V2BETA1: &str = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

/// `(kind, apiVersion, Content-Type)` of `/api` and `/apis` with this `Accept` header.
async fn discover(server: &TestServer, accept: &str) -> Vec<(String, String, String)> {
    let mut answers = Vec::new();
    for path in ["/api", "/apis"] {
        let response = request(server.addr(), "GET", path, &[("Accept", accept)], b"").await;
        assert_eq!(response.status, 200, "{path} {accept}");
        assert_eq!(response.headers.get("vary").map(String::as_str), Some("Accept"));
        let body = response.json();
        answers.push((
            body["kind"].as_str().unwrap_or_default().to_string(),
            body["apiVersion"].as_str().unwrap_or_default().to_string(),
            response.headers.get("content-type").cloned().unwrap_or_default(),
        ));
    }
    answers
}

fn aggregated(version: &str) -> Vec<(String, String, String)> {
    let answer = (
        "APIGroupDiscoveryList".to_string(),
        format!("apidiscovery.k8s.io/{version}"),
        format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"),
    );
    vec![answer.clone(), answer]
}

fn legacy() -> Vec<(String, String, String)> {
    vec![
        ("APIVersions".into(), String::new(), "application/json".into()),
        ("APIGroupList".into(), "v1".into(), "application/json".into()),
    ]
}

#[tokio::test]
async fn each_accept_variant_gets_its_document() {
    let server = TestServer::start().await.expect("start");
    // kubectl and client-go 1.30 and later
    let newer = format!("{V2},{V2BETA1},application/json");
    assert_eq!(discover(&server, &newer).await, aggregated("v2"));
    // kubectl 1.27 to 1.29, client-go 1.26 to 1.29
    let older = format!("{V2BETA1},{V2},application/json");
    assert_eq!(discover(&server, &older).await, aggregated("v2beta1"));
    assert_eq!(discover(&server, V2BETA1).await, aggregated("v2beta1"));
    // protobuf first, as clients configured for protobuf ask
    let protobuf = format!(
        "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,{V2},application/json"
    );
    assert_eq!(discover(&server, &protobuf).await, aggregated("v2"));
    // q values rank the clauses
    let ranked = format!("application/json;q=0.5,{V2};q=0.8,{V2BETA1};q=0.9");
    assert_eq!(discover(&server, &ranked).await, aggregated("v2beta1"));
    let refused = format!("{V2};q=0,application/json");
    assert_eq!(discover(&server, &refused).await, legacy());
    // an unknown version is not read as another one
    let unknown =
        "application/json;g=apidiscovery.k8s.io;v=v2alpha1;as=APIGroupDiscoveryList,application/json";
    assert_eq!(discover(&server, unknown).await, legacy());
    for plain in ["application/json", "*/*", ""] {
        assert_eq!(discover(&server, plain).await, legacy(), "{plain:?}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn kube_discovery_runs_on_aggregated_documents() {
    let server = TestServer::start().await.expect("start");
    let discovery = Discovery::new(server.client().expect("client"))
        .run_aggregated()
        .await
        .expect("aggregated discovery");
    assert!(discovery.has_group("apps"));
    server.shutdown().await;
}
