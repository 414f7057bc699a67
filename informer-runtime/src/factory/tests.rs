use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};

use super::*;
use crate::{cache::Indexers, testing::FakeControllerSource};

/// A client for a server that is never contacted: nothing here starts the factory.
fn client() -> Client {
    let url = "http://127.0.0.1:9".parse().expect("url");
    Client::try_from(kube::Config::new(url)).expect("client")
}

fn custom_pod_informer(_: &InformerContext<'_>) -> SharedIndexInformer<Pod> {
    SharedIndexInformer::from_arc(
        Arc::new(FakeControllerSource::<Pod>::new()),
        informer::Config {
            description: Some("custom pods".into()),
            indexers: Indexers::new(),
            ..informer::Config::default()
        },
    )
}

#[tokio::test]
async fn a_second_constructor_for_a_type_is_an_error_not_ignored() {
    let factory = SharedInformerFactory::new(client());
    let default = factory.informer::<Pod>();
    let mut called = false;
    let err = factory
        .informer_for::<Pod>(|context| {
            called = true;
            custom_pod_informer(context)
        })
        .expect_err("the factory already has a pod informer");
    assert!(!called, "the constructor is not called");
    assert!(matches!(err, Error::InformerExists { type_name } if type_name.ends_with("Pod")));
    assert!(
        err.to_string().starts_with("failed to create an informer of "),
        "{err}"
    );
    assert_eq!(factory.informer::<Pod>().description(), default.description());
}

#[tokio::test]
async fn the_default_request_shares_a_custom_informer_created_first() {
    let factory = SharedInformerFactory::new(client());
    let custom = factory
        .informer_for::<Pod>(custom_pod_informer)
        .expect("the first pod informer");
    let shared = factory.informer::<Pod>();
    assert_eq!(shared.description(), "custom pods");
    assert_eq!(custom.description(), shared.description());
    // other types are unaffected
    assert_eq!(factory.informer::<ConfigMap>().description(), "configmaps");
    let generic = factory.generic_informer::<Pod>(GroupVersionResource::gvr("", "v1", "pods"));
    assert_eq!(
        generic.informer::<Pod>().expect("typed").description(),
        "custom pods"
    );
}
