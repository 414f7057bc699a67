//! Plain HTTP requests, checking the JSON against what kube-apiserver returns for the same request.

mod support;

use informer_testserver::TestServer;
use serde_json::{Value, json};
use support::{get, keys, open, post, request};

fn pod_json(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
}

#[tokio::test]
async fn list_shape() {
    let server = TestServer::start().await.expect("start");
    let addr = server.addr();
    assert_eq!(
        post(addr, "/api/v1/namespaces/default/pods", &pod_json("a"))
            .await
            .status,
        201
    );
    let response = get(addr, "/api/v1/namespaces/default/pods").await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.headers.get("content-type").map(String::as_str),
        Some("application/json")
    );
    let list = response.json();
    assert_eq!(keys(&list), ["apiVersion", "items", "kind", "metadata"]);
    assert_eq!(
        (list["kind"].as_str(), list["apiVersion"].as_str()),
        (Some("PodList"), Some("v1"))
    );
    assert_eq!(keys(&list["metadata"]), ["resourceVersion"]);
    assert_eq!(
        list["metadata"]["resourceVersion"],
        server.resource_version().to_string()
    );
    let item = &list["items"][0];
    // kube-apiserver's items of a built-in list carry no type
    assert_eq!((item.get("kind"), item.get("apiVersion")), (None, None));
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "generation",
    ] {
        assert!(item["metadata"].get(field).is_some(), "metadata.{field}");
    }
    let cluster_wide = get(addr, "/api/v1/pods?limit=1").await.json();
    assert_eq!(cluster_wide["items"].as_array().map(Vec::len), Some(1));
    let namespaces = get(addr, "/api/v1/namespaces").await.json();
    assert_eq!(namespaces["kind"], "NamespaceList");
    assert_eq!(namespaces["items"].as_array().map(Vec::len), Some(4));
    assert_eq!(namespaces["metadata"]["remainingItemCount"], Value::Null);
    server.shutdown().await;
}

#[tokio::test]
async fn status_shapes() {
    let server = TestServer::start().await.expect("start");
    let addr = server.addr();
    let missing = get(addr, "/api/v1/namespaces/default/pods/x").await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "pods \"x\" not found", "reason": "NotFound",
            "details": {"name": "x", "kind": "pods"}, "code": 404})
    );
    post(addr, "/api/v1/namespaces/default/pods", &pod_json("a")).await;
    let exists = post(addr, "/api/v1/namespaces/default/pods", &pod_json("a")).await;
    assert_eq!(exists.status, 409);
    assert_eq!(
        exists.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "pods \"a\" already exists", "reason": "AlreadyExists",
            "details": {"name": "a", "kind": "pods"}, "code": 409})
    );
    let mut stale = pod_json("a");
    stale["metadata"]["resourceVersion"] = json!("1");
    let conflict = request(
        addr,
        "PUT",
        "/api/v1/namespaces/default/pods/a",
        &[],
        stale.to_string().as_bytes(),
    )
    .await;
    assert_eq!(conflict.status, 409);
    assert_eq!(
        conflict.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Operation cannot be fulfilled on pods \"a\": the object has been modified; please apply your changes to the latest version and try again",
            "reason": "Conflict", "details": {"name": "a", "kind": "pods"}, "code": 409})
    );
    let deploy = get(addr, "/apis/apps/v1/namespaces/default/deployments/d")
        .await
        .json();
    assert_eq!(
        deploy["details"],
        json!({"name": "d", "group": "apps", "kind": "deployments"})
    );
    server.shutdown().await;
}

#[tokio::test]
async fn watch_events_are_json_lines() {
    let server = TestServer::start().await.expect("start");
    let addr = server.addr();
    let rv = server.resource_version();
    let mut watch = open(
        addr,
        "GET",
        &format!("/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}"),
        &[],
        b"",
    )
    .await;
    assert_eq!(watch.status, 200);
    assert_eq!(
        watch.headers.get("transfer-encoding").map(String::as_str),
        Some("chunked")
    );
    assert_eq!(
        watch.headers.get("content-type").map(String::as_str),
        Some("application/json")
    );
    post(addr, "/api/v1/namespaces/default/pods", &pod_json("a")).await;
    request(addr, "DELETE", "/api/v1/namespaces/default/pods/a", &[], b"").await;
    for expected in ["ADDED", "DELETED"] {
        let chunk = watch.chunk().await.expect("one chunk per event");
        assert_eq!(chunk.last(), Some(&b'\n'));
        assert_eq!(
            chunk.iter().filter(|b| **b == b'\n').count(),
            1,
            "one JSON object per line"
        );
        let event: Value = serde_json::from_slice(&chunk).expect("json event");
        assert_eq!(keys(&event), ["object", "type"]);
        assert_eq!(event["type"], expected);
        assert_eq!(
            (
                event["object"]["kind"].as_str(),
                event["object"]["apiVersion"].as_str()
            ),
            (Some("Pod"), Some("v1"))
        );
    }
    server.drop_watches();
    assert!(watch.chunk().await.is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn discovery_shapes() {
    let server = TestServer::start().await.expect("start");
    let addr = server.addr();
    let version = get(addr, "/version").await.json();
    assert!(
        version["gitVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("v1."))
    );
    let api = get(addr, "/api").await.json();
    assert_eq!(
        (api["kind"].as_str(), api["versions"].clone()),
        (Some("APIVersions"), json!(["v1"]))
    );
    let groups = get(addr, "/apis").await.json();
    assert_eq!(groups["kind"], "APIGroupList");
    assert_eq!(
        keys(&groups["groups"][0]),
        ["name", "preferredVersion", "versions"]
    );
    let core = get(addr, "/api/v1").await.json();
    assert_eq!(
        (core["kind"].as_str(), core["groupVersion"].as_str()),
        (Some("APIResourceList"), Some("v1"))
    );
    let pods = core["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "pods"))
        .cloned();
    let pods = pods.expect("pods listed");
    assert_eq!(
        keys(&pods),
        [
            "categories",
            "kind",
            "name",
            "namespaced",
            "shortNames",
            "singularName",
            "verbs"
        ]
    );
    assert_eq!(get(addr, "/apis/apps").await.json()["kind"], "APIGroup");
    assert_eq!(get(addr, "/apis/apps/v1").await.json()["groupVersion"], "apps/v1");
    let aggregated = request(
        addr,
        "GET",
        "/apis",
        &[(
            "Accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        )],
        b"",
    )
    .await;
    assert_eq!(aggregated.json()["kind"], "APIGroupDiscoveryList");
    let openapi = get(addr, "/openapi/v3").await.json();
    assert!(openapi["paths"]["apis/apps/v1"]["serverRelativeURL"].is_string());
    for path in [
        "/openapi/v2",
        "/openapi/v3/apis/nope.io/v1",
        "/apis/nope.io",
        "/apis/apps/v9",
        "/api/v1/nopes",
        "/nothing",
    ] {
        let response = get(addr, path).await;
        assert_eq!(response.status, 404, "{path}");
        assert_eq!(response.json()["kind"], "Status", "{path}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn bad_requests() {
    let server = TestServer::builder()
        .body_limit(1024)
        .start()
        .await
        .expect("start");
    let addr = server.addr();
    let pods = "/api/v1/namespaces/default/pods";
    let bad_json = request(addr, "POST", pods, &[], b"{not json").await;
    assert_eq!(
        (bad_json.status, bad_json.json()["reason"].clone()),
        (400, json!("BadRequest"))
    );
    post(addr, pods, &pod_json("a")).await;
    let renamed = request(
        addr,
        "PUT",
        &format!("{pods}/a"),
        &[],
        pod_json("b").to_string().as_bytes(),
    )
    .await;
    assert_eq!(renamed.status, 400);
    assert_eq!(
        renamed.json()["message"],
        "the name of the object (b) does not match the name on the URL (a)"
    );
    let big = vec![b' '; 2048];
    let too_large = request(addr, "POST", pods, &[], &big).await;
    assert_eq!(
        (too_large.status, too_large.json()["reason"].clone()),
        (413, json!("RequestEntityTooLarge"))
    );
    for query in [
        "labelSelector=a%20in",
        "resourceVersion=abc",
        "fieldSelector=nonsense",
        "limit=x",
    ] {
        let response = get(addr, &format!("{pods}?{query}")).await;
        assert_eq!(
            (response.status, response.json()["kind"].clone()),
            (400, json!("Status")),
            "{query}"
        );
    }
    let patch = request(
        addr,
        "PATCH",
        &format!("{pods}/a"),
        &[("Content-Type", "text/plain")],
        b"{}",
    )
    .await;
    assert_eq!(patch.status, 415);
    let json_patch = request(
        addr,
        "PATCH",
        &format!("{pods}/a"),
        &[("Content-Type", "application/json-patch+json")],
        br#"[{"op": "add", "path": "/metadata/labels", "value": {"x": "y"}}]"#,
    )
    .await;
    assert_eq!(
        (
            json_patch.status,
            json_patch.json()["metadata"]["labels"]["x"].clone()
        ),
        (200, json!("y"))
    );
    let failed_test = request(
        addr,
        "PATCH",
        &format!("{pods}/a"),
        &[("Content-Type", "application/json-patch+json")],
        br#"[{"op": "add", "path": "/metadata/labels/z", "value": "1"}, {"op": "test", "path": "/metadata/labels/x", "value": "n"}]"#,
    )
    .await;
    assert_eq!(
        (failed_test.status, failed_test.json()["reason"].clone()),
        (422, json!("Invalid"))
    );
    let unchanged = get(addr, &format!("{pods}/a")).await;
    assert_eq!(
        unchanged.json()["metadata"]["labels"].get("z"),
        None,
        "a failed patch changes nothing"
    );
    let absent_is_null = request(
        addr,
        "PATCH",
        &format!("{pods}/a"),
        &[("Content-Type", "application/json-patch+json")],
        br#"[{"op": "test", "path": "/metadata/annotations", "value": null}, {"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}}]"#,
    )
    .await;
    assert_eq!(
        (
            absent_is_null.status,
            absent_is_null.json()["metadata"]["annotations"]["a"].clone()
        ),
        (200, json!("b"))
    );
    let wrong_method = request(addr, "POST", &format!("{pods}/a"), &[], b"{}").await;
    assert_eq!(wrong_method.status, 405);
    server.shutdown().await;
}
