// A custom resource with `#[derive(CustomResource, Informer)]`, as a user's crate has it.
pub use informer_runtime::{Informer, SharedInformerFactory};
pub use kube::CustomResource;
pub use schemars::JsonSchema;
pub use serde::{Deserialize, Serialize};
// statements
let factory = SharedInformerFactory::new(client.clone());
