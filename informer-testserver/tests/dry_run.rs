//! `dryRun=All` through `kube::Client` and raw HTTP: the answer of a real write, nothing stored.

mod support;

use std::time::Duration;

use futures::StreamExt;
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;
use support::request;

fn config_map(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"k": value}})).expect("valid")
}

fn dry_post() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

#[tokio::test]
async fn dry_run_writes_answer_but_store_nothing() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::namespaced(server.client().expect("client"), "default");
    let stored = api
        .create(&PostParams::default(), &config_map("kept", "1"))
        .await
        .expect("create");
    let rv = server.resource_version();
    let mut watch = api
        .watch(&WatchParams::default(), &rv.to_string())
        .await
        .expect("watch")
        .boxed();

    let created = api
        .create(&dry_post(), &config_map("new", "1"))
        .await
        .expect("dry create");
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(created.metadata.resource_version, None);
    assert!(api.get_opt("new").await.expect("get").is_none());
    let generated = api
        .create(
            &dry_post(),
            &serde_json::from_value(json!({"metadata": {"generateName": "gen-"}})).expect("valid"),
        )
        .await
        .expect("dry generateName");
    assert!(generated.metadata.name.is_some_and(|n| n.starts_with("gen-")));
    let err = api
        .create(&dry_post(), &config_map("kept", "2"))
        .await
        .expect_err("a dry run still conflicts");
    assert!(matches!(err, kube::Error::Api(s) if s.code == 409));

    let mut changed = stored.clone();
    changed.data = Some([("k".to_string(), "2".to_string())].into());
    let replaced = api
        .replace("kept", &dry_post(), &changed)
        .await
        .expect("dry update");
    assert_eq!(replaced.data.unwrap_or_default()["k"], "2");
    assert_eq!(
        replaced.metadata.resource_version,
        stored.metadata.resource_version
    );

    let patch = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    let patched = api
        .patch("kept", &patch, &Patch::Merge(json!({"data": {"k": "3"}})))
        .await
        .expect("dry patch");
    assert_eq!(patched.data.unwrap_or_default()["k"], "3");

    let delete = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    let deleted = api.delete("kept", &delete).await.expect("dry delete");
    let deleted = deleted.left().expect("the object is returned");
    assert_eq!(deleted.metadata.name.as_deref(), Some("kept"));
    api.delete_collection(&delete, &Default::default())
        .await
        .expect("dry delete collection");

    assert_eq!(server.resource_version(), rv);
    let kept = api.get("kept").await.expect("still there");
    assert_eq!(kept.data.unwrap_or_default()["k"], "1");
    let quiet = tokio::time::timeout(Duration::from_millis(200), watch.next()).await;
    assert!(
        !matches!(
            quiet,
            Ok(Some(Ok(WatchEvent::Added(_)
                | WatchEvent::Modified(_)
                | WatchEvent::Deleted(_))))
        ),
        "no watch event: {quiet:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn unknown_dry_run_values_are_invalid() {
    let server = TestServer::start().await.expect("start");
    let response = request(
        server.addr(),
        "POST",
        "/api/v1/namespaces/default/configmaps?dryRun=Some",
        &[("Content-Type", "application/json")],
        json!({"metadata": {"name": "x"}}).to_string().as_bytes(),
    )
    .await;
    assert_eq!(response.status, 422);
    let status = response.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["details"]["kind"], "CreateOptions");
    assert_eq!(status["details"]["causes"][0]["field"], "dryRun");
    let response = request(
        server.addr(),
        "DELETE",
        "/api/v1/namespaces/default/configmaps/x",
        &[("Content-Type", "application/json")],
        json!({"dryRun": ["Nope"]}).to_string().as_bytes(),
    )
    .await;
    assert_eq!(response.status, 422);
    assert_eq!(response.json()["details"]["kind"], "DeleteOptions");
    assert!(server.get("v1", "ConfigMap", Some("default"), "x").is_err());
    server.shutdown().await;
}
