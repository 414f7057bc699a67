//! The server driven by `kube::Client` over real HTTP.

mod support;

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use informer_testserver::{ResourceType, TestServer};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::discovery::Discovery;
use kube::{Client, ResourceExt};
use serde_json::json;
use support::pod;

fn api_error(e: kube::Error) -> (u16, String, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason.clone(), s.message.clone()),
        other => panic!("not an API error: {other:?}"),
    }
}

async fn setup() -> (TestServer, Api<Pod>, Client) {
    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("ns").expect("namespace");
    let client = server.client().expect("client");
    (server, Api::namespaced(client.clone(), "ns"), client)
}

async fn next_event<K>(
    stream: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<K>>> + Unpin),
) -> WatchEvent<K> {
    tokio::time::timeout(Duration::from_secs(2), stream.next())
        .await
        .expect("an event in time")
        .expect("stream open")
        .expect("event decodes")
}

fn event_name(event: &WatchEvent<Pod>) -> (String, String) {
    match event {
        WatchEvent::Added(p) => ("ADDED".into(), p.name_any()),
        WatchEvent::Modified(p) => ("MODIFIED".into(), p.name_any()),
        WatchEvent::Deleted(p) => ("DELETED".into(), p.name_any()),
        WatchEvent::Bookmark(b) => ("BOOKMARK".into(), b.metadata.resource_version.clone()),
        WatchEvent::Error(s) => ("ERROR".into(), s.message.clone()),
    }
}

#[tokio::test]
async fn crud_roundtrip() {
    let (server, pods, _) = setup().await;
    let created = pods
        .create(&PostParams::default(), &pod("a", &[("app", "web")]))
        .await
        .expect("create");
    assert_eq!(created.namespace().as_deref(), Some("ns"));
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());
    let rv: u64 = created
        .resource_version()
        .expect("rv")
        .parse()
        .expect("numeric rv");
    assert_eq!(rv, server.resource_version());

    let got = pods.get("a").await.expect("get");
    assert_eq!(got.metadata.uid, created.metadata.uid);

    let mut changed = got.clone();
    changed.spec.as_mut().expect("spec").containers[0].image = Some("nginx".into());
    let replaced = pods
        .replace("a", &PostParams::default(), &changed)
        .await
        .expect("replace");
    assert_eq!(replaced.metadata.generation, Some(2));
    assert!(replaced.resource_version() > created.resource_version());

    let patch = json!({"metadata": {"labels": {"patched": "yes"}}});
    let patched = pods
        .patch("a", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch");
    assert_eq!(patched.labels().get("patched").map(String::as_str), Some("yes"));
    assert_eq!(patched.metadata.generation, Some(2));

    let status = json!({"status": {"phase": "Running"}});
    let with_status = pods
        .patch_status("a", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    assert_eq!(
        with_status.status.and_then(|s| s.phase).as_deref(),
        Some("Running")
    );

    let list = pods.list(&ListParams::default()).await.expect("list");
    assert_eq!(list.items.len(), 1);
    assert_eq!(
        list.metadata.resource_version,
        Some(server.resource_version().to_string())
    );

    pods.delete("a", &DeleteParams::default()).await.expect("delete");
    assert!(
        pods.list(&ListParams::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );

    // the Rust API shares the same store
    let direct = server.create_typed(&{
        let mut p = pod("direct", &[]);
        p.metadata.namespace = Some("ns".into());
        p
    });
    assert!(direct.is_ok());
    assert_eq!(pods.get("direct").await.expect("get").name_any(), "direct");
    server.shutdown().await;
}

#[tokio::test]
async fn errors_are_kubernetes_statuses() {
    let (server, pods, _) = setup().await;
    let a = pods
        .create(&PostParams::default(), &pod("a", &[]))
        .await
        .expect("create");
    let (code, reason, message) = api_error(
        pods.create(&PostParams::default(), &pod("a", &[]))
            .await
            .expect_err("dup"),
    );
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (409, "AlreadyExists", "pods \"a\" already exists")
    );

    let (code, reason, message) = api_error(pods.get("missing").await.expect_err("missing"));
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (404, "NotFound", "pods \"missing\" not found")
    );
    let (code, ..) = api_error(
        pods.delete("missing", &DeleteParams::default())
            .await
            .expect_err("missing"),
    );
    assert_eq!(code, 404);

    pods.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}})),
    )
    .await
    .expect("patch");
    let (code, reason, _) = api_error(
        pods.replace("a", &PostParams::default(), &a)
            .await
            .expect_err("stale"),
    );
    assert_eq!((code, reason.as_str()), (409, "Conflict"));

    let (code, reason, _) = api_error(
        pods.list(&ListParams::default().labels("a in"))
            .await
            .expect_err("bad selector"),
    );
    assert_eq!((code, reason.as_str()), (400, "BadRequest"));
    server.shutdown().await;
}

#[tokio::test]
async fn label_and_field_selectors() {
    let (server, pods, client) = setup().await;
    for (name, labels) in [
        ("a", vec![("app", "web"), ("tier", "fe")]),
        ("b", vec![("app", "web")]),
        ("c", vec![("app", "db")]),
    ] {
        pods.create(&PostParams::default(), &pod(name, &labels))
            .await
            .expect("create");
    }
    server.create_namespace("other").expect("namespace");
    let other: Api<Pod> = Api::namespaced(client.clone(), "other");
    other
        .create(&PostParams::default(), &pod("a", &[("app", "web")]))
        .await
        .expect("create");
    let names =
        |list: kube::core::ObjectList<Pod>| list.items.iter().map(|p| p.name_any()).collect::<Vec<_>>();
    let cases = [
        ("app=web", vec!["a", "b"]),
        ("app==web,tier", vec!["a"]),
        ("app!=web", vec!["c"]),
        ("app in (db, cache)", vec!["c"]),
        ("app notin (db)", vec!["a", "b"]),
        ("!tier", vec!["b", "c"]),
    ];
    for (selector, expected) in cases {
        assert_eq!(
            names(
                pods.list(&ListParams::default().labels(selector))
                    .await
                    .expect("list")
            ),
            expected,
            "{selector}"
        );
    }
    assert_eq!(
        names(
            pods.list(&ListParams::default().fields("metadata.name=b"))
                .await
                .expect("list")
        ),
        ["b"]
    );
    assert_eq!(
        names(
            pods.list(&ListParams::default().fields("metadata.name!=b"))
                .await
                .expect("list")
        ),
        ["a", "c"]
    );
    let all: Api<Pod> = Api::all(client);
    assert_eq!(
        all.list(&ListParams::default()).await.expect("list").items.len(),
        4
    );
    let other_ns = all
        .list(&ListParams::default().fields("metadata.namespace==other"))
        .await
        .expect("list");
    assert_eq!(other_ns.items[0].namespace().as_deref(), Some("other"));
    server.shutdown().await;
}

#[tokio::test]
async fn paging_with_continue_is_consistent() {
    let (server, pods, _) = setup().await;
    for i in 0..5 {
        pods.create(&PostParams::default(), &pod(&format!("p{i}"), &[]))
            .await
            .expect("create");
    }
    let first = pods.list(&ListParams::default().limit(2)).await.expect("page 1");
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let token = first.metadata.continue_.clone().expect("continue token");
    pods.delete("p3", &DeleteParams::default()).await.expect("delete");
    let second = pods
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .expect("page 2");
    assert_eq!(
        second.items.iter().map(|p| p.name_any()).collect::<Vec<_>>(),
        ["p2", "p3"]
    );
    assert_eq!(second.metadata.resource_version, first.metadata.resource_version);
    let token = second.metadata.continue_.clone().expect("continue token");
    server.compact();
    let (code, reason, _) = api_error(
        pods.list(&ListParams::default().continue_token(&token))
            .await
            .expect_err("expired"),
    );
    assert_eq!((code, reason.as_str()), (410, "Expired"));
    server.shutdown().await;
}

#[tokio::test]
async fn watch_replays_from_resource_version_and_expires_after_compaction() {
    let (server, pods, _) = setup().await;
    let a = pods
        .create(&PostParams::default(), &pod("a", &[]))
        .await
        .expect("create");
    let from = a.resource_version().expect("rv");
    pods.create(&PostParams::default(), &pod("b", &[]))
        .await
        .expect("create");
    pods.delete("a", &DeleteParams::default()).await.expect("delete");

    let params = WatchParams::default().disable_bookmarks();
    let mut stream = pods.watch(&params, &from).await.expect("watch").boxed();
    assert_eq!(
        event_name(&next_event(&mut stream).await),
        ("ADDED".into(), "b".into())
    );
    assert_eq!(
        event_name(&next_event(&mut stream).await),
        ("DELETED".into(), "a".into())
    );
    pods.create(&PostParams::default(), &pod("c", &[]))
        .await
        .expect("create");
    assert_eq!(
        event_name(&next_event(&mut stream).await),
        ("ADDED".into(), "c".into())
    );

    // rv "0": synthetic ADDED of the current state
    let mut stream = pods.watch(&params, "0").await.expect("watch").boxed();
    let mut initial = vec![
        event_name(&next_event(&mut stream).await),
        event_name(&next_event(&mut stream).await),
    ];
    initial.sort();
    assert_eq!(
        initial,
        [
            ("ADDED".to_string(), "b".to_string()),
            ("ADDED".to_string(), "c".to_string())
        ]
    );

    server.compact();
    let mut stream = pods.watch(&params, &from).await.expect("watch").boxed();
    match next_event(&mut stream).await {
        WatchEvent::Error(status) => {
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
            assert!(
                status
                    .message
                    .starts_with(&format!("too old resource version: {from} ("))
            );
        }
        other => panic!("expected an error, got {other:?}"),
    }
    assert!(
        tokio::time::timeout(Duration::from_secs(2), stream.next())
            .await
            .expect("ends")
            .is_none()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn bookmarks_and_initial_events() {
    let server = TestServer::builder()
        .bookmark_interval(Duration::from_millis(50))
        .start()
        .await
        .expect("start");
    server.create_namespace("ns").expect("namespace");
    let pods: Api<Pod> = Api::namespaced(server.client().expect("client"), "ns");
    pods.create(&PostParams::default(), &pod("a", &[]))
        .await
        .expect("create");
    let rv = server.resource_version().to_string();

    let mut stream = pods
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    assert_eq!(
        event_name(&next_event(&mut stream).await),
        ("BOOKMARK".into(), rv.clone())
    );

    let mut stream = pods
        .watch(&WatchParams::streaming_lists(), "")
        .await
        .expect("watch")
        .boxed();
    assert_eq!(
        event_name(&next_event(&mut stream).await),
        ("ADDED".into(), "a".into())
    );
    match next_event(&mut stream).await {
        WatchEvent::Bookmark(b) => {
            assert_eq!(b.metadata.resource_version, rv);
            assert_eq!(
                b.metadata
                    .annotations
                    .get("k8s.io/initial-events-end")
                    .map(String::as_str),
                Some("true")
            );
        }
        other => panic!("expected the initial-events-end bookmark, got {other:?}"),
    }
    pods.create(&PostParams::default(), &pod("b", &[]))
        .await
        .expect("create");
    loop {
        let (kind, name) = event_name(&next_event(&mut stream).await);
        if kind != "BOOKMARK" {
            assert_eq!((kind.as_str(), name.as_str()), ("ADDED", "b"));
            break;
        }
    }
    server.shutdown().await;
}

#[tokio::test]
async fn objects_leaving_the_selector_are_deleted_for_the_watcher() {
    let (server, pods, _) = setup().await;
    pods.create(&PostParams::default(), &pod("a", &[("app", "web")]))
        .await
        .expect("create");
    let rv = server.resource_version().to_string();
    let params = WatchParams::default().labels("app=web").disable_bookmarks();
    let mut stream = pods.watch(&params, &rv).await.expect("watch").boxed();
    let relabel = |v: &str| json!({"metadata": {"labels": {"app": v}}});
    pods.patch("a", &PatchParams::default(), &Patch::Merge(relabel("db")))
        .await
        .expect("patch");
    assert_eq!(
        event_name(&next_event(&mut stream).await),
        ("DELETED".into(), "a".into())
    );
    pods.patch("a", &PatchParams::default(), &Patch::Merge(relabel("web")))
        .await
        .expect("patch");
    assert_eq!(
        event_name(&next_event(&mut stream).await),
        ("ADDED".into(), "a".into())
    );
    pods.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {"x": "y"}}})),
    )
    .await
    .expect("patch");
    assert_eq!(
        event_name(&next_event(&mut stream).await),
        ("MODIFIED".into(), "a".into())
    );
    server.shutdown().await;
}

fn crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}},
            }],
        },
    }))
    .expect("valid crd")
}

#[tokio::test]
async fn crds_are_served_and_removable() {
    let (server, _, client) = setup().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let created = crds
        .create(&PostParams::default(), &crd())
        .await
        .expect("create crd");
    let conditions = created.status.and_then(|s| s.conditions).unwrap_or_default();
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    );

    let discovery = Discovery::new(client.clone()).run().await.expect("discovery");
    let group = discovery.get("example.com").expect("group served");
    let (ar, caps) = group.recommended_kind("Widget").expect("kind served");
    assert_eq!((ar.plural.as_str(), ar.version.as_str()), ("widgets", "v1"));
    assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
    assert!(discovery.get("apps").is_some());

    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "ns", &ar);
    let widget = DynamicObject::new("w1", &ar).data(json!({"spec": {"size": 3}}));
    let stored = widgets
        .create(&PostParams::default(), &widget)
        .await
        .expect("create widget");
    assert_eq!(stored.data["spec"]["size"], 3);
    assert_eq!(
        widgets
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .len(),
        1
    );

    crds.delete("widgets.example.com", &DeleteParams::default())
        .await
        .expect("delete crd");
    let discovery = Discovery::new(client.clone()).run().await.expect("discovery");
    assert!(discovery.get("example.com").is_none());
    let (code, ..) = api_error(
        widgets
            .list(&ListParams::default())
            .await
            .expect_err("not served"),
    );
    assert_eq!(code, 404);
    // re-created: the old objects are gone
    crds.create(&PostParams::default(), &crd())
        .await
        .expect("create crd again");
    assert!(
        widgets
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn registered_and_builtin_types() {
    let (server, _, client) = setup().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "ns");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}}}},
    }))
    .expect("valid deployment");
    deployments
        .create(&PostParams::default(), &d)
        .await
        .expect("create deployment");
    let (code, _, message) = api_error(deployments.get("x").await.expect_err("missing"));
    assert_eq!(
        (code, message.as_str()),
        (404, "deployments.apps \"x\" not found")
    );

    let gadgets = ResourceType::new("example.org", "v1alpha1", "Gadget", "gadgets", false);
    server.register(gadgets.clone());
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &gadgets.api_resource());
    api.create(
        &PostParams::default(),
        &DynamicObject::new("g", &gadgets.api_resource()),
    )
    .await
    .expect("create");
    assert_eq!(api.get("g").await.expect("get").name_any(), "g");

    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let seeded =
        server.seed_str("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: seeded\ndata:\n  k: v\n");
    assert_eq!(seeded.expect("seed"), 1);
    let cm = cms.get("seeded").await.expect("seeded configmap");
    assert_eq!(cm.data.and_then(|d| d.get("k").cloned()).as_deref(), Some("v"));
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_watches() {
    let (server, pods, _) = setup().await;
    let mut stream = pods
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    assert_eq!(server.watch_count(), 1);
    let shutdown = tokio::spawn(server.shutdown());
    let end = tokio::time::timeout(Duration::from_secs(3), stream.try_next())
        .await
        .expect("stream ends");
    assert!(matches!(end, Ok(None) | Err(_)));
    tokio::time::timeout(Duration::from_secs(3), shutdown)
        .await
        .expect("shutdown in time")
        .expect("joined");
}

// Leader election relies on these: create of an existing name is AlreadyExists, a replace with a
// stale resourceVersion is a Conflict, one without a resourceVersion is unconditional.
#[tokio::test]
async fn leases_have_optimistic_concurrency() {
    let (server, _, client) = setup().await;
    let leases: Api<Lease> = Api::namespaced(client, "ns");
    let lease = |holder: &str| Lease {
        metadata: kube::api::ObjectMeta {
            name: Some("lock".into()),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(15),
            ..Default::default()
        }),
    };
    let created = leases
        .create(&PostParams::default(), &lease("a"))
        .await
        .expect("create");
    let (code, reason, _) = api_error(
        leases
            .create(&PostParams::default(), &lease("b"))
            .await
            .expect_err("exists"),
    );
    assert_eq!((code, reason.as_str()), (409, "AlreadyExists"));

    let mut renewed = created.clone();
    renewed.spec = lease("a").spec.map(|spec| LeaseSpec {
        lease_transitions: Some(1),
        ..spec
    });
    let renewed = leases
        .replace("lock", &PostParams::default(), &renewed)
        .await
        .expect("replace with the current resourceVersion");
    assert_ne!(
        renewed.metadata.resource_version,
        created.metadata.resource_version
    );

    let mut stale = created.clone();
    stale.spec = lease("b").spec;
    let (code, reason, _) = api_error(
        leases
            .replace("lock", &PostParams::default(), &stale)
            .await
            .expect_err("stale"),
    );
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    assert_eq!(
        leases
            .get("lock")
            .await
            .expect("get")
            .spec
            .and_then(|s| s.holder_identity),
        Some("a".to_string())
    );

    let mut unconditional = lease("c");
    unconditional.metadata.resource_version = None;
    let replaced = leases
        .replace("lock", &PostParams::default(), &unconditional)
        .await
        .expect("unconditional replace");
    assert_eq!(
        replaced.spec.and_then(|s| s.holder_identity),
        Some("c".to_string())
    );
    server.shutdown().await;
}
