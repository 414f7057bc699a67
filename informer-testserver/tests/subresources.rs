//! The subresources kube-apiserver serves without a kubelet, through `kube::Client` and plain
//! HTTP: `pods/binding` (and `bindings`), `pods/ephemeralcontainers`, `serviceaccounts/token`,
//! the `status` subresource, and `log`, `exec`, `attach`, `portforward` and `proxy` answering
//! kube-apiserver's errors when nothing is reachable; their discovery entries.

mod support;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use informer_testserver::TestServer;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Binding, Node, Pod, ServiceAccount};
use kube::api::{Api, LogParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use support::{api_error, client_without_retries, get, post, request};

fn create_pod(server: &TestServer, name: &str, spec: Value, status: Value) {
    server
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec, "status": status,
        }))
        .expect("pod");
}

fn one_container() -> Value {
    json!({"containers": [{"name": "c", "image": "nginx"}]})
}

fn create_node(server: &TestServer, name: &str, ip: &str) {
    server
        .create(json!({
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}},
        }))
        .expect("node");
}

fn binding(pod: &str, node: &str) -> Binding {
    serde_json::from_value(json!({
        "metadata": {"name": pod},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }))
    .expect("binding")
}

// kube-apiserver's TestEtcdCreateBinding / TestEtcdCreateWithConflict
// (pkg/registry/core/pod/storage/storage_test.go)
#[tokio::test]
async fn binding_assigns_a_pod_once() {
    let server = TestServer::start().await.expect("start");
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    create_pod(&server, "p", one_container(), Value::Null);
    let status: kube::core::Status = pods
        .create_subresource("binding", "p", &PostParams::default(), &binding("p", "n1"))
        .await
        .expect("bound");
    assert!(status.is_success());
    let bound = pods.get("p").await.expect("pod");
    let spec = bound.spec.expect("spec");
    assert_eq!(spec.node_name.as_deref(), Some("n1"));
    let conditions = bound.status.and_then(|s| s.conditions).unwrap_or_default();
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "PodScheduled" && c.status == "True")
    );

    let err = pods
        .create_subresource::<_, kube::core::Status>(
            "binding",
            "p",
            &PostParams::default(),
            &binding("p", "n2"),
        )
        .await
        .expect_err("already bound");
    let err = api_error(err);
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\""
    );

    // the legacy bindings resource of the namespace
    create_pod(&server, "q", one_container(), Value::Null);
    let legacy = post(
        server.addr(),
        "/api/v1/namespaces/default/bindings",
        &json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "q"}, "target": {"name": "n2"}}),
    )
    .await;
    assert_eq!(legacy.status, 201);
    assert_eq!(legacy.json()["status"], "Success");
    assert_eq!(
        pods.get("q")
            .await
            .expect("q")
            .spec
            .and_then(|s| s.node_name)
            .as_deref(),
        Some("n2")
    );
    let elsewhere = post(
        server.addr(),
        "/api/v1/namespaces/default/bindings",
        &json!({"kind": "Binding", "metadata": {"name": "q", "namespace": "other"}, "target": {"name": "n2"}}),
    )
    .await;
    assert_eq!(elsewhere.status, 400);
    assert_eq!(
        elsewhere.json()["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    let err = api_error(
        pods.create_subresource::<_, kube::core::Status>(
            "binding",
            "missing",
            &PostParams::default(),
            &binding("missing", "n1"),
        )
        .await
        .expect_err("404"),
    );
    assert_eq!(err.code, 404);
}

// kube-apiserver's TestEphemeralContainerUpdate (pkg/registry/core/pod/storage/storage_test.go)
#[tokio::test]
async fn ephemeral_containers_are_added_never_removed() {
    let server = TestServer::start().await.expect("start");
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    create_pod(&server, "p", one_container(), Value::Null);
    let read = pods.get_ephemeral_containers("p").await.expect("get");
    assert_eq!(read.metadata.name.as_deref(), Some("p"));

    // what `kubectl debug` sends: a strategic merge patch of the pod
    let patch = json!({"spec": {
        "ephemeralContainers": [{"name": "debugger", "image": "busybox", "targetContainerName": "c"}],
        "containers": [{"name": "c", "image": "changed"}],
    }});
    let patched = pods
        .patch_ephemeral_containers("p", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .expect("added");
    let spec = patched.spec.expect("spec");
    assert_eq!(spec.ephemeral_containers.map(|e| e.len()), Some(1));
    assert_eq!(
        spec.containers[0].image.as_deref(),
        Some("nginx"),
        "other changes dropped"
    );

    let mut removed = pods.get("p").await.expect("pod");
    if let Some(spec) = removed.spec.as_mut() {
        spec.ephemeral_containers = None;
    }
    let err = api_error(
        pods.replace_ephemeral_containers("p", &PostParams::default(), &removed)
            .await
            .expect_err("422"),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(
        err.message
            .starts_with("Pod \"p\" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debugger\" may not be removed"),
        "{}",
        err.message
    );
}

// kube-apiserver's resize strategy (pkg/registry/core/pod/strategy.go, podResizeStrategy):
// only the containers' resources and resize policies change
#[tokio::test]
async fn resizes_change_only_container_resources() {
    let server = TestServer::start().await.expect("start");
    let client = client_without_retries(&server);
    let pods: Api<Pod> = Api::default_namespaced(client);
    let spec = json!({"containers": [{"name": "c", "image": "nginx",
        "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}}]});
    create_pod(&server, "p", spec, Value::Null);
    let read: Pod = pods.get_subresource("resize", "p").await.expect("get");
    assert_eq!(read.metadata.name.as_deref(), Some("p"));

    let patch = json!({"spec": {"containers": [{"name": "c", "image": "changed",
        "resources": {"requests": {"cpu": "300m"}, "limits": {"cpu": "400m"}}}]}});
    let resized = pods
        .patch_subresource("resize", "p", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .expect("resized");
    let container = &resized.spec.expect("spec").containers[0];
    let requests = container
        .resources
        .as_ref()
        .and_then(|r| r.requests.clone())
        .unwrap_or_default();
    assert_eq!(requests["cpu"].0, "300m");
    assert_eq!(container.image.as_deref(), Some("nginx"), "other changes dropped");

    let gpu =
        json!({"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}});
    let err = api_error(
        pods.patch_subresource("resize", "p", &PatchParams::default(), &Patch::Strategic(&gpu))
            .await
            .expect_err("422"),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(
        err.message.contains("only cpu and memory resources are mutable"),
        "{}",
        err.message
    );
}

fn token_request(expiration: Option<i64>, bound_pod: Option<&str>) -> TokenRequest {
    let mut spec = json!({"audiences": []});
    if let Some(seconds) = expiration {
        spec["expirationSeconds"] = json!(seconds);
    }
    if let Some(pod) = bound_pod {
        spec["boundObjectRef"] = json!({"apiVersion": "v1", "kind": "Pod", "name": pod});
    }
    TokenRequest {
        spec: Some(serde_json::from_value::<TokenRequestSpec>(spec).expect("spec")),
        ..TokenRequest::default()
    }
}

// kube-apiserver's TestServiceAccountTokenCreate (test/integration/auth/svcaccttoken_test.go)
#[tokio::test]
async fn token_requests_get_a_token_for_the_service_account() {
    let server = TestServer::start().await.expect("start");
    let accounts: Api<ServiceAccount> = Api::default_namespaced(server.client().expect("client"));
    let err = api_error(
        accounts
            .create_token_request("robot", &PostParams::default(), &token_request(None, None))
            .await
            .expect_err("no account"),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (404, "serviceaccounts \"robot\" not found")
    );

    server
        .create(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot", "namespace": "default"}}))
        .expect("account");
    let answered = accounts
        .create_token_request("robot", &PostParams::default(), &token_request(None, None))
        .await
        .expect("token");
    let spec = answered.spec.expect("spec");
    assert_eq!(spec.expiration_seconds, Some(3600));
    assert_eq!(
        spec.audiences,
        Some(vec!["https://kubernetes.default.svc.cluster.local".to_string()])
    );
    let status = answered.status.expect("status");
    let token = status.token.expect("token");
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "a JWT");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).expect("base64")).expect("claims");
    assert_eq!(claims["sub"], "system:serviceaccount:default:robot");
    assert_eq!(claims["kubernetes.io"]["serviceaccount"]["name"], "robot");
    let expires = status.expiration_timestamp.expect("expiry").0.as_second();
    assert_eq!(claims["exp"].as_i64(), Some(expires));
    assert_eq!(expires - claims["iat"].as_i64().unwrap_or_default(), 3600);

    let err = api_error(
        accounts
            .create_token_request("robot", &PostParams::default(), &token_request(Some(599), None))
            .await
            .expect_err("too short"),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(
        err.message
            .ends_with("may not specify a duration less than 10 minutes")
    );

    let mut config_map = token_request(None, None);
    if let Some(spec) = config_map.spec.as_mut() {
        spec.bound_object_ref =
            serde_json::from_value(json!({"kind": "ConfigMap", "apiVersion": "v1", "name": "x"})).ok();
    }
    let err = api_error(
        accounts
            .create_token_request("robot", &PostParams::default(), &config_map)
            .await
            .expect_err("not bindable"),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "cannot bind token to object of type /v1, Kind=ConfigMap")
    );
    let err = api_error(
        accounts
            .create_token_request(
                "robot",
                &PostParams::default(),
                &token_request(None, Some("gone")),
            )
            .await
            .expect_err("no pod"),
    );
    assert_eq!((err.code, err.message.as_str()), (404, "pods \"gone\" not found"));
    create_pod(
        &server,
        "worker",
        json!({"serviceAccountName": "robot", "containers": [{"name": "c", "image": "x"}]}),
        Value::Null,
    );
    let bound = accounts
        .create_token_request(
            "robot",
            &PostParams::default(),
            &token_request(Some(600), Some("worker")),
        )
        .await
        .expect("bound token");
    let token = bound.status.and_then(|s| s.token).expect("token");
    let claims: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(token.split('.').nth(1).unwrap_or_default())
            .expect("base64"),
    )
    .expect("claims");
    assert_eq!(claims["kubernetes.io"]["pod"]["name"], "worker");
}

#[tokio::test]
async fn status_writes_change_only_the_status() {
    let server = TestServer::start().await.expect("start");
    let nodes: Api<Node> = Api::all(server.client().expect("client"));
    create_node(&server, "n1", "10.0.0.5");
    let patch = json!({"metadata": {"labels": {"x": "y"}}, "spec": {"unschedulable": true},
        "status": {"phase": "Running"}});
    let patched = nodes
        .patch_status("n1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("status");
    assert_eq!(patched.status.and_then(|s| s.phase).as_deref(), Some("Running"));
    assert_eq!(patched.spec.and_then(|s| s.unschedulable), None, "spec kept");
    let mut node = nodes.get_status("n1").await.expect("get status");
    node.status = None;
    let replaced = nodes
        .replace("n1", &PostParams::default(), &node)
        .await
        .expect("replaced");
    assert_eq!(
        replaced.status.and_then(|s| s.phase).as_deref(),
        Some("Running"),
        "status kept"
    );
}

// kube-apiserver's TestCheckLogLocation and TestGetLogs (pkg/registry/core/pod)
#[tokio::test]
async fn logs_answer_as_without_a_reachable_kubelet() {
    let server = TestServer::start().await.expect("start");
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    create_pod(&server, "unscheduled", one_container(), Value::Null);
    assert_eq!(
        pods.logs("unscheduled", &LogParams::default())
            .await
            .expect("empty log"),
        ""
    );

    create_pod(
        &server,
        "two",
        json!({"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "x"}]}),
        Value::Null,
    );
    let err = api_error(
        pods.logs("two", &LogParams::default())
            .await
            .expect_err("which container"),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            400,
            "a container name must be specified for pod two, choose one of: [a b]"
        )
    );
    let wrong = LogParams {
        container: Some("z".into()),
        ..LogParams::default()
    };
    let err = api_error(pods.logs("two", &wrong).await.expect_err("no such container"));
    assert_eq!(err.message, "container z is not valid for pod two");

    create_pod(
        &server,
        "scheduled",
        json!({"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}),
        Value::Null,
    );
    let err = api_error(
        pods.logs("scheduled", &LogParams::default())
            .await
            .expect_err("no node"),
    );
    assert_eq!((err.code, err.message.as_str()), (404, "nodes \"n1\" not found"));
    create_node(&server, "n1", "10.0.0.5");
    let tail = LogParams {
        tail_lines: Some(5),
        ..LogParams::default()
    };
    let err = api_error(
        pods.logs("scheduled", &tail)
            .await
            .expect_err("kubelet unreachable"),
    );
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        "Get \"https://10.0.0.5:10250/containerLogs/default/scheduled/c?tailLines=5\": dial tcp 10.0.0.5:10250: connect: connection refused"
    );
}

#[tokio::test]
async fn exec_attach_and_portforward_need_a_host_and_an_upgrade() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    create_pod(&server, "p", one_container(), Value::Null);
    for sub in ["exec?command=ls", "attach", "portforward?ports=80"] {
        let path = format!("/api/v1/namespaces/default/pods/p/{sub}");
        let req = http::Request::post(path).body(Vec::new()).expect("request");
        let err = api_error(client.request_text(req).await.expect_err("no host"));
        assert_eq!(
            (err.code, err.message.as_str()),
            (400, "pod p does not have a host assigned"),
            "{sub}"
        );
    }
    create_pod(
        &server,
        "q",
        json!({"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}),
        Value::Null,
    );
    create_node(&server, "n1", "10.0.0.5");
    let path = "/api/v1/namespaces/default/pods/q/exec?command=ls&stdout=true";
    let plain = request(server.addr(), "POST", path, &[], b"").await;
    assert_eq!(
        (plain.status, plain.json()["message"].clone()),
        (400, json!("Upgrade request required"))
    );
    let upgrade = [("Connection", "Upgrade"), ("Upgrade", "SPDY/3.1")];
    let upgraded = request(server.addr(), "POST", path, &upgrade, b"").await;
    assert_eq!(upgraded.status, 500);
    assert_eq!(
        upgraded.json()["message"],
        "error dialing backend: dial tcp 10.0.0.5:10250: connect: connection refused"
    );
}

#[tokio::test]
async fn proxies_answer_as_without_a_reachable_backend() {
    let server = TestServer::start().await.expect("start");
    let client = client_without_retries(&server);
    let proxied = |path: &str| {
        http::Request::get(path.to_string())
            .body(Vec::new())
            .expect("request")
    };

    create_pod(&server, "p", one_container(), Value::Null);
    let err = api_error(
        client
            .request_text(proxied("/api/v1/namespaces/default/pods/p/proxy/metrics"))
            .await
            .expect_err("no ip"),
    );
    assert_eq!((err.code, err.message.as_str()), (400, "address not allowed"));
    create_pod(
        &server,
        "q",
        one_container(),
        json!({"podIPs": [{"ip": "10.1.0.7"}]}),
    );
    let err = api_error(
        client
            .request_text(proxied("/api/v1/namespaces/default/pods/q:8080/proxy/a/b"))
            .await
            .expect_err("refused"),
    );
    assert_eq!((err.code, err.reason.as_str()), (503, "ServiceUnavailable"));
    assert_eq!(
        err.message,
        "error trying to reach service: dial tcp 10.1.0.7:8080: connect: connection refused"
    );

    create_node(&server, "n1", "10.0.0.5");
    let err = api_error(
        client
            .request_text(proxied("/api/v1/nodes/n1/proxy/stats/summary"))
            .await
            .expect_err("kubelet"),
    );
    assert_eq!(
        err.message,
        "error trying to reach service: dial tcp 10.0.0.5:10250: connect: connection refused"
    );
    let err = api_error(
        client
            .request_text(proxied("/api/v1/nodes/n2/proxy/"))
            .await
            .expect_err("no node"),
    );
    assert_eq!(err.code, 404);

    server
        .create(
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"ports": [{"port": 80}]}}),
        )
        .expect("service");
    let err = api_error(
        client
            .request_text(proxied("/api/v1/namespaces/default/services/web/proxy/"))
            .await
            .expect_err("no endpoints"),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (404, "endpoints \"web\" not found")
    );
    server
        .create(json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web", "namespace": "default"}}))
        .expect("endpoints");
    let err = api_error(
        client
            .request_text(proxied("/api/v1/namespaces/default/services/web/proxy/"))
            .await
            .expect_err("empty"),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (503, "no endpoints available for service \"web\"")
    );
}

#[tokio::test]
async fn discovery_lists_the_subresources() {
    let server = TestServer::start().await.expect("start");
    let core = get(server.addr(), "/api/v1").await.json();
    let resources = core["resources"].as_array().expect("resources");
    let find = |name: &str| {
        resources
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name}"))
    };
    assert_eq!(
        find("pods/eviction"),
        json!({"name": "pods/eviction", "singularName": "", "namespaced": true, "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]})
    );
    assert_eq!(find("pods/binding")["verbs"], json!(["create"]));
    assert_eq!(find("pods/log")["verbs"], json!(["get"]));
    assert_eq!(find("pods/resize")["verbs"], json!(["get", "patch", "update"]));
    assert_eq!(find("pods/exec")["kind"], "PodExecOptions");
    assert_eq!(find("nodes/proxy")["kind"], "NodeProxyOptions");
    assert_eq!(find("serviceaccounts/token")["group"], "authentication.k8s.io");
    assert_eq!(find("serviceaccounts/token")["kind"], "TokenRequest");
    assert_eq!(find("bindings")["verbs"], json!(["create"]));

    let aggregated = request(
        server.addr(),
        "GET",
        "/api",
        &[(
            "Accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )],
        b"",
    )
    .await
    .json();
    let resources = aggregated["items"][0]["versions"][0]["resources"]
        .as_array()
        .expect("resources");
    let pods = resources.iter().find(|r| r["resource"] == "pods").expect("pods");
    let eviction = pods["subresources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["subresource"] == "eviction"))
        .expect("eviction");
    assert_eq!(
        eviction["responseKind"],
        json!({"group": "policy", "version": "v1", "kind": "Eviction"})
    );
    assert!(resources.iter().any(|r| r["resource"] == "bindings"));
}
