//! The lister-watcher in CBOR over HTTP against the embedded API server: custom resources and
//! metadata-only objects are asked for in CBOR first, watches stream `application/cbor-seq`,
//! and what it reads equals what it reads in JSON.

use std::collections::BTreeMap;

use informer_testserver::{ResourceType, TestServer};
use k8s_openapi::{
    api::core::v1::Pod,
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::Time, util::intstr::IntOrString},
};
use kube::{
    Api, CustomResource,
    core::{ObjectList, PartialObjectMeta, WatchEvent},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::source::{
    Encoding, Error, KubeListerWatcher, ListOptions, ListerWatcher,
    test_support::{last_accept, watched},
};

/// A widget's phase, a string enum.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
enum Phase {
    Pending,
    Ready,
}

/// The spec of a `Widget`: the shapes a generated CRD type has.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "cbor.example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
struct WidgetSpec {
    size: u32,
    ratio: f64,
    offset: i64,
    enabled: bool,
    phase: Phase,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    limits: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    port: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    since: Option<Time>,
    #[serde(default)]
    extra: Value,
}

fn widget_type() -> ResourceType {
    ResourceType::new("cbor.example.com", "v1", "Widget", "widgets", true)
}

fn widget(name: &str, size: u32) -> Value {
    json!({
        "apiVersion": "cbor.example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"},
                     "annotations": {"unicode": "é ✓"}},
        "spec": {"size": size, "ratio": 0.5, "offset": -3, "enabled": true, "phase": "Ready",
                 "tags": ["a", "b"], "limits": {"cpu": "100m", "memory": "1Gi"}, "port": 8080,
                 "since": "2026-01-02T03:04:05Z", "extra": {"any": [1, "two", {"three": null}, 2.25]},
                 "unknownToTheType": {"ignored": true}},
    })
}

fn describe(events: &[WatchEvent<Widget>]) -> Vec<(&'static str, Option<Widget>)> {
    events
        .iter()
        .map(|e| match e {
            WatchEvent::Added(w) => ("added", Some(w.clone())),
            WatchEvent::Modified(w) => ("modified", Some(w.clone())),
            WatchEvent::Deleted(w) => ("deleted", Some(w.clone())),
            WatchEvent::Bookmark(_) => ("bookmark", None),
            WatchEvent::Error(_) => ("error", None),
        })
        .collect()
}

#[tokio::test]
async fn custom_resources_are_read_in_cbor_as_they_are_in_json() {
    let server = TestServer::start().await.expect("server");
    server.register(widget_type());
    let client = server.client().expect("client");
    for (name, size) in [("a", 1), ("b", 2)] {
        server.create(widget(name, size)).expect("created");
    }
    let cbor = KubeListerWatcher::new(Api::<Widget>::all(client.clone())).encoding(Encoding::Cbor);
    let json = KubeListerWatcher::new(Api::<Widget>::all(client)).encoding(Encoding::Json);

    let in_cbor = cbor.list(&ListOptions::default()).await.expect("a CBOR list");
    assert_eq!(
        last_accept(&server, "list", "widgets"),
        "application/json;q=0.9, application/cbor;q=1"
    );
    let in_json = json.list(&ListOptions::default()).await.expect("a JSON list");
    assert_eq!(in_cbor.items, in_json.items);
    assert_eq!(
        in_cbor.metadata.resource_version,
        in_json.metadata.resource_version
    );
    assert_eq!(
        (in_cbor.types.api_version.as_str(), in_cbor.types.kind.as_str()),
        ("cbor.example.com/v1", "WidgetList")
    );
    let spec = &in_cbor.items[0].spec;
    assert_eq!(
        (spec.size, spec.offset, spec.phase.clone()),
        (1, -3, Phase::Ready)
    );
    assert_eq!(spec.extra["any"][3], json!(2.25));
    assert_eq!(
        in_cbor.items[0]
            .metadata
            .annotations
            .as_ref()
            .expect("annotations")["unicode"],
        "é ✓"
    );

    let from = in_json.metadata.resource_version.clone().expect("a version");
    server.create(widget("c", 3)).expect("created");
    server.update(widget("a", 10)).expect("updated");
    server
        .delete("cbor.example.com/v1", "Widget", Some("default"), "b")
        .expect("deleted");
    let (in_cbor, in_json) = (
        watched(&cbor, &from, 3, true).await,
        watched(&json, &from, 3, true).await,
    );
    assert_eq!(last_accept(&server, "watch", "widgets"), "");
    assert_eq!(describe(&in_cbor), describe(&in_json));
    assert_eq!(
        describe(&in_cbor).iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        ["added", "modified", "deleted"]
    );
}

#[tokio::test]
async fn watches_ask_for_cbor_and_read_its_sequence() {
    let server = TestServer::start().await.expect("server");
    server.register(widget_type());
    let client = server.client().expect("client");
    let cbor = KubeListerWatcher::new(Api::<Widget>::all(client)).encoding(Encoding::Cbor);
    let from = server.resource_version().to_string();
    server.create(widget("a", 1)).expect("created");
    let watched = watched(&cbor, &from, 1, true).await;
    assert_eq!(
        last_accept(&server, "watch", "widgets"),
        "application/json;q=0.9, application/cbor;q=1"
    );
    assert!(matches!(&watched[..], [WatchEvent::Added(w)] if w.spec.size == 1 && w.spec.tags == ["a", "b"]));
}

#[tokio::test]
async fn metadata_only_reads_are_cbor_partial_object_metadata() {
    let server = TestServer::start().await.expect("server");
    server.register(widget_type());
    let client = server.client().expect("client");
    server.create(widget("a", 1)).expect("created");
    let cbor = KubeListerWatcher::new(Api::<PartialObjectMeta<Widget>>::all(client.clone()))
        .encoding(Encoding::Cbor);
    let json = KubeListerWatcher::new(Api::<PartialObjectMeta<Widget>>::all(client)).encoding(Encoding::Json);
    let in_cbor = cbor.list(&ListOptions::default()).await.expect("a CBOR list");
    assert!(
        last_accept(&server, "list", "widgets").starts_with("application/cbor;as=PartialObjectMetadataList")
    );
    let in_json = json.list(&ListOptions::default()).await.expect("a JSON list");
    let metadata = |list: &ObjectList<PartialObjectMeta<Widget>>| {
        list.items.iter().map(|p| p.metadata.clone()).collect::<Vec<_>>()
    };
    assert_eq!(metadata(&in_cbor), metadata(&in_json));

    let from = in_json.metadata.resource_version.clone().expect("a version");
    server.create(widget("b", 1)).expect("created");
    let watched = watched(&cbor, &from, 1, true).await;
    assert!(
        last_accept(&server, "watch", "widgets").starts_with("application/cbor;as=PartialObjectMetadata;")
    );
    assert!(matches!(&watched[..], [WatchEvent::Added(p)] if p.metadata.name.as_deref() == Some("b")));
}

#[tokio::test]
async fn built_in_types_stay_protobuf_and_errors_are_cbor_statuses() {
    let server = TestServer::start().await.expect("server");
    server.register(widget_type());
    let client = server.client().expect("client");
    let pods = KubeListerWatcher::new(Api::<Pod>::all(client.clone())).encoding(Encoding::Cbor);
    pods.list(&ListOptions::default()).await.expect("a list");
    let accept = server
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.verb == "list" && r.resource == "pods")
        .map(|r| r.accept)
        .unwrap_or_default();
    assert!(
        accept.starts_with("application/vnd.kubernetes.protobuf"),
        "{accept}"
    );

    let widgets = KubeListerWatcher::new(Api::<Widget>::all(client)).encoding(Encoding::Cbor);
    let options = ListOptions {
        label_selector: Some("a in (".into()),
        ..ListOptions::default()
    };
    match widgets.list(&options).await {
        Err(Error::Api(status)) => assert_eq!(status.code, 400, "{status:?}"),
        other => panic!("expected a 400 Status, got {other:?}"),
    }
}

#[tokio::test]
async fn fields_to_skip_are_passed_over_in_cbor() {
    use crate::source::FieldPath;

    let server = TestServer::start().await.expect("server");
    server.register(widget_type());
    let client = server.client().expect("client");
    let mut applied = widget("a", 1);
    applied["metadata"]["annotations"][crate::source::LAST_APPLIED_ANNOTATION] = json!("{}");
    server.create(applied).expect("created");
    let skipping = KubeListerWatcher::new(Api::<Widget>::all(client))
        .encoding(Encoding::Cbor)
        .skip_fields([
            FieldPath::managed_fields(),
            FieldPath::last_applied_configuration(),
        ]);
    let list = skipping.list(&ListOptions::default()).await.expect("a list");
    assert!(last_accept(&server, "list", "widgets").starts_with("application/json;q=0.9, application/cbor"));
    let annotations = list.items[0].metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations.keys().collect::<Vec<_>>(), ["unicode"]);
    assert_eq!(list.items[0].metadata.managed_fields, None);
    assert_eq!(list.items[0].spec.size, 1);

    let from = list.metadata.resource_version.clone().unwrap_or_default();
    let mut changed = widget("a", 2);
    changed["metadata"]["annotations"][crate::source::LAST_APPLIED_ANNOTATION] = json!("{}");
    server.update(changed).expect("updated");
    let watched = watched(&skipping, &from, 1, true).await;
    assert!(last_accept(&server, "watch", "widgets").starts_with("application/json;q=0.9, application/cbor"));
    let [WatchEvent::Modified(widget)] = &watched[..] else {
        panic!("one modification: {watched:?}");
    };
    let annotations = widget.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations.keys().collect::<Vec<_>>(), ["unicode"]);
    assert_eq!(widget.spec.size, 2);
}
