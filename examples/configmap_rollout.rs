//! A ConfigMap-rollout controller on shared informers: change a ConfigMap and the Deployments
//! that read it roll out again.
//!
//! By default it runs against the embedded API server: it creates a ConfigMap and a Deployment
//! that mounts it, changes the ConfigMap, prints what the controller did, and exits. With
//! `--cluster` it uses your kubeconfig and runs until Ctrl-C.
//!
//! ```text
//! cargo run -p informer-examples --example configmap_rollout
//! ```

use std::{collections::BTreeMap, time::Duration};

use informer_examples::configmap_rollout::{self, CONFIG_ANNOTATION};
use informer_runtime::manager::Manager;
use informer_testserver::{TestServer, wait::eventually_async};
use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{ConfigMap, ConfigMapVolumeSource, Container, PodSpec, PodTemplateSpec, Volume},
};
use kube::{
    Api, Client,
    api::{ObjectMeta, PostParams},
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
        Some(server) => server.client()?,
        None => Client::try_default().await?,
    };

    let mut manager = Manager::builder(client.clone()).build()?;
    let (controller, context) = configmap_rollout::controller(manager.factory())?;
    manager.add_controller(
        controller,
        configmap_rollout::reconcile,
        configmap_rollout::error_policy,
        context,
    );
    let shutdown = CancellationToken::new();
    // starts the informers, then the controller once its caches synced, until `shutdown`
    let running = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));

    if server.is_some() {
        demo(&client).await?;
    } else {
        println!("running; Ctrl-C to stop");
        tokio::signal::ctrl_c().await?;
    }
    // the controller stops first (running reconciles finish), then the informers
    shutdown.cancel();
    running.await??;
    if let Some(server) = server {
        server.shutdown().await;
    }
    Ok(())
}

/// Creates a ConfigMap and a Deployment that mounts it, then changes the ConfigMap.
async fn demo(client: &Client) -> Result<(), BoxError> {
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let config = config_maps
        .create(&PostParams::default(), &settings("v1"))
        .await?;
    deployments.create(&PostParams::default(), &web()).await?;
    let stamped = async |version: &str| {
        let want = format!("settings@{version}");
        eventually_async("the deployment's stamp", Duration::from_secs(10), async || {
            stamp(&deployments).await.as_deref() == Some(want.as_str())
        })
        .await
        .is_ok()
    };
    let first = config.metadata.resource_version.clone().unwrap_or_default();
    println!("web rolled out with the first config: {}", stamped(&first).await);

    let mut changed = config_maps.get("settings").await?;
    changed.data = Some(BTreeMap::from([("level".to_owned(), "debug".to_owned())]));
    let changed = config_maps
        .replace("settings", &PostParams::default(), &changed)
        .await?;
    let second = changed.metadata.resource_version.clone().unwrap_or_default();
    println!(
        "web rolled out again after the config changed: {}",
        stamped(&second).await
    );
    println!("annotation: {}", stamp(&deployments).await.unwrap_or_default());
    Ok(())
}

/// The Deployment's config stamp, if any.
async fn stamp(deployments: &Api<Deployment>) -> Option<String> {
    let web = deployments.get_opt("web").await.ok().flatten()?;
    web.spec.template.metadata?.annotations?.remove(CONFIG_ANNOTATION)
}

fn settings(level: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("level".to_owned(), level.to_owned())])),
        ..ConfigMap::default()
    }
}

/// A Deployment whose pods mount the ConfigMap `settings`.
fn web() -> Deployment {
    let mut deployment = Deployment::default();
    deployment.metadata.name = Some("web".into());
    deployment.spec.template = PodTemplateSpec {
        metadata: Some(ObjectMeta::default()),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "web".into(),
                image: Some("nginx".into()),
                ..Container::default()
            }],
            volumes: Some(vec![Volume {
                name: "settings".into(),
                config_map: Some(ConfigMapVolumeSource {
                    name: "settings".into(),
                    ..ConfigMapVolumeSource::default()
                }),
                ..Volume::default()
            }]),
            ..PodSpec::default()
        }),
    };
    deployment
}
