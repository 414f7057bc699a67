use informer_runtime::Informer;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Informer, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo")]
#[informer(namespaced)]
pub struct FooSpec {
    pub size: u32,
}

fn main() {}
