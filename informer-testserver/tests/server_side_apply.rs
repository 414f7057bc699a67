//! Server-side apply and field ownership through `kube::Client`: `managedFields` per manager,
//! conflicts and `force`, fields removed when their only applier stops applying them, updates
//! taking fields over, and keyed lists of a CRD's schema owned item by item.

use std::collections::BTreeMap;

use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    api::{Api, DynamicObject, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use serde_json::{Value, json};

fn config_map(data: &[(&str, &str)]) -> Value {
    let data: BTreeMap<&str, &str> = data.iter().copied().collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": data})
}

fn api_error(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("not an API error: {other:?}"),
    }
}

fn owners(cm: &ConfigMap) -> Vec<(String, String)> {
    cm.metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
            )
        })
        .collect()
}

async fn apply(api: &Api<ConfigMap>, manager: &str, config: &Value, force: bool) -> kube::Result<ConfigMap> {
    let mut params = PatchParams::apply(manager);
    if force {
        params = params.force();
    }
    api.patch("settings", &params, &Patch::Apply(config)).await
}

#[tokio::test]
async fn appliers_own_fields_conflict_and_remove_what_they_stop_applying() {
    let server = TestServer::start().await.expect("start");
    let maps: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));

    let created = apply(&maps, "deployer", &config_map(&[("a", "1"), ("b", "2")]), false)
        .await
        .expect("created by apply");
    assert_eq!(owners(&created), [("deployer".to_owned(), "Apply".to_owned())]);
    let fields = created.metadata.managed_fields.as_ref().expect("fields")[0]
        .fields_v1
        .clone()
        .expect("FieldsV1");
    assert_eq!(fields.0, json!({"f:data": {"f:a": {}, "f:b": {}}}));

    let error = apply(&maps, "tuner", &config_map(&[("a", "9")]), false)
        .await
        .expect_err("a belongs to the deployer");
    let status = api_error(error);
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"deployer\" using v1: .data.a"
    );
    let forced = apply(&maps, "tuner", &config_map(&[("a", "9")]), true)
        .await
        .expect("forced");
    assert_eq!(forced.data.as_ref().expect("data")["a"], "9");

    // The deployer stops applying a and b: b goes (nobody else owns it), a stays (the tuner's).
    let dropped = apply(&maps, "deployer", &config_map(&[]), false)
        .await
        .expect("applied");
    let data = dropped.data.clone().unwrap_or_default();
    assert!(!data.contains_key("b"), "b had no other owner: {data:?}");
    assert_eq!(data["a"], "9", "a is the tuner's");
    server.shutdown().await;
}

#[tokio::test]
async fn updates_take_over_the_fields_they_change() {
    let server = TestServer::start().await.expect("start");
    let maps: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    apply(&maps, "deployer", &config_map(&[("a", "1")]), false)
        .await
        .expect("applied");
    let mut edited = maps.get("settings").await.expect("get");
    edited.data = Some([("a".to_owned(), "2".to_owned())].into());
    let params = PostParams {
        field_manager: Some("editor".into()),
        ..PostParams::default()
    };
    let replaced = maps
        .replace("settings", &params, &edited)
        .await
        .expect("replaced");
    assert_eq!(
        owners(&replaced),
        [("editor".to_owned(), "Update".to_owned())],
        "the deployer lost its only field"
    );
    let error = apply(&maps, "deployer", &config_map(&[("a", "1")]), false)
        .await
        .expect_err("the editor owns a now");
    assert!(api_error(error).message.contains("conflict with \"editor\""));

    // A create records its writer, by fieldManager or by the User-Agent.
    let created = maps
        .create(
            &PostParams {
                field_manager: Some("creator".into()),
                ..PostParams::default()
            },
            &serde_json::from_value(json!({"metadata": {"name": "other"}, "data": {"x": "1"}}))
                .expect("valid"),
        )
        .await
        .expect("created");
    assert_eq!(owners(&created), [("creator".to_owned(), "Update".to_owned())]);
    server.shutdown().await;
}

#[tokio::test]
async fn an_apply_needs_a_field_manager_and_force_needs_an_apply() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let request = http::Request::patch("/api/v1/namespaces/default/configmaps/settings")
        .header("content-type", "application/apply-patch+yaml")
        .body(config_map(&[("a", "1")]).to_string().into_bytes())
        .expect("request");
    let status = api_error(client.request::<Value>(request).await.expect_err("no manager"));
    assert_eq!(status.code, 422);
    assert!(status.message.contains("fieldManager"), "{}", status.message);
    let request = http::Request::patch("/api/v1/namespaces/default/configmaps/settings?force=true")
        .header("content-type", "application/merge-patch+json")
        .body(b"{}".to_vec())
        .expect("request");
    let status = api_error(client.request::<Value>(request).await.expect_err("force"));
    assert_eq!(status.code, 422);
    server.shutdown().await;
}

#[tokio::test]
async fn keyed_lists_of_a_crd_are_owned_item_by_item() {
    let server = TestServer::start().await.expect("start");
    server
        .seed_str(
            r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: routes.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: routes, singular: route, kind: Route}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
          properties:
            spec:
              type: object
              properties:
                backends:
                  type: array
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    properties: {name: {type: string}, weight: {type: integer}}
"#,
        )
        .expect("seeded");
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Route"), "routes");
    let routes: Api<DynamicObject> =
        Api::namespaced_with(server.client().expect("client"), "default", &resource);
    let route = |backends: Value| json!({"apiVersion": "example.com/v1", "kind": "Route", "metadata": {"name": "r"}, "spec": {"backends": backends}});
    routes
        .patch(
            "r",
            &PatchParams::apply("team-a"),
            &Patch::Apply(route(json!([{"name": "a", "weight": 1}]))),
        )
        .await
        .expect("a applies its backend");
    routes
        .patch(
            "r",
            &PatchParams::apply("team-b"),
            &Patch::Apply(route(json!([{"name": "b", "weight": 2}]))),
        )
        .await
        .expect("b applies its own backend: no conflict");
    let names = |o: &DynamicObject| {
        o.data["spec"]["backends"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|b| b["name"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&routes.get("r").await.expect("get")), ["a", "b"]);
    let error = routes
        .patch(
            "r",
            &PatchParams::apply("team-b"),
            &Patch::Apply(route(json!([{"name": "a", "weight": 5}]))),
        )
        .await
        .expect_err("a's weight is team-a's");
    assert!(
        api_error(error)
            .message
            .contains(r#".spec.backends[name="a"].weight"#),
        "the conflict names the item"
    );
    let after = routes
        .patch(
            "r",
            &PatchParams::apply("team-a"),
            &Patch::Apply(route(json!([]))),
        )
        .await
        .expect("team-a applies no backend");
    assert_eq!(names(&after), ["b"], "team-a's backend went, team-b's stayed");
    server.shutdown().await;
}
