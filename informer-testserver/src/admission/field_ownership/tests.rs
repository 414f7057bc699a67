//! Scenarios of kube-apiserver's field manager tests and structured-merge-diff's apply tests
//! (ported as scenarios, named after the Go tests they follow).

use serde_json::{Value, json};

use super::list_types::{ListType, tests::Fixed};
use super::*;

fn writer(manager: &str) -> Writer {
    Writer {
        manager: manager.into(),
        api_version: "apps/v1".into(),
        subresource: None,
    }
}

fn types() -> Fixed {
    Fixed::new(&[
        ("spec.containers", ListType::Map(vec!["name".into()])),
        ("metadata.finalizers", ListType::Set),
    ])
}

fn apply_as(live: &Value, manager: &str, config: Value, force: bool) -> Result<Value, ApiError> {
    let list_types = types();
    let writer = writer(manager);
    let options = Apply {
        writer: &writer,
        force,
        list_types: &list_types,
        with_status: false,
    };
    apply(live, &config, &options)
}

fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_owned(),
                e["operation"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// TestApplyStripsFields / TestApplyNewObject: an apply owns exactly the fields it sets.
#[test]
fn a_first_apply_owns_what_it_applied() {
    let object = apply_as(
        &json!({}),
        "a",
        json!({"metadata": {"name": "x", "labels": {"l": "1"}}, "spec": {"replicas": 2}}),
        false,
    )
    .expect("applied");
    assert_eq!(object["spec"]["replicas"], 2);
    let entry = &object["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "a");
    assert_eq!(entry["operation"], "Apply");
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:l": {}}}, "f:spec": {"f:replicas": {}}})
    );
}

/// TestApplyUpdateApplyConflictForced / structured-merge-diff's TestMultipleAppliersFieldConflict.
#[test]
fn a_second_applier_conflicts_unless_forced() {
    let live = apply_as(&json!({}), "a", json!({"spec": {"replicas": 2}}), false).expect("applied");
    let error = apply_as(&live, "b", json!({"spec": {"replicas": 3}}), false).expect_err("conflict");
    assert_eq!(error.code, 409);
    assert_eq!(
        error.message,
        "Apply failed with 1 conflict: conflict with \"a\" using apps/v1: .spec.replicas"
    );
    let forced = apply_as(&live, "b", json!({"spec": {"replicas": 3}}), true).expect("forced");
    assert_eq!(forced["spec"]["replicas"], 3);
    assert_eq!(
        managers(&forced),
        [("b".to_owned(), "Apply".to_owned())],
        "a lost its only field"
    );
}

/// structured-merge-diff's TestMultipleAppliersSet: the same value applied twice is shared.
#[test]
fn appliers_of_the_same_value_share_it_and_it_stays_while_one_applies_it() {
    let live = apply_as(
        &json!({}),
        "a",
        json!({"spec": {"replicas": 2, "paused": true}}),
        false,
    )
    .expect("a");
    let live =
        apply_as(&live, "b", json!({"spec": {"replicas": 2}}), false).expect("no conflict: same value");
    let live = apply_as(&live, "a", json!({"spec": {"paused": true}}), false).expect("a drops replicas");
    assert_eq!(live["spec"]["replicas"], 2, "b still applies it");
    let live = apply_as(&live, "b", json!({"spec": {}}), false).expect("b drops it");
    assert!(
        live["spec"].get("replicas").is_none(),
        "nobody applies it: removed"
    );
    assert_eq!(live["spec"]["paused"], true);
}

/// TestApplyRemovesEmptyManagers and field removal for keyed lists: each applier's items.
#[test]
fn keyed_list_items_belong_to_their_appliers() {
    let live = apply_as(
        &json!({}),
        "a",
        json!({"spec": {"containers": [{"name": "web", "image": "nginx"}]}}),
        false,
    )
    .expect("a");
    let live = apply_as(
        &live,
        "b",
        json!({"spec": {"containers": [{"name": "sidecar", "image": "envoy"}]}}),
        false,
    )
    .expect("b");
    let names = |o: &Value| {
        o["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["name"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&live), ["web", "sidecar"]);
    let error = apply_as(
        &live,
        "b",
        json!({"spec": {"containers": [{"name": "web", "image": "httpd"}]}}),
        false,
    )
    .expect_err("web's image is a's");
    assert!(
        error.message.contains(r#".spec.containers[name="web"].image"#),
        "{}",
        error.message
    );
    let live =
        apply_as(&live, "a", json!({"metadata": {"name": "x"}}), false).expect("a applies no container");
    assert_eq!(names(&live), ["sidecar"]);
    assert_eq!(managers(&live), [("b".to_owned(), "Apply".to_owned())]);
}

/// TestUpdateApplyConflict: an update takes the fields it changes, and a later apply of the
/// old value conflicts with the updater.
#[test]
fn updates_take_the_fields_they_change() {
    let live = apply_as(
        &json!({}),
        "a",
        json!({"spec": {"replicas": 2, "paused": false}}),
        false,
    )
    .expect("a");
    let mut edited = live.clone();
    edited["spec"]["replicas"] = json!(5);
    let list_types = types();
    record_update(
        Some(&live),
        &mut edited,
        &writer("kubectl-edit"),
        &list_types,
        false,
    );
    let owners: Vec<(String, Value)> = edited["metadata"]["managedFields"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_owned(),
                e["fieldsV1"].clone(),
            )
        })
        .collect();
    assert_eq!(
        owners,
        [
            ("a".to_owned(), json!({"f:spec": {"f:paused": {}}})),
            ("kubectl-edit".to_owned(), json!({"f:spec": {"f:replicas": {}}})),
        ]
    );
    let error = apply_as(
        &edited,
        "a",
        json!({"spec": {"replicas": 2, "paused": false}}),
        false,
    )
    .expect_err("replicas changed hands");
    assert!(
        error.message.contains("conflict with \"kubectl-edit\""),
        "{}",
        error.message
    );
}

/// A create is an update that owns everything it set.
#[test]
fn creates_own_every_field_they_set() {
    let mut created = json!({"metadata": {"name": "x", "finalizers": ["f"]}, "spec": {"replicas": 1}});
    record_update(None, &mut created, &writer("kube-rs"), &types(), false);
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!(entry["operation"], "Update");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:metadata": {"f:finalizers": {"v:\"f\"": {}}}, "f:spec": {"f:replicas": {}}})
    );
}

#[test]
fn paths_render_as_kube_apiserver_prints_them() {
    let path: Vec<String> = ["f:spec", "f:ports", r#"k:{"port":80,"protocol":"TCP"}"#, "f:name"]
        .iter()
        .map(|e| (*e).to_owned())
        .collect();
    assert_eq!(render_path(&path), r#".spec.ports[port=80,protocol="TCP"].name"#);
    let set: Vec<String> = ["f:metadata", "f:finalizers", r#"v:"x""#]
        .iter()
        .map(|e| (*e).to_owned())
        .collect();
    assert_eq!(render_path(&set), r#".metadata.finalizers[="x"]"#);
}
