//! Predicates on a running controller, over HTTP against the embedded API server.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use informer_testserver::{TestServer, wait::eventually};
use k8s_openapi::{
    api::{
        apps::v1::{Deployment, DeploymentSpec, DeploymentStatus},
        core::v1::{ConfigMap, PodTemplateSpec, Secret},
    },
    apimachinery::pkg::apis::meta::v1::LabelSelector,
};
use kube::{
    Api,
    api::{ObjectMeta, Patch, PatchParams},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{
    controller::{Action, Controller, ControllerStats, Watches},
    factory::{SharedInformerFactory, TypedResource},
    key::ObjectKey,
    predicate::{Event, Predicate},
};

const WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
#[error("failed on purpose")]
struct Failed;

/// The names reconciled, in order.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn push(&self, name: &str) {
        self.0.lock().expect("log").push(name.to_owned());
    }

    fn count(&self, name: &str) -> usize {
        self.0.lock().expect("log").iter().filter(|n| *n == name).count()
    }
}

fn name_of<K: kube::Resource>(object: &K) -> String {
    object.meta().name.clone().unwrap_or_default()
}

fn config_map(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), "1".to_owned())])),
        ..ConfigMap::default()
    }
}

fn deployment(name: &str) -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), name.to_owned())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: None,
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

/// Runs `controller` with a reconcile that logs each name, until the returned token fires.
fn run_logging<K: TypedResource>(
    controller: Controller<K>,
    log: &Arc<Log>,
) -> (
    CancellationToken,
    tokio::task::JoinHandle<super::super::Result<()>>,
) {
    let shutdown = CancellationToken::new();
    let run = controller
        .graceful_shutdown_on(shutdown.clone().cancelled_owned())
        .run(
            |object: Arc<K>, log: Arc<Log>| async move {
                log.push(&name_of(object.as_ref()));
                Ok::<_, Failed>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            Arc::clone(log),
        );
    (shutdown, tokio::spawn(run))
}

async fn merge_labels(
    api: &Api<ConfigMap>,
    name: &str,
    labels: serde_json::Value,
) -> kube::Result<ConfigMap> {
    let patch = json!({ "metadata": { "labels": labels } });
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
}

async fn annotate(api: &Api<ConfigMap>, name: &str, value: &str) -> kube::Result<ConfigMap> {
    let patch = json!({ "metadata": { "annotations": { "note": value } } });
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
}

/// A controller that writes its deployment's status at every reconcile: with
/// `generation_changed` the status write (same generation) reaches the controller and is
/// rejected, so it does not reconcile the deployment again; a spec change does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_writes_do_not_reconcile_again_with_generation_changed()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&deployment("web"))?;
    let client = server.client()?;
    let factory = SharedInformerFactory::new(client.clone());
    let api: Api<Deployment> = Api::namespaced(client, "default");

    let writer = Controller::<Deployment>::new(&factory)
        .name("status-writer")
        .predicate(Predicate::generation_changed());
    let writer_stats = writer.stats();
    let writes = Arc::new(Log::default());
    let shutdown = CancellationToken::new();
    let writer_run = tokio::spawn(
        writer
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(
                |deployment: Arc<Deployment>, context: Arc<(Api<Deployment>, Arc<Log>)>| async move {
                    let (api, writes) = &*context;
                    writes.push(&name_of(deployment.as_ref()));
                    let status = DeploymentStatus {
                        observed_generation: deployment.metadata.generation,
                        ..DeploymentStatus::default()
                    };
                    let patch = json!({ "status": status });
                    api.patch_status("web", &PatchParams::default(), &Patch::Merge(&patch))
                        .await
                        .map_err(|_| Failed)?;
                    Ok::<_, Failed>(Action::await_change())
                },
                |_, _, _| Action::await_change(),
                Arc::new((api.clone(), Arc::clone(&writes))),
            ),
    );
    eventually("the writer's predicate rejected its status write", WAIT, || {
        writer_stats.filtered() >= 1
    })
    .await?;
    assert_eq!(
        writes.count("web"),
        1,
        "the status write did not reconcile the writer again"
    );

    let patch = json!({ "spec": { "replicas": 3 } });
    api.patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    eventually("the spec change reconciled the writer", WAIT, || {
        writes.count("web") == 2
    })
    .await?;
    eventually("the second status write was rejected", WAIT, || {
        writer_stats.filtered() >= 2
    })
    .await?;
    assert_eq!(writes.count("web"), 2);

    let status = api.get_status("web").await?.status.unwrap_or_default();
    assert_eq!(status.observed_generation, Some(2), "the status was written");
    shutdown.cancel();
    writer_run.await??;
    factory.shutdown().await;
    Ok(())
}

/// Only config maps labelled `replicate=true` are reconciled; labelling one brings it in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_selector_predicate_reconciles_matching_objects_only()
-> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("in", &[("replicate", "true")]))?;
    server.create_typed(&config_map("out", &[("replicate", "false")]))?;
    let client = server.client()?;
    let factory = SharedInformerFactory::new(client.clone());
    let controller = Controller::<ConfigMap>::new(&factory).predicate(Predicate::labels("replicate=true")?);
    let stats = controller.stats();
    let log = Arc::new(Log::default());
    let (shutdown, run) = run_logging(controller, &log);

    eventually("in reconciled", WAIT, || log.count("in") == 1).await?;
    eventually("out filtered", WAIT, || stats.filtered() >= 1).await?;
    assert_eq!(log.count("out"), 0);

    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    merge_labels(&api, "out", json!({ "replicate": "true" })).await?;
    eventually("out reconciled once labelled", WAIT, || log.count("out") == 1).await?;

    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

/// `labels_changed().or(generation_changed()).and(not(a label selector))` over ConfigMaps:
/// label changes reconcile; annotation and data changes do not (a ConfigMap keeps no
/// generation); objects labelled `ignore` never do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn combined_predicates_filter_as_combined() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("cm", &[]))?;
    server.create_typed(&config_map("ignored", &[("ignore", "yes")]))?;
    let client = server.client()?;
    let factory = SharedInformerFactory::new(client.clone());
    let changes = Predicate::labels_changed().or(Predicate::generation_changed());
    let not_ignored = !Predicate::labels("ignore")?;
    let controller = Controller::<ConfigMap>::new(&factory)
        .predicate(changes)
        .predicate(not_ignored);
    let stats = controller.stats();
    let log = Arc::new(Log::default());
    let (shutdown, run) = run_logging(controller, &log);
    eventually("cm reconciled", WAIT, || log.count("cm") == 1).await?;
    eventually("ignored filtered at start", WAIT, || stats.filtered() == 1).await?;

    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    annotate(&api, "cm", "one").await?;
    eventually("the annotation change filtered", WAIT, || stats.filtered() == 2).await?;
    assert_eq!(log.count("cm"), 1);
    merge_labels(&api, "cm", json!({ "team": "a" })).await?;
    eventually("the label change reconciled", WAIT, || log.count("cm") == 2).await?;
    // a ConfigMap keeps no generation (as on kube-apiserver): its data change passes neither
    let data = json!({ "data": { "v": "2" } });
    api.patch("cm", &PatchParams::default(), &Patch::Merge(&data))
        .await?;
    eventually("the data change (no generation) filtered", WAIT, || {
        stats.filtered() == 3
    })
    .await?;
    assert_eq!(log.count("cm"), 2);
    merge_labels(&api, "ignored", json!({ "team": "a" })).await?;
    eventually("the ignored object's label change filtered", WAIT, || {
        stats.filtered() == 4
    })
    .await?;
    assert_eq!(log.count("ignored"), 0);

    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

/// `Watches::predicate` lets only the watched objects it passes reach the mapper; `Owns::predicate` the same
/// for children.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relation_predicates_filter_before_the_mapper() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("target", &[]))?;
    let client = server.client()?;
    let factory = SharedInformerFactory::new(client.clone());
    let mapped = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&mapped);
    let controller = Controller::<ConfigMap>::new(&factory).relation(
        Watches::new(move |secret: &Secret| {
            seen.lock().expect("mapped").push(name_of(secret));
            [ObjectKey::new("default", "target")]
        })
        .predicate(Predicate::labels("wakes=target")?),
    );
    let stats = controller.stats();
    let log = Arc::new(Log::default());
    let (shutdown, run) = run_logging(controller, &log);
    eventually("target reconciled at start", WAIT, || log.count("target") == 1).await?;

    let secret = |name: &str, labels: &[(&str, &str)]| Secret {
        metadata: config_map(name, labels).metadata,
        ..Secret::default()
    };
    server.create_typed(&secret("quiet", &[]))?;
    eventually("the unlabelled secret filtered", WAIT, || stats.filtered() == 1).await?;
    server.create_typed(&secret("loud", &[("wakes", "target")]))?;
    eventually("the labelled secret woke target", WAIT, || {
        log.count("target") == 2
    })
    .await?;
    assert_eq!(
        *mapped.lock().expect("mapped"),
        ["loud"],
        "the mapper saw only what passed"
    );

    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}

/// A predicate that panics on one object: counted, logged, and the object reconciled anyway.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_predicate_lets_the_event_pass_and_is_counted() -> Result<(), Box<dyn std::error::Error>>
{
    let server = TestServer::start().await?;
    server.create_typed(&config_map("fine", &[]))?;
    server.create_typed(&config_map("boom", &[]))?;
    let factory = SharedInformerFactory::new(server.client()?);
    let buggy = Predicate::new("buggy", |event: &Event<'_, ConfigMap>| {
        assert_ne!(name_of(event.object()), "boom", "a bug in the predicate");
        true
    });
    let controller = Controller::<ConfigMap>::new(&factory).predicate(buggy);
    let stats: ControllerStats = controller.stats();
    let log = Arc::new(Log::default());
    let (shutdown, run) = run_logging(controller, &log);
    eventually("both reconciled", WAIT, || {
        log.count("fine") == 1 && log.count("boom") == 1
    })
    .await?;
    assert_eq!(stats.predicate_panics(), 1);
    assert_eq!(stats.filtered(), 0);
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}
