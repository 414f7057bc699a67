// The replicator of the README's manager, leader election and sharding sections: its context,
// reconcile and error policy.
pub use std::sync::Arc;

pub use futures::FutureExt;
pub use informer_runtime::{
    Action, Controller, Manager, Scope, leader_election,
    sharding::{ControllerRing, RingResource, Shard},
};
pub use k8s_openapi::api::core::v1::{ConfigMap, Secret};

pub struct Context {
    pub client: kube::Client,
}

pub async fn reconcile(config_map: Arc<ConfigMap>, context: Arc<Context>) -> Result<Action, kube::Error> {
    let _ = (config_map, &context.client);
    Ok(Action::await_change())
}

pub fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<Context>) -> Action {
    Action::requeue_with_backoff()
}
// statements
let pod_name = String::from("replicator-0");
let context = Arc::new(Context { client: client.clone() });
