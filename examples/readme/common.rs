// What every README snippet of the informer and controller sections starts from: the crate
// root's names, a client, a factory and a manager.
pub use std::{sync::Arc, time::Duration};

pub use futures::FutureExt;
pub use informer_runtime::{
    Action, Controller, EventHandlerFuncs, Lister, Manager, ObjectKey, Predicate, Scope,
    SharedInformerFactory, cache::Index, key::ObjectKeyExt, leader_election,
    sharding::{ControllerRing, RingResource, Shard},
};
pub use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{ConfigMap, Pod, Secret},
};
pub use kube::core::{GroupVersionResource, Selector};
// statements
let factory = SharedInformerFactory::new(client.clone());
let mut manager = Manager::builder(client.clone()).build()?;
let gvr = GroupVersionResource::gvr("example.com", "v1", "foos");
let pod_name = String::from("replicator-0");
