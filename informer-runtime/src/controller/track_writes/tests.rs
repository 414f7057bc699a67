//! The write-tracking client over HTTP against the embedded API server.

use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::{controller::write_log::Place, key::ObjectKey};

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            finalizers: (name == "kept").then(|| vec!["example.com/keep".to_owned()]),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// Runs `body` as a reconcile of `default/parent` would, and returns what it recorded.
async fn in_reconcile<F: Future>(body: F) -> (F::Output, Vec<WrittenObject>) {
    let run = RunContext::new(CancellationToken::new(), None);
    let (scope, writes) = run.for_reconcile(ObjectKey::new("default", "parent"));
    let output = scope.enter(body).await;
    (output, writes.take())
}

/// The write of a config map as answered with `meta`.
fn config_map_at(meta: &kube::api::ObjectMeta) -> WrittenObject {
    WrittenObject {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        resource_version: meta.resource_version.clone().unwrap_or_default(),
        place: Place {
            namespace: meta.namespace.clone(),
            name: meta.name.clone(),
            labels: meta.labels.clone().unwrap_or_default(),
        },
    }
}

#[tokio::test]
async fn writes_in_a_reconcile_are_recorded_at_the_resource_version_answered()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::default_namespaced(track_writes(server.client()?));
    let (written, recorded) = in_reconcile(async {
        let created = api.create(&PostParams::default(), &config_map("a")).await?;
        let patch = Patch::Merge(serde_json::json!({"data": {"k": "v"}}));
        let patched = api.patch("a", &PatchParams::default(), &patch).await?;
        let _ = api.get("a").await?;
        Ok::<_, kube::Error>((created, patched))
    })
    .await;
    let (created, patched) = written?;
    assert_eq!(
        recorded,
        vec![config_map_at(&created.metadata), config_map_at(&patched.metadata),],
        "the create and the patch, not the get"
    );
    assert_eq!(
        patched.data.and_then(|data| data.get("k").cloned()).as_deref(),
        Some("v"),
        "the answer reaches the caller whole"
    );
    Ok(())
}

#[tokio::test]
async fn a_delete_is_recorded_when_its_answer_is_the_object() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::default_namespaced(track_writes(server.client()?));
    api.create(&PostParams::default(), &config_map("kept")).await?;
    api.create(&PostParams::default(), &config_map("gone")).await?;
    let (deleted, recorded) = in_reconcile(async {
        let kept = api.delete("kept", &DeleteParams::default()).await?;
        let gone = api.delete("gone", &DeleteParams::default()).await?;
        Ok::<_, kube::Error>((kept, gone))
    })
    .await;
    let (kept, gone) = deleted?;
    let kept = kept
        .left()
        .ok_or("a finalizer keeps the object: the answer is the object")?;
    let mut expected = vec![config_map_at(&kept.metadata)];
    if let Some(gone) = gone.left() {
        expected.push(config_map_at(&gone.metadata));
    }
    assert_eq!(
        recorded, expected,
        "each delete answered with the object (a Status answer is no object: see write_log)"
    );
    Ok(())
}

#[tokio::test]
async fn failed_writes_and_writes_outside_a_reconcile_record_nothing()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::default_namespaced(track_writes(server.client()?));
    api.create(&PostParams::default(), &config_map("a")).await?;
    let (conflict, recorded) = in_reconcile(api.create(&PostParams::default(), &config_map("a"))).await;
    assert!(matches!(conflict, Err(kube::Error::Api(status)) if status.code == 409));
    assert!(recorded.is_empty());

    let run = RunContext::new(CancellationToken::new(), None);
    let outside = run
        .enter(api.create(&PostParams::default(), &config_map("b")))
        .await?;
    assert!(
        outside.metadata.resource_version.is_some(),
        "a run's scope has no write log"
    );
    Ok(())
}
