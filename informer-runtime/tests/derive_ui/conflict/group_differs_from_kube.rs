use informer_runtime::Informer;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Informer, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "a.example.com", version = "v1", kind = "Foo", namespaced)]
#[informer(group = "b.example.com")]
pub struct FooSpec {
    pub size: u32,
}

fn main() {}
