//! `fieldValidation` and CRD structural schemas through `kube::Client`: unknown and duplicate
//! fields refused under `Strict`, warned about and dropped under `Warn` (the default), dropped
//! silently under `Ignore`; custom resources pruned and validated by their schema; CRDs whose
//! schema is not structural refused.

use informer_testserver::TestServer;
use k8s_openapi::{
    api::core::v1::ConfigMap, apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client,
    api::{DynamicObject, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use serde_json::{Value, json};

fn api_error(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("not an API error: {other:?}"),
    }
}

/// POSTs a raw JSON body; the answer's status, `Warning` headers and body.
async fn post(client: &Client, path: &str, body: &str) -> (u16, Vec<String>, Value) {
    let request = http::Request::post(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body.as_bytes().to_vec())
        .expect("request");
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    let warnings = response
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("a body")
        .to_bytes();
    (
        status,
        warnings,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn unknown_and_duplicate_fields_of_built_in_types() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let body = |name: &str| {
        format!(
            r#"{{"metadata": {{"name": "{name}", "colour": "red"}}, "data": {{"a": "1"}}, "dataa": {{"b": "2"}}}}"#
        )
    };

    let (status, _, answer) = post(
        &client,
        &format!("{CONFIG_MAPS}?fieldValidation=Strict"),
        &body("strict"),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        answer["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: \
         unknown field \"dataa\", unknown field \"metadata.colour\""
    );

    let (status, warnings, answer) = post(&client, CONFIG_MAPS, &body("warned")).await;
    assert_eq!(status, 201, "Warn is the default");
    assert_eq!(
        warnings,
        [
            r#"299 - "unknown field \"dataa\"""#,
            r#"299 - "unknown field \"metadata.colour\"""#
        ]
    );
    assert!(
        answer.get("dataa").is_none(),
        "unknown fields are dropped: {answer}"
    );

    let (status, warnings, _) = post(
        &client,
        &format!("{CONFIG_MAPS}?fieldValidation=Ignore"),
        &body("ignored"),
    )
    .await;
    assert_eq!((status, warnings.len()), (201, 0));

    let duplicate = r#"{"metadata": {"name": "twice", "name": "again"}}"#;
    let (status, _, answer) = post(
        &client,
        &format!("{CONFIG_MAPS}?fieldValidation=Strict"),
        duplicate,
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("duplicate field \"metadata.name\"")
    );

    let (status, _, _) = post(
        &client,
        &format!("{CONFIG_MAPS}?fieldValidation=Loose"),
        &body("x"),
    )
    .await;
    assert_eq!(status, 422, "an unknown mode");
    let stored = Api::<ConfigMap>::default_namespaced(client)
        .get("warned")
        .await
        .expect("stored");
    assert_eq!(stored.data.expect("data")["a"], "1");
    server.shutdown().await;
}

const WIDGETS_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: {type: integer, minimum: 1}
                mode: {type: string, enum: [fast, safe]}
                config: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

#[tokio::test]
async fn custom_resources_are_pruned_and_validated_by_their_schema() {
    let server = TestServer::start().await.expect("start");
    server.seed_str(WIDGETS_CRD).expect("seeded");
    let client = server.client().expect("client");
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    let widget = r#"{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"size": 2, "colour": "red", "config": {"free": [1, 2]}}, "status": {"x": 1}}"#;

    let (status, warnings, answer) = post(&client, path, widget).await;
    assert_eq!(status, 201);
    assert_eq!(
        answer["spec"],
        json!({"size": 2, "config": {"free": [1, 2]}}),
        "unknown fields pruned, preserved ones kept"
    );
    assert!(answer.get("status").is_none());
    assert_eq!(warnings.len(), 2, "{warnings:?}");

    let strict = widget.replace("\"name\": \"w\"", "\"name\": \"s\"");
    let (status, _, answer) = post(&client, &format!("{path}?fieldValidation=Strict"), &strict).await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown field \"spec.colour\"")
    );

    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets");
    let widgets: Api<DynamicObject> = Api::namespaced_with(client, "default", &resource);
    let bad: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "bad"},
        "spec": {"size": "big", "mode": "slow"},
    }))
    .expect("valid JSON");
    let status = api_error(
        widgets
            .create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert!(
        status.message.contains(
            r#"spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#
        ),
        "{}",
        status.message
    );
    assert!(
        status.message.contains(r#"spec.mode: Unsupported value: "slow""#),
        "{}",
        status.message
    );
    let missing: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "empty"}, "spec": {},
    }))
    .expect("valid JSON");
    let status = api_error(
        widgets
            .create(&PostParams::default(), &missing)
            .await
            .expect_err("required"),
    );
    assert!(
        status.message.contains("spec.size: Required value"),
        "{}",
        status.message
    );
    server.shutdown().await;
}

#[tokio::test]
async fn crds_with_schemas_that_are_not_structural_are_refused() {
    let server = TestServer::start().await.expect("start");
    let crds: Api<CustomResourceDefinition> = Api::all(server.client().expect("client"));
    let crd: CustomResourceDefinition =
        serde_yaml_like(&WIDGETS_CRD.replace("size: {type: integer, minimum: 1}", "size: {minimum: 1}"));
    let status = api_error(
        crds.create(&PostParams::default(), &crd)
            .await
            .expect_err("not structural"),
    );
    assert_eq!(status.code, 422);
    assert!(
        status.message.contains(
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type: Required value"
        ),
        "{}",
        status.message
    );
    server.shutdown().await;
}

/// The CRD of a YAML document, through the server's own seed parser's format (JSON via YAML).
fn serde_yaml_like(yaml: &str) -> CustomResourceDefinition {
    let value: Value = serde_saphyr::from_str(yaml).expect("YAML");
    serde_json::from_value(value).expect("a CRD")
}
