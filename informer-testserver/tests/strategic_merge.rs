//! Strategic merge patches (`Patch::Strategic`, what `kubectl patch`, `kubectl set image` and
//! client-side `kubectl apply` send) over HTTP.

mod support;

use informer_testserver::{ResourceType, TestServer};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

async fn setup() -> (TestServer, Client) {
    let server = TestServer::start().await.expect("server starts");
    server.create_namespace("ns").expect("namespace");
    let client = server.client().expect("client");
    (server, client)
}

fn deployment() -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "finalizers": ["example.com/a", "example.com/b"]},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "app", "image": "app:1", "args": ["--a", "--b"],
                     "env": [{"name": "MODE", "value": "fast"}, {"name": "LEVEL", "value": "1"}]},
                    {"name": "sidecar", "image": "sidecar:1"},
                ]},
            },
        },
    }))
    .expect("valid deployment")
}

/// Creates the deployment, applies `patch` as a strategic merge patch and returns the result
/// as JSON.
async fn patched(patch: Value) -> Value {
    let (server, client) = setup().await;
    let deployments: Api<Deployment> = Api::namespaced(client, "ns");
    deployments
        .create(&PostParams::default(), &deployment())
        .await
        .expect("create");
    let patched = deployments
        .patch("web", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .expect("strategic merge patch");
    let stored = deployments.get("web").await.expect("get");
    assert_eq!(stored, patched, "the response is what is stored");
    server.shutdown().await;
    serde_json::to_value(patched).expect("serializes")
}

fn containers(object: &Value) -> &Value {
    &object["spec"]["template"]["spec"]["containers"]
}

fn container_names(object: &Value) -> Vec<&str> {
    containers(object)
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect()
}

#[tokio::test]
async fn adding_a_container_keeps_the_existing_ones() {
    let object = patched(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "extra", "image": "extra:1"}
    ]}}}}))
    .await;
    assert_eq!(container_names(&object), ["app", "sidecar", "extra"]);
    assert_eq!(containers(&object)[0]["image"], "app:1");
}

#[tokio::test]
async fn set_image_changes_one_container_by_name() {
    // What `kubectl set image deployment/web app=app:2` sends.
    let object = patched(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "app:2"}
    ]}}}}))
    .await;
    assert_eq!(container_names(&object), ["app", "sidecar"]);
    assert_eq!(containers(&object)[0]["image"], "app:2");
    assert_eq!(containers(&object)[0]["args"], json!(["--a", "--b"]));
    assert_eq!(containers(&object)[1]["image"], "sidecar:1");
}

#[tokio::test]
async fn delete_directive_removes_a_list_element() {
    let object = patched(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "$patch": "delete"}
    ]}}}}))
    .await;
    assert_eq!(container_names(&object), ["app"]);
    assert!(!object.to_string().contains("$patch"), "no directive is stored");
}

#[tokio::test]
async fn set_element_order_reorders_the_list() {
    let object = patched(json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}],
        "containers": [{"name": "app", "image": "app:3"}],
    }}}}))
    .await;
    assert_eq!(container_names(&object), ["sidecar", "app"]);
    assert_eq!(containers(&object)[1]["image"], "app:3");
    assert!(
        !object.to_string().contains("$setElementOrder"),
        "no directive is stored"
    );
}

#[tokio::test]
async fn delete_from_primitive_list_removes_a_finalizer() {
    let object = patched(json!({"metadata": {
        "$deleteFromPrimitiveList/finalizers": ["example.com/a"],
        "finalizers": ["example.com/c"],
    }}))
    .await;
    assert_eq!(
        object["metadata"]["finalizers"],
        json!(["example.com/b", "example.com/c"])
    );
}

#[tokio::test]
async fn retain_keys_clears_the_rolling_update_of_a_recreate_strategy() {
    let object = patched(json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})).await;
    assert_eq!(object["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[tokio::test]
async fn env_merges_by_name() {
    let object = patched(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "env": [{"name": "LEVEL", "value": "2"}, {"name": "NEW", "value": "x"}]}
    ]}}}}))
    .await;
    assert_eq!(
        containers(&object)[0]["env"],
        json!([{"name": "MODE", "value": "fast"}, {"name": "LEVEL", "value": "2"}, {"name": "NEW", "value": "x"}])
    );
}

#[tokio::test]
async fn atomic_lists_are_replaced() {
    let object = patched(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "args": ["--c"]}
    ]}}}}))
    .await;
    assert_eq!(containers(&object)[0]["args"], json!(["--c"]));
}

#[tokio::test]
async fn invalid_directive_is_a_bad_request() {
    let (server, client) = setup().await;
    let pods: Api<Pod> = Api::namespaced(client, "ns");
    pods.create(&PostParams::default(), &support::pod("p", &[]))
        .await
        .expect("create");
    let err = pods
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {"labels": {"$patch": "sideways"}}})),
        )
        .await
        .expect_err("an unknown $patch is rejected");
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err:?}")
    };
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    assert!(status.message.contains("$patch"), "{}", status.message);
    server.shutdown().await;
}

fn widget_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            }],
        },
    }))
    .expect("valid crd")
}

async fn assert_strategic_merge_unsupported(widgets: &Api<DynamicObject>, ar: &ApiResource) {
    widgets
        .create(
            &PostParams::default(),
            &DynamicObject::new("w", ar).data(json!({"spec": {"size": 1}})),
        )
        .await
        .expect("create widget");
    let err = widgets
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"size": 2}})),
        )
        .await
        .expect_err("strategic merge is not served for custom resources");
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err:?}")
    };
    assert_eq!(
        (status.code, status.reason.as_str()),
        (415, "UnsupportedMediaType")
    );
    assert!(
        status.message.contains("application/merge-patch+json")
            && !status.message.contains("strategic-merge-patch"),
        "{}",
        status.message
    );
    let merged = widgets
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 2}})),
        )
        .await
        .expect("a merge patch still applies");
    assert_eq!(merged.data["spec"]["size"], 2);
}

#[tokio::test]
async fn custom_resources_reject_strategic_merge_with_415() {
    let (server, client) = setup().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &widget_crd())
        .await
        .expect("create crd");
    let ar = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let widgets: Api<DynamicObject> = Api::namespaced_with(client, "ns", &ar);
    assert_strategic_merge_unsupported(&widgets, &ar).await;
    server.shutdown().await;
}

#[tokio::test]
async fn registered_custom_types_reject_strategic_merge_with_415() {
    let (server, client) = setup().await;
    server.register(ResourceType::new("example.com", "v1", "Gadget", "gadgets", true));
    let ar = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Gadget".into(),
        plural: "gadgets".into(),
    };
    let gadgets: Api<DynamicObject> = Api::namespaced_with(client, "ns", &ar);
    assert_strategic_merge_unsupported(&gadgets, &ar).await;
    assert!(!gadgets.get("w").await.expect("get").name_any().is_empty());
    server.shutdown().await;
}
