//! The examples of `informer-derive`'s documentation, compiled and run here, where the runtime
//! the derive's output needs is a dependency (informer-derive does not depend on it).

use informer_runtime::Informer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{CustomResource, Resource, api::ObjectMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The spec of a `Foo`.
#[derive(CustomResource, Informer, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
pub struct FooSpec {
    /// A size.
    pub size: u32,
}

fn foos(factory: &informer_runtime::factory::SharedInformerFactory) -> Option<std::sync::Arc<Foo>> {
    FooInformer::new(factory).lister().foos("default").get("x")
}

/// A config map, as far as this program cares.
#[derive(Resource, Informer, Serialize, Deserialize, Clone, Debug)]
#[resource(inherit = ConfigMap)]
#[informer(group = "", version = "v1", kind = "ConfigMap", namespaced)]
pub struct Settings {
    /// The metadata.
    pub metadata: ObjectMeta,
}

#[tokio::test]
async fn a_derived_informer_beside_custom_resource_lists_the_kube_root_type() {
    let server = informer_testserver::TestServer::start()
        .await
        .expect("the server starts");
    let factory = informer_runtime::SharedInformerFactory::new(server.client().expect("a client"));
    assert!(
        foos(&factory).is_none(),
        "nothing cached before the factory starts"
    );
    assert_eq!(FooInformer::new(&factory).informer().description(), "foos");
}

#[test]
fn a_standalone_derived_informer_is_named_after_its_kind() {
    // Informer types are named after the kind: `ConfigMapInformer`, `ConfigMapLister`, …
    assert_eq!(ConfigMapInformer::verify_resource(), Ok(()));
}
