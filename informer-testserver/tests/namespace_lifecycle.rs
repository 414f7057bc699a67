//! Namespace lifecycle through `kube::Client`: terminating namespaces, their contents deleted
//! with watch events, and the missing-namespace check when the server requires namespaces.

use std::time::Duration;

use futures::StreamExt;
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

fn named<K: serde::de::DeserializeOwned>(name: &str) -> K {
    serde_json::from_value(json!({"metadata": {"name": name}})).expect("valid")
}

fn api_error(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_objects_then_itself() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let created = namespaces
        .create(&PostParams::default(), &named("shop"))
        .await
        .expect("ns");
    assert_eq!(created.status.and_then(|s| s.phase).as_deref(), Some("Active"));
    assert_eq!(
        created.spec.and_then(|s| s.finalizers),
        Some(vec!["kubernetes".to_string()])
    );
    let in_shop: Api<ConfigMap> = Api::namespaced(client.clone(), "shop");
    in_shop
        .create(&PostParams::default(), &named("a"))
        .await
        .expect("a");
    in_shop
        .create(&PostParams::default(), &named("b"))
        .await
        .expect("b");
    let mut watch = Api::<ConfigMap>::all(client.clone())
        .watch(&WatchParams::default(), &server.resource_version().to_string())
        .await
        .expect("watch")
        .boxed();

    let answer = namespaces
        .delete("shop", &DeleteParams::default())
        .await
        .expect("delete");
    let terminating = answer
        .left()
        .expect("the namespace is returned while it terminates");
    assert!(terminating.metadata.deletion_timestamp.is_some());
    assert_eq!(
        terminating.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    let mut deleted = Vec::new();
    while deleted.len() < 2 {
        match tokio::time::timeout(Duration::from_secs(2), watch.next()).await {
            Ok(Some(Ok(WatchEvent::Deleted(cm)))) => deleted.push(cm.metadata.name.unwrap_or_default()),
            Ok(Some(Ok(WatchEvent::Bookmark(_)))) => {}
            other => panic!("expected DELETED events, got {other:?}"),
        }
    }
    assert_eq!(deleted, ["a", "b"]);
    assert!(namespaces.get_opt("shop").await.expect("get").is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn terminating_namespaces_refuse_new_objects() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(&PostParams::default(), &named("shop"))
        .await
        .expect("ns");
    let in_shop: Api<ConfigMap> = Api::namespaced(client.clone(), "shop");
    let held: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}))
            .expect("valid");
    in_shop.create(&PostParams::default(), &held).await.expect("held");
    namespaces
        .delete("shop", &DeleteParams::default())
        .await
        .expect("delete");

    let err = api_error(
        in_shop
            .create(&PostParams::default(), &named("late"))
            .await
            .expect_err("refused"),
    );
    assert_eq!((err.code, err.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        err.message,
        "configmaps \"late\" is forbidden: unable to create new content in namespace shop because it is being terminated"
    );
    let remaining = in_shop.get("held").await.expect("finalizing object stays");
    assert!(remaining.metadata.deletion_timestamp.is_some());
    assert!(namespaces.get_opt("shop").await.expect("get").is_some());

    in_shop
        .patch(
            "held",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("finalizer removed");
    assert!(namespaces.get_opt("shop").await.expect("get").is_none());

    let err = api_error(
        namespaces
            .delete("default", &DeleteParams::default())
            .await
            .expect_err("immortal"),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            403,
            "namespaces \"default\" is forbidden: this namespace may not be deleted"
        )
    );
    server.shutdown().await;
}

#[tokio::test]
async fn missing_namespaces_are_not_found_when_required() {
    let server = TestServer::builder()
        .require_namespaces(true)
        .start()
        .await
        .expect("start");
    let client = server.client().expect("client");
    let nowhere: Api<ConfigMap> = Api::namespaced(client.clone(), "nowhere");
    let err = api_error(
        nowhere
            .create(&PostParams::default(), &named("x"))
            .await
            .expect_err("404"),
    );
    assert_eq!(
        (err.code, err.reason.as_str(), err.message.as_str()),
        (404, "NotFound", "namespaces \"nowhere\" not found")
    );
    let in_default: Api<ConfigMap> = Api::namespaced(client, "default");
    in_default
        .create(&PostParams::default(), &named("x"))
        .await
        .expect("default exists");
    server.shutdown().await;

    let lenient = TestServer::start().await.expect("start");
    let nowhere: Api<ConfigMap> = Api::namespaced(lenient.client().expect("client"), "nowhere");
    nowhere
        .create(&PostParams::default(), &named("x"))
        .await
        .expect("created without the namespace by default");
    lenient.shutdown().await;
}
