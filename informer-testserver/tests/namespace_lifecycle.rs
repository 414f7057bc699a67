//! Namespace lifecycle through `kube::Client`: terminating namespaces, their contents deleted
//! with watch events, creates in missing namespaces refused (or, when asked for, the namespace
//! created first).

use std::time::Duration;

use futures::StreamExt;
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, PostParams, WatchEvent, WatchParams};
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

/// kube-apiserver's NamespaceLifecycle admission refuses a create in a namespace that does not
/// exist with 404 naming the namespace (`errors.NewNotFound(namespaces, ns)`).
#[tokio::test]
async fn creating_in_a_missing_namespace_is_not_found() {
    let server = TestServer::start().await.expect("start");
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
    let details = err.details.expect("details");
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("nowhere", "namespaces")
    );
    let namespaces: Api<Namespace> = Api::all(client.clone());
    assert!(namespaces.get_opt("nowhere").await.expect("get").is_none());
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let in_ns: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
        in_ns
            .create(&PostParams::default(), &named("x"))
            .await
            .expect("the namespaces of a fresh cluster exist");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn auto_created_namespaces_come_with_an_added_event() {
    let server = TestServer::builder()
        .auto_create_namespaces(true)
        .start()
        .await
        .expect("start");
    let client = server.client().expect("client");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut watch = namespaces
        .watch(&WatchParams::default(), &server.resource_version().to_string())
        .await
        .expect("watch")
        .boxed();
    let in_shop: Api<ConfigMap> = Api::namespaced(client.clone(), "shop");
    let created = in_shop
        .create(&PostParams::default(), &named("a"))
        .await
        .expect("created in a new namespace");
    let added = loop {
        match tokio::time::timeout(Duration::from_secs(5), watch.next()).await {
            Ok(Some(Ok(WatchEvent::Added(ns)))) => break ns,
            Ok(Some(Ok(WatchEvent::Bookmark(_)))) => {}
            other => panic!("expected an ADDED namespace, got {other:?}"),
        }
    };
    assert_eq!(added.metadata.name.as_deref(), Some("shop"));
    assert_eq!(added.status.and_then(|s| s.phase).as_deref(), Some("Active"));
    let namespace_rv: u64 = added
        .metadata
        .resource_version
        .expect("rv")
        .parse()
        .expect("number");
    let object_rv: u64 = created
        .metadata
        .resource_version
        .expect("rv")
        .parse()
        .expect("number");
    assert!(namespace_rv < object_rv, "the namespace comes first");
    assert!(
        added.metadata.managed_fields.is_none(),
        "the config map's manager does not own the namespace"
    );
    in_shop
        .create(&PostParams::default(), &named("b"))
        .await
        .expect("second object in the namespace");
    server.shutdown().await;
}

/// Every namespace carries `kubernetes.io/metadata.name` with its name, as kube-apiserver's
/// namespace strategy sets it on create and on update, so selectors can pick namespaces by name.
#[tokio::test]
async fn namespaces_are_labelled_with_their_name() {
    let server = TestServer::start().await.expect("server");
    let namespaces: Api<Namespace> = Api::all(server.client().expect("client"));
    let team: Namespace = serde_json::from_value(json!({"metadata": {"name": "team-a"}})).expect("namespace");
    let created = namespaces
        .create(&PostParams::default(), &team)
        .await
        .expect("created");
    let label = |ns: &Namespace| {
        ns.metadata.labels.clone().unwrap_or_default()["kubernetes.io/metadata.name"].clone()
    };
    assert_eq!(label(&created), "team-a");

    let mut changed = created.clone();
    changed.metadata.labels = Some([("kubernetes.io/metadata.name".to_owned(), "other".to_owned())].into());
    let updated = namespaces
        .replace("team-a", &PostParams::default(), &changed)
        .await
        .expect("updated");
    assert_eq!(label(&updated), "team-a");

    let selected = namespaces
        .list(&ListParams::default().labels("kubernetes.io/metadata.name in (default,team-a)"))
        .await
        .expect("listed");
    let names: Vec<_> = selected
        .items
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    assert_eq!(names, ["default", "team-a"]);
    server.shutdown().await;
}
