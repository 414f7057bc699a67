use informer_runtime::Informer;
use k8s_openapi::api::core::v1::Node;
use kube::{Resource, api::ObjectMeta};
use serde::{Deserialize, Serialize};

#[derive(Resource, Informer, Serialize, Deserialize, Clone, Debug)]
#[resource(inherit = Node)]
#[informer(group = "", version = "v1", kind = "Node", namespaced)]
pub struct MyNode {
    pub metadata: ObjectMeta,
}

fn main() {}
