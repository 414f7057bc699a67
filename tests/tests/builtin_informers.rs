//! The checked-in `k8s-informers` crate (informers generated from k8s-openapi for every
//! built-in resource) end to end over HTTP against the test API server.

use std::time::Duration;

use informer_runtime::{SharedInformerFactory, factory::Error as FactoryError};
use informer_tests::{eventually, pod};
use informer_testserver::TestServer;
use k8s_informers::Informers;
use k8s_openapi::api::{
    apps::v1::{Deployment, DeploymentSpec},
    autoscaling,
    core::v1::{Namespace, Node},
};
use kube::{
    Api,
    api::ObjectMeta,
    core::{GroupVersionResource, PartialObjectMeta, Selector},
};

const WAIT: Duration = Duration::from_secs(10);

fn deployment(namespace: &str, name: &str, replicas: i32) -> Deployment {
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

fn node(name: &str) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..Node::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_deployments_and_nodes_sync_through_the_generated_factory() {
    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("shop").expect("namespace");
    server
        .create_typed(&pod("shop", "web-1", &[("app", "web")]))
        .expect("pod created");
    server
        .create_typed(&pod("shop", "db-1", &[("app", "db")]))
        .expect("pod created");
    server
        .create_typed(&deployment("shop", "web", 3))
        .expect("deployment created");
    server.create_typed(&node("node-a")).expect("node created");
    let client = server.client().expect("client");
    let factory = SharedInformerFactory::new(client.clone());
    let informers = Informers::new(&factory);
    let pods = informers.core().v1().pods();
    let deployments = informers.apps().v1().deployments();
    let nodes = informers.core().v1().nodes();
    let namespaces = informers.core().v1().namespaces();
    let _ = (
        pods.informer(),
        deployments.informer(),
        nodes.informer(),
        namespaces.informer(),
    );
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(WAIT).await;
    assert!(report.all_synced(), "{report}");

    let web: Selector = [("app", "web")].into_iter().collect();
    assert_eq!(pods.lister().pods("shop").list(&web).len(), 1);
    assert_eq!(pods.lister().list(&Selector::default()).len(), 2);
    let cached = deployments
        .lister()
        .deployments("shop")
        .get("web")
        .expect("web is cached");
    assert_eq!(cached.spec.replicas, Some(3));
    assert!(
        nodes.lister().get("node-a").is_some(),
        "cluster-scoped nodes are cached"
    );
    assert!(
        namespaces.lister().get("default").is_some(),
        "the server's default namespace is cached"
    );

    let api: Api<Node> = Api::all(client.clone());
    api.create(&Default::default(), &node("node-b"))
        .await
        .expect("create over HTTP");
    let api: Api<Namespace> = Api::all(client);
    api.delete("kube-node-lease", &Default::default())
        .await
        .expect("delete over HTTP");
    eventually("the node lister sees node-b", WAIT, || {
        nodes.lister().get("node-b").is_some()
    })
    .await;
    eventually("the namespace lister loses kube-node-lease", WAIT, || {
        namespaces.lister().get("kube-node-lease").is_none()
    })
    .await;

    let generic = informers
        .for_resource(&GroupVersionResource::gvr("apps", "v1", "deployments"))
        .expect("deployments are generated");
    let typed = generic
        .informer::<Deployment>()
        .expect("the generic informer holds deployments");
    let same = typed
        .lister()
        .by_namespace("shop")
        .get("web")
        .expect("web is cached");
    assert!(
        std::sync::Arc::ptr_eq(&cached, &same),
        "for_resource returns the typed accessor's informer"
    );
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn for_resource_resolves_every_generated_resource() {
    let server = TestServer::start().await.expect("server starts");
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let informers = Informers::new(&factory);
    let resources = Informers::RESOURCES;
    // k8s-openapi's `latest` (1.37) has 93 listable resources; ComponentStatus is excluded.
    assert_eq!(resources.len(), 92, "{resources:?}");
    assert!(resources.is_sorted(), "RESOURCES is sorted");
    // Each resource resolves to an informer of its own (a type of its own in the factory),
    // named after its plural, and resolving it again returns that informer.
    for (resolve, suffix) in [
        (
            Informers::for_resource as fn(&Informers, &GroupVersionResource) -> _,
            "",
        ),
        (Informers::for_resource_metadata, " (metadata)"),
    ] {
        let before = factory.stats().len();
        for (i, (group, version, plural)) in resources.iter().enumerate() {
            let gvr = GroupVersionResource::gvr(group, version, plural);
            let informer = resolve(&informers, &gvr)
                .unwrap_or_else(|err| panic!("{group}/{version}/{plural} does not resolve: {err}"));
            assert_eq!(informer.gvr(), &gvr);
            let stats = factory.stats();
            assert_eq!(stats.len(), before + i + 1, "{gvr:?} has an informer of its own");
            assert_eq!(stats[before + i].description, format!("{plural}{suffix}"));
            resolve(&informers, &gvr).expect("resolves again");
            assert_eq!(
                factory.stats().len(),
                before + i + 1,
                "{gvr:?} resolves to the same informer"
            );
        }
    }
    // The typed accessors return the informers `for_resource` created, of the right version.
    let created = factory.stats().len();
    informers.apps().v1().deployments().informer();
    informers
        .autoscaling()
        .v1()
        .horizontal_pod_autoscalers()
        .informer();
    informers
        .autoscaling()
        .v2()
        .horizontal_pod_autoscalers()
        .informer();
    informers
        .certificates()
        .v1beta1()
        .cluster_trust_bundles()
        .informer();
    informers.core().v1().pods().informer();
    assert_eq!(
        factory.stats().len(),
        created,
        "the typed accessors share those informers"
    );
    let hpa = |version| {
        informers
            .for_resource(&GroupVersionResource::gvr(
                "autoscaling",
                version,
                "horizontalpodautoscalers",
            ))
            .expect("generated")
    };
    assert!(
        hpa("v1")
            .informer::<autoscaling::v1::HorizontalPodAutoscaler>()
            .is_some()
    );
    assert!(
        hpa("v1")
            .informer::<autoscaling::v2::HorizontalPodAutoscaler>()
            .is_none()
    );
    assert!(
        hpa("v2")
            .informer::<autoscaling::v2::HorizontalPodAutoscaler>()
            .is_some()
    );
    assert!(
        informers
            .for_resource_metadata(&GroupVersionResource::gvr(
                "autoscaling",
                "v2",
                "horizontalpodautoscalers"
            ))
            .expect("generated")
            .informer::<PartialObjectMeta<autoscaling::v2::HorizontalPodAutoscaler>>()
            .is_some()
    );

    // Anything else is `NoInformerFor`, naming the resource, and creates no informer.
    for (group, version, plural) in [
        ("", "v1", "componentstatuses"),
        ("certificates.k8s.io", "v1alpha1", "clustertrustbundles"),
        ("example.com", "v1", "nopes"),
        ("apps", "v2", "deployments"),
        ("", "", ""),
    ] {
        let gvr = GroupVersionResource::gvr(group, version, plural);
        for err in [
            informers
                .for_resource(&gvr)
                .expect_err("not generated for Kubernetes 1.37"),
            informers
                .for_resource_metadata(&gvr)
                .expect_err("not generated for Kubernetes 1.37"),
        ] {
            assert!(
                matches!(&err, FactoryError::NoInformerFor { group: g, version: v, resource: r }
                    if g == group && v == version && r == plural),
                "{err}"
            );
            let message = err.to_string();
            assert!(
                message.contains(&format!("{group}/{version}, Resource={plural}")),
                "{message}"
            );
        }
    }
    assert_eq!(
        factory.stats().len(),
        created,
        "an unknown resource creates no informer"
    );
    assert!(
        resources.contains(&("certificates.k8s.io", "v1", "clustertrustbundles")),
        "resources new in 1.37 are generated"
    );
}

/// Pods by the node they are scheduled to: the one line a controller writes.
static POD_BY_NODE_NAME: informer_runtime::cache::Index<k8s_openapi::api::core::v1::Pod> =
    informer_runtime::cache::Index::new("pod-by-node-name", |pod| {
        pod.spec
            .iter()
            .filter_map(|spec| spec.node_name.clone())
            .collect()
    });

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_listers_query_typed_indexes() {
    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("shop").expect("namespace");
    server.create_namespace("ops").expect("namespace");
    for (namespace, name, node) in [
        ("shop", "web-1", "node-a"),
        ("shop", "web-2", "node-b"),
        ("ops", "agent", "node-a"),
    ] {
        let mut scheduled = pod(namespace, name, &[("app", name)]);
        scheduled.spec.get_or_insert_default().node_name = Some(node.into());
        server.create_typed(&scheduled).expect("pod created");
    }
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let pods = Informers::new(&factory).core().v1().pods();
    pods.informer().add_index(&POD_BY_NODE_NAME).expect("registered");
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(WAIT).await;
    assert!(report.all_synced(), "{report}");

    let names = |pods: Vec<std::sync::Arc<k8s_openapi::api::core::v1::Pod>>| {
        let mut names: Vec<String> = pods.iter().filter_map(|p| p.metadata.name.clone()).collect();
        names.sort();
        names
    };
    let lister = pods.lister();
    assert_eq!(
        names(lister.by_index(&POD_BY_NODE_NAME, "node-a").expect("registered")),
        ["agent", "web-1"]
    );
    assert_eq!(
        names(
            lister
                .pods("shop")
                .by_index(&POD_BY_NODE_NAME, "node-a")
                .expect("registered")
        ),
        ["web-1"]
    );
    assert!(
        lister
            .by_index(&informer_runtime::cache::Index::label("app"), "agent")
            .is_err(),
        "an index the informer does not carry is an error, not an empty list"
    );
    assert_eq!(lister.as_lister().list(&Selector::default()).len(), 3);
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_pod_by_node_name_index_follows_the_pods() {
    use k8s_informers::core::v1::POD_BY_NODE_NAME as GENERATED_POD_BY_NODE_NAME;
    use k8s_openapi::api::core::v1::Pod;

    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("shop").expect("namespace");
    for (name, node) in [
        ("web-1", Some("node-1")),
        ("web-2", Some("node-1")),
        ("db-1", Some("node-2")),
        ("pending", None),
    ] {
        let mut created = pod("shop", name, &[("app", name)]);
        created.spec.get_or_insert_default().node_name = node.map(Into::into);
        server.create_typed(&created).expect("pod created");
    }
    let client = server.client().expect("client");
    let factory = SharedInformerFactory::new(client.clone());
    let pods = Informers::new(&factory).core().v1().pods();
    let indexed = pods
        .informer()
        .add_index(&GENERATED_POD_BY_NODE_NAME)
        .expect("registered");
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(WAIT).await;
    assert!(report.all_synced(), "{report}");

    assert_eq!(GENERATED_POD_BY_NODE_NAME.name(), "spec.nodeName");
    let names = |pods: Vec<std::sync::Arc<Pod>>| {
        let mut names: Vec<String> = pods.iter().filter_map(|p| p.metadata.name.clone()).collect();
        names.sort();
        names
    };
    let lister = pods.lister();
    assert_eq!(lister.list(&Selector::default()).len(), 4, "every pod is cached");
    assert_eq!(
        names(
            lister
                .by_index(&GENERATED_POD_BY_NODE_NAME, "node-1")
                .expect("registered")
        ),
        ["web-1", "web-2"]
    );
    assert_eq!(
        names(
            lister
                .pods("shop")
                .by_index(&GENERATED_POD_BY_NODE_NAME, "node-2")
                .expect("registered")
        ),
        ["db-1"]
    );
    let mut values = indexed.values();
    values.sort();
    assert_eq!(
        values,
        ["node-1", "node-2"],
        "the unscheduled pod is in no bucket"
    );
    assert!(
        lister
            .by_index(&GENERATED_POD_BY_NODE_NAME, "")
            .expect("registered")
            .is_empty(),
        "an unscheduled pod is not indexed under the empty node name"
    );

    let api: Api<Pod> = Api::namespaced(client, "shop");
    api.delete("web-1", &Default::default())
        .await
        .expect("delete over HTTP");
    eventually("the index loses the deleted pod", WAIT, || {
        lister
            .by_index(&GENERATED_POD_BY_NODE_NAME, "node-1")
            .is_ok_and(|pods| names(pods) == ["web-2"])
    })
    .await;
    api.delete("db-1", &Default::default())
        .await
        .expect("delete over HTTP");
    eventually("node-2's bucket empties", WAIT, || {
        !indexed.values().contains(&"node-2".to_owned())
    })
    .await;
    assert_eq!(indexed.values(), ["node-1"]);
    factory.shutdown().await;
}
