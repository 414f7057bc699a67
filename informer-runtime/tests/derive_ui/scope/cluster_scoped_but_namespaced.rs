use informer_runtime::Informer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Resource, api::ObjectMeta};
use serde::{Deserialize, Serialize};

#[derive(Resource, Informer, Serialize, Deserialize, Clone, Debug)]
#[resource(inherit = ConfigMap)]
#[informer(group = "", version = "v1", kind = "ConfigMap")]
pub struct Settings {
    pub metadata: ObjectMeta,
}

fn main() {}
