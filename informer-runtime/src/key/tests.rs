use std::{
    collections::hash_map::RandomState,
    hash::{BuildHasher, Hash},
};

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::ObjectMeta;

use super::*;

// Port of client-go TestObjectNames (object-names_test.go): random strings over "abcdefghi/"
// either fail to parse (more than one '/') or round-trip through their text.
#[test]
fn keys_round_trip_or_fail() {
    let alphabet: Vec<char> = "abcdefghi/".chars().collect();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..2000 {
        let s: String = (0..10)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % alphabet.len() as u64) as usize]
            })
            .collect();
        let slashes = s.matches('/').count();
        match s.parse::<ObjectKey>() {
            Err(err) => {
                assert!(slashes > 1, "{s:?} failed with {err}");
                assert!(err.to_string().contains("unexpected key format"));
            }
            Ok(key) => {
                assert!(slashes <= 1, "{s:?} should not parse");
                let expected = s.strip_prefix('/').unwrap_or(&s);
                assert_eq!(key.to_string(), expected);
                assert_eq!(key, ObjectKey::from((key.namespace().unwrap_or(""), key.name())));
            }
        }
    }
}

// Port of client-go TestSplitMetaNamespaceKey's cases (store_test.go).
#[test]
fn parsing_follows_client_go() {
    let parts = |key: &str| {
        key.parse::<ObjectKey>()
            .map(|k| (k.namespace().map(str::to_owned), k.name().to_owned()))
    };
    assert_eq!(parts(""), Ok((None, String::new())));
    assert_eq!(parts("a"), Ok((None, "a".to_owned())));
    assert_eq!(parts("ns/a"), Ok((Some("ns".to_owned()), "a".to_owned())));
    assert_eq!(parts("/a"), Ok((None, "a".to_owned())));
    assert!(parts("a/b/c").is_err());
}

#[test]
fn parts_and_text() {
    let key = ObjectKey::new("kube-system", "dns");
    assert_eq!(key.namespace(), Some("kube-system"));
    assert_eq!(key.name(), "dns");
    assert_eq!(key.as_str(), "kube-system/dns");
    assert_eq!(format!("{key:?}"), "ObjectKey(\"kube-system/dns\")");
    let cluster = ObjectKey::new("", "node-1");
    assert_eq!(cluster.namespace(), None);
    assert_eq!(cluster.name(), "node-1");
    assert_eq!(cluster.as_str(), "node-1");
}

#[test]
fn a_key_longer_than_the_stack_buffer_keeps_its_parts() {
    let namespace = "n".repeat(63);
    let name = "x".repeat(400);
    let key = ObjectKey::new(&namespace, &name);
    assert_eq!(key.namespace(), Some(namespace.as_str()));
    assert_eq!(key.name(), name);
    assert_eq!(key.as_str().len(), 63 + 1 + 400);
    let exactly = "y".repeat(STACK_KEY_LEN - 64);
    assert_eq!(ObjectKey::new(&namespace, &exactly).as_str().len(), STACK_KEY_LEN);
}

#[test]
fn a_cluster_scoped_name_with_a_slash_is_not_a_namespaced_key() {
    let cluster = ObjectKey::new("", "a/b");
    let namespaced = ObjectKey::new("a", "b");
    assert_eq!(cluster.as_str(), namespaced.as_str());
    assert_ne!(cluster, namespaced);
    assert_eq!(cluster.cmp(&namespaced), Ordering::Less);
}

fn hash_of(hasher: &RandomState, value: impl Hash) -> u64 {
    hasher.hash_one(value)
}

#[test]
fn parts_hash_and_compare_as_the_key_does() {
    let hasher = RandomState::new();
    for (namespace, name) in [("", "node-1"), ("prod", "web"), ("", ""), ("a", "b/c")] {
        let key = ObjectKey::new(namespace, name);
        let parts = KeyParts { namespace, name };
        assert_eq!(hash_of(&hasher, &key), hash_of(&hasher, parts), "{key:?}");
        assert!(hashbrown::Equivalent::equivalent(&parts, &key));
        assert!(!hashbrown::Equivalent::equivalent(
            &KeyParts {
                namespace,
                name: "other"
            },
            &key
        ));
    }
    let mut map = hashbrown::HashMap::new();
    map.insert(ObjectKey::new("prod", "web"), 1);
    map.insert(ObjectKey::new("", "web"), 2);
    assert_eq!(
        map.get(&KeyParts {
            namespace: "prod",
            name: "web"
        }),
        Some(&1)
    );
    assert_eq!(
        map.get(&KeyParts {
            namespace: "",
            name: "web"
        }),
        Some(&2)
    );
    assert_eq!(
        map.get(&KeyParts {
            namespace: "dev",
            name: "web"
        }),
        None
    );
}

#[test]
fn keys_order_by_namespace_then_name() {
    let mut keys: Vec<ObjectKey> = ["b/a", "a/b", "z", "a/a", "c"]
        .iter()
        .map(|k| k.parse().expect("a key"))
        .collect();
    keys.sort();
    let texts: Vec<&str> = keys.iter().map(ObjectKey::as_str).collect();
    assert_eq!(texts, ["c", "z", "a/a", "a/b", "b/a"]);
}

#[test]
fn keys_of_objects_and_shared_objects() {
    let pod = Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("prod".into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    });
    let expected = ObjectKey::new("prod", "web");
    assert_eq!(ObjectKey::of(pod.as_ref()), expected);
    assert_eq!(ObjectKey::from(pod.as_ref()), expected);
    assert_eq!(ObjectKey::from(Arc::clone(&pod)), expected);
    assert_eq!(pod.object_key(), expected);
    let borrowed: &Arc<Pod> = &pod;
    assert_eq!(borrowed.object_key(), expected);
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some("prod".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    assert_eq!(namespace.object_key(), ObjectKey::new("", "prod"));
    assert_eq!(ObjectKey::of(&Pod::default()), ObjectKey::new("", ""));
}

#[test]
fn clones_share_the_text() {
    let key = ObjectKey::new("prod", "web");
    let clone = key.clone();
    assert!(std::ptr::eq(key.as_str(), clone.as_str()));
    assert_eq!(key, clone);
}
