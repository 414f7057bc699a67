//! Metadata-only informers over HTTP: the factory's `metadata_informer` and the generated
//! `for_resource_metadata` list and watch `PartialObjectMetadata`, cache metadata only, and
//! share nothing with the full informer of the same type but the client.

use std::time::Duration;

use informer_runtime::SharedInformerFactory;
use informer_tests::{eventually, pod};
use informer_testserver::TestServer;
use k8s_informers::Informers;
use k8s_openapi::api::core::v1::Pod;
use kube::core::{GroupVersionResource, PartialObjectMeta, Selector};

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_informer_caches_metadata_only_and_follows_changes() {
    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("shop").expect("namespace");
    server
        .create_typed(&pod("shop", "web-1", &[("app", "web")]))
        .expect("pod created");
    server
        .create_typed(&pod("shop", "db-1", &[("app", "db")]))
        .expect("pod created");
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = factory.metadata_informer::<Pod>();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());

    let web = pods
        .lister()
        .by_namespace("shop")
        .get("web-1")
        .expect("web-1 is cached");
    let types = web.types.clone().expect("the server sends apiVersion and kind");
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadata")
    );
    assert_eq!(
        web.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app"))
            .map(String::as_str),
        Some("web")
    );
    let selector: Selector = [("app", "db")].into_iter().collect();
    let db = pods.lister().by_namespace("shop").list(&selector);
    assert_eq!(db.len(), 1, "label selectors work on cached metadata");

    // The watch delivers changes as metadata too.
    server
        .create_typed(&pod("shop", "web-2", &[("app", "web")]))
        .expect("pod created");
    server
        .delete_typed::<Pod>(Some("shop"), "db-1")
        .expect("pod deleted");
    eventually("web-2 arrives and db-1 goes", WAIT, || {
        let lister = pods.lister();
        let shop = lister.by_namespace("shop");
        shop.get("web-2").is_some() && shop.get("db-1").is_none()
    })
    .await;
    let web2 = pods.lister().by_namespace("shop").get("web-2").expect("cached");
    assert_eq!(
        web2.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata"),
        "watch events carry metadata only"
    );

    // The requests asked for metadata: a list and a watch of pods, and the full informer of
    // pods is another informer.
    assert_eq!(server.request_count("list", "pods"), 1);
    assert_eq!(
        factory.stats().len(),
        1,
        "one informer: no full pod informer was created"
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn for_resource_metadata_returns_the_metadata_informer_of_the_type() {
    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("shop").expect("namespace");
    server
        .create_typed(&pod("shop", "web-1", &[("app", "web")]))
        .expect("pod created");
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let informers = Informers::new(&factory);
    let gvr = GroupVersionResource::gvr("", "v1", "pods");
    let generic = informers.for_resource_metadata(&gvr).expect("pods are generated");
    assert_eq!(generic.gvr(), &gvr);
    let typed = generic
        .informer::<PartialObjectMeta<Pod>>()
        .expect("the generic informer holds pod metadata");
    assert!(generic.informer::<Pod>().is_none(), "not the full informer");
    factory.start();
    assert!(factory.wait_for_cache_sync().await.all_synced());
    assert_eq!(generic.lister().list(&Selector::default()).len(), 1);
    let same = factory.metadata_informer::<Pod>();
    let cached = typed.lister().by_namespace("shop").get("web-1").expect("cached");
    let again = same.lister().by_namespace("shop").get("web-1").expect("cached");
    assert!(std::sync::Arc::ptr_eq(&cached, &again), "one informer per type");
    let unknown = GroupVersionResource::gvr("example.com", "v1", "nopes");
    assert!(informers.for_resource_metadata(&unknown).is_err());
    factory.shutdown().await;
    server.shutdown().await;
}
