//! A ConfigMap-rollout controller: a Deployment whose pods read ConfigMaps is rolled out again
//! when one of them changes, by stamping the ConfigMaps' resource versions on its pod template.
//!
//! It is the shape of most controllers on shared informers: a [`Controller`] of Deployments
//! that [`watches`](Controller::watches) ConfigMaps, a typed index
//! from ConfigMaps to the Deployments that read them, and a reconcile that reads listers and
//! writes one patch.

use std::sync::Arc;

use informer_runtime::{
    cache::Index,
    controller::{Action, Controller},
    factory::SharedInformerFactory,
    key::ObjectKeyExt,
    lister::{IndexedLister, Lister},
};
use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};
use kube::api::{Api, Patch, PatchParams};

/// The pod-template annotation that records the ConfigMaps a Deployment last rolled out with.
pub const CONFIG_ANNOTATION: &str = "rollout.example.com/config-versions";

/// Deployments by the ConfigMaps their pods mount or read (`namespace/name`).
pub static BY_CONFIG_MAP: Index<Deployment> = Index::new("by-config-map", |deployment| {
    let namespace = deployment.metadata.namespace.as_deref().unwrap_or_default();
    config_maps_of(deployment)
        .map(|name| format!("{namespace}/{name}"))
        .collect()
});

/// The names of the ConfigMaps a Deployment's pods mount as volumes or read with `envFrom`.
fn config_maps_of(deployment: &Deployment) -> impl Iterator<Item = String> + '_ {
    let pod = deployment.spec.template.spec.iter();
    let volumes = pod.clone().flat_map(|pod| pod.volumes.iter().flatten());
    let mounted = volumes.filter_map(|volume| Some(volume.config_map.as_ref()?.name.clone()));
    let containers = pod.flat_map(|pod| pod.containers.iter());
    let env_from = containers.flat_map(|container| container.env_from.iter().flatten());
    mounted.chain(env_from.filter_map(|source| Some(source.config_map_ref.as_ref()?.name.clone())))
}

/// What the reconcile reads and writes with.
pub struct Context {
    client: kube::Client,
    config_maps: Lister<ConfigMap>,
}

/// The controller: a Deployment is reconciled when it changes or when a ConfigMap it reads
/// changes (found through [`BY_CONFIG_MAP`], without a scan).
pub fn controller(
    factory: &SharedInformerFactory,
) -> Result<(Controller<Deployment>, Arc<Context>), informer_runtime::informer::Error> {
    let readers: IndexedLister<Deployment> = factory
        .unscoped_informer::<Deployment>()
        .add_index(&BY_CONFIG_MAP)?;
    let controller = Controller::<Deployment>::new(factory)
        .name("configmap-rollout")
        .watches::<ConfigMap, _>(move |config_map| {
            readers
                .get(config_map.object_key().as_str())
                .iter()
                .map(|d| d.object_key())
                .collect::<Vec<_>>()
        });
    let context = Arc::new(Context {
        client: factory.client().clone(),
        config_maps: factory.unscoped_informer::<ConfigMap>().lister(),
    });
    Ok((controller, context))
}

/// Stamps the resource versions of the Deployment's ConfigMaps on its pod template when they
/// differ from the last stamp, which makes the Deployment roll its pods.
pub async fn reconcile(deployment: Arc<Deployment>, context: Arc<Context>) -> Result<Action, kube::Error> {
    let namespace = deployment.metadata.namespace.clone().unwrap_or_default();
    let config_maps = context.config_maps.by_namespace(&namespace);
    let mut versions: Vec<String> = config_maps_of(&deployment)
        .map(|name| {
            let version = config_maps
                .get(&name)
                .and_then(|cm| cm.metadata.resource_version.clone());
            format!("{name}@{}", version.unwrap_or_else(|| "missing".into()))
        })
        .collect();
    versions.sort();
    let stamp = versions.join(",");
    let template = deployment.spec.template.metadata.as_ref();
    let current = template.and_then(|meta| meta.annotations.as_ref()?.get(CONFIG_ANNOTATION));
    if versions.is_empty() || current == Some(&stamp) {
        return Ok(Action::await_change());
    }
    let patch = serde_json::json!({
        "spec": {"template": {"metadata": {"annotations": {CONFIG_ANNOTATION: stamp}}}}
    });
    let name = deployment.metadata.name.clone().unwrap_or_default();
    let deployments: Api<Deployment> = Api::namespaced(context.client.clone(), &namespace);
    deployments
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    tracing::info!(deployment = %deployment.object_key(), "rolled out for new config");
    Ok(Action::await_change())
}

/// Retries failed patches with backoff.
pub fn error_policy(_: Arc<Deployment>, _: &kube::Error, _: Arc<Context>) -> Action {
    Action::requeue_with_backoff()
}
