//! The `scale` subresource through `kube::Client`: built-in workloads and custom resources
//! whose CRD declares it, read, replaced and patched as `autoscaling/v1` `Scale`, and listed in
//! discovery.

use informer_testserver::TestServer;
use k8s_openapi::api::{
    apps::v1::Deployment,
    autoscaling::v1::{Scale, ScaleSpec},
    core::v1::ConfigMap,
};
use kube::{
    Discovery,
    api::{Api, DynamicObject, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use serde_json::json;

fn deployment(replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
        "status": {"replicas": 2},
    }))
    .expect("valid")
}

fn api_error(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test]
async fn deployments_scale_through_the_subresource() {
    let server = TestServer::start().await.expect("start");
    let deployments: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    let created = deployments
        .create(&PostParams::default(), &deployment(2))
        .await
        .expect("created");
    // a create cannot set the status: the controller's status write does
    let observed = json!({"status": {"replicas": 2}});
    deployments
        .patch_status("web", &PatchParams::default(), &Patch::Merge(observed))
        .await
        .expect("status written");

    let scale = deployments.get_scale("web").await.expect("scale");
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    let status = scale.status.clone().expect("status");
    assert_eq!(status.replicas, 2);
    assert_eq!(status.selector.as_deref(), Some("app=web"));
    assert_eq!(scale.metadata.uid, created.metadata.uid);

    // What `kubectl scale --replicas=5` sends.
    let patch = json!({"spec": {"replicas": 5}});
    let scaled = deployments
        .patch_scale("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patched");
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(5));
    let web = deployments.get("web").await.expect("get");
    assert_eq!(web.spec.replicas, Some(5));
    assert_eq!(web.metadata.generation, Some(2), "a spec change");
    assert!(web.spec.template.spec.is_some(), "nothing else changed");

    // A replace with a stale resourceVersion conflicts, a current one goes through.
    let stale = Scale {
        metadata: scale.metadata.clone(),
        spec: Some(ScaleSpec { replicas: Some(1) }),
        status: None,
    };
    let err = deployments
        .replace_scale("web", &PostParams::default(), &stale)
        .await
        .expect_err("stale");
    assert_eq!(api_error(err).code, 409);
    let mut current = deployments.get_scale("web").await.expect("scale");
    current.spec = Some(ScaleSpec { replicas: Some(0) });
    let replaced = deployments
        .replace_scale("web", &PostParams::default(), &current)
        .await
        .expect("replaced");
    assert_eq!(replaced.spec.and_then(|s| s.replicas), Some(0));

    let negative = json!({"spec": {"replicas": -1}});
    let err = deployments
        .patch_scale("web", &PatchParams::default(), &Patch::Merge(&negative))
        .await
        .expect_err("negative");
    let status = api_error(err);
    assert_eq!(status.code, 422);
    assert!(status.message.contains("spec.replicas"), "{}", status.message);
    server.shutdown().await;
}

#[tokio::test]
async fn custom_resources_scale_by_the_paths_of_their_crd() {
    let server = TestServer::start().await.expect("start");
    server
        .seed_str(
            r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: workers.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: workers, singular: worker, kind: Worker}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
      subresources:
        status: {}
        scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.ready, labelSelectorPath: .status.selector}
---
apiVersion: example.com/v1
kind: Worker
metadata: {name: w, namespace: default}
spec: {size: 3}
status: {ready: 1, selector: "worker=w"}
"#,
        )
        .expect("seeded");
    let client = server.client().expect("client");
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Worker"), "workers");
    let workers: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    let scale = workers.get_scale("w").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));
    let status = scale.status.expect("status");
    assert_eq!(
        (status.replicas, status.selector.as_deref()),
        (1, Some("worker=w"))
    );
    workers
        .patch_scale(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 7}})),
        )
        .await
        .expect("patched");
    assert_eq!(workers.get("w").await.expect("get").data["spec"]["size"], 7);

    let discovery = Discovery::new(client).run().await.expect("discovery");
    let (_, capabilities) = discovery
        .resolve_gvk(&GroupVersionKind::gvk("example.com", "v1", "Worker"))
        .expect("workers are discovered");
    let subresources: Vec<&str> = capabilities
        .subresources
        .iter()
        .map(|(r, _)| r.plural.as_str())
        .collect();
    assert!(
        subresources.contains(&"workers/scale") || subresources.contains(&"scale"),
        "{subresources:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn types_without_the_subresource_answer_404() {
    let server = TestServer::start().await.expect("start");
    let maps: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    maps.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "c"}})).expect("valid"),
    )
    .await
    .expect("created");
    let err = maps.get_scale("c").await.expect_err("no scale for config maps");
    assert_eq!(api_error(err).code, 404);
    server.shutdown().await;
}
