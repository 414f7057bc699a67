//! Objects leaving a controller's scope with its finalizer, over HTTP against the embedded
//! API server: the cleanup runs, the finalizer goes, and a later delete is not stuck.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use informer_testserver::{
    TestServer,
    wait::{eventually, eventually_async},
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ObjectMeta, Patch, PatchParams},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{
    controller::{Action, Controller},
    factory::SharedInformerFactory,
    finalizer::{self, FinalizerEvent},
    predicate::Predicate,
};

const WAIT: Duration = Duration::from_secs(10);
const FINALIZER: &str = "example.com/copies";

/// What the reconciles did, as `apply:name` and `cleanup:name`.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn has(&self, entry: &str) -> bool {
        self.count(entry) > 0
    }

    fn count(&self, entry: &str) -> usize {
        self.0.lock().expect("log").iter().filter(|e| *e == entry).count()
    }
}

struct Context {
    api: Api<ConfigMap>,
    scope: Predicate<ConfigMap>,
    log: Log,
}

async fn reconcile(
    cm: Arc<ConfigMap>,
    context: Arc<Context>,
) -> Result<Action, finalizer::Error<std::convert::Infallible>> {
    let name = cm.name_any();
    let log = &context.log;
    let outcome = finalizer::finalizer_where(
        &context.api,
        FINALIZER,
        cm,
        |cm| context.scope.matches(cm),
        |event| async move {
            let entry = match event {
                FinalizerEvent::Apply(_) => format!("apply:{name}"),
                FinalizerEvent::Cleanup(_) => format!("cleanup:{name}"),
            };
            log.0.lock().expect("log").push(entry);
            Ok(())
        },
    )
    .await?;
    Ok(outcome
        .reconciled()
        .map_or_else(Action::await_change, |()| Action::await_change()))
}

fn labelled(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            labels: Some(BTreeMap::from([("replicate".to_owned(), "true".to_owned())])),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

async fn finalizers(api: &Api<ConfigMap>, name: &str) -> Vec<String> {
    api.get(name)
        .await
        .map(|cm| cm.finalizers().to_vec())
        .unwrap_or_default()
}

/// Removes the `replicate` label, waits for the cleanup and the finalizer's removal, then
/// deletes the object and waits until it is gone.
async fn leave_scope_then_delete(
    api: &Api<ConfigMap>,
    context: &Context,
) -> Result<(), Box<dyn std::error::Error>> {
    eventually_async("the finalizer added", WAIT, async || {
        finalizers(api, "cm").await == [FINALIZER]
    })
    .await?;
    // Apply runs with the finalizer's addition, then again for the finalizer's own change:
    // the object leaves the scope once nothing of it is queued any more
    eventually("applied twice", WAIT, || context.log.count("apply:cm") == 2).await?;
    let unlabel = json!({ "metadata": { "labels": { "replicate": null } } });
    api.patch("cm", &PatchParams::default(), &Patch::Merge(&unlabel))
        .await?;
    eventually("cleaned up", WAIT, || context.log.has("cleanup:cm")).await?;
    eventually_async("the finalizer removed", WAIT, async || {
        finalizers(api, "cm").await.is_empty()
    })
    .await?;
    let still_there = api.get("cm").await?;
    assert!(
        still_there.metadata.deletion_timestamp.is_none(),
        "released, not deleted"
    );
    api.delete("cm", &DeleteParams::default()).await?;
    eventually_async("deleted, not stuck", WAIT, async || {
        api.get_opt("cm").await.ok().flatten().is_none()
    })
    .await?;
    Ok(())
}

/// A controller running with a logging context, until [`Running::stop`].
struct Running {
    context: Arc<Context>,
    shutdown: CancellationToken,
    run: tokio::task::JoinHandle<crate::controller::Result<()>>,
    factory: SharedInformerFactory,
}

impl Running {
    /// Runs `controller` of `factory`, its reconciles writing through `api` and judging the
    /// scope by `scope`.
    fn start(
        factory: &SharedInformerFactory,
        controller: Controller<ConfigMap>,
        api: &Api<ConfigMap>,
        scope: Predicate<ConfigMap>,
    ) -> Self {
        let context = Arc::new(Context {
            api: api.clone(),
            scope,
            log: Log::default(),
        });
        let shutdown = CancellationToken::new();
        let run = tokio::spawn(
            controller
                .graceful_shutdown_on(shutdown.clone().cancelled_owned())
                .run(
                    reconcile,
                    |_, _, _| Action::requeue_with_backoff(),
                    Arc::clone(&context),
                ),
        );
        Self {
            context,
            shutdown,
            run,
            factory: factory.clone(),
        }
    }

    async fn stop(self) -> Result<(), Box<dyn std::error::Error>> {
        self.shutdown.cancel();
        self.run.await??;
        self.factory.shutdown().await;
        Ok(())
    }
}

/// A label selector predicate: removing the label makes the controller's predicate reject
/// the update, but the object carries the finalizer and is out of scope, so it is reconciled
/// and released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_removed_under_a_predicate_runs_the_cleanup_and_releases_the_object()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&labelled("cm"))?;
    let mut other = labelled("other");
    other.metadata.labels = None;
    server.create_typed(&other)?;
    let client = server.client()?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let scope = Predicate::labels("replicate=true")?;
    let factory = SharedInformerFactory::new(client);
    let controller = Controller::<ConfigMap>::new(&factory)
        .predicate(scope.clone())
        .finalizer(FINALIZER);
    let stats = controller.stats();
    let running = Running::start(&factory, controller, &api, scope);
    let context = &running.context;

    leave_scope_then_delete(&api, context).await?;
    assert!(stats.out_of_scope() >= 1, "{stats:?}");
    assert!(
        finalizers(&api, "other").await.is_empty(),
        "out of scope from the start: never finalized"
    );
    assert!(!context.log.has("apply:other"));

    running.stop().await
}

/// A watch restricted by a label selector: removing the label makes the API server send
/// DELETED for an object that still exists, carrying the finalizer; the controller reconciles
/// its last known state, which releases it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_removed_under_a_label_selector_watch_runs_the_cleanup_and_releases_the_object()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&labelled("cm"))?;
    let client = server.client()?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let factory = SharedInformerFactory::builder(client)
        .tweak_list_options(|options| options.label_selector = Some("replicate=true".into()))
        .build();
    let controller = Controller::<ConfigMap>::new(&factory).finalizer(FINALIZER);
    let stats = controller.stats();
    let running = Running::start(&factory, controller, &api, Predicate::labels("replicate=true")?);
    let context = &running.context;

    leave_scope_then_delete(&api, context).await?;
    assert_eq!(stats.out_of_scope(), 1, "{stats:?}");
    assert_eq!(
        stats.skipped_missing(),
        0,
        "reconciled from its last state, not skipped"
    );

    running.stop().await
}

/// The same with a scoped controller (`Controller::new_in` with a label scope, the issue's
/// replicator): the object whose label is removed leaves the scope's watch and is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_removed_from_an_object_of_a_scoped_controller_releases_it()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&labelled("cm"))?;
    let client = server.client()?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let factory = SharedInformerFactory::new(client);
    let scope = crate::scope::Scope::<ConfigMap>::all().labels("replicate=true")?;
    let controller = Controller::new_in(&factory, &scope).finalizer(FINALIZER);
    let stats = controller.stats();
    let running = Running::start(&factory, controller, &api, Predicate::labels("replicate=true")?);
    let context = &running.context;

    leave_scope_then_delete(&api, context).await?;
    assert_eq!(stats.out_of_scope(), 1, "{stats:?}");

    running.stop().await
}

/// Without a declared finalizer the controller drops the key of an object that left its
/// watch (the behaviour before): the finalizer stays, which is what the declaration fixes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_declaration_the_object_that_left_the_watch_keeps_the_finalizer()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&labelled("cm"))?;
    let client = server.client()?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let factory = SharedInformerFactory::builder(client)
        .tweak_list_options(|options| options.label_selector = Some("replicate=true".into()))
        .build();
    let controller = Controller::<ConfigMap>::new(&factory);
    let stats = controller.stats();
    let running = Running::start(&factory, controller, &api, Predicate::labels("replicate=true")?);
    let context = &running.context;
    eventually("applied", WAIT, || context.log.has("apply:cm")).await?;
    let unlabel = json!({ "metadata": { "labels": { "replicate": null } } });
    api.patch("cm", &PatchParams::default(), &Patch::Merge(&unlabel))
        .await?;
    // (the finalizer's own change may be dropped the same way, if it is handled after the
    // object left the watch)
    eventually("the key of the vanished object dropped", WAIT, || {
        stats.skipped_missing() >= 1
    })
    .await?;
    assert!(!context.log.has("cleanup:cm"));
    assert_eq!(
        finalizers(&api, "cm").await,
        [FINALIZER],
        "stuck with the finalizer"
    );

    running.stop().await
}
