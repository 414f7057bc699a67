use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::ObjectMeta;

use super::*;
use crate::cache::{NAMESPACE_INDEX, namespace_indexers};

fn key(text: &str) -> ObjectKey {
    text.parse().expect("a valid key")
}

/// The keys under `value` in index `name`, as text.
fn index_texts<K: Resource>(store: &Store<K>, name: &str, value: &str) -> Vec<String> {
    store
        .index_keys(name, value)
        .unwrap_or_default()
        .iter()
        .map(ObjectKey::to_string)
        .collect()
}

#[test]
fn an_update_within_the_same_bucket_is_seen_through_the_index() {
    let store = Writer::new(namespace_indexers());
    let pod = |rv: &str| {
        Arc::new(Pod {
            metadata: ObjectMeta {
                name: Some("a".into()),
                namespace: Some("ns".into()),
                resource_version: Some(rv.into()),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        })
    };
    store.add(pod("1"));
    store.update(pod("2"));
    let by_index = store
        .by_index(NAMESPACE_INDEX, "ns")
        .expect("the namespace index");
    let versions: Vec<_> = by_index
        .iter()
        .map(|p| p.metadata.resource_version.as_deref())
        .collect();
    assert_eq!(versions, [Some("2")]);
    let stored = store.get_by_key(&key("ns/a")).expect("stored");
    assert!(
        Arc::ptr_eq(&stored, &by_index[0]),
        "the index holds the stored object"
    );
    let via_index = store
        .index(NAMESPACE_INDEX, &pod("3"))
        .expect("the namespace index");
    assert!(Arc::ptr_eq(&stored, &via_index[0]));
    store.delete_by_key(&key("ns/a"));
    assert!(
        store
            .by_index(NAMESPACE_INDEX, "ns")
            .expect("the namespace index")
            .is_empty()
    );
    assert!(store.list_index_func_values(NAMESPACE_INDEX).is_empty());
}

/// A config map named `name` whose "val" data entry is the payload.
fn cm(name: &str, val: &str) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("val".to_owned(), val.to_owned())])),
        ..ConfigMap::default()
    })
}

fn val(obj: &ConfigMap) -> String {
    obj.data
        .as_ref()
        .and_then(|d| d.get("val"))
        .cloned()
        .unwrap_or_default()
}

fn indexers(
    name: &str,
    f: impl Fn(&ConfigMap) -> Vec<String> + Send + Sync + 'static,
) -> Indexers<ConfigMap> {
    HashMap::from([(name.to_owned(), Arc::new(f) as IndexFunc<ConfigMap>)])
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

// Port of client-go TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex.
#[test]
fn delete_removes_empty_sets_from_index() {
    let store = Writer::new(indexers("testmodes", |o| vec![val(o)]));
    store.add(cm("testKey", "testKey"));
    assert_eq!(index_texts(&store, "testmodes", "testKey").len(), 1);
    store.delete_by_key(&key("testKey"));
    assert!(
        store.list_index_func_values("testmodes").is_empty(),
        "empty bucket must be removed"
    );
}

// Port of client-go TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex.
#[test]
fn delete_keeps_non_empty_sets() {
    let store = Writer::new(indexers("testmodes", |_| vec!["testIndex".to_owned()]));
    store.add(cm("retain", "retain"));
    store.add(cm("delete", "delete"));
    assert_eq!(index_texts(&store, "testmodes", "testIndex").len(), 2);
    store.delete_by_key(&key("delete"));
    assert_eq!(index_texts(&store, "testmodes", "testIndex"), vec!["retain"]);
}

// Port of client-go TestThreadSafeStoreIndexingFunctionsWithMultipleValues.
#[test]
fn index_functions_with_multiple_values() {
    let store = Writer::new(indexers("test", |o| {
        val(o).split(',').map(str::to_owned).collect()
    }));
    let check = |foo: &[&str], bar: &[&str], baz: &[&str]| {
        for (value, want) in [("foo", foo), ("bar", bar), ("baz", baz)] {
            assert_eq!(index_texts(&store, "test", value), want, "bucket {value}");
        }
    };
    store.add(cm("key1", "foo"));
    store.add(cm("key2", "bar"));
    check(&["key1"], &["key2"], &[]);
    store.update(cm("key2", "foo,bar"));
    check(&["key1", "key2"], &["key2"], &[]);
    store.update(cm("key1", "foo,bar"));
    check(&["key1", "key2"], &["key1", "key2"], &[]);
    store.add(cm("key3", "foo,bar,baz"));
    check(&["key1", "key2", "key3"], &["key1", "key2", "key3"], &["key3"]);
    store.update(cm("key1", "foo"));
    check(&["key1", "key2", "key3"], &["key2", "key3"], &["key3"]);
    store.update(cm("key2", "bar"));
    check(&["key1", "key3"], &["key2", "key3"], &["key3"]);
    store.delete_by_key(&key("key1"));
    check(&["key3"], &["key2", "key3"], &["key3"]);
    store.delete_by_key(&key("key3"));
    check(&[], &["key2"], &[]);
}

fn pod(name: &str, labels: &[(&str, &str)], annotations: &[(&str, &str)]) -> Arc<Pod> {
    let map = |kv: &[(&str, &str)]| {
        kv.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(map(labels)),
            annotations: Some(map(annotations)),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    })
}

fn names(pods: Vec<Arc<Pod>>) -> Vec<String> {
    sorted(pods.iter().filter_map(|p| p.metadata.name.clone()).collect())
}

// Port of client-go TestGetIndexFuncValues (index_test.go).
#[test]
fn list_index_func_values() {
    let mut idx: Indexers<Pod> = HashMap::new();
    idx.insert(
        "testmodes".into(),
        Arc::new(|p: &Pod| {
            p.metadata
                .labels
                .iter()
                .flatten()
                .filter(|(k, _)| *k == "foo")
                .map(|(_, v)| v.clone())
                .collect()
        }),
    );
    let store = Writer::new(idx);
    store.add(pod("one", &[("foo", "bar")], &[]));
    store.add(pod("two", &[("foo", "bar")], &[]));
    store.add(pod("tre", &[("foo", "biz")], &[]));
    assert_eq!(
        sorted(store.list_index_func_values("testmodes")),
        vec!["bar", "biz"]
    );
}

// Port of client-go TestMultiIndexKeys (index_test.go).
#[test]
fn multi_index_keys() {
    let mut idx: Indexers<Pod> = HashMap::new();
    idx.insert(
        "byUser".into(),
        Arc::new(|p: &Pod| {
            p.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("users"))
                .map(|u| u.split(',').map(str::to_owned).collect())
                .unwrap_or_default()
        }),
    );
    let store = Writer::new(idx);
    store.add(pod("one", &[], &[("users", "ernie,bert")]));
    store.add(pod("two", &[], &[("users", "bert,oscar")]));
    store.add(pod("tre", &[], &[("users", "ernie,elmo")]));
    let by = |v: &str| names(store.by_index("byUser", v).unwrap_or_default());
    assert_eq!(by("ernie"), vec!["one", "tre"]);
    assert_eq!(by("bert"), vec!["one", "two"]);
    assert_eq!(by("elmo"), vec!["tre"]);
    assert_eq!(by("oscar"), vec!["two"]);
    assert!(by("elmo1").is_empty());

    store.delete_by_key(&key("tre"));
    assert_eq!(by("ernie"), vec!["one"]);
    assert!(by("elmo").is_empty());

    store.update(pod("two", &[], &[("users", "oscar")]));
    assert_eq!(by("bert"), vec!["one"]);
}

// Port of client-go TestCache / doTestStore (store_test.go).
#[test]
fn store_add_update_delete_list_replace() {
    let store = Writer::<ConfigMap>::default();
    store.add(cm("foo", "bar"));
    assert_eq!(store.get_by_key(&key("foo")).map(|o| val(&o)), Some("bar".into()));
    store.update(cm("foo", "baz"));
    assert_eq!(store.get_by_key(&key("foo")).map(|o| val(&o)), Some("baz".into()));
    store.delete(&cm("foo", ""));
    assert!(store.get_by_key(&key("foo")).is_none());

    store.add(cm("a", "b"));
    store.add(cm("c", "d"));
    store.add(cm("e", "e"));
    assert_eq!(
        sorted(store.list().iter().map(|o| val(o)).collect()),
        vec!["b", "d", "e"]
    );

    store.replace([cm("foo", "foo"), cm("bar", "bar")]);
    assert_eq!(
        sorted(store.list().iter().map(|o| val(o)).collect()),
        vec!["bar", "foo"]
    );
    assert_eq!(
        sorted(store.list_keys().iter().map(ObjectKey::to_string).collect()),
        vec!["bar", "foo"]
    );
}

// Port of client-go TestIndex / doTestIndex (store_test.go).
#[test]
fn index_returns_objects_sharing_a_value() {
    let store = Writer::new(indexers("by_val", |o| vec![val(o)]));
    for (k, v) in [("a", "b"), ("c", "b"), ("e", "f"), ("g", "h")] {
        store.add(cm(k, v));
    }
    let keys_for = |v: &str| -> Vec<String> {
        sorted(
            store
                .index("by_val", &cm("probe", v))
                .unwrap_or_default()
                .iter()
                .filter_map(|o| o.metadata.name.clone())
                .collect(),
        )
    };
    assert_eq!(keys_for("b"), vec!["a", "c"]);
    assert_eq!(keys_for("f"), vec!["e"]);
    assert_eq!(keys_for("h"), vec!["g"]);
}

#[test]
fn unknown_index_is_an_error() {
    let store = Writer::<ConfigMap>::default();
    let err = store.by_index("nope", "x").expect_err("unknown index");
    assert!(err.to_string().contains("\"nope\""), "{err}");
    assert!(store.index_keys("nope", "x").is_err());
    assert!(store.index("nope", &cm("a", "b")).is_err());
    assert!(store.list_index_func_values("nope").is_empty());
}

#[test]
fn add_indexers_indexes_existing_items_and_rejects_conflicts() {
    let store = Writer::new(indexers("by_val", |o| vec![val(o)]));
    store.add(cm("a", "x"));
    store.add(cm("b", "y"));
    let err = store
        .add_indexers(HashMap::from([
            (
                "by_val".to_owned(),
                Arc::new(|_: &ConfigMap| vec![]) as IndexFunc<ConfigMap>,
            ),
            (
                "by_name".to_owned(),
                Arc::new(|o: &ConfigMap| vec![o.metadata.name.clone().unwrap_or_default()]),
            ),
        ]))
        .expect_err("conflict");
    assert_eq!(
        err,
        Error::IndexerConflict {
            names: vec!["by_val".into()]
        }
    );
    assert!(!store.has_index("by_name"), "a conflict adds nothing");

    store
        .add_indexers(indexers("by_name", |o| {
            vec![o.metadata.name.clone().unwrap_or_default()]
        }))
        .expect("no conflict");
    assert_eq!(index_texts(&store, "by_name", "b"), vec!["b"]);
    store.add(cm("c", "z"));
    assert_eq!(index_texts(&store, "by_name", "c"), vec!["c"]);
}

#[test]
fn namespace_index_puts_cluster_scoped_objects_in_empty_bucket() {
    let store = Writer::<Pod>::new(namespace_indexers());
    let mut p = (*pod("a", &[], &[])).clone();
    p.metadata.namespace = Some("ns1".into());
    store.add(Arc::new(p));
    store.add(pod("cluster", &[], &[]));
    assert_eq!(index_texts(&store, NAMESPACE_INDEX, "ns1"), vec!["ns1/a"]);
    assert_eq!(index_texts(&store, NAMESPACE_INDEX, ""), vec!["cluster"]);
}

/// Indexes by the `val` entry, and panics on the value "panics".
fn panicking_on(val_that_panics: &'static str) -> impl Fn(&ConfigMap) -> Vec<String> + Send + Sync + 'static {
    move |o| {
        let v = val(o);
        assert_ne!(v, val_that_panics, "index function bug");
        vec![v]
    }
}

#[test]
fn a_panicking_index_function_leaves_the_object_out_of_that_index_only() {
    let mut both = indexers("by_val", panicking_on("panics"));
    both.extend(namespace_indexers());
    let store = Writer::new(both);
    store.add(cm("a", "x"));
    store.add(cm("b", "panics"));
    assert_eq!(store.len(), 2, "both stored");
    assert_eq!(index_texts(&store, "by_val", "x"), vec!["a"]);
    assert_eq!(store.list_index_func_values("by_val"), vec!["x"]);
    assert_eq!(sorted(index_texts(&store, NAMESPACE_INDEX, "")), vec!["a", "b"]);

    // an old value that cannot be computed again is found in every bucket
    store.update(cm("a", "panics"));
    assert!(store.list_index_func_values("by_val").is_empty());
    store.update(cm("a", "y"));
    assert_eq!(index_texts(&store, "by_val", "y"), vec!["a"]);
    store.delete(&cm("b", "panics"));
    assert_eq!(index_texts(&store, NAMESPACE_INDEX, ""), vec!["a"]);
}

#[test]
fn replace_and_add_indexers_skip_objects_whose_index_function_panics() {
    let store = Writer::new(indexers("by_val", panicking_on("panics")));
    store.replace([cm("a", "x"), cm("b", "panics")]);
    assert_eq!(store.len(), 2);
    assert_eq!(store.list_index_func_values("by_val"), vec!["x"]);
    store
        .add_indexers(indexers("by_val_too", panicking_on("x")))
        .expect("added");
    assert_eq!(store.list_index_func_values("by_val_too"), vec!["panics"]);
}

#[test]
fn an_index_query_whose_index_function_panics_is_an_error() {
    let store = Writer::new(indexers("by_val", panicking_on("panics")));
    store.add(cm("a", "x"));
    let err = store.index("by_val", &cm("q", "panics")).expect_err("panicked");
    assert_eq!(
        err.to_string(),
        "failed to query index \"by_val\": its index function panicked on the given object: \
         assertion `left != right` failed: index function bug\n  left: \"panics\"\n right: \"panics\""
    );
    assert_eq!(
        store.index("by_val", &cm("q", "x")).map(|v| v.len()),
        Ok(1),
        "the store still works"
    );
}

/// Reads and deletes by an object take the shared object as it is handed out (`&Arc<K>`),
/// and find its key without building it.
#[test]
fn objects_are_found_and_deleted_by_a_shared_object() {
    let store = Writer::<ConfigMap>::default();
    let shared = cm("a", "1");
    store.add(Arc::clone(&shared));
    let found = store.get(&shared).expect("found by the shared object");
    assert!(Arc::ptr_eq(&found, &shared));
    assert!(store.delete(&shared).is_some());
    assert!(store.get(&shared).is_none());
}
