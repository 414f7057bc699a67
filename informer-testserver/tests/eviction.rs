//! `pods/eviction` through `kube::Client`, honouring PodDisruptionBudgets as kube-apiserver's
//! eviction REST does. Cases follow kube-apiserver's `TestEviction`,
//! `TestEvictionIgnorePDB` and `TestEvictionDryRun`
//! (pkg/registry/core/pod/storage/eviction_test.go).

mod support;

use informer_testserver::{ResourceType, TestServer};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, DeleteParams, EvictParams, PostParams};
use serde_json::{Value, json};
use support::{RawResponse, api_error, client_without_retries, post};

async fn server() -> TestServer {
    TestServer::builder()
        .resource(ResourceType::of::<PodDisruptionBudget>().with_status_subresource(true))
        .start()
        .await
        .expect("start")
}

/// A pod of `app=web` in `phase`, ready or not.
fn pod(server: &TestServer, name: &str, phase: Option<&str>, ready: bool) {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    });
    if let Some(phase) = phase {
        let ready = if ready { "True" } else { "False" };
        pod["status"] = json!({"phase": phase, "conditions": [{"type": "Ready", "status": ready}]});
    }
    server.create(pod).expect("pod");
}

/// A budget selecting `app=web` whose status allows `allowed` disruptions.
fn budget(server: &TestServer, name: &str, allowed: i64, observed_generation: i64) {
    let created = server
        .create(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        }))
        .expect("budget");
    let mut with_status = created;
    with_status["status"] = json!({
        "observedGeneration": observed_generation, "disruptionsAllowed": allowed,
        "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2,
    });
    server.update(with_status).expect("budget status");
}

fn budget_status(server: &TestServer, name: &str) -> Value {
    server
        .get("policy/v1", "PodDisruptionBudget", Some("default"), name)
        .expect("budget")["status"]
        .clone()
}

fn exists(server: &TestServer, pod: &str) -> bool {
    server.get("v1", "Pod", Some("default"), pod).is_ok()
}

#[tokio::test]
async fn a_budget_allowing_one_disruption_lets_one_eviction_through_then_refuses() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client_without_retries(&server));
    pod(&server, "a", Some("Running"), true);
    pod(&server, "b", Some("Running"), true);
    budget(&server, "web", 1, 1);

    let status = pods.evict("a", &EvictParams::default()).await.expect("evicted");
    assert!(status.is_success());
    assert_eq!(status.code, 201);
    assert!(!exists(&server, "a"));
    let after = budget_status(&server, "web");
    assert_eq!(after["disruptionsAllowed"], 0);
    assert!(after["disruptedPods"]["a"].is_string(), "{after}");
    assert_eq!(after["conditions"][0]["type"], "DisruptionAllowed");
    assert_eq!(after["conditions"][0]["status"], "False");

    let refused = api_error(pods.evict("b", &EvictParams::default()).await.expect_err("429"));
    assert_eq!((refused.code, refused.reason.as_str()), (429, "TooManyRequests"));
    assert_eq!(
        refused.message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    let cause = &refused.details.expect("details").causes[0];
    assert_eq!(cause.reason, "DisruptionBudget");
    assert_eq!(
        cause.message,
        "The disruption budget web needs 1 healthy pods and has 2 currently"
    );
    assert!(exists(&server, "b"));
}

#[tokio::test]
async fn a_stale_budget_refuses_with_retry_after() {
    let server = server().await;
    pod(&server, "a", Some("Running"), true);
    budget(&server, "web", 5, 0);
    let response = post_eviction(&server, "a", json!({})).await;
    assert_eq!(response.status, 429);
    assert_eq!(
        response.headers.get("retry-after").map(String::as_str),
        Some("10")
    );
    let status = response.json();
    assert_eq!(status["details"]["retryAfterSeconds"], 10);
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "The disruption budget web is still being processed by the server."
    );
    assert!(exists(&server, "a"));
}

#[tokio::test]
async fn pods_not_running_or_being_deleted_skip_budgets() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    budget(&server, "web", 0, 1);
    for (name, phase) in [
        ("pending", None),
        ("done", Some("Succeeded")),
        ("failed", Some("Failed")),
    ] {
        pod(&server, name, phase, false);
        pods.evict(name, &EvictParams::default()).await.expect("evicted");
        assert!(!exists(&server, name), "{name}");
    }
    assert_eq!(budget_status(&server, "web")["disruptionsAllowed"], 0);
    assert!(budget_status(&server, "web")["disruptedPods"].is_null());
}

#[tokio::test]
async fn unready_pods_of_a_healthy_budget_go_without_using_it() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pod(&server, "unready", Some("Running"), false);
    budget(&server, "web", 0, 1);
    pods.evict("unready", &EvictParams::default())
        .await
        .expect("evicted");
    assert!(!exists(&server, "unready"));
}

#[tokio::test]
async fn dry_run_evictions_change_nothing() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pod(&server, "a", Some("Running"), true);
    budget(&server, "web", 1, 1);
    let dry = EvictParams {
        delete_options: Some(DeleteParams {
            dry_run: true,
            ..DeleteParams::default()
        }),
        post_options: PostParams {
            dry_run: true,
            ..PostParams::default()
        },
    };
    let status = pods.evict("a", &dry).await.expect("dry run");
    assert!(status.is_success());
    assert!(exists(&server, "a"));
    assert_eq!(budget_status(&server, "web")["disruptionsAllowed"], 1);
    assert!(budget_status(&server, "web")["disruptedPods"].is_null());

    // dryRun in the query and none in the body is a dry run too
    let response = post(
        server.addr(),
        "/api/v1/namespaces/default/pods/a/eviction?dryRun=All",
        &json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "a"}}),
    )
    .await;
    assert_eq!(response.status, 201);
    assert!(exists(&server, "a"));
}

#[tokio::test]
async fn two_budgets_for_one_pod_are_an_internal_error() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pod(&server, "a", Some("Running"), true);
    budget(&server, "one", 1, 1);
    budget(&server, "two", 1, 1);
    let err = api_error(pods.evict("a", &EvictParams::default()).await.expect_err("500"));
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    assert!(exists(&server, "a"));
}

#[tokio::test]
async fn evictions_name_an_existing_pod() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    let err = api_error(
        pods.evict("missing", &EvictParams::default())
            .await
            .expect_err("404"),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (404, "pods \"missing\" not found")
    );
    pod(&server, "a", Some("Running"), true);
    let response = post_eviction(&server, "a", json!({"metadata": {"name": "b"}})).await;
    assert_eq!(response.status, 400);
    assert_eq!(
        response.json()["message"],
        "name in URL does not match name in Eviction object"
    );
    // policy/v1beta1 Evictions are accepted too
    let response = post_eviction(&server, "a", json!({"apiVersion": "policy/v1beta1"})).await;
    assert_eq!(response.status, 201);
    assert!(!exists(&server, "a"));
}

/// POSTs an Eviction of `pod` (with `extra` fields replacing the default ones) over plain HTTP.
async fn post_eviction(server: &TestServer, pod: &str, extra: Value) -> RawResponse {
    let mut eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod}});
    if let (Some(map), Some(extra)) = (eviction.as_object_mut(), extra.as_object()) {
        map.extend(extra.clone());
    }
    post(
        server.addr(),
        &format!("/api/v1/namespaces/default/pods/{pod}/eviction"),
        &eviction,
    )
    .await
}
