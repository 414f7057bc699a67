//! What a fresh server holds, read through `kube::Client` as from a fresh kube-apiserver: the
//! system namespaces, the `default/kubernetes` Service with its endpoints, and the bootstrap
//! RBAC roles and bindings.

use futures::StreamExt;
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::{Endpoints, Namespace, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, WatchEvent, WatchParams};

const BOOTSTRAPPING: &str = "kubernetes.io/bootstrapping=rbac-defaults";

#[tokio::test]
async fn the_system_namespaces_exist_at_start() {
    let server = TestServer::start().await.expect("start");
    let namespaces: Api<Namespace> = Api::all(server.client().expect("client"));
    let list = namespaces.list(&ListParams::default()).await.expect("list");
    let names: Vec<String> = list.items.iter().map(ResourceExt::name_any).collect();
    assert_eq!(
        names,
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );
    for ns in &list.items {
        assert_eq!(
            ns.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Active")
        );
        assert_eq!(
            ns.spec.as_ref().and_then(|s| s.finalizers.clone()),
            Some(vec!["kubernetes".to_string()])
        );
        assert!(ns.metadata.uid.is_some() && ns.metadata.creation_timestamp.is_some());
    }
    // kube-apiserver refuses to delete these three, and lets kube-node-lease go
    for name in ["default", "kube-system", "kube-public"] {
        let err = namespaces
            .delete(name, &DeleteParams::default())
            .await
            .expect_err("immortal");
        assert!(matches!(err, kube::Error::Api(s) if s.code == 403), "{name}");
    }
    namespaces
        .delete("kube-node-lease", &DeleteParams::default())
        .await
        .expect("kube-node-lease can be deleted");
    server.shutdown().await;
}

#[tokio::test]
async fn the_kubernetes_service_and_its_endpoints_point_at_the_server() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let port = i32::from(server.addr().port());

    let services: Api<Service> = Api::all(client.clone());
    let list = services.list(&ListParams::default()).await.expect("list");
    assert_eq!(list.items.len(), 1, "the only service of a fresh cluster");
    let service = &list.items[0];
    assert_eq!(
        (service.namespace().as_deref(), service.name_any().as_str()),
        (Some("default"), "kubernetes")
    );
    let labels = service.labels();
    assert_eq!(labels.get("component").map(String::as_str), Some("apiserver"));
    assert_eq!(labels.get("provider").map(String::as_str), Some("kubernetes"));
    let spec = service.spec.as_ref().expect("spec");
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.1"));
    let ports = spec.ports.as_ref().expect("ports");
    assert_eq!(ports.len(), 1);
    assert_eq!(
        (
            ports[0].name.as_deref(),
            ports[0].port,
            ports[0].protocol.as_deref()
        ),
        (Some("https"), 443, Some("TCP"))
    );
    assert_eq!(
        ports[0].target_port,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(
            port
        ))
    );

    let endpoints: Api<Endpoints> = Api::namespaced(client.clone(), "default");
    let ep = endpoints.get("kubernetes").await.expect("endpoints");
    let subsets = ep.subsets.expect("subsets");
    assert_eq!(subsets.len(), 1);
    let ip: Vec<&str> = subsets[0]
        .addresses
        .iter()
        .flatten()
        .map(|a| a.ip.as_str())
        .collect();
    assert_eq!(ip, ["127.0.0.1"]);
    let ports = subsets[0].ports.as_ref().expect("ports");
    assert_eq!((ports[0].name.as_deref(), ports[0].port), (Some("https"), port));

    let slices: Api<EndpointSlice> = Api::all(client);
    let list = slices
        .list(&ListParams::default().labels("kubernetes.io/service-name=kubernetes"))
        .await
        .expect("list");
    assert_eq!(list.items.len(), 1);
    let slice = &list.items[0];
    assert_eq!(slice.address_type, "IPv4");
    let endpoints = slice.endpoints.as_ref().expect("endpoints");
    assert_eq!(endpoints.len(), 1);
    assert_eq!(endpoints[0].addresses, ["127.0.0.1"]);
    assert_eq!(endpoints[0].conditions.as_ref().and_then(|c| c.ready), Some(true));
    let ports = slice.ports.as_ref().expect("ports");
    assert_eq!(
        (ports[0].name.as_deref(), ports[0].port),
        (Some("https"), Some(port))
    );
    server.shutdown().await;
}

fn grants(rules: &[PolicyRule], group: &str, resource: &str, verb: &str) -> bool {
    let has = |list: &Option<Vec<String>>, item: &str| list.iter().flatten().any(|v| v == item || v == "*");
    rules.iter().any(|r| {
        has(&r.api_groups, group)
            && has(&r.resources, resource)
            && r.verbs.iter().any(|v| v == verb || v == "*")
    })
}

#[tokio::test]
async fn the_bootstrap_roles_are_readable() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let roles: Api<ClusterRole> = Api::all(client.clone());

    let admin = roles.get("cluster-admin").await.expect("cluster-admin");
    let rules = admin.rules.clone().expect("rules");
    assert!(rules.iter().any(|r| {
        r.api_groups.as_deref() == Some(&["*".to_string()][..])
            && r.resources.as_deref() == Some(&["*".to_string()][..])
            && r.verbs == ["*"]
    }));
    assert!(
        rules
            .iter()
            .any(|r| r.non_resource_urls.as_deref() == Some(&["*".to_string()][..]))
    );
    assert_eq!(
        admin
            .labels()
            .get("kubernetes.io/bootstrapping")
            .map(String::as_str),
        Some("rbac-defaults")
    );
    assert_eq!(
        admin
            .annotations()
            .get("rbac.authorization.kubernetes.io/autoupdate")
            .map(String::as_str),
        Some("true")
    );

    let view = roles.get("view").await.expect("view");
    let selector = &view
        .aggregation_rule
        .as_ref()
        .expect("aggregation rule")
        .cluster_role_selectors;
    let match_labels = selector
        .iter()
        .flatten()
        .next()
        .and_then(|s| s.match_labels.clone());
    assert_eq!(
        match_labels.and_then(|m| m.get("rbac.authorization.k8s.io/aggregate-to-view").cloned()),
        Some("true".to_string())
    );
    let view_rules = view.rules.unwrap_or_default();
    assert!(grants(&view_rules, "", "pods", "list"));
    assert!(
        !grants(&view_rules, "", "secrets", "get"),
        "view does not read secrets"
    );
    let edit_rules = roles.get("edit").await.expect("edit").rules.unwrap_or_default();
    assert!(grants(&edit_rules, "apps", "deployments", "update"));
    assert!(grants(&edit_rules, "", "secrets", "get"));
    assert!(!grants(
        &edit_rules,
        "rbac.authorization.k8s.io",
        "roles",
        "create"
    ));
    let admin_rules = roles.get("admin").await.expect("admin").rules.unwrap_or_default();
    assert!(grants(
        &admin_rules,
        "rbac.authorization.k8s.io",
        "roles",
        "create"
    ));

    for name in [
        "system:basic-user",
        "system:discovery",
        "system:public-info-viewer",
    ] {
        roles.get(name).await.expect(name);
    }
    let bootstrap = roles
        .list(&ListParams::default().labels(BOOTSTRAPPING))
        .await
        .expect("list");
    assert_eq!(
        bootstrap.items.len(),
        roles.list(&ListParams::default()).await.expect("all").items.len()
    );

    let bindings: Api<ClusterRoleBinding> = Api::all(client);
    let masters = bindings.get("cluster-admin").await.expect("binding");
    assert_eq!(masters.role_ref.name, "cluster-admin");
    assert_eq!(masters.role_ref.kind, "ClusterRole");
    let subjects = masters.subjects.expect("subjects");
    assert_eq!(
        (subjects[0].kind.as_str(), subjects[0].name.as_str()),
        ("Group", "system:masters")
    );
    for name in [
        "system:basic-user",
        "system:discovery",
        "system:public-info-viewer",
    ] {
        let binding = bindings.get(name).await.expect(name);
        assert_eq!(binding.role_ref.name, name);
        let groups: Vec<String> = binding
            .subjects
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert!(groups.contains(&"system:authenticated".to_string()), "{name}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_watch_from_zero_lists_the_bootstrap_objects_as_added() {
    let server = TestServer::start().await.expect("start");
    let services: Api<Service> = Api::all(server.client().expect("client"));
    let mut watch = services
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    match watch.next().await {
        Some(Ok(WatchEvent::Added(service))) => {
            assert_eq!(service.name_any(), "kubernetes");
            let rv: u64 = service.resource_version().expect("rv").parse().expect("number");
            assert!(rv > 0 && rv <= server.resource_version());
        }
        other => panic!("expected the kubernetes service, got {other:?}"),
    }
    server.shutdown().await;
}
