//! Answers are written with kube-apiserver's key order (Go's struct order for built-in types,
//! sorted keys for custom resources), byte for byte, over raw HTTP: a get, a list, a watch
//! event and a `Status` error.

mod support;

use informer_testserver::TestServer;
use serde_json::{Value, json};
use support::{get, open};

/// The server-set metadata of a stored object.
fn server_set(object: &Value) -> (String, String, String) {
    let meta = &object["metadata"];
    let text = |k: &str| meta[k].as_str().expect(k).to_owned();
    (text("uid"), text("resourceVersion"), text("creationTimestamp"))
}

/// A ConfigMap and its JSON as kube-apiserver writes it (no `generation`: its strategy keeps
/// none).
async fn seeded() -> (TestServer, String) {
    let server = TestServer::start().await.expect("start");
    let stored = server
        .create(json!({
            "data": {"z": "1", "a": "2"},
            "metadata": {"labels": {"tier": "web", "app": "x"}, "namespace": "default", "name": "settings"},
            "apiVersion": "v1",
            "kind": "ConfigMap",
        }))
        .expect("create");
    let (uid, rv, created) = server_set(&stored);
    let object = format!(
        concat!(
            r#"{{"kind":"ConfigMap","apiVersion":"v1","#,
            r#""metadata":{{"name":"settings","namespace":"default","uid":"{}","resourceVersion":"{}","creationTimestamp":"{}","labels":{{"app":"x","tier":"web"}}}},"#,
            r#""data":{{"a":"2","z":"1"}}}}"#,
        ),
        uid, rv, created
    );
    (server, object)
}

#[tokio::test]
async fn a_get_is_written_in_go_struct_order() {
    let (server, object) = seeded().await;
    let answer = get(server.addr(), "/api/v1/namespaces/default/configmaps/settings").await;
    assert_eq!(answer.status, 200);
    assert_eq!(String::from_utf8_lossy(&answer.body), object);
    server.shutdown().await;
}

#[tokio::test]
async fn a_list_is_kind_api_version_metadata_items() {
    let (server, object) = seeded().await;
    let answer = get(server.addr(), "/api/v1/namespaces/default/configmaps").await;
    let rv = answer.json()["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    // a typed list's items carry no kind and apiVersion on kube-apiserver
    let item = object.replace(r#""kind":"ConfigMap","apiVersion":"v1","#, "");
    let expected = format!(
        r#"{{"kind":"ConfigMapList","apiVersion":"v1","metadata":{{"resourceVersion":"{rv}"}},"items":[{item}]}}"#
    );
    assert_eq!(String::from_utf8_lossy(&answer.body), expected);
    server.shutdown().await;
}

#[tokio::test]
async fn watch_events_are_type_then_object() {
    let (server, object) = seeded().await;
    let mut stream = open(
        server.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true",
        &[("Accept", "application/json")],
        b"",
    )
    .await;
    let chunk = stream.chunk().await.expect("an event");
    assert_eq!(
        String::from_utf8_lossy(&chunk),
        format!("{{\"type\":\"ADDED\",\"object\":{object}}}\n")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn status_errors_are_written_in_go_struct_order() {
    let server = TestServer::start().await.expect("start");
    let answer = get(server.addr(), "/api/v1/namespaces/default/configmaps/missing").await;
    assert_eq!(answer.status, 404);
    assert_eq!(
        String::from_utf8_lossy(&answer.body),
        concat!(
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
            r#""message":"configmaps \"missing\" not found","reason":"NotFound","#,
            r#""details":{"name":"missing","kind":"configmaps"},"code":404}"#,
        )
    );
    server.shutdown().await;
}

#[tokio::test]
async fn custom_resources_keep_sorted_keys() {
    let server = TestServer::start().await.expect("start");
    server
        .create(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]},
        }))
        .expect("crd");
    let stored = server
        .create(json!({"kind": "Widget", "apiVersion": "example.com/v1",
            "metadata": {"namespace": "default", "name": "w"}, "spec": {"size": 1, "color": "red"}}))
        .expect("widget");
    let (uid, rv, created) = server_set(&stored);
    let answer = get(server.addr(), "/apis/example.com/v1/namespaces/default/widgets/w").await;
    assert_eq!(
        String::from_utf8_lossy(&answer.body),
        format!(
            concat!(
                r#"{{"apiVersion":"example.com/v1","kind":"Widget","#,
                r#""metadata":{{"creationTimestamp":"{}","generation":1,"name":"w","namespace":"default","resourceVersion":"{}","uid":"{}"}},"#,
                r#""spec":{{"color":"red","size":1}}}}"#,
            ),
            created, rv, uid
        )
    );
    server.shutdown().await;
}
