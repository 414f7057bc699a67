//! `#[derive(Informer)]` types, in both forms, with the factory against the test API server.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use informer_runtime::{factory::SharedInformerFactory, informer::handler::EventHandlerFuncs};
use informer_tests::{
    derived::{
        custom::{Widget, WidgetInformer, WidgetSpec},
        mismatched::GizmoInformer,
        shadowed::GadgetInformer,
        standalone,
    },
    eventually,
};
use informer_testserver::TestServer;
use kube::{Api, CustomResourceExt, core::Selector};

const WAIT: Duration = Duration::from_secs(10);

fn widget(namespace: &str, name: &str, size: u32) -> Widget {
    let mut object = Widget::new(name, WidgetSpec { size });
    object.metadata.namespace = Some(namespace.into());
    object
}

async fn server() -> TestServer {
    let server = TestServer::start().await.expect("server starts");
    server.create_typed(&Widget::crd()).expect("widgets CRD created");
    for namespace in ["a", "b"] {
        server.create_namespace(namespace).expect("namespace");
    }
    for (namespace, name, size) in [("a", "x", 1), ("a", "y", 2), ("b", "z", 3)] {
        server
            .create_typed(&widget(namespace, name, size))
            .expect("widget created");
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beside_custom_resource_a_namespaced_factory_sees_only_its_namespace() {
    let server = server().await;
    let client = server.client().expect("client");
    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("a")
        .build();
    let widgets = WidgetInformer::new(&factory);
    let added = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&added);
    widgets
        .informer()
        .add_event_handler(EventHandlerFuncs::new().added(move |_: Arc<Widget>, _| {
            counter.fetch_add(1, Ordering::SeqCst);
        }))
        .expect("handler added");
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(WAIT).await;
    assert!(report.all_synced(), "{report}");

    let lister = widgets.lister();
    assert_eq!(lister.widgets("a").get("x").expect("x is cached").spec.size, 1);
    assert_eq!(lister.list(&Selector::default()).len(), 2, "only namespace a");
    assert!(
        lister.widgets("b").get("z").is_none(),
        "namespace b is not watched"
    );
    eventually("the handler sees the initial widgets", WAIT, || {
        added.load(Ordering::SeqCst) == 2
    })
    .await;

    Api::<Widget>::namespaced(client.clone(), "a")
        .create(&Default::default(), &widget("a", "w", 4))
        .await
        .expect("create over HTTP");
    Api::<Widget>::namespaced(client, "b")
        .create(&Default::default(), &widget("b", "v", 5))
        .await
        .expect("create over HTTP");
    eventually("the handler sees w", WAIT, || added.load(Ordering::SeqCst) == 3).await;
    eventually("the lister sees w", WAIT, || {
        lister.widgets("a").get("w").is_some()
    })
    .await;
    assert!(lister.widgets("b").get("v").is_none());
    assert_eq!(added.load(Ordering::SeqCst), 3, "nothing from namespace b");
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_derive_shares_the_factory_informer() {
    let server = server().await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let widgets = standalone::WidgetInformer::new(&factory);
    let _ = widgets.informer();
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(WAIT).await;
    assert!(report.all_synced(), "{report}");

    let lister = widgets.lister();
    assert_eq!(lister.list(&Selector::default()).len(), 3, "all namespaces");
    let z = lister.widgets("b").get("z").expect("z is cached");
    assert_eq!(z.spec["size"], 3);
    let same = factory
        .unscoped_informer::<standalone::WidgetView>()
        .lister()
        .by_namespace("b")
        .get("z")
        .expect("z is cached");
    assert!(Arc::ptr_eq(&z, &same), "one informer per type in the factory");
    factory.shutdown().await;
}

#[test]
fn verify_resource_accepts_matching_impls() {
    assert_eq!(standalone::WidgetInformer::verify_resource(), Ok(()));
    assert_eq!(GadgetInformer::verify_resource(), Ok(()));
}

#[test]
fn verify_resource_reports_every_disagreement() {
    let message = GizmoInformer::verify_resource().expect_err("Gizmo's impl names widgets");
    for part in [
        "group is `example.org` in `#[informer(...)]` but `derive.example.com`",
        "kind is `Gizmo` in `#[informer(...)]` but `Widget`",
        "plural is `gizmos` in `#[informer(...)]` but `widgets`",
        "`Gizmo`",
    ] {
        assert!(message.contains(part), "{part:?} missing from {message:?}");
    }
    assert!(!message.contains("version is"), "{message}");
}
