//! The lister-watcher in protobuf over HTTP against the embedded API server: it asks for
//! protobuf first for built-in types, and what it reads equals what it reads in JSON (the
//! default).

use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    core::{PartialObjectMeta, WatchEvent},
};
use serde_json::{Value, json};

use crate::source::{
    Encoding, Error, KubeListerWatcher, ListOptions, ListerWatcher,
    test_support::{last_accept, watched},
};

fn pod(name: &str, node: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": false}]},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                 "resources": {"requests": {"cpu": "100m"}}, "readinessProbe": {"httpGet": {"port": "http"}}}],
                 "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 0}],
                 "volumes": [{"name": "info", "downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}]},
    })
}

#[tokio::test]
async fn built_in_types_are_read_in_protobuf_as_they_are_in_json() {
    let server = TestServer::start().await.expect("server");
    let client = server.client().expect("client");
    for (name, node) in [("a", "n1"), ("b", "n2")] {
        server.create(pod(name, node)).expect("created");
    }
    let protobuf = KubeListerWatcher::new(Api::<Pod>::all(client.clone())).encoding(Encoding::Protobuf);
    let json = KubeListerWatcher::new(Api::<Pod>::all(client)).encoding(Encoding::Json);

    let in_protobuf = protobuf
        .list(&ListOptions::default())
        .await
        .expect("a protobuf list");
    assert!(last_accept(&server, "list", "pods").starts_with("application/vnd.kubernetes.protobuf"));
    let in_json = json.list(&ListOptions::default()).await.expect("a JSON list");
    assert_eq!(last_accept(&server, "list", "pods"), "");
    assert_eq!(in_protobuf.items, in_json.items);
    assert_eq!(
        in_protobuf.metadata.resource_version,
        in_json.metadata.resource_version
    );
    assert_eq!(
        (
            in_protobuf.types.api_version.as_str(),
            in_protobuf.types.kind.as_str()
        ),
        ("v1", "PodList")
    );
    let spec = in_protobuf.items[0].spec.as_ref().expect("spec");
    assert_eq!(
        spec.tolerations.as_ref().expect("tolerations")[0].toleration_seconds,
        Some(0)
    );

    let from = in_json.metadata.resource_version.clone().expect("a version");
    server.create(pod("c", "n3")).expect("created");
    let mut changed = pod("a", "n1");
    changed["metadata"]["labels"]["app"] = json!("db");
    server.update(changed).expect("updated");
    server.delete_typed::<Pod>(Some("default"), "b").expect("deleted");
    let (in_protobuf, in_json) = (
        watched(&protobuf, &from, 3, false).await,
        watched(&json, &from, 3, false).await,
    );
    assert!(last_accept(&server, "watch", "pods").is_empty());
    let describe = |events: &[WatchEvent<Pod>]| -> Vec<(String, Pod)> {
        events
            .iter()
            .map(|e| match e {
                WatchEvent::Added(p) => ("added".into(), p.clone()),
                WatchEvent::Modified(p) => ("modified".into(), p.clone()),
                WatchEvent::Deleted(p) => ("deleted".into(), p.clone()),
                other => (format!("{other:?}"), Pod::default()),
            })
            .collect()
    };
    assert_eq!(describe(&in_protobuf), describe(&in_json));
    assert_eq!(
        describe(&in_protobuf)
            .iter()
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>(),
        ["added", "modified", "deleted"]
    );
}

/// An object whose last annotation was removed: kube-apiserver keeps no empty map (its storage
/// is protobuf, its JSON leaves empty maps out), and neither does the embedded server, so the
/// protobuf and the JSON reads of it are equal, listed and watched. (Before, the server kept
/// `"annotations": {}`: the JSON read had an empty map, the protobuf read none, and the fault
/// suite's protobuf informers never equalled the server: seeds 1128154 and others.)
#[tokio::test]
async fn emptied_maps_and_lists_read_the_same_in_protobuf_and_json() {
    let server = TestServer::start().await.expect("server");
    let client = server.client().expect("client");
    let mut annotated = pod("a", "n1");
    annotated["metadata"]["annotations"] = json!({"fault-suite/panic-in": "transform"});
    server.create(annotated).expect("created");
    let protobuf = KubeListerWatcher::new(Api::<Pod>::all(client.clone())).encoding(Encoding::Protobuf);
    let json = KubeListerWatcher::new(Api::<Pod>::all(client)).encoding(Encoding::Json);
    let from = server.resource_version().to_string();
    let mut cured = server.get("v1", "Pod", Some("default"), "a").expect("stored");
    cured["metadata"]["annotations"] = json!({});
    cured["metadata"]["finalizers"] = json!([]);
    cured["spec"]["nodeName"] = json!("");
    server.update(cured).expect("updated");

    let (in_protobuf, in_json) = (
        watched(&protobuf, &from, 1, false).await,
        watched(&json, &from, 1, false).await,
    );
    let modified = |events: &[WatchEvent<Pod>]| match events {
        [WatchEvent::Modified(pod)] => pod.clone(),
        other => panic!("expected one modification, got {other:?}"),
    };
    assert_eq!(modified(&in_protobuf), modified(&in_json));
    let in_protobuf = protobuf
        .list(&ListOptions::default())
        .await
        .expect("a protobuf list");
    let in_json = json.list(&ListOptions::default()).await.expect("a JSON list");
    assert_eq!(in_protobuf.items, in_json.items);
    let meta = &in_json.items[0].metadata;
    assert_eq!((&meta.annotations, &meta.finalizers), (&None, &None));
    assert_eq!(in_json.items[0].spec.as_ref().expect("spec").node_name, None);
}

#[tokio::test]
async fn metadata_only_reads_are_protobuf_partial_object_metadata() {
    let server = TestServer::start().await.expect("server");
    let client = server.client().expect("client");
    server.create(pod("a", "n1")).expect("created");
    let protobuf = KubeListerWatcher::new(Api::<PartialObjectMeta<Pod>>::all(client.clone()))
        .encoding(Encoding::Protobuf);
    let json = KubeListerWatcher::new(Api::<PartialObjectMeta<Pod>>::all(client)).encoding(Encoding::Json);
    let in_protobuf = protobuf
        .list(&ListOptions::default())
        .await
        .expect("a protobuf list");
    assert!(
        last_accept(&server, "list", "pods")
            .starts_with("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList")
    );
    let in_json = json.list(&ListOptions::default()).await.expect("a JSON list");
    let metadata = |list: &kube::core::ObjectList<PartialObjectMeta<Pod>>| {
        list.items.iter().map(|p| p.metadata.clone()).collect::<Vec<_>>()
    };
    assert_eq!(metadata(&in_protobuf), metadata(&in_json));
    assert_eq!(
        metadata(&in_protobuf)[0].labels.as_ref().expect("labels")["app"],
        "web"
    );

    let from = in_json.metadata.resource_version.clone().expect("a version");
    server.create(pod("b", "n1")).expect("created");
    let watched = watched(&protobuf, &from, 1, false).await;
    assert!(
        last_accept(&server, "watch", "pods")
            .starts_with("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;")
    );
    assert!(matches!(&watched[..], [WatchEvent::Added(p)] if p.metadata.name.as_deref() == Some("b")));
}

#[tokio::test]
async fn errors_in_protobuf_are_statuses() {
    let server = TestServer::start().await.expect("server");
    let protobuf = KubeListerWatcher::new(Api::<Pod>::all(server.client().expect("client")))
        .encoding(Encoding::Protobuf);
    let options = ListOptions {
        label_selector: Some("a in (".into()),
        ..ListOptions::default()
    };
    match protobuf.list(&options).await {
        Err(Error::Api(status)) => assert_eq!(status.code, 400, "{status:?}"),
        other => panic!("expected a 400 Status, got {other:?}"),
    }
}

/// Skipped fields are left out of what a lister-watcher lists and watches, in protobuf and in
/// JSON, and nothing else is.
#[tokio::test]
async fn skipped_fields_are_left_out_in_protobuf_and_json() {
    use crate::source::{FieldPath, LAST_APPLIED_ANNOTATION};

    let server = TestServer::start().await.expect("server");
    let client = server.client().expect("client");
    let mut annotated = pod("a", "n1");
    annotated["metadata"]["annotations"] = json!({"team": "a", LAST_APPLIED_ANNOTATION: "{}"});
    // created through the API, so the server records who wrote it (managedFields)
    let typed: Pod = serde_json::from_value(annotated.clone()).expect("a pod");
    Api::<Pod>::namespaced(client.clone(), "default")
        .create(&kube::api::PostParams::default(), &typed)
        .await
        .expect("created");
    let skip = [
        FieldPath::managed_fields(),
        FieldPath::last_applied_configuration(),
    ];
    let kept = KubeListerWatcher::new(Api::<Pod>::all(client.clone()));
    for encoding in [Encoding::Protobuf, Encoding::Json] {
        let listed_whole = kept.list(&ListOptions::default()).await.expect("a list");
        assert!(
            listed_whole.items[0].metadata.managed_fields.is_some(),
            "the server records who wrote the pod"
        );
        let skipping = KubeListerWatcher::new(Api::<Pod>::all(client.clone()))
            .encoding(encoding)
            .skip_fields(skip.clone());
        let listed = skipping.list(&ListOptions::default()).await.expect("a list");
        let mut expected = listed_whole.items[0].clone();
        expected.metadata.managed_fields = None;
        expected
            .metadata
            .annotations
            .as_mut()
            .map(|a| a.remove(LAST_APPLIED_ANNOTATION));
        assert_eq!(listed.items, [expected], "{encoding:?}");

        let from = listed.metadata.resource_version.clone().expect("a version");
        let mut changed = annotated.clone();
        changed["metadata"]["labels"] = json!({"app": format!("{encoding:?}")});
        server.update(changed).expect("updated");
        let watched = watched(&skipping, &from, 1, false).await;
        let [WatchEvent::Modified(pod)] = &watched[..] else {
            panic!("{encoding:?}: {watched:?}");
        };
        assert_eq!(pod.metadata.managed_fields, None, "{encoding:?}");
        let annotations = pod.metadata.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.keys().collect::<Vec<_>>(), ["team"], "{encoding:?}");
    }
}
