//! The finalizer helper against the test server, over HTTP through `kube::Client`.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams};
use serde_json::json;

use super::*;

const FINALIZER: &str = "example.com/cleanup";

#[derive(Debug, thiserror::Error)]
#[error("the reconcile failed")]
struct ReconcileError;

fn config_map(name: &str, finalizers: Option<Vec<String>>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            finalizers,
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

async fn setup(object: ConfigMap) -> (TestServer, Api<ConfigMap>) {
    let server = TestServer::start().await.expect("server starts");
    server.create_typed(&object).expect("object created");
    let api = Api::namespaced(server.client().expect("client"), "default");
    (server, api)
}

async fn fetch(api: &Api<ConfigMap>, name: &str) -> Arc<ConfigMap> {
    Arc::new(api.get(name).await.expect("object readable"))
}

/// A reconcile returning which event it saw, counting its runs.
fn recording(
    runs: &AtomicUsize,
) -> impl FnOnce(FinalizerEvent<ConfigMap>) -> futures::future::Ready<Result<&'static str, ReconcileError>> + '_
{
    move |event| {
        runs.fetch_add(1, Ordering::SeqCst);
        futures::future::ready(Ok(match event {
            FinalizerEvent::Apply(_) => "apply",
            FinalizerEvent::Cleanup(_) => "cleanup",
        }))
    }
}

/// Apply runs in the reconcile that added the finalizer, on the object as stored (with the
/// finalizer): a controller whose predicate passes spec changes only never gets the
/// finalizer's own change, and would otherwise wait for the next spec change.
#[tokio::test]
async fn adds_the_finalizer_then_applies_in_the_same_reconcile() {
    let (_server, api) = setup(config_map("cm", None)).await;
    let ran = AtomicUsize::new(0);
    let outcome = finalizer(&api, FINALIZER, fetch(&api, "cm").await, |event| {
        ran.fetch_add(1, Ordering::SeqCst);
        let carried = match event {
            FinalizerEvent::Apply(object) => object.finalizers().to_vec(),
            FinalizerEvent::Cleanup(_) => Vec::new(),
        };
        async move { Ok::<_, ReconcileError>(carried) }
    })
    .await
    .expect("finalizer added and applied");
    assert_eq!(
        outcome,
        FinalizerOutcome::Reconciled(vec![FINALIZER.to_string()]),
        "Apply ran once, on the object carrying the finalizer"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    let stored = fetch(&api, "cm").await;
    assert_eq!(stored.finalizers(), [FINALIZER.to_string()]);

    let runs = AtomicUsize::new(0);
    let outcome = finalizer(&api, FINALIZER, stored, recording(&runs))
        .await
        .expect("applied");
    assert_eq!(outcome, FinalizerOutcome::Reconciled("apply"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(fetch(&api, "cm").await.finalizers(), [FINALIZER.to_string()]);
}

#[tokio::test]
async fn appends_to_an_existing_finalizer_list() {
    let (_server, api) = setup(config_map("cm", Some(vec!["other.io/keep".into()]))).await;
    let runs = AtomicUsize::new(0);
    let outcome = finalizer(&api, FINALIZER, fetch(&api, "cm").await, recording(&runs))
        .await
        .expect("finalizer added");
    assert_eq!(outcome, FinalizerOutcome::Reconciled("apply"));
    assert_eq!(
        fetch(&api, "cm").await.finalizers(),
        ["other.io/keep".to_string(), FINALIZER.to_string()]
    );
}

#[tokio::test]
async fn cleanup_runs_then_the_finalizer_goes_and_the_object_with_it() {
    let (_server, api) = setup(config_map("cm", Some(vec![FINALIZER.into()]))).await;
    api.delete("cm", &DeleteParams::default())
        .await
        .expect("delete accepted");
    let terminating = fetch(&api, "cm").await;
    assert!(
        terminating.metadata.deletion_timestamp.is_some(),
        "the finalizer holds the object"
    );

    let runs = AtomicUsize::new(0);
    let outcome = finalizer(&api, FINALIZER, terminating, recording(&runs))
        .await
        .expect("cleaned up");
    assert_eq!(outcome, FinalizerOutcome::Reconciled("cleanup"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(
        api.get_opt("cm").await.expect("get succeeds").is_none(),
        "removing the last finalizer deletes the object"
    );
}

#[tokio::test]
async fn cleanup_keeps_the_other_finalizers() {
    let (_server, api) = setup(config_map(
        "cm",
        Some(vec![FINALIZER.into(), "other.io/keep".into()]),
    ))
    .await;
    api.delete("cm", &DeleteParams::default())
        .await
        .expect("delete accepted");
    let runs = AtomicUsize::new(0);
    let outcome = finalizer(&api, FINALIZER, fetch(&api, "cm").await, recording(&runs))
        .await
        .expect("cleaned up");
    assert_eq!(outcome, FinalizerOutcome::Reconciled("cleanup"));
    let stored = fetch(&api, "cm").await;
    assert_eq!(stored.finalizers(), ["other.io/keep".to_string()]);
    assert!(stored.metadata.deletion_timestamp.is_some());
}

#[tokio::test]
async fn a_failed_cleanup_keeps_the_finalizer() {
    let (_server, api) = setup(config_map("cm", Some(vec![FINALIZER.into()]))).await;
    api.delete("cm", &DeleteParams::default())
        .await
        .expect("delete accepted");
    let result = finalizer(&api, FINALIZER, fetch(&api, "cm").await, |_| async {
        Err::<(), _>(ReconcileError)
    })
    .await;
    assert!(
        matches!(result, Err(Error::CleanupFailed(ReconcileError))),
        "{result:?}"
    );
    let stored = fetch(&api, "cm").await;
    assert_eq!(stored.finalizers(), [FINALIZER.to_string()]);
    assert!(stored.metadata.deletion_timestamp.is_some());
}

#[tokio::test]
async fn a_failed_apply_is_reported_as_such() {
    let (_server, api) = setup(config_map("cm", Some(vec![FINALIZER.into()]))).await;
    let result = finalizer(&api, FINALIZER, fetch(&api, "cm").await, |_| async {
        Err::<(), _>(ReconcileError)
    })
    .await;
    let err = result.expect_err("apply fails");
    assert!(matches!(err, Error::ApplyFailed(ReconcileError)), "{err:?}");
    assert_eq!(err.to_string(), "failed to apply the object");
    assert!(std::error::Error::source(&err).is_some());
}

#[tokio::test]
async fn a_concurrent_change_fails_the_removal_instead_of_removing_another_entry() {
    let (_server, api) = setup(config_map(
        "cm",
        Some(vec!["other.io/a".into(), FINALIZER.into()]),
    ))
    .await;
    api.delete("cm", &DeleteParams::default())
        .await
        .expect("delete accepted");
    let stale = fetch(&api, "cm").await;
    // Someone else reorders the list: index 1, where the stale copy has our finalizer, now
    // holds another one.
    let reordered = json!({"metadata": {"finalizers": [FINALIZER, "other.io/b"]}});
    api.patch("cm", &PatchParams::default(), &Patch::Merge(&reordered))
        .await
        .expect("concurrent change");

    let runs = AtomicUsize::new(0);
    let result = finalizer(&api, FINALIZER, stale, recording(&runs)).await;
    match result {
        Err(Error::RemoveFinalizer(kube::Error::Api(status))) => assert_eq!(status.code, 422),
        other => panic!("expected a failed removal, got {other:?}"),
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the cleanup ran before the removal"
    );
    assert_eq!(
        fetch(&api, "cm").await.finalizers(),
        [FINALIZER.to_string(), "other.io/b".to_string()],
        "no entry was removed"
    );
}

#[tokio::test]
async fn a_concurrent_change_fails_the_addition() {
    let (_server, api) = setup(config_map("cm", None)).await;
    let stale = fetch(&api, "cm").await;
    let added = json!({"metadata": {"finalizers": ["other.io/a"]}});
    api.patch("cm", &PatchParams::default(), &Patch::Merge(&added))
        .await
        .expect("concurrent change");
    let runs = AtomicUsize::new(0);
    let result = finalizer(&api, FINALIZER, stale, recording(&runs)).await;
    match result {
        Err(Error::AddFinalizer(kube::Error::Api(status))) => assert_eq!(status.code, 422),
        other => panic!("expected a failed addition, got {other:?}"),
    }
    assert_eq!(fetch(&api, "cm").await.finalizers(), ["other.io/a".to_string()]);
}

#[tokio::test]
async fn being_deleted_without_the_finalizer_runs_nothing() {
    let (_server, api) = setup(config_map("cm", Some(vec!["other.io/keep".into()]))).await;
    api.delete("cm", &DeleteParams::default())
        .await
        .expect("delete accepted");
    let ran = AtomicUsize::new(0);
    let outcome = finalizer(&api, FINALIZER, fetch(&api, "cm").await, |_| {
        ran.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, ReconcileError>(()) }
    })
    .await
    .expect("nothing to do");
    assert_eq!(outcome, FinalizerOutcome::Deleting);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(
        fetch(&api, "cm").await.finalizers(),
        ["other.io/keep".to_string()]
    );
}

#[tokio::test]
async fn an_unnamed_object_is_an_error() {
    let (_server, api) = setup(config_map("cm", None)).await;
    let mut unnamed = config_map("cm", None);
    unnamed.metadata.name = None;
    let result = finalizer(&api, FINALIZER, Arc::new(unnamed), |_| async {
        Ok::<_, ReconcileError>(())
    })
    .await;
    assert!(matches!(result, Err(Error::UnnamedObject)), "{result:?}");
}

#[test]
fn outcomes_convert_to_the_reconciles_type() {
    assert_eq!(FinalizerOutcome::Reconciled(3).unwrap_or_else(|| 0), 3);
    assert_eq!(FinalizerOutcome::<i32>::NotSelected.unwrap_or_else(|| 0), 0);
    assert_eq!(FinalizerOutcome::<i32>::Deleting.reconciled(), None);
}

#[test]
fn patches_guard_the_list_they_change() {
    let added = serde_json::to_value(addition(None, FINALIZER)).expect("serializes");
    assert_eq!(
        added,
        json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]},
        ])
    );
    let appended = serde_json::to_value(addition(Some(&["a".to_string()]), FINALIZER)).expect("serializes");
    assert_eq!(
        appended,
        json!([
            {"op": "test", "path": "/metadata/finalizers", "value": ["a"]},
            {"op": "add", "path": "/metadata/finalizers/-", "value": FINALIZER},
        ])
    );
    let removed = serde_json::to_value(removal(FINALIZER, 2)).expect("serializes");
    assert_eq!(
        removed,
        json!([
            {"op": "test", "path": "/metadata/finalizers/2", "value": FINALIZER},
            {"op": "remove", "path": "/metadata/finalizers/2"},
        ])
    );
}

#[tokio::test]
async fn an_object_out_of_scope_with_the_finalizer_is_cleaned_up_and_released() {
    let (_server, api) = setup(config_map("cm", Some(vec![FINALIZER.into()]))).await;
    let runs = AtomicUsize::new(0);
    let outcome = finalizer_where(
        &api,
        FINALIZER,
        fetch(&api, "cm").await,
        |_| false,
        recording(&runs),
    )
    .await
    .expect("cleaned up");
    assert_eq!(outcome, FinalizerOutcome::Reconciled("cleanup"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let stored = fetch(&api, "cm").await;
    assert!(
        stored.finalizers().is_empty(),
        "released: {:?}",
        stored.finalizers()
    );
    assert!(stored.metadata.deletion_timestamp.is_none(), "still exists");
}

#[tokio::test]
async fn an_object_out_of_scope_without_the_finalizer_is_left_alone() {
    let (_server, api) = setup(config_map("cm", None)).await;
    let runs = AtomicUsize::new(0);
    let outcome = finalizer_where(
        &api,
        FINALIZER,
        fetch(&api, "cm").await,
        |_| false,
        recording(&runs),
    )
    .await
    .expect("nothing to do");
    assert_eq!(outcome, FinalizerOutcome::NotSelected);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(
        fetch(&api, "cm").await.finalizers().is_empty(),
        "no finalizer added"
    );
}

#[tokio::test]
async fn an_object_in_scope_is_applied_as_by_finalizer() {
    let (_server, api) = setup(config_map("cm", Some(vec![FINALIZER.into()]))).await;
    let runs = AtomicUsize::new(0);
    let outcome = finalizer_where(
        &api,
        FINALIZER,
        fetch(&api, "cm").await,
        |_| true,
        recording(&runs),
    )
    .await
    .expect("applied");
    assert_eq!(outcome, FinalizerOutcome::Reconciled("apply"));
    assert_eq!(fetch(&api, "cm").await.finalizers(), [FINALIZER.to_string()]);
}

#[tokio::test]
async fn releasing_an_object_that_is_gone_counts_as_released() {
    let (_server, api) = setup(config_map("cm", Some(vec![FINALIZER.into()]))).await;
    let last_known = fetch(&api, "cm").await;
    let release = json!({ "metadata": { "finalizers": null } });
    api.patch("cm", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .expect("released by someone else");
    api.delete("cm", &DeleteParams::default()).await.expect("deleted");
    let runs = AtomicUsize::new(0);
    let outcome = finalizer_where(&api, FINALIZER, last_known, |_| false, recording(&runs))
        .await
        .expect("a 404 on the removal is not an error");
    assert_eq!(outcome, FinalizerOutcome::Reconciled("cleanup"));
}

/// A controller whose predicate passes spec changes only (`generation_changed`; a ConfigMap
/// has no generation, so no update passes) and whose reconcile uses the helper, as the module
/// docs show: Apply runs for a new object without any later change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applies_under_a_predicate_that_filters_the_finalizers_own_change() {
    use crate::{
        controller::{Action, Controller},
        factory::SharedInformerFactory,
        predicate::Predicate,
    };

    let (server, api) = setup(config_map("cm", None)).await;
    let applied = Arc::new(AtomicUsize::new(0));
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let stop = tokio_util::sync::CancellationToken::new();
    let controller = Controller::<ConfigMap>::new(&factory)
        .predicate(Predicate::generation_changed())
        .graceful_shutdown_on(stop.clone().cancelled_owned());
    let context = Arc::new((api.clone(), Arc::clone(&applied)));
    let reconcile = |object: Arc<ConfigMap>, context: Arc<(Api<ConfigMap>, Arc<AtomicUsize>)>| async move {
        let applied = Arc::clone(&context.1);
        finalizer(&context.0, FINALIZER, object, |event| async move {
            if let FinalizerEvent::Apply(_) = event {
                applied.fetch_add(1, Ordering::SeqCst);
            }
            Ok::<_, ReconcileError>(Action::await_change())
        })
        .await
        .map(|outcome| outcome.unwrap_or_else(Action::await_change))
    };
    let run = tokio::spawn(controller.run(reconcile, |_, _, _| Action::requeue_with_backoff(), context));
    informer_testserver::wait::eventually("Apply ran", std::time::Duration::from_secs(10), || {
        applied.load(Ordering::SeqCst) == 1
    })
    .await
    .expect("Apply ran once the finalizer was added");
    assert_eq!(fetch(&api, "cm").await.finalizers(), [FINALIZER.to_string()]);
    stop.cancel();
    run.await
        .expect("joined")
        .expect("the controller stopped cleanly");
    factory.shutdown().await;
}
