//! `as=Table` and `as=PartialObjectMetadata` in `Accept` on every verb that returns an object
//! (create, update, patch, delete, deletecollection, the `status` and `scale` subresources),
//! and kube-apiserver's `406 NotAcceptable` where no clause can be served, over raw HTTP.

mod support;

use informer_testserver::TestServer;
use serde_json::{Value, json};
use support::{RawResponse, request};

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const TABLE_V1BETA1: &str = "application/json;as=Table;v=v1beta1;g=meta.k8s.io";
const PARTIAL: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const PARTIAL_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const NOT_ACCEPTABLE: &str = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor";

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn deployment(name: &str) -> Vec<u8> {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    })
    .to_string()
    .into_bytes()
}

async fn call(
    server: &TestServer,
    method: &str,
    path: &str,
    accept: &str,
    content_type: &str,
    body: &[u8],
) -> RawResponse {
    request(
        server.addr(),
        method,
        path,
        &[("Accept", accept), ("Content-Type", content_type)],
        body,
    )
    .await
}

fn assert_table(answer: &RawResponse, version: &str, names: &[&str]) {
    let table = answer.json();
    assert_eq!(table["kind"], "Table", "{table}");
    assert_eq!(table["apiVersion"], format!("meta.k8s.io/{version}"));
    let rows: Vec<&Value> = table["rows"].as_array().expect("rows").iter().collect();
    let row_names: Vec<&str> = rows.iter().filter_map(|r| r["cells"][0].as_str()).collect();
    assert_eq!(row_names, names, "{table}");
    assert_eq!(table["columnDefinitions"][0]["name"], "Name");
}

fn assert_partial(answer: &RawResponse, name: &str) {
    let partial = answer.json();
    assert_eq!(partial["kind"], "PartialObjectMetadata", "{partial}");
    assert_eq!(partial["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(partial["metadata"]["name"], name);
    assert!(partial.get("spec").is_none(), "{partial}");
}

#[tokio::test]
async fn writes_answer_tables() {
    let server = TestServer::start().await.expect("start");
    let created = call(
        &server,
        "POST",
        DEPLOYMENTS,
        TABLE,
        "application/json",
        &deployment("web"),
    )
    .await;
    assert_eq!(created.status, 201);
    assert_table(&created, "v1", &["web"]);
    let table = created.json();
    let columns: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(&columns[..3], ["Name", "Ready", "Up-to-date"]);

    let path = format!("{DEPLOYMENTS}/web");
    let current = call(&server, "GET", &path, "application/json", "", b"")
        .await
        .json();
    let updated = call(
        &server,
        "PUT",
        &path,
        TABLE_V1BETA1,
        "application/json",
        current.to_string().as_bytes(),
    )
    .await;
    assert_eq!(updated.status, 200);
    assert_table(&updated, "v1beta1", &["web"]);

    let patch = br#"{"metadata":{"labels":{"tier":"front"}}}"#;
    let patched = call(
        &server,
        "PATCH",
        &path,
        TABLE,
        "application/merge-patch+json",
        patch,
    )
    .await;
    assert_eq!(patched.status, 200);
    assert_table(&patched, "v1", &["web"]);

    let status = call(
        &server,
        "PATCH",
        &format!("{path}/status"),
        TABLE,
        "application/merge-patch+json",
        br#"{"status":{"replicas":2}}"#,
    )
    .await;
    assert_eq!(status.status, 200);
    assert_table(&status, "v1", &["web"]);

    let scale = call(&server, "GET", &format!("{path}/scale"), TABLE, "", b"").await;
    assert_eq!(scale.status, 200);
    assert_table(&scale, "v1", &["web"]);

    let deleted = call(&server, "DELETE", &path, TABLE, "", b"").await;
    assert_eq!(deleted.status, 200);
    assert_table(&deleted, "v1", &["web"]);
    server.shutdown().await;
}

#[tokio::test]
async fn writes_answer_metadata_only() {
    let server = TestServer::start().await.expect("start");
    let created = call(
        &server,
        "POST",
        DEPLOYMENTS,
        PARTIAL,
        "application/json",
        &deployment("web"),
    )
    .await;
    assert_eq!(created.status, 201);
    assert_partial(&created, "web");

    let path = format!("{DEPLOYMENTS}/web");
    let patch = br#"{"metadata":{"labels":{"tier":"front"}}}"#;
    let patched = call(
        &server,
        "PATCH",
        &path,
        PARTIAL,
        "application/merge-patch+json",
        patch,
    )
    .await;
    assert_partial(&patched, "web");
    assert_eq!(patched.json()["metadata"]["labels"]["tier"], "front");

    let scale = call(&server, "PUT", &format!("{path}/scale"), PARTIAL, "application/json",
        br#"{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3}}"#).await;
    assert_eq!(scale.status, 200, "{}", String::from_utf8_lossy(&scale.body));
    assert_partial(&scale, "web");

    let deleted = call(&server, "DELETE", &path, PARTIAL, "", b"").await;
    assert_eq!(deleted.status, 200);
    assert_partial(&deleted, "web");
    server.shutdown().await;
}

#[tokio::test]
async fn delete_collection_answers_tables_and_metadata_lists() {
    let server = TestServer::start().await.expect("start");
    for name in ["a", "b"] {
        let created = call(
            &server,
            "POST",
            DEPLOYMENTS,
            "application/json",
            "application/json",
            &deployment(name),
        )
        .await;
        assert_eq!(created.status, 201);
    }
    let deleted = call(
        &server,
        "DELETE",
        &format!("{DEPLOYMENTS}?fieldSelector=metadata.name%3Da"),
        TABLE,
        "",
        b"",
    )
    .await;
    assert_eq!(deleted.status, 200);
    assert_table(&deleted, "v1", &["a"]);
    let deleted = call(&server, "DELETE", DEPLOYMENTS, PARTIAL_LIST, "", b"").await;
    let list = deleted.json();
    assert_eq!(list["kind"], "PartialObjectMetadataList", "{list}");
    assert_eq!(list["items"][0]["metadata"]["name"], "b");
    assert!(list["items"][0].get("spec").is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn unacceptable_conversions_are_406_before_any_write() {
    let server = TestServer::start().await.expect("start");
    for accept in [
        "application/json;as=Table;g=meta.k8s.io;v=v2",
        "application/json;as=Widget;g=meta.k8s.io;v=v1",
        "application/json;as=Table;g=example.com;v=v1",
        "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
        "text/html",
    ] {
        let created = call(
            &server,
            "POST",
            DEPLOYMENTS,
            accept,
            "application/json",
            &deployment("web"),
        )
        .await;
        assert_eq!(created.status, 406, "{accept}");
        let status = created.json();
        assert_eq!(
            (
                status["kind"].as_str(),
                status["reason"].as_str(),
                status["message"].as_str(),
                status["code"].as_u64()
            ),
            (
                Some("Status"),
                Some("NotAcceptable"),
                Some(NOT_ACCEPTABLE),
                Some(406)
            ),
            "{accept}"
        );
        let listed = call(&server, "GET", DEPLOYMENTS, accept, "", b"").await;
        assert_eq!(listed.status, 406, "{accept}");
    }
    // nothing was created
    let list = call(&server, "GET", DEPLOYMENTS, "application/json", "", b"")
        .await
        .json();
    assert_eq!(list["items"].as_array().map(Vec::len), Some(0));
    server.shutdown().await;
}

#[tokio::test]
async fn metadata_of_the_wrong_cardinality_is_406() {
    let server = TestServer::start().await.expect("start");
    let created = call(
        &server,
        "POST",
        DEPLOYMENTS,
        "application/json",
        "application/json",
        &deployment("web"),
    )
    .await;
    assert_eq!(created.status, 201);
    let listed = call(&server, "GET", DEPLOYMENTS, PARTIAL, "", b"").await;
    assert_eq!(listed.status, 406);
    assert_eq!(
        listed.json()["message"],
        "you requested PartialObjectMetadata, but the requested object is a list (*apps.DeploymentList)"
    );
    let got = call(
        &server,
        "GET",
        &format!("{DEPLOYMENTS}/web"),
        PARTIAL_LIST,
        "",
        b"",
    )
    .await;
    assert_eq!(got.status, 406);
    assert_eq!(
        got.json()["message"],
        "you requested PartialObjectMetadataList, but the requested object is not a list (*apps.Deployment)"
    );
    let pods = call(
        &server,
        "GET",
        "/api/v1/namespaces/default/pods",
        PARTIAL,
        "",
        b"",
    )
    .await;
    assert_eq!(
        pods.json()["message"],
        "you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)"
    );
    server.shutdown().await;
}

/// Ported from apiserver's `TestGetPartialObjectMetadata` and `TestGetTable`
/// (pkg/endpoints/apiserver_test.go): which `Accept` headers a get (`list: false`) or a list
/// gets which kind from, and which are refused.
#[tokio::test]
async fn get_partial_object_metadata_and_table_cases() {
    let server = TestServer::start().await.expect("start");
    let created = call(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        "application/json",
        br#"{"metadata":{"name":"c"},"data":{"a":"1"}}"#,
    )
    .await;
    assert_eq!(created.status, 201);
    let p = |v: &str| format!("application/json;as=PartialObjectMetadata;v={v};g=meta.k8s.io");
    let pl = |v: &str| format!("application/json;as=PartialObjectMetadataList;v={v};g=meta.k8s.io");
    let t = |v: &str| format!("application/json;as=Table;v={v};g=meta.k8s.io");
    let cases: Vec<(bool, String, Result<&str, u16>)> = vec![
        (false, p("v1alpha1"), Err(406)),
        (
            false,
            format!("{}, application/json", p("v1alpha1")),
            Ok("v1/ConfigMap"),
        ),
        (
            false,
            format!("{}, application/json", p("v1beta1")),
            Ok("meta.k8s.io/v1beta1/PartialObjectMetadata"),
        ),
        (true, p("v1beta1"), Err(406)),
        (
            false,
            format!("{}, {}, application/json", p("v1beta1"), p("v1")),
            Ok("meta.k8s.io/v1beta1/PartialObjectMetadata"),
        ),
        (
            false,
            format!("{}, {}, application/json", p("v1"), p("v1beta1")),
            Ok("meta.k8s.io/v1/PartialObjectMetadata"),
        ),
        (
            false,
            format!("{}, {}", p("v1beta1"), p("v1")),
            Ok("meta.k8s.io/v1beta1/PartialObjectMetadata"),
        ),
        (
            true,
            format!("{}, application/json", p("v1alpha1")),
            Ok("v1/ConfigMapList"),
        ),
        (
            true,
            format!("{}, application/json", pl("v1beta1")),
            Ok("meta.k8s.io/v1beta1/PartialObjectMetadataList"),
        ),
        (false, pl("v1beta1"), Err(406)),
        (true, pl("v1"), Ok("meta.k8s.io/v1/PartialObjectMetadataList")),
        (false, t("v1alpha1"), Err(406)),
        (
            false,
            "application/vnd.kubernetes.protobuf;as=Table;v=v1beta1;g=meta.k8s.io".into(),
            Err(406),
        ),
        (
            false,
            "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io".into(),
            Err(406),
        ),
        (false, t("v1"), Ok("meta.k8s.io/v1/Table")),
        (true, t("v1beta1"), Ok("meta.k8s.io/v1beta1/Table")),
    ];
    for (list, accept, expected) in cases {
        let path = if list {
            "/api/v1/namespaces/default/configmaps"
        } else {
            "/api/v1/namespaces/default/configmaps/c"
        };
        let answer = call(&server, "GET", path, &accept, "", b"").await;
        let body = answer.json();
        match expected {
            Ok(kind) => {
                assert_eq!(answer.status, 200, "{accept}: {body}");
                let got = format!(
                    "{}/{}",
                    body["apiVersion"].as_str().unwrap_or_default(),
                    body["kind"].as_str().unwrap_or_default()
                );
                assert_eq!(got, kind, "{accept} (list: {list})");
            }
            Err(code) => {
                assert_eq!(answer.status, code, "{accept} (list: {list}): {body}");
                assert_eq!(body["reason"], "NotAcceptable", "{accept}");
            }
        }
    }
    server.shutdown().await;
}

/// A watch negotiates as kube-apiserver's `serveWatchHandler`: a media type without a stream
/// form (YAML) is a `406`; a `PartialObjectMetadataList` cannot be made of one event's object,
/// so the objects come as stored; `PartialObjectMetadata` and `Table` convert each event.
#[tokio::test]
async fn watches_negotiate_a_stream() {
    let server = TestServer::start().await.expect("start");
    let created = call(
        &server,
        "POST",
        DEPLOYMENTS,
        "application/json",
        "application/json",
        &deployment("web"),
    )
    .await;
    assert_eq!(created.status, 201);
    let watch = format!("{DEPLOYMENTS}?watch=true&timeoutSeconds=1");
    let yaml = call(
        &server,
        "GET",
        &watch,
        "application/yaml, application/json",
        "",
        b"",
    )
    .await;
    assert_eq!(yaml.status, 406);
    // the error itself is negotiated as a plain answer: YAML, which Accept puts first
    let status: Value = serde_saphyr::from_str(std::str::from_utf8(&yaml.body).expect("text")).expect("YAML");
    assert_eq!(
        status["message"],
        "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq"
    );
    let first_object = |answer: &RawResponse| -> Value {
        let text = String::from_utf8_lossy(&answer.body).into_owned();
        let line = text.lines().next().expect("an event").to_owned();
        serde_json::from_str::<Value>(&line).expect("event")["object"].clone()
    };
    let as_list = call(&server, "GET", &watch, PARTIAL_LIST, "", b"").await;
    assert_eq!(as_list.status, 200);
    assert_eq!(first_object(&as_list)["kind"], "Deployment");
    let partial = call(&server, "GET", &watch, PARTIAL, "", b"").await;
    assert_eq!(first_object(&partial)["kind"], "PartialObjectMetadata");
    let table = call(&server, "GET", &watch, TABLE, "", b"").await;
    assert_eq!(first_object(&table)["kind"], "Table");
    server.shutdown().await;
}

/// kube-apiserver answers objects, lists and errors in YAML when `Accept` chooses it, and in
/// JSON when JSON comes first.
#[tokio::test]
async fn yaml_is_answered_when_accepted() {
    let server = TestServer::start().await.expect("server");
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let created = call(
        &server,
        "POST",
        path,
        "application/yaml",
        "application/json",
        &deployment("web"),
    )
    .await;
    assert_eq!(created.status, 201);
    assert_eq!(created.headers["content-type"], "application/yaml");
    let text = String::from_utf8(created.body).expect("text");
    // kube-apiserver's YAML serializer converts the JSON through a map: its keys come sorted
    assert!(
        text.starts_with("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"),
        "{text}"
    );
    let object: Value = serde_saphyr::from_str(&text).expect("YAML");
    assert_eq!(object["spec"]["replicas"], 2);

    let list = call(
        &server,
        "GET",
        path,
        "application/yaml;q=0.9, application/json;q=0.5",
        "",
        b"",
    )
    .await;
    let list: Value = serde_saphyr::from_str(std::str::from_utf8(&list.body).expect("text")).expect("YAML");
    assert_eq!(list["kind"], "DeploymentList");
    assert_eq!(list["items"][0]["metadata"]["name"], "web");

    let missing = call(
        &server,
        "GET",
        &format!("{path}/none"),
        "application/yaml",
        "",
        b"",
    )
    .await;
    assert_eq!(missing.status, 404);
    let status: Value =
        serde_saphyr::from_str(std::str::from_utf8(&missing.body).expect("text")).expect("YAML");
    assert_eq!(
        (status["kind"].as_str(), status["reason"].as_str()),
        (Some("Status"), Some("NotFound"))
    );

    let json = call(
        &server,
        "GET",
        path,
        "application/json, application/yaml",
        "",
        b"",
    )
    .await;
    assert_eq!(json.headers["content-type"], "application/json");
    server.shutdown().await;
}
