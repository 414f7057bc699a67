//! Name validation and supported field selectors through `kube::Client` and raw HTTP.

mod support;

use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Service};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;
use support::{get, pod};

fn named<K: serde::de::DeserializeOwned>(name: &str) -> K {
    serde_json::from_value(json!({"metadata": {"name": name}})).expect("valid")
}

fn status_of(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test]
async fn names_follow_the_rule_of_their_kind() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let err = status_of(
        config_maps
            .create(&PostParams::default(), &named("Bad_Name"))
            .await
            .expect_err("invalid name"),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(
        err.message
            .starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"),
        "{}",
        err.message
    );
    let details = err.details.expect("details");
    assert_eq!(details.kind, "ConfigMap");
    assert_eq!(details.causes[0].field, "metadata.name");
    assert_eq!(details.causes[0].reason, "FieldValueInvalid");
    config_maps
        .create(&PostParams::default(), &named("dotted.name-1"))
        .await
        .expect("a subdomain");

    let namespaces: Api<Namespace> = Api::all(client.clone());
    let err = status_of(
        namespaces
            .create(&PostParams::default(), &named("dotted.name"))
            .await
            .expect_err("namespaces are labels"),
    );
    assert!(
        err.message.contains("a lowercase RFC 1123 label"),
        "{}",
        err.message
    );

    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    let err = status_of(
        services
            .create(&PostParams::default(), &named("1web"))
            .await
            .expect_err("services are DNS-1035 labels"),
    );
    assert!(err.message.contains("a DNS-1035 label"), "{}", err.message);

    let generated: ConfigMap =
        serde_json::from_value(json!({"metadata": {"generateName": "Web-"}})).expect("valid");
    let err = status_of(
        config_maps
            .create(&PostParams::default(), &generated)
            .await
            .expect_err("invalid prefix"),
    );
    assert_eq!(
        err.details.expect("details").causes[0].field,
        "metadata.generateName"
    );
    assert_eq!(
        server
            .list("v1", "ConfigMap", Some("default"))
            .map(|l| l.len())
            .ok(),
        Some(1)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn unsupported_field_selectors_are_bad_requests() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let mut scheduled = pod("a", &[]);
    if let Some(spec) = scheduled.spec.as_mut() {
        spec.node_name = Some("n1".into());
    }
    pods.create(&PostParams::default(), &scheduled).await.expect("a");
    pods.create(&PostParams::default(), &pod("b", &[]))
        .await
        .expect("b");
    let on_n1 = pods
        .list(&ListParams::default().fields("spec.nodeName=n1"))
        .await
        .expect("supported for pods");
    assert_eq!(on_n1.items.len(), 1);
    let named_b = pods
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .expect("supported everywhere");
    assert_eq!(named_b.items.len(), 1);

    let config_maps: Api<ConfigMap> = Api::namespaced(client, "default");
    let err = status_of(
        config_maps
            .list(&ListParams::default().fields("spec.foo=x"))
            .await
            .expect_err("unsupported"),
    );
    assert_eq!(
        (err.code, err.reason.as_str(), err.message.as_str()),
        (
            400,
            "BadRequest",
            r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#
        )
    );
    let watch = get(
        server.addr(),
        "/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=data.k%3Dv",
    )
    .await;
    assert_eq!(watch.status, 400);
    assert_eq!(
        watch.json()["message"],
        r#""data.k" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );
    server.shutdown().await;
}
