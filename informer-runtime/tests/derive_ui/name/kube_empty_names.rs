use informer_runtime::Informer;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Informer, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "", version = "", kind = "Foo", plural = "", namespaced)]
pub struct FooSpec {
    pub size: u32,
}

fn main() {}
