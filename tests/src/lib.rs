//! Fixtures shared by the cross-crate integration tests in `tests/`.

pub mod derived;
pub mod fault;
pub mod generated;
pub mod shadowed;

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kube::api::ObjectMeta;

/// A pod named `name` in `namespace` with `labels` and one container.
pub fn pod(namespace: &str, name: &str, labels: &[(&str, &str)]) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some("nginx".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

/// Waits until `condition` holds for at most `timeout`
/// ([`informer_testserver::wait::eventually`]), failing the test if it does not.
pub async fn eventually(what: &str, timeout: Duration, condition: impl FnMut() -> bool) {
    if let Err(timed_out) = informer_testserver::wait::eventually(what, timeout, condition).await {
        panic!("{timed_out}");
    }
}

/// Creates each of `namespaces` that does not exist yet on `server` (the server, like
/// kube-apiserver, refuses objects in a namespace that does not exist), failing the test if
/// one cannot be created.
pub fn create_namespaces<'a>(
    server: &informer_testserver::TestServer,
    namespaces: impl IntoIterator<Item = &'a str>,
) {
    for namespace in namespaces {
        if server.get("v1", "Namespace", None, namespace).is_err() {
            server
                .create_namespace(namespace)
                .unwrap_or_else(|e| panic!("failed to create namespace {namespace}: {e}"));
        }
    }
}
