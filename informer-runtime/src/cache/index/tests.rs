use std::sync::Arc;

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::OwnerReference};
use kube::api::ObjectMeta;

use super::*;
use crate::{
    cache::{Error, Writer, namespace_indexers},
    lister::Lister,
};

static BY_NODE: Index<Pod> = Index::new("by-node", |pod| {
    pod.spec
        .iter()
        .filter_map(|spec| spec.node_name.clone())
        .collect()
});

/// Another function under the same name as [`BY_NODE`].
static BY_NODE_IMPOSTOR: Index<Pod> =
    Index::new("by-node", |pod| pod.metadata.name.iter().cloned().collect());

fn owner(kind: &str, name: &str, uid: &str, controller: Option<bool>) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller,
        ..OwnerReference::default()
    }
}

fn pod(namespace: &str, name: &str, node: Option<&str>, owners: Vec<OwnerReference>) -> Arc<Pod> {
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some(
                [(
                    "app".to_owned(),
                    name.trim_end_matches(char::is_numeric).to_owned(),
                )]
                .into(),
            ),
            owner_references: Some(owners),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    };
    if let Some(node) = node {
        pod.spec.get_or_insert_default().node_name = Some(node.into());
    }
    Arc::new(pod)
}

fn names(objects: &[Arc<Pod>]) -> Vec<String> {
    let mut names: Vec<String> = objects.iter().filter_map(|o| o.metadata.name.clone()).collect();
    names.sort();
    names
}

fn fixture() -> Writer<Pod> {
    let writer = Writer::new(namespace_indexers());
    writer.add(pod(
        "a",
        "web1",
        Some("n1"),
        vec![owner("ReplicaSet", "web", "uid-web", Some(true))],
    ));
    writer.add(pod(
        "a",
        "web2",
        Some("n2"),
        vec![owner("ReplicaSet", "web", "uid-web", Some(true))],
    ));
    writer.add(pod(
        "b",
        "db1",
        Some("n1"),
        vec![
            owner("StatefulSet", "db", "uid-db", Some(true)),
            owner("Thing", "other", "uid-other", None),
        ],
    ));
    writer.add(pod("b", "loose", None, vec![]));
    writer
}

#[test]
fn a_registered_handle_indexes_existing_and_new_objects() {
    let writer = fixture();
    writer.add_index(&BY_NODE).expect("registered");
    let lister = Lister::new(writer.store());
    assert_eq!(
        names(&lister.by_index(&BY_NODE, "n1").expect("registered")),
        ["db1", "web1"]
    );
    writer.add(pod("a", "web3", Some("n1"), vec![]));
    assert_eq!(
        names(&lister.by_index(&BY_NODE, "n1").expect("registered")),
        ["db1", "web1", "web3"]
    );
    assert_eq!(
        names(&lister.by_namespace("a").by_index(&BY_NODE, "n1").expect("ok")),
        ["web1", "web3"]
    );
    assert!(lister.by_index(&BY_NODE, "n9").expect("registered").is_empty());
    assert_eq!(
        writer
            .store()
            .by_index("by-node", "n2")
            .expect("the string API sees it")
            .len(),
        1
    );
}

#[test]
fn registering_the_same_handle_twice_is_a_no_op() {
    let writer = fixture();
    writer.add_index(&BY_NODE).expect("registered");
    writer.add_index(&BY_NODE).expect("the same handle again");
    let copy = BY_NODE;
    writer.add_index(&copy).expect("a copy of the handle");
    assert_eq!(
        Lister::new(writer.store())
            .by_index(&BY_NODE, "n1")
            .expect("ok")
            .len(),
        2
    );
}

#[test]
fn a_name_taken_by_another_function_is_refused() {
    let writer = fixture();
    writer.add_index(&BY_NODE).expect("registered");
    assert_eq!(
        writer.add_index(&BY_NODE_IMPOSTOR),
        Err(Error::IndexerConflict {
            names: vec!["by-node".into()]
        })
    );
    let string_registered = Writer::<Pod>::default();
    string_registered
        .add_indexers([("by-node".to_owned(), BY_NODE_IMPOSTOR.index_func())].into())
        .expect("string API");
    assert!(matches!(
        string_registered.add_index(&BY_NODE),
        Err(Error::IndexerConflict { .. })
    ));
}

#[test]
fn querying_an_unregistered_handle_fails_instead_of_returning_nothing() {
    let writer = fixture();
    let lister = Lister::new(writer.store());
    assert_eq!(
        lister.by_index(&BY_NODE, "n1"),
        Err(Error::IndexNotFound {
            name: "by-node".into()
        })
    );
    assert!(lister.index(&BY_NODE).is_err());
    assert!(lister.by_namespace("a").by_index(&BY_NODE, "n1").is_err());
    writer.add_index(&BY_NODE_IMPOSTOR).expect("registered");
    assert_eq!(
        lister.by_index(&BY_NODE, "n1"),
        Err(Error::IndexFunctionMismatch {
            name: "by-node".into()
        })
    );
    let error = lister.by_index(&BY_NODE, "n1").expect_err("mismatch").to_string();
    assert!(error.starts_with("failed to query index \"by-node\""), "{error}");
}

#[test]
fn by_controller_uid_indexes_only_controllers() {
    let writer = fixture();
    writer.add_index(&Index::BY_CONTROLLER_UID).expect("registered");
    let lister = Lister::new(writer.store());
    let by_uid = lister.index(&Index::BY_CONTROLLER_UID).expect("registered");
    assert_eq!(names(&by_uid.get("uid-web")), ["web1", "web2"]);
    assert_eq!(names(&by_uid.get("uid-db")), ["db1"]);
    assert!(by_uid.get("uid-other").is_empty(), "not a controller");
    let mut values = by_uid.values();
    values.sort();
    assert_eq!(
        values,
        ["uid-db", "uid-web"],
        "objects without a controller are left out"
    );
    assert_eq!(Index::<Pod>::BY_CONTROLLER_UID.name(), BY_CONTROLLER_UID_INDEX);
}

#[test]
fn by_controller_indexes_by_namespace_and_name() {
    let writer = fixture();
    writer.add_index(&Index::BY_CONTROLLER).expect("registered");
    let by_controller = Lister::new(writer.store())
        .index(&Index::BY_CONTROLLER)
        .expect("registered");
    assert_eq!(names(&by_controller.get("a/web")), ["web1", "web2"]);
    assert_eq!(by_controller.keys("b/db"), ["b/db1"]);
    assert!(by_controller.get("b/other").is_empty(), "not a controller");
    assert!(by_controller.get("web").is_empty());
}

#[test]
fn label_indexes_by_the_label_value() {
    let writer = fixture();
    let by_app = Index::label("app");
    assert_eq!(by_app.name(), "label:app");
    writer.add_index(&by_app).expect("registered");
    writer
        .add_index(&Index::label("app"))
        .expect("the same label is the same index");
    assert!(matches!(
        writer.add_index(&Index::new("label:app", |_| Vec::new())),
        Err(Error::IndexerConflict { .. })
    ));
    let lister = Lister::new(writer.store());
    assert_eq!(
        names(&lister.by_index(&by_app, "web").expect("ok")),
        ["web1", "web2"]
    );
    assert_eq!(names(&lister.by_index(&by_app, "loose").expect("ok")), ["loose"]);
    let mut unlabelled = (*pod("c", "bare", None, vec![])).clone();
    unlabelled.metadata.labels = None;
    assert!(by_app.values(&unlabelled).is_empty(), "no label, no value");
    assert!(Lister::new(writer.store()).index(&Index::label("tier")).is_err());
}

#[test]
fn the_namespace_handle_is_the_existing_namespace_index() {
    let writer = fixture();
    let lister = Lister::new(writer.store());
    assert_eq!(
        names(
            &lister
                .by_index(&Index::NAMESPACE, "b")
                .expect("registered by namespace_indexers")
        ),
        ["db1", "loose"]
    );
    writer.add_index(&Index::NAMESPACE).expect("already there");
    let empty = Writer::<Pod>::default();
    empty.add(pod("z", "p", None, vec![]));
    assert!(
        Lister::new(empty.store())
            .by_index(&Index::NAMESPACE, "z")
            .is_err()
    );
    empty.add_index(&Index::NAMESPACE).expect("added");
    assert_eq!(
        Lister::new(empty.store())
            .by_index(&Index::NAMESPACE, "z")
            .expect("ok")
            .len(),
        1
    );
}

#[test]
fn an_index_function_that_panics_leaves_the_object_out() {
    static PANICS: Index<Pod> = Index::new("panics", |pod| {
        assert!(pod.metadata.name.as_deref() != Some("db1"), "no db");
        vec!["all".to_owned()]
    });
    let writer = fixture();
    writer.add_index(&PANICS).expect("registered");
    assert_eq!(
        names(&Lister::new(writer.store()).by_index(&PANICS, "all").expect("ok")),
        ["loose", "web1", "web2"]
    );
}

#[test]
fn built_in_handles_are_the_same_index_wherever_they_are_written() {
    let writer = fixture();
    let uid: Index<Pod> = Index::BY_CONTROLLER_UID;
    writer.add_index(&uid).expect("registered");
    writer
        .add_index(&Index::<Pod>::BY_CONTROLLER_UID)
        .expect("another copy of the built-in is the same index");
    assert!(matches!(
        writer.add_index(&Index::new(BY_CONTROLLER_UID_INDEX, |_| Vec::new())),
        Err(Error::IndexerConflict { .. })
    ));
    assert!(
        matches!(
            writer.add_index(&Index::new(NAMESPACE_INDEX, namespace_index_func::<Pod>)),
            Err(Error::IndexerConflict { .. })
        ),
        "only the built-in handle is the namespace index"
    );
}
