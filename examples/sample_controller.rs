//! Kubernetes' sample-controller in Rust: a `Foo` custom resource asks for a Deployment with N
//! replicas; the controller creates, scales and recreates it and reports its status.
//!
//! By default it runs against the embedded API server: it registers the Foo CRD, creates a
//! Foo, scales it, deletes its Deployment, prints what the controller did, and exits. With
//! `--cluster` it uses your kubeconfig and runs until Ctrl-C (install the CRD first:
//! `Foo::crd()`).
//!
//! ```text
//! cargo run -p informer-examples --example sample_controller
//! ```

// The sample-controller's resource is really called `Foo`.
#![allow(clippy::disallowed_names)]

use std::time::Duration;

use informer_examples::sample_controller::{self, Foo, FooSpec};
use informer_testserver::{TestServer, wait::eventually_async};
use k8s_openapi::api::apps::v1::Deployment;
use kube::{
    Api, Client, CustomResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use tokio_util::sync::CancellationToken;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let on_cluster = std::env::args().any(|arg| arg == "--cluster");
    let server = if on_cluster {
        None
    } else {
        Some(TestServer::start().await?)
    };
    let client = match &server {
        Some(server) => {
            server.create_typed(&Foo::crd())?;
            server.client()?
        }
        None => Client::try_default().await?,
    };
    let manager = sample_controller::manager(client.clone(), None)?;
    let shutdown = CancellationToken::new();
    // starts the informers, waits for their caches, then reconciles until `shutdown` fires
    let running = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));

    if server.is_some() {
        let foos: Api<Foo> = Api::namespaced(client.clone(), "default");
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
        let replicas = |d: Option<Deployment>| d.and_then(|d| d.spec.replicas);
        let spec = FooSpec {
            deployment_name: "example-foo".into(),
            replicas: Some(2),
        };
        foos.create(&PostParams::default(), &Foo::new("example-foo", spec))
            .await?;
        let created = eventually_async("the deployment", Duration::from_secs(10), async || {
            replicas(deployments.get_opt("example-foo").await.ok().flatten()) == Some(2)
        })
        .await
        .is_ok();
        println!("deployment example-foo created with 2 replicas: {created}");

        // a patch, not a replace: the controller writes the Foo's status meanwhile
        let scale = serde_json::json!({"spec": {"replicas": 3}});
        foos.patch("example-foo", &PatchParams::default(), &Patch::Merge(&scale))
            .await?;
        let scaled = eventually_async("the scaled deployment", Duration::from_secs(10), async || {
            replicas(deployments.get_opt("example-foo").await.ok().flatten()) == Some(3)
        })
        .await
        .is_ok();
        println!("deployment example-foo scaled to 3 replicas: {scaled}");

        deployments.delete("example-foo", &Default::default()).await?;
        let recreated = eventually_async("the recreated deployment", Duration::from_secs(10), async || {
            deployments.get_opt("example-foo").await.ok().flatten().is_some()
        })
        .await
        .is_ok();
        println!("deployment example-foo recreated after deletion: {recreated}");
    } else {
        println!("running; Ctrl-C to stop");
        tokio::signal::ctrl_c().await?;
    }
    // the manager stops the controller, then the informers it reads
    shutdown.cancel();
    running.await??;
    if let Some(server) = server {
        server.shutdown().await;
    }
    Ok(())
}
