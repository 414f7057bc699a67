//! Objects read back as kube-apiserver returns them: the defaults of built-in Go types, what
//! its default admission plugins add to pods, the IPs and ports of Services, and the status a
//! create cannot set.

use informer_testserver::{ResourceType, TestServer};
use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{LimitRange, Namespace, PersistentVolumeClaim, Pod, Service, ServiceAccount},
    storage::v1::StorageClass,
};
use kube::{
    api::{Api, DynamicObject, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn object<K: DeserializeOwned>(value: Value) -> K {
    serde_json::from_value(value).expect("valid object")
}

async fn start() -> (TestServer, kube::Client) {
    let server = TestServer::start().await.expect("server");
    let client = server.client().expect("client");
    (server, client)
}

/// A claim named `data` that names no StorageClass.
fn data_claim() -> PersistentVolumeClaim {
    object(json!({"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}))
}

fn refusal<K: std::fmt::Debug>(result: Result<K, kube::Error>) -> (u16, String) {
    match result {
        Err(kube::Error::Api(status)) => (status.code, status.message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

// kube: test/integration/defaulttolerationseconds, serviceaccount and pods' "TestPodUpdate"
// shapes: what `kubectl get pod -o yaml` shows of a pod created with only a container.
#[tokio::test]
async fn a_new_pod_reads_back_as_kube_apiserver_returns_it() {
    let (server, client) = start().await;
    let pods: Api<Pod> = Api::default_namespaced(client);
    let pod: Pod = object(json!({"metadata": {"name": "web"},
        "spec": {"containers": [{"name": "main", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}]}}));
    let created = serde_json::to_value(pods.create(&PostParams::default(), &pod).await.expect("created"))
        .expect("json");
    let spec = &created["spec"];
    for (field, value) in [
        ("restartPolicy", json!("Always")),
        ("dnsPolicy", json!("ClusterFirst")),
        ("schedulerName", json!("default-scheduler")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("enableServiceLinks", json!(true)),
        ("serviceAccountName", json!("default")),
        ("priority", json!(0)),
        ("preemptionPolicy", json!("PreemptLowerPriority")),
    ] {
        assert_eq!(spec[field], value, "spec.{field}");
    }
    let container = &spec["containers"][0];
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(container["resources"]["requests"], json!({"cpu": "1"}));
    let volume = spec["volumes"][0]["name"].as_str().expect("the token volume");
    assert!(volume.starts_with("kube-api-access-"), "{volume}");
    assert_eq!(
        container["volumeMounts"][0],
        json!({"name": volume, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})
    );
    let tolerations: Vec<&str> = spec["tolerations"]
        .as_array()
        .expect("tolerations")
        .iter()
        .filter_map(|t| t["key"].as_str())
        .collect();
    assert_eq!(
        tolerations,
        ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
    );
    assert_eq!(
        created["status"],
        json!({"phase": "Pending", "qosClass": "Burstable"})
    );
    server.shutdown().await;
}

// The controller bug defaults hide: a controller that writes its desired object back without
// the defaulted fields changes nothing, as against kube-apiserver (no new resourceVersion, no
// new generation).
#[tokio::test]
async fn writing_an_object_without_its_defaults_changes_nothing() {
    let (server, client) = start().await;
    let deployments: Api<Deployment> = Api::default_namespaced(client);
    let desired = json!({"metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}}});
    let created = deployments
        .create(&PostParams::default(), &object(desired.clone()))
        .await
        .expect("created");
    let spec = &created.spec;
    assert_eq!(spec.replicas, Some(1));
    assert_eq!(spec.revision_history_limit, Some(10));
    let strategy = serde_json::to_value(&spec.strategy).expect("json");
    assert_eq!(
        strategy,
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    let applied = deployments
        .patch("web", &PatchParams::default(), &Patch::Merge(&desired))
        .await
        .expect("patched");
    assert_eq!(
        applied.metadata.resource_version,
        created.metadata.resource_version
    );
    let mut replaced: Deployment = object(desired);
    replaced.metadata.resource_version = created.metadata.resource_version.clone();
    let replaced = deployments
        .replace("web", &PostParams::default(), &replaced)
        .await
        .expect("replaced");
    assert_eq!(
        replaced.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(replaced.metadata.generation, Some(1));
    server.shutdown().await;
}

// kube: test/integration/apiserver's service allocation and pkg/registry/core/service/storage
// TestCreate* cases: a cluster IP from the range, node ports from theirs, a taken IP refused.
#[tokio::test]
async fn services_get_a_cluster_ip_and_node_ports() {
    let (server, client) = start().await;
    let services: Api<Service> = Api::default_namespaced(client);
    let pp = PostParams::default();
    let node_port: Service = object(json!({"metadata": {"name": "web"},
        "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"port": 80}]}}));
    let created =
        serde_json::to_value(services.create(&pp, &node_port).await.expect("created")).expect("json");
    let spec = &created["spec"];
    let ip = spec["clusterIP"].as_str().expect("a cluster IP");
    assert!(ip.starts_with("10.") && ip != "10.96.0.1", "{ip}");
    assert_eq!(spec["clusterIPs"], json!([ip]));
    assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    let port = &spec["ports"][0];
    assert_eq!(port["targetPort"], 80);
    assert_eq!(port["protocol"], "TCP");
    assert!((30000..=32767).contains(&port["nodePort"].as_i64().expect("a node port")));
    assert_eq!(spec["externalTrafficPolicy"], "Cluster");

    let updated = services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .expect("patched");
    assert_eq!(
        updated.spec.as_ref().and_then(|s| s.cluster_ip.as_deref()),
        Some(ip)
    );

    let taken: Service =
        object(json!({"metadata": {"name": "copy"}, "spec": {"clusterIP": ip, "ports": [{"port": 80}]}}));
    let (code, message) = refusal(services.create(&pp, &taken).await);
    assert_eq!(code, 422);
    assert!(message.contains("provided IP is already allocated"), "{message}");
    let outside: Service = object(
        json!({"metadata": {"name": "outside"}, "spec": {"clusterIP": "192.168.0.1", "ports": [{"port": 80}]}}),
    );
    let (code, message) = refusal(services.create(&pp, &outside).await);
    assert_eq!(code, 422);
    assert!(message.contains("is not in the valid range"), "{message}");
    let headless: Service = object(
        json!({"metadata": {"name": "headless"}, "spec": {"clusterIP": "None", "selector": {"app": "web"}}}),
    );
    let headless = services.create(&pp, &headless).await.expect("created");
    assert_eq!(
        headless.spec.and_then(|s| s.cluster_ips),
        Some(vec!["None".to_owned()])
    );
    server.shutdown().await;
}

// kube: plugin/pkg/admission/priority TestPodAdmission: a pod takes its class's priority; a
// class that does not exist refuses it.
#[tokio::test]
async fn a_pod_takes_the_priority_of_its_class() {
    let (server, client) = start().await;
    let pods: Api<Pod> = Api::default_namespaced(client);
    let pp = PostParams::default();
    let critical: Pod = object(json!({"metadata": {"name": "critical"},
        "spec": {"priorityClassName": "system-node-critical", "containers": [{"name": "c", "image": "i"}]}}));
    let created = pods.create(&pp, &critical).await.expect("created");
    assert_eq!(created.spec.and_then(|s| s.priority), Some(2_000_001_000));
    let unknown: Pod = object(json!({"metadata": {"name": "unknown"},
        "spec": {"priorityClassName": "gold", "containers": [{"name": "c", "image": "i"}]}}));
    assert_eq!(
        refusal(pods.create(&pp, &unknown).await),
        (
            403,
            "pods \"unknown\" is forbidden: no PriorityClass with name gold was found".to_owned()
        )
    );
    server
        .create(
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "everyone"}, "value": 1000, "globalDefault": true}),
        )
        .expect("a default class");
    let plain: Pod =
        object(json!({"metadata": {"name": "plain"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}));
    let spec = pods
        .create(&pp, &plain)
        .await
        .expect("created")
        .spec
        .expect("spec");
    assert_eq!(
        (spec.priority_class_name.as_deref(), spec.priority),
        (Some("everyone"), Some(1000))
    );
    server.shutdown().await;
}

// kube: the registry strategies' PrepareForCreate (a Deployment's status is reset) and
// apiextensions-apiserver's customResourceStrategy.PrepareForCreate (a custom resource with a
// status subresource loses its status).
#[tokio::test]
async fn a_create_cannot_set_the_status_the_status_subresource_can() {
    let (server, client) = start().await;
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    let spec = json!({"selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}});
    let deployment: Deployment = object(
        json!({"metadata": {"name": "web"}, "spec": spec, "status": {"replicas": 3, "readyReplicas": 3}}),
    );
    let created = deployments
        .create(&PostParams::default(), &deployment)
        .await
        .expect("created");
    assert_eq!(serde_json::to_value(created.status).expect("json"), json!({}));
    let written = deployments
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 3}})),
        )
        .await
        .expect("status written");
    assert_eq!(written.status.and_then(|s| s.replicas), Some(3));

    server.register(
        ResourceType::new("example.com", "v1", "Widget", "widgets", true).with_status_subresource(true),
    );
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets");
    let widgets: Api<DynamicObject> = Api::default_namespaced_with(client, &resource);
    let mut widget = DynamicObject::new("w", &resource);
    widget.data = json!({"spec": {"size": 1}, "status": {"ready": true}});
    let created = widgets
        .create(&PostParams::default(), &widget)
        .await
        .expect("created");
    assert_eq!(created.data.get("status"), None);
    assert_eq!(created.data["spec"], json!({"size": 1}));

    // an in-process fixture keeps the status it is given
    let fixture = server
        .create(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fixture"},
            "spec": spec, "status": {"readyReplicas": 2}}),
        )
        .expect("fixture");
    assert_eq!(fixture["status"], json!({"readyReplicas": 2}));
}

// kube: test/integration/serviceaccount, TestServiceAccountAutoCreate (a namespace's default
// service account, created again when deleted) and the ServiceAccount admission plugin's
// refusal of a pod whose service account does not exist.
#[tokio::test]
async fn every_namespace_has_a_default_service_account_and_pods_need_theirs() {
    let (_server, client) = start().await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": "shop"}})),
        )
        .await
        .expect("namespace");
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "shop");
    let names: Vec<String> = accounts
        .list(&Default::default())
        .await
        .expect("listed")
        .into_iter()
        .filter_map(|account| account.metadata.name)
        .collect();
    assert_eq!(names, ["default"]);
    accounts
        .delete("default", &Default::default())
        .await
        .expect("deleted");
    accounts.get("default").await.expect("created again");

    let pods: Api<Pod> = Api::namespaced(client, "shop");
    let pod: Pod = object(json!({"metadata": {"name": "bot"},
        "spec": {"serviceAccountName": "robot", "containers": [{"name": "c", "image": "i"}]}}));
    let (code, message) = refusal(pods.create(&PostParams::default(), &pod).await);
    assert_eq!(
        (code, message.as_str()),
        (
            403,
            r#"pods "bot" is forbidden: error looking up service account shop/robot: serviceaccount "robot" not found"#
        )
    );
}

// kube: the DefaultStorageClass admission plugin
// (plugin/pkg/admission/storage/storageclass/setdefault), over HTTP.
#[tokio::test]
async fn a_claim_without_a_class_gets_the_default_storage_class() {
    let (_server, client) = start().await;
    let classes: Api<StorageClass> = Api::all(client.clone());
    let class: StorageClass = object(json!({"metadata": {"name": "standard",
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "example.com/disk"}));
    classes
        .create(&PostParams::default(), &class)
        .await
        .expect("class");
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client, "default");
    let claim = data_claim();
    let created = claims
        .create(&PostParams::default(), &claim)
        .await
        .expect("claim");
    let spec = created.spec.expect("spec");
    assert_eq!(spec.storage_class_name.as_deref(), Some("standard"));
    assert_eq!(spec.volume_mode.as_deref(), Some("Filesystem"));
}

// kube: the StorageObjectInUseProtection admission plugin and the pvc-protection controller,
// over HTTP: an unused claim is answered as marked for deletion, then gone.
#[tokio::test]
async fn a_claim_is_protected_by_its_finalizer_until_unused() {
    let (_server, client) = start().await;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client, "default");
    let claim = data_claim();
    let created = claims
        .create(&PostParams::default(), &claim)
        .await
        .expect("claim");
    assert_eq!(
        created.metadata.finalizers.as_deref(),
        Some(&["kubernetes.io/pvc-protection".to_owned()][..])
    );
    let answer = claims.delete("data", &Default::default()).await.expect("deleted");
    let marked = answer
        .left()
        .expect("answered with the claim, as its finalizer held it");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert!(
        claims.get_opt("data").await.expect("read").is_none(),
        "unused, so removed"
    );
}

// kube: the LimitRanger admission plugin over HTTP: a namespace's LimitRange gives a pod's
// containers their default resources, and refuses one above its max.
#[tokio::test]
async fn a_limit_range_gives_pods_their_defaults_and_bounds() {
    let (_server, client) = start().await;
    let ranges: Api<LimitRange> = Api::namespaced(client.clone(), "default");
    let range: LimitRange = object(json!({"metadata": {"name": "limits"}, "spec": {"limits": [
        {"type": "Container", "max": {"memory": "1Gi"}, "defaultRequest": {"memory": "128Mi"}}]}}));
    ranges
        .create(&PostParams::default(), &range)
        .await
        .expect("range");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod: Pod = object(json!({"metadata": {"name": "web"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}}));
    let created =
        serde_json::to_value(pods.create(&PostParams::default(), &pod).await.expect("pod")).expect("json");
    let resources = &created["spec"]["containers"][0]["resources"];
    assert_eq!(resources["limits"], json!({"memory": "1Gi"}));
    assert_eq!(resources["requests"], json!({"memory": "128Mi"}));
    assert_eq!(
        created["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: memory request for container app; memory limit for container app"
    );
    let big: Pod = object(json!({"metadata": {"name": "big"}, "spec": {"containers": [
        {"name": "app", "image": "nginx", "resources": {"limits": {"memory": "2Gi"}}}]}}));
    let (code, message) = refusal(pods.create(&PostParams::default(), &big).await);
    assert_eq!(
        (code, message.as_str()),
        (
            403,
            r#"pods "big" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi"#
        )
    );
}
