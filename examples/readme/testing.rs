// What the README's controller test starts from: the runtime's names, the test cluster, kube's
// Api and serde_json.
pub use std::{sync::Arc, time::Duration};

pub use informer_runtime::{Action, Controller, Manager};
pub use informer_testcluster::TestCluster;
pub use informer_testserver::wait::eventually_async;
pub use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};
pub use kube::api::{Api, Patch, PatchParams, PostParams};
pub use serde_json::json;
// statements
