//! Strategic merge patches through `kube::Client`: what `kubectl patch`, `kubectl set image` and
//! client-side `kubectl apply` send to built-in types, and the 415 for custom resources.

use informer_testserver::TestServer;
use k8s_openapi::api::apps::v1::Deployment;
use kube::{
    api::{Api, DynamicObject, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use serde_json::json;

fn web() -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "finalizers": ["example.com/keep"]},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "web", "image": "nginx:1.26", "env": [{"name": "A", "value": "1"}]},
                    {"name": "sidecar", "image": "envoy:1"},
                ]},
            },
        },
    }))
    .expect("valid")
}

fn containers(deployment: &Deployment) -> Vec<(String, String)> {
    let spec = deployment.spec.template.spec.as_ref().expect("pod spec");
    spec.containers
        .iter()
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect()
}

#[tokio::test]
async fn lists_merge_by_key_and_directives_apply() {
    let server = TestServer::start().await.expect("start");
    let deployments: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    deployments
        .create(&PostParams::default(), &web())
        .await
        .expect("created");
    let patch = async |value: serde_json::Value| {
        deployments
            .patch("web", &PatchParams::default(), &Patch::Strategic(value))
            .await
            .expect("patched")
    };

    // `kubectl set image deployment/web web=nginx:1.27`
    let set_image = patch(
        json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}),
    )
    .await;
    assert_eq!(
        containers(&set_image),
        [
            ("web".into(), "nginx:1.27".into()),
            ("sidecar".into(), "envoy:1".into())
        ]
    );
    let env = &set_image.spec.template.spec.as_ref().expect("spec").containers[0].env;
    assert_eq!(
        env.as_ref().map(Vec::len),
        Some(1),
        "the container kept its other fields"
    );

    // adding a container keeps the others
    let added = patch(
        json!({"spec": {"template": {"spec": {"containers": [{"name": "debug", "image": "busybox"}]}}}}),
    )
    .await;
    assert_eq!(containers(&added).len(), 3);

    // `$patch: delete` and `$setElementOrder`
    let deleted = patch(json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "debug"}, {"name": "web"}],
        "containers": [{"name": "sidecar", "$patch": "delete"}],
    }}}}))
    .await;
    assert_eq!(
        containers(&deleted),
        [
            ("debug".into(), "busybox".into()),
            ("web".into(), "nginx:1.27".into())
        ]
    );

    // finalizers are a set; `$deleteFromPrimitiveList` removes from it
    let finalizers = patch(json!({"metadata": {"finalizers": ["example.com/other"]}})).await;
    assert_eq!(
        finalizers.metadata.finalizers.clone().unwrap_or_default().len(),
        2
    );
    let removed =
        patch(json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/keep"]}})).await;
    assert_eq!(
        removed.metadata.finalizers,
        Some(vec!["example.com/other".to_owned()])
    );

    // `$retainKeys` on the strategy union
    patch(json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}})).await;
    let recreate = patch(json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})).await;
    let strategy = recreate.spec.strategy.expect("strategy");
    assert_eq!(strategy.type_.as_deref(), Some("Recreate"));
    assert!(strategy.rolling_update.is_none(), "cleared by $retainKeys");
    server.shutdown().await;
}

#[tokio::test]
async fn custom_resources_refuse_strategic_merge_patches() {
    let server = TestServer::start().await.expect("start");
    server
        .seed_str(
            r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
spec: {size: 1}
"#,
        )
        .expect("seeded");
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets");
    let widgets: Api<DynamicObject> =
        Api::namespaced_with(server.client().expect("client"), "default", &resource);
    let error = widgets
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"size": 2}})),
        )
        .await
        .expect_err("no strategic merge for custom resources");
    let kube::Error::Api(status) = error else {
        panic!("not an API error: {error:?}");
    };
    assert_eq!(
        (status.code, status.reason.as_str()),
        (415, "UnsupportedMediaType")
    );
    let merged = widgets
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 2}})),
        )
        .await
        .expect("a merge patch works");
    assert_eq!(merged.data["spec"]["size"], 2);
    server.shutdown().await;
}
