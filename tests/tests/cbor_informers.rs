//! Every `#[derive(Informer)]` and `informer-gen` test type read over CBOR: the test server
//! writes each object as kube-apiserver does (byte strings, self-described tags), the
//! runtime's CBOR path reads it, and what it reads equals what it reads over JSON, listed,
//! watched and through a factory's informers.

use std::{fmt::Debug, time::Duration};

use futures::StreamExt;
use informer_runtime::{
    factory::SharedInformerFactory,
    source::{Encoding, KubeListerWatcher, ListOptions, ListerWatcher},
};
use informer_tests::{
    derived::{custom, mismatched::Gizmo, shadowed::Gadget, standalone::WidgetView},
    eventually,
    generated::Informers,
};
use informer_testserver::TestServer;
use kube::{
    Api, CustomResourceExt, Resource,
    core::{WatchEvent, crd::merge_crds},
};
use sample_crds::{v1, v2};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

async fn server() -> TestServer {
    let server = TestServer::start().await.expect("server starts");
    server.create_typed(&custom::Widget::crd()).expect("widgets CRD");
    let foos = merge_crds(vec![v1::Foo::crd(), v2::Foo::crd()], "v1").expect("foo versions merge");
    server.create_typed(&foos).expect("foos CRD");
    server.create_typed(&v1::Bar::crd()).expect("bars CRD");
    server.register(informer_testserver::ResourceType::new(
        "derive.example.com",
        "v1",
        "Gadget",
        "gadgets",
        false,
    ));
    server.create_namespace("a").expect("namespace");
    for (name, size) in [("x", 1), ("y", 2)] {
        server
            .create(json!({"apiVersion": "derive.example.com/v1", "kind": "Widget",
                           "metadata": {"name": name, "namespace": "a", "labels": {"n": name}},
                           "spec": {"size": size, "notInTheType": [1, {"deep": "x"}]}}))
            .expect("widget");
        server
            .create(json!({"apiVersion": "example.com/v2", "kind": "Foo",
                           "metadata": {"name": name, "namespace": "a"},
                           "spec": {"size": size, "label": format!("label-{name}")}}))
            .expect("foo");
    }
    server
        .create(
            json!({"apiVersion": "example.com/v1", "kind": "Bar", "metadata": {"name": "blue"},
                       "spec": {"colour": "blue"}}),
        )
        .expect("bar");
    server
        .create(json!({"apiVersion": "derive.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}))
        .expect("gadget");
    server
}

/// Lists and watches `K` over CBOR and over JSON and compares what each read (as JSON
/// values: not every test type has `PartialEq`); returns how many objects were listed.
async fn same_over_cbor_and_json<K>(server: &TestServer, change: Value) -> usize
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    let client = server.client().expect("client");
    let cbor = KubeListerWatcher::new(Api::<K>::all(client.clone())).encoding(Encoding::Cbor);
    let json = KubeListerWatcher::new(Api::<K>::all(client)).encoding(Encoding::Json);
    let values = |objects: &[K]| {
        objects
            .iter()
            .map(|o| serde_json::to_value(o).expect("serializes"))
            .collect::<Vec<_>>()
    };
    let (in_cbor, in_json) = (
        cbor.list(&ListOptions::default()).await.expect("a CBOR list"),
        json.list(&ListOptions::default()).await.expect("a JSON list"),
    );
    let accept = server
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.verb == "list")
        .map(|r| r.accept);
    assert_eq!(accept.as_deref(), Some(""), "the JSON list keeps kube's Accept");
    assert_eq!(values(&in_cbor.items), values(&in_json.items), "{}", K::kind(&()));
    assert_eq!(
        in_cbor.metadata.resource_version,
        in_json.metadata.resource_version
    );

    let options = ListOptions {
        resource_version: in_json.metadata.resource_version.clone(),
        timeout_seconds: Some(5),
        ..ListOptions::default()
    };
    let (cbor_watch, json_watch) = (
        cbor.watch(&options).await.expect("a CBOR watch"),
        json.watch(&options).await.expect("a JSON watch"),
    );
    server.update(change).expect("updated");
    let modified = |event: Option<Result<WatchEvent<K>, _>>| match event {
        Some(Ok(WatchEvent::Modified(object))) => serde_json::to_value(object).expect("serializes"),
        other => panic!("expected a modification, got {other:?}"),
    };
    let (mut cbor_watch, mut json_watch) = (cbor_watch, json_watch);
    assert_eq!(
        modified(cbor_watch.next().await),
        modified(json_watch.next().await),
        "{}",
        K::kind(&())
    );
    in_cbor.items.len()
}

/// The stored object with a label that no change set before.
fn with_label(
    server: &TestServer,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
) -> Value {
    let mut object = server.get(api_version, kind, namespace, name).expect("stored");
    object["metadata"]["labels"] = json!({"changed": server.resource_version().to_string()});
    object
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_derived_and_generated_type_reads_the_same_over_cbor_and_json() {
    let server = server().await;
    let change = |server: &TestServer, api_version, kind, namespace, name| {
        with_label(server, api_version, kind, namespace, name)
    };
    let widget = change(&server, "derive.example.com/v1", "Widget", Some("a"), "x");
    assert_eq!(
        same_over_cbor_and_json::<custom::Widget>(&server, widget).await,
        2
    );
    let widget = change(&server, "derive.example.com/v1", "Widget", Some("a"), "y");
    assert_eq!(same_over_cbor_and_json::<WidgetView>(&server, widget).await, 2);
    let widget = change(&server, "derive.example.com/v1", "Widget", Some("a"), "x");
    assert_eq!(same_over_cbor_and_json::<Gizmo>(&server, widget).await, 2);
    let gadget = change(&server, "derive.example.com/v1", "Gadget", None, "g");
    assert_eq!(same_over_cbor_and_json::<Gadget>(&server, gadget).await, 1);
    let foo = change(&server, "example.com/v1", "Foo", Some("a"), "x");
    assert_eq!(same_over_cbor_and_json::<v1::Foo>(&server, foo).await, 2);
    let foo = change(&server, "example.com/v2", "Foo", Some("a"), "y");
    assert_eq!(same_over_cbor_and_json::<v2::Foo>(&server, foo).await, 2);
    let bar = change(&server, "example.com/v1", "Bar", None, "blue");
    assert_eq!(same_over_cbor_and_json::<v1::Bar>(&server, bar).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_informers_of_a_cbor_factory_sync_and_follow_changes() {
    let server = server().await;
    let factory = SharedInformerFactory::builder(server.client().expect("client"))
        .encoding(Encoding::Cbor)
        .build();
    let informers = Informers::new(&factory);
    let foos = informers.example_com().v1().foos();
    let bars = informers.example_com().v1().bars();
    let _ = (foos.informer(), bars.informer());
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(WAIT).await;
    assert!(report.all_synced(), "{report}");
    let watches = server
        .requests()
        .into_iter()
        .filter(|r| r.resource == "foos" && r.accept.contains("application/cbor"))
        .count();
    assert!(watches >= 1, "the factory's informers ask for CBOR");
    assert_eq!(foos.lister().foos("a").get("x").expect("x").spec.size, 1);

    let mut changed = server
        .get("example.com/v1", "Foo", Some("a"), "x")
        .expect("stored");
    changed["spec"]["size"] = json!(42);
    server.update(changed).expect("updated");
    eventually("the CBOR watch brings the change", WAIT, || {
        foos.lister()
            .foos("a")
            .get("x")
            .is_some_and(|x| x.spec.size == 42)
    })
    .await;
    assert_eq!(bars.lister().get("blue").expect("blue").spec.colour, "blue");
    factory.shutdown().await;
}
