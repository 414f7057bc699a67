//! A factory, a pod informer, a handler that prints adds, updates and deletes, and a lister.
//!
//! By default it starts the embedded test API server, seeds it with pods in two namespaces,
//! changes them for a few seconds, and exits. With `--cluster` it uses your kubeconfig (or the
//! in-cluster configuration) instead and runs until Ctrl-C.
//!
//! ```text
//! cargo run -p informer-examples --example pod_informer
//! cargo run -p informer-examples --example pod_informer -- --cluster
//! ```

use std::{sync::Arc, time::Duration};

use informer_runtime::{
    EventHandlerFuncs, SharedIndexInformer, SharedInformerFactory, cache::NAMESPACE_INDEX,
};
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kube::{Client, api::ObjectMeta, core::Selector};
use tokio::time::Instant;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn pod(namespace: &str, name: &str, app: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some([("app".to_owned(), app.to_owned())].into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some("nginx".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

fn name(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let on_cluster = std::env::args().any(|arg| arg == "--cluster");
    let server = if on_cluster {
        None
    } else {
        Some(start_seeded_server().await?)
    };
    let client = match &server {
        Some(server) => server.client()?,
        None => Client::try_default().await?,
    };

    // The factory's pod informer, with a handler that prints what it is told.
    let factory = SharedInformerFactory::new(client);
    let pods = factory.unscoped_informer::<Pod>();
    pods.add_event_handler(printing_handler())?;

    if !start_and_wait_for_sync(&factory).await {
        factory.shutdown().await;
        return Err("caches did not sync".into());
    }
    print_pod_counts(&pods);

    match &server {
        Some(server) => churn(server, &pods).await?,
        None => {
            println!("watching; Ctrl-C to stop");
            tokio::signal::ctrl_c().await?;
        }
    }
    factory.shutdown().await;
    if let Some(server) = server {
        server.shutdown().await;
    }
    Ok(())
}

/// The embedded API server, with pods in two namespaces.
async fn start_seeded_server() -> Result<TestServer, BoxError> {
    let server = TestServer::start().await?;
    println!("embedded API server at {}", server.url());
    for (namespace, count) in [("shop", 3), ("blog", 2)] {
        server.create_namespace(namespace)?;
        for n in 0..count {
            server.create_typed(&pod(namespace, &format!("web-{n}"), "web"))?;
        }
        server.create_typed(&pod(namespace, "db-0", "db"))?;
    }
    Ok(server)
}

/// Prints adds (from the initial list or live), updates that changed the pod, and deletes.
fn printing_handler() -> EventHandlerFuncs<Pod> {
    EventHandlerFuncs::new()
        .added(|pod: Arc<Pod>, initial| {
            let when = if initial { "initial list" } else { "live" };
            println!("added    {} ({when})", name(&pod));
        })
        .updated(|old: Arc<Pod>, new: Arc<Pod>| {
            if old.metadata.resource_version != new.metadata.resource_version {
                println!(
                    "updated  {} (resourceVersion {:?})",
                    name(&new),
                    new.metadata.resource_version
                );
            }
        })
        .deleted(|deleted| {
            let how = if deleted.is_tombstone() {
                " (missed by the watch, seen on relist)"
            } else {
                ""
            };
            println!("deleted  {}{how}", deleted.key());
        })
}

/// Starts the factory's informers and waits up to 30 s for their caches; prints the outcome.
async fn start_and_wait_for_sync(factory: &SharedInformerFactory) -> bool {
    let started = Instant::now();
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(Duration::from_secs(30)).await;
    println!("{report} in {:?}", started.elapsed());
    report.all_synced()
}

/// Counts from the lister: all pods, those with app=web, and the pods of each namespace (the
/// namespace index knows which namespaces hold pods).
fn print_pod_counts(pods: &SharedIndexInformer<Pod>) {
    let lister = pods.lister();
    let web: Selector = [("app", "web")].into_iter().collect();
    println!(
        "pods: {}, app=web: {}",
        lister.list(&Selector::default()).len(),
        lister.list(&web).len()
    );
    for namespace in pods.store().list_index_func_values(NAMESPACE_INDEX) {
        println!(
            "  namespace {namespace}: {} pods",
            lister.by_namespace(&namespace).list(&Selector::default()).len()
        );
    }
}

/// Churns for a few seconds: adds, relabels and deletes pods, then prints what is cached.
async fn churn(server: &TestServer, pods: &SharedIndexInformer<Pod>) -> Result<(), BoxError> {
    let lister = pods.lister();
    for round in 0..10 {
        server.create_typed(&pod("shop", &format!("job-{round}"), "job"))?;
        if round > 0 {
            server.delete_typed::<Pod>(Some("shop"), &format!("job-{}", round - 1))?;
        }
        let mut relabelled: Pod = owned_copy(&lister.by_namespace("blog").get("web-0"))?;
        relabelled
            .metadata
            .labels
            .get_or_insert_default()
            .insert("round".into(), round.to_string());
        server.update_typed(&relabelled)?;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    println!(
        "after churn: {} pods cached, last resourceVersion {}",
        lister.list(&Selector::default()).len(),
        pods.last_sync_resource_version()
    );
    Ok(())
}

/// An owned copy of a cached pod to modify (cached objects are shared and read-only).
fn owned_copy(cached: &Option<Arc<Pod>>) -> Result<Pod, BoxError> {
    cached
        .as_deref()
        .cloned()
        .ok_or_else(|| "the pod is not cached".into())
}
