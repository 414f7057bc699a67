//! Every group version kube-apiserver serves by default, the review APIs, CSR approval,
//! APIServices and componentstatuses, through `kube::Client`.

use informer_testserver::TestServer;
use k8s_openapi::api::authentication::v1::{SelfSubjectReview, TokenReview};
use k8s_openapi::api::authorization::v1::{
    LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::ComponentStatus;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use kube::discovery::ApiCapabilities;
use serde_json::{Value, json};

/// The group versions kube-apiserver 1.37 serves by default: the GA versions of
/// `stableAPIGroupVersionsEnabledByDefault` (pkg/controlplane/instance.go), with
/// apiextensions.k8s.io and apiregistration.k8s.io, in the aggregator's order (group priority,
/// then name; versions by priority).
const UPSTREAM_GROUPS: &[(&str, &[&str])] = &[
    ("apiregistration.k8s.io", &["v1"]),
    ("apps", &["v1"]),
    ("events.k8s.io", &["v1"]),
    ("authentication.k8s.io", &["v1"]),
    ("authorization.k8s.io", &["v1"]),
    ("autoscaling", &["v2", "v1"]),
    ("batch", &["v1"]),
    ("certificates.k8s.io", &["v1"]),
    ("networking.k8s.io", &["v1"]),
    ("policy", &["v1"]),
    ("rbac.authorization.k8s.io", &["v1"]),
    ("storage.k8s.io", &["v1"]),
    ("admissionregistration.k8s.io", &["v1"]),
    ("apiextensions.k8s.io", &["v1"]),
    ("scheduling.k8s.io", &["v1"]),
    ("coordination.k8s.io", &["v1"]),
    ("node.k8s.io", &["v1"]),
    ("discovery.k8s.io", &["v1"]),
    ("resource.k8s.io", &["v1"]),
    ("flowcontrol.apiserver.k8s.io", &["v1"]),
    ("storagemigration.k8s.io", &["v1"]),
];

type Error = Box<dyn std::error::Error>;

#[tokio::test]
async fn discovery_lists_every_default_group_version_in_upstream_order() -> Result<(), Error> {
    let server = TestServer::start().await?;
    let client = server.client()?;
    let groups = client.list_api_groups().await?;
    let served: Vec<(String, Vec<String>)> = groups
        .groups
        .iter()
        .map(|g| {
            (
                g.name.clone(),
                g.versions.iter().map(|v| v.version.clone()).collect(),
            )
        })
        .collect();
    let expected: Vec<(String, Vec<String>)> = UPSTREAM_GROUPS
        .iter()
        .map(|(g, vs)| (g.to_string(), vs.iter().map(|v| v.to_string()).collect()))
        .collect();
    assert_eq!(served, expected);
    let autoscaling = groups
        .groups
        .iter()
        .find(|g| g.name == "autoscaling")
        .expect("autoscaling");
    assert_eq!(
        autoscaling
            .preferred_version
            .as_ref()
            .map(|v| v.group_version.as_str()),
        Some("autoscaling/v2")
    );

    // every group version has its resource list, and kube's discovery (aggregated) agrees
    for (group, versions) in UPSTREAM_GROUPS {
        for version in *versions {
            let list = client
                .list_api_group_resources(&format!("{group}/{version}"))
                .await?;
            assert!(!list.resources.is_empty(), "{group}/{version}");
        }
    }
    let discovery = kube::Discovery::new(client.clone()).run_aggregated().await?;
    let mut names: Vec<String> = discovery.groups().map(|g| g.name().to_string()).collect();
    names.retain(|n| !n.is_empty());
    names.sort();
    let mut upstream: Vec<&str> = UPSTREAM_GROUPS.iter().map(|(g, _)| *g).collect();
    upstream.sort();
    assert_eq!(names, upstream);

    let verbs = |list: &k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList, name: &str| {
        list.resources
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.verbs.clone())
            .unwrap_or_default()
    };
    let authn = client
        .list_api_group_resources("authentication.k8s.io/v1")
        .await?;
    assert_eq!(verbs(&authn, "tokenreviews"), ["create"]);
    let core = client.list_core_api_resources("v1").await?;
    assert_eq!(verbs(&core, "componentstatuses"), ["get", "list"]);
    assert_eq!(verbs(&core, "bindings"), ["create"]);
    assert!(!verbs(&core, "namespaces").contains(&"deletecollection".to_string()));
    let certificates = client.list_api_group_resources("certificates.k8s.io/v1").await?;
    assert_eq!(
        verbs(&certificates, "certificatesigningrequests/approval"),
        ["get", "patch", "update"]
    );
    let pods = core.resources.iter().find(|r| r.name == "pods").expect("pods");
    assert_eq!(pods.categories.as_deref(), Some(&["all".to_string()][..]));
    let (_, caps): (ApiResource, ApiCapabilities) = discovery
        .resolve_gvk(&kube::core::GroupVersionKind::gvk(
            "policy",
            "v1",
            "PodDisruptionBudget",
        ))
        .expect("pdbs discovered");
    assert!(caps.supports_operation("watch"));
    server.shutdown().await;
    Ok(())
}

/// One object of a type in each newly served group, created and listed.
fn samples() -> Vec<(ApiResource, bool, Value)> {
    let ar = |group: &str, version: &str, kind: &str, plural: &str| ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    };
    vec![
        (
            ar("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets"),
            true,
            json!({"spec": {"minAvailable": 1}}),
        ),
        (
            ar(
                "autoscaling",
                "v2",
                "HorizontalPodAutoscaler",
                "horizontalpodautoscalers",
            ),
            true,
            json!({"spec": {"maxReplicas": 3, "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}}}),
        ),
        (
            ar("networking.k8s.io", "v1", "IngressClass", "ingressclasses"),
            false,
            json!({"spec": {"controller": "example.com/ingress"}}),
        ),
        (
            ar("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies"),
            true,
            json!({"spec": {"podSelector": {}}}),
        ),
        (
            ar("storage.k8s.io", "v1", "StorageClass", "storageclasses"),
            false,
            json!({"provisioner": "example.com/disk"}),
        ),
        (
            ar("storage.k8s.io", "v1", "CSIDriver", "csidrivers"),
            false,
            json!({"spec": {}}),
        ),
        (
            ar("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses"),
            false,
            json!({"value": 1000}),
        ),
        (
            ar("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses"),
            false,
            json!({"handler": "runc"}),
        ),
        (
            ar("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices"),
            true,
            json!({"addressType": "IPv4", "endpoints": []}),
        ),
        (
            ar(
                "flowcontrol.apiserver.k8s.io",
                "v1",
                "PriorityLevelConfiguration",
                "prioritylevelconfigurations",
            ),
            false,
            json!({"spec": {"type": "Exempt"}}),
        ),
        (
            ar(
                "admissionregistration.k8s.io",
                "v1",
                "ValidatingWebhookConfiguration",
                "validatingwebhookconfigurations",
            ),
            false,
            json!({"webhooks": []}),
        ),
        (
            ar("resource.k8s.io", "v1", "DeviceClass", "deviceclasses"),
            false,
            json!({"spec": {}}),
        ),
        (
            ar(
                "certificates.k8s.io",
                "v1",
                "ClusterTrustBundle",
                "clustertrustbundles",
            ),
            false,
            json!({"spec": {"trustBundle": ""}}),
        ),
        (
            ar(
                "storagemigration.k8s.io",
                "v1",
                "StorageVersionMigration",
                "storageversionmigrations",
            ),
            false,
            json!({"spec": {"resource": {"group": "apps", "resource": "deployments"}}}),
        ),
    ]
}

#[tokio::test]
async fn a_type_of_each_new_group_is_created_and_listed() -> Result<(), Error> {
    let server = TestServer::start().await?;
    let client = server.client()?;
    for (ar, namespaced, mut body) in samples() {
        body["apiVersion"] = json!(ar.api_version);
        body["kind"] = json!(ar.kind);
        body["metadata"] = json!({"name": "sample"});
        let api: Api<DynamicObject> = if namespaced {
            Api::namespaced_with(client.clone(), "default", &ar)
        } else {
            Api::all_with(client.clone(), &ar)
        };
        let object: DynamicObject = serde_json::from_value(body)?;
        api.create(&PostParams::default(), &object).await?;
        // a fresh cluster holds objects of some of these types already (the kubernetes
        // EndpointSlice, the bootstrap roles): the sample is the one created here
        let listed = api.list(&ListParams::default()).await?;
        let samples = listed
            .items
            .iter()
            .filter(|o| o.metadata.name.as_deref() == Some("sample"));
        assert_eq!(samples.count(), 1, "{}", ar.plural);
    }
    server.shutdown().await;
    Ok(())
}

fn csr(name: &str) -> Result<CertificateSigningRequest, serde_json::Error> {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"],
        },
    }))
}

fn condition(kind: &str) -> Value {
    json!({"type": kind, "status": "True", "reason": "Test", "message": "by the test"})
}

/// kube-rs's `csr_can_be_approved` (kube-client lib.rs), and kube-apiserver's approval
/// strategy: the approval writes conditions only; Approved and Denied exclude each other; a
/// status write cannot change them.
#[tokio::test]
async fn csrs_are_approved_and_denied_through_the_approval_subresource() -> Result<(), Error> {
    let server = TestServer::start().await?;
    let csrs: Api<CertificateSigningRequest> = Api::all(server.client()?);
    csrs.create(&PostParams::default(), &csr("approve-me")?).await?;
    csrs.create(&PostParams::default(), &csr("deny-me")?).await?;

    // the creator is the requestor, and a request cannot be created approved
    let mut pre_approved = csr("pre-approved")?;
    pre_approved.spec.username = Some("admin".into());
    pre_approved.status = Some(serde_json::from_value(
        json!({"conditions": [condition("Approved")]}),
    )?);
    let created = csrs.create(&PostParams::default(), &pre_approved).await?;
    assert_eq!(created.spec.username.as_deref(), Some("system:anonymous"));
    assert!(
        created
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .is_empty()
    );

    let approve = Patch::Merge(
        json!({"spec": {"usages": ["server auth"]}, "status": {"conditions": [condition("Approved")]}}),
    );
    let approved = csrs
        .patch_approval("approve-me", &PatchParams::default(), &approve)
        .await?;
    let conditions = approved.status.and_then(|s| s.conditions).unwrap_or_default();
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0].type_, "Approved");
    assert!(conditions[0].last_update_time.is_some());
    assert_eq!(
        approved.spec.usages,
        Some(vec!["client auth".to_string()]),
        "spec unchanged"
    );
    assert_eq!(
        csrs.get_approval("approve-me").await?.metadata.name.as_deref(),
        Some("approve-me")
    );

    // denying it as well is refused
    let both = Patch::Merge(json!({"status": {"conditions": [condition("Approved"), condition("Denied")]}}));
    let refused = csrs
        .patch_approval("approve-me", &PatchParams::default(), &both)
        .await;
    assert!(
        matches!(refused, Err(kube::Error::Api(ref s)) if s.code == 422),
        "{refused:?}"
    );

    // a status write keeps the approval and cannot add a denial
    let status =
        Patch::Merge(json!({"status": {"certificate": "Y2VydA==", "conditions": [condition("Denied")]}}));
    let signed = csrs
        .patch_status("approve-me", &PatchParams::default(), &status)
        .await?;
    let status = signed.status.expect("status");
    let types: Vec<String> = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.type_)
        .collect();
    assert_eq!(types, ["Approved"]);
    assert!(status.certificate.is_some());

    // PUT of the approval (what `kubectl certificate deny` sends)
    let mut deny = csrs.get("deny-me").await?;
    deny.status = Some(serde_json::from_value(
        json!({"conditions": [condition("Denied")]}),
    )?);
    let denied = csrs
        .replace_subresource("approval", "deny-me", &PostParams::default(), &deny)
        .await?;
    let types: Vec<String> = denied
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.type_)
        .collect();
    assert_eq!(types, ["Denied"]);
    server.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn built_in_api_services_are_listed_available_and_local() -> Result<(), Error> {
    let server = TestServer::start().await?;
    let api: Api<APIService> = Api::all(server.client()?);
    let listed = api.list(&ListParams::default()).await?;
    let mut names: Vec<String> = listed
        .items
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    names.sort();
    let mut expected: Vec<String> = vec!["v1.".to_string()];
    for (group, versions) in UPSTREAM_GROUPS {
        expected.extend(versions.iter().map(|v| format!("{v}.{group}")));
    }
    expected.sort();
    assert_eq!(names, expected);
    let apps = api.get("v1.apps").await?;
    let spec = apps.spec.expect("spec");
    assert_eq!((spec.group_priority_minimum, spec.version_priority), (17800, 15));
    assert!(spec.service.is_none());
    let available = &apps.status.and_then(|s| s.conditions).unwrap_or_default()[0];
    assert_eq!(
        (
            available.type_.as_str(),
            available.status.as_str(),
            available.reason.as_deref()
        ),
        ("Available", "True", Some("Local"))
    );
    server.shutdown().await;
    Ok(())
}

/// kube-apiserver's CRD registration controller keeps an APIService per group version CRDs
/// serve (`v1.example.com`, group priority 1000, version priority 100, labelled automanaged)
/// and removes it once no CRD serves the version.
#[tokio::test]
async fn crd_group_versions_get_api_services_while_served() -> Result<(), Error> {
    let server = TestServer::start().await?;
    let crd = |versions: &[&str]| {
        let versions: Vec<Value> = versions
            .iter()
            .enumerate()
            .map(|(i, v)| json!({"name": v, "served": true, "storage": i == 0,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}))
            .collect();
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": versions}})
    };
    server.create(crd(&["v1", "v2"]))?;
    let api: Api<APIService> = Api::all(server.client()?);
    let v1 = api.get("v1.example.com").await?;
    assert_eq!(
        v1.metadata.labels.unwrap_or_default()["kube-aggregator.kubernetes.io/automanaged"],
        "true"
    );
    let spec = v1.spec.expect("spec");
    assert_eq!((spec.group_priority_minimum, spec.version_priority), (1000, 100));
    assert!(spec.service.is_none());
    assert!(api.get("v2.example.com").await.is_ok());

    let mut fewer = server.get(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        "widgets.example.com",
    )?;
    fewer["spec"]["versions"] = crd(&["v1"])["spec"]["versions"].clone();
    server.update(fewer)?;
    assert!(
        api.get("v2.example.com").await.is_err(),
        "no CRD serves v2 any more"
    );

    server.delete(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        "widgets.example.com",
    )?;
    assert!(
        api.get("v1.example.com").await.is_err(),
        "no CRD serves the group any more"
    );
    server.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn componentstatuses_are_healthy_and_read_only() -> Result<(), Error> {
    let server = TestServer::start().await?;
    let api: Api<ComponentStatus> = Api::all(server.client()?);
    let listed = api.list(&ListParams::default()).await?;
    let names: Vec<String> = listed
        .items
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    assert_eq!(names, ["controller-manager", "etcd-0", "scheduler"]);
    let scheduler = api.get("scheduler").await?;
    let healthy = &scheduler.conditions.unwrap_or_default()[0];
    assert_eq!(
        (healthy.type_.as_str(), healthy.status.as_str()),
        ("Healthy", "True")
    );
    let created = api.create(&PostParams::default(), &scheduler_copy()).await;
    assert!(
        matches!(created, Err(kube::Error::Api(ref s)) if s.code == 405),
        "{created:?}"
    );
    let deleted = api.delete("scheduler", &Default::default()).await;
    assert!(
        matches!(deleted, Err(kube::Error::Api(ref s)) if s.code == 405),
        "{deleted:?}"
    );
    let watched = api.watch(&kube::api::WatchParams::default(), "0").await;
    assert!(
        matches!(watched, Err(kube::Error::Api(ref s)) if s.code == 405),
        "{}",
        watched.is_ok()
    );

    // namespaces have no delete-collection either
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(server.client()?);
    let all = namespaces
        .delete_collection(&Default::default(), &ListParams::default())
        .await;
    assert!(
        matches!(all, Err(kube::Error::Api(ref s)) if s.code == 405),
        "{}",
        all.is_ok()
    );
    server.shutdown().await;
    Ok(())
}

fn scheduler_copy() -> ComponentStatus {
    ComponentStatus {
        metadata: kube::api::ObjectMeta {
            name: Some("mine".into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn reviews_are_answered_as_by_an_allow_all_authorizer_and_never_stored() -> Result<(), Error> {
    let server = TestServer::start().await?;
    let client = server.client()?;
    let pp = PostParams::default();

    let tokens: Api<TokenReview> = Api::all(client.clone());
    let review: TokenReview =
        serde_json::from_value(json!({"spec": {"token": "alice", "audiences": ["api"]}}))?;
    let answered = tokens.create(&pp, &review).await?;
    let status = answered.status.expect("status");
    assert_eq!(status.authenticated, Some(true));
    assert_eq!(status.user.and_then(|u| u.username).as_deref(), Some("alice"));
    assert_eq!(status.audiences, Some(vec!["api".to_string()]));
    assert!(answered.metadata.resource_version.is_none());
    let empty: TokenReview = serde_json::from_value(json!({"spec": {"token": ""}}))?;
    assert!(matches!(tokens.create(&pp, &empty).await, Err(kube::Error::Api(ref s)) if s.code == 400));
    assert!(
        matches!(tokens.list(&ListParams::default()).await, Err(kube::Error::Api(ref s)) if s.code == 405)
    );

    let sars: Api<SubjectAccessReview> = Api::all(client.clone());
    let sar: SubjectAccessReview = serde_json::from_value(
        json!({"spec": {"user": "bob", "resourceAttributes": {"verb": "delete", "resource": "nodes"}}}),
    )?;
    assert_eq!(
        sars.create(&pp, &sar).await?.status.map(|s| s.allowed),
        Some(true)
    );
    let nobody: SubjectAccessReview =
        serde_json::from_value(json!({"spec": {"resourceAttributes": {"verb": "get"}}}))?;
    assert!(matches!(sars.create(&pp, &nobody).await, Err(kube::Error::Api(ref s)) if s.code == 422));

    let self_sars: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let ssar: SelfSubjectAccessReview = serde_json::from_value(
        json!({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}}),
    )?;
    assert_eq!(
        self_sars.create(&pp, &ssar).await?.status.map(|s| s.allowed),
        Some(true)
    );

    let local: Api<LocalSubjectAccessReview> = Api::namespaced(client.clone(), "team");
    let lsar: LocalSubjectAccessReview = serde_json::from_value(
        json!({"spec": {"groups": ["devs"], "resourceAttributes": {"namespace": "team", "verb": "create", "resource": "pods"}}}),
    )?;
    let answered = local.create(&pp, &lsar).await?;
    assert_eq!(answered.status.map(|s| s.allowed), Some(true));
    assert_eq!(answered.metadata.namespace.as_deref(), Some("team"));
    let elsewhere: LocalSubjectAccessReview = serde_json::from_value(
        json!({"spec": {"groups": ["devs"], "resourceAttributes": {"namespace": "other", "verb": "create"}}}),
    )?;
    assert!(matches!(local.create(&pp, &elsewhere).await, Err(kube::Error::Api(ref s)) if s.code == 422));

    let rules: Api<SelfSubjectRulesReview> = Api::all(client.clone());
    let ssrr: SelfSubjectRulesReview = serde_json::from_value(json!({"spec": {"namespace": "default"}}))?;
    let status = rules.create(&pp, &ssrr).await?.status.expect("status");
    assert_eq!(status.resource_rules[0].verbs, ["*"]);
    assert_eq!(status.resource_rules[0].resources, Some(vec!["*".to_string()]));
    assert!(!status.incomplete);

    let whoami: Api<SelfSubjectReview> = Api::all(client.clone());
    let me = whoami.create(&pp, &SelfSubjectReview::default()).await?;
    let user = me.status.and_then(|s| s.user_info).expect("user info");
    assert_eq!(user.username.as_deref(), Some("system:anonymous"));
    server.shutdown().await;
    Ok(())
}

/// kube-apiserver's BindingREST: a binding assigns the pod once and is not stored.
#[tokio::test]
async fn a_binding_assigns_its_pod_to_a_node_once() -> Result<(), Error> {
    use k8s_openapi::api::core::v1::{Binding, Pod};
    let server = TestServer::start().await?;
    let client = server.client()?;
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod: Pod = serde_json::from_value(
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
    )?;
    pods.create(&PostParams::default(), &pod).await?;
    let bindings: Api<Binding> = Api::default_namespaced(client.clone());
    let binding: Binding = serde_json::from_value(
        json!({"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "node-1"}}),
    )?;
    let request = http::Request::post("/api/v1/namespaces/default/bindings")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&binding)?)?;
    let status: Value = client.request(request).await?;
    assert_eq!(
        (status["kind"].as_str(), status["status"].as_str()),
        (Some("Status"), Some("Success"))
    );
    let bound = pods.get("p").await?;
    assert_eq!(bound.spec.and_then(|s| s.node_name).as_deref(), Some("node-1"));
    let scheduled = bound.status.and_then(|s| s.conditions).unwrap_or_default();
    assert_eq!(
        scheduled
            .iter()
            .map(|c| (c.type_.as_str(), c.status.as_str()))
            .collect::<Vec<_>>(),
        [("PodScheduled", "True")]
    );
    let again = bindings.create(&PostParams::default(), &binding).await;
    assert!(
        matches!(again, Err(kube::Error::Api(ref s)) if s.code == 409),
        "{again:?}"
    );
    let listed = bindings.list(&ListParams::default()).await;
    assert!(
        matches!(listed, Err(kube::Error::Api(ref s)) if s.code == 405),
        "{listed:?}"
    );
    server.shutdown().await;
    Ok(())
}

/// `kubectl get` of the new kinds: kube-apiserver's columns (pkg/printers/internalversion).
#[tokio::test]
async fn tables_of_componentstatuses_csrs_and_apiservices_have_upstream_columns() -> Result<(), Error> {
    let server = TestServer::start().await?;
    let client = server.client()?;
    let csrs: Api<CertificateSigningRequest> = Api::all(client.clone());
    csrs.create(&PostParams::default(), &csr("pending")?).await?;
    let table = |path: &str| {
        http::Request::get(path)
            .header(
                http::header::ACCEPT,
                "application/json;as=Table;v=v1;g=meta.k8s.io",
            )
            .body(Vec::new())
    };
    let columns = |table: &Value| -> Vec<String> {
        table["columnDefinitions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect()
    };
    let cs: Value = client.request(table("/api/v1/componentstatuses")?).await?;
    assert_eq!(columns(&cs), ["Name", "Status", "Message", "Error"]);
    assert_eq!(cs["rows"][0]["cells"][1], "Healthy");
    let csr_table: Value = client
        .request(table("/apis/certificates.k8s.io/v1/certificatesigningrequests")?)
        .await?;
    assert_eq!(
        columns(&csr_table),
        [
            "Name",
            "Age",
            "SignerName",
            "Requestor",
            "RequestedDuration",
            "Condition"
        ]
    );
    assert_eq!(csr_table["rows"][0]["cells"][5], "Pending");
    let services: Value = client
        .request(table("/apis/apiregistration.k8s.io/v1/apiservices/v1.apps")?)
        .await?;
    assert_eq!(columns(&services), ["Name", "Service", "Available", "Age"]);
    assert_eq!(services["rows"][0]["cells"][1], "Local");
    server.shutdown().await;
    Ok(())
}

/// The field selectors kube-apiserver registers for the new kinds (ResourceSlices by driver
/// and node, ClusterTrustBundles by signer).
#[tokio::test]
async fn new_kinds_are_selected_by_their_upstream_fields() -> Result<(), Error> {
    let server = TestServer::start().await?;
    let slices = ApiResource {
        group: "resource.k8s.io".into(),
        version: "v1".into(),
        api_version: "resource.k8s.io/v1".into(),
        kind: "ResourceSlice".into(),
        plural: "resourceslices".into(),
    };
    let api: Api<DynamicObject> = Api::all_with(server.client()?, &slices);
    for (name, driver) in [("a", "gpu.example.com"), ("b", "nic.example.com")] {
        let slice: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {"driver": driver, "nodeName": "node-1", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}},
        }))?;
        api.create(&PostParams::default(), &slice).await?;
    }
    let gpus = api
        .list(&ListParams::default().fields("spec.driver=gpu.example.com"))
        .await?;
    let names: Vec<String> = gpus
        .items
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    assert_eq!(names, ["a"]);
    let unsupported = api.list(&ListParams::default().fields("spec.pool.name=p")).await;
    assert!(
        matches!(unsupported, Err(kube::Error::Api(ref s)) if s.code == 400),
        "{}",
        unsupported.is_ok()
    );
    server.shutdown().await;
    Ok(())
}
