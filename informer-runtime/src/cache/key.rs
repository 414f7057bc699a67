//! Object keys: the `namespace/name` strings that identify objects in stores, queues and indexes.

use std::{fmt, sync::Arc};

use kube::Resource;

/// A failure to split or parse an object key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The key has more than one `/`.
    #[error(
        "failed to split key {key:?}: unexpected key format, expected \"namespace/name\" or \"name\" (at most one '/')"
    )]
    TooManySegments {
        /// The key that was given.
        key: String,
    },
}

/// The namespace and name of an object, as client-go's `ObjectName`.
///
/// It renders as the object's key: `namespace/name`, or `name` for cluster-scoped objects.
///
/// ```
/// use informer_runtime::ObjectName;
///
/// let name: ObjectName = "default/nginx".parse()?;
/// assert_eq!(name.namespace, "default");
/// assert_eq!(name.name, "nginx");
/// assert_eq!(name.to_string(), "default/nginx");
/// # Ok::<(), informer_runtime::cache::key::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectName {
    /// The namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// The object's name.
    pub name: String,
}

impl ObjectName {
    /// An object name in `namespace` (empty for cluster-scoped objects).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The name of a Kubernetes object, read from its metadata.
    pub fn of<K: Resource>(obj: &K) -> Self {
        let meta = obj.meta();
        Self {
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
        }
    }
}

impl fmt::Display for ObjectName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

impl std::str::FromStr for ObjectName {
    type Err = Error;

    fn from_str(key: &str) -> Result<Self, Error> {
        let (namespace, name) = split_key(key)?;
        Ok(Self::new(namespace, name))
    }
}

/// The key of an object: `namespace/name` when it has a namespace, else `name`
/// (client-go's `MetaNamespaceKeyFunc`).
///
/// ```
/// use informer_runtime::cache::key::object_key;
/// use k8s_openapi::api::core::v1::{Namespace, Pod};
/// use kube::api::ObjectMeta;
///
/// let pod = Pod {
///     metadata: ObjectMeta { name: Some("web".into()), namespace: Some("prod".into()), ..Default::default() },
///     ..Default::default()
/// };
/// assert_eq!(object_key(&pod), "prod/web");
///
/// let ns = Namespace { metadata: ObjectMeta { name: Some("prod".into()), ..Default::default() }, ..Default::default() };
/// assert_eq!(object_key(&ns), "prod");
/// ```
pub fn object_key<K: Resource>(obj: &K) -> String {
    let meta = obj.meta();
    key_of(
        meta.namespace.as_deref().unwrap_or(""),
        meta.name.as_deref().unwrap_or(""),
    )
}

/// The key for `name` in `namespace` (empty namespace: cluster-scoped).
pub fn key_of(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_owned()
    } else {
        let mut key = String::with_capacity(namespace.len() + 1 + name.len());
        key.push_str(namespace);
        key.push('/');
        key.push_str(name);
        key
    }
}

/// Splits a key into `(namespace, name)` (client-go's `SplitMetaNamespaceKey`).
///
/// `"name"` gives `("", "name")`, `"ns/name"` gives `("ns", "name")`, `"/name"` gives
/// `("", "name")`; a key with two or more `/` is an error.
pub fn split_key(key: &str) -> Result<(&str, &str), Error> {
    let mut parts = key.splitn(3, '/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, None) => Ok(("", name)),
        (Some(namespace), Some(name), None) => Ok((namespace, name)),
        _ => Err(Error::TooManySegments { key: key.to_owned() }),
    }
}

/// Shared key storage: one allocation per key, shared by the store, its indexes and the queue.
pub(crate) type SharedKey = Arc<str>;

#[cfg(test)]
mod tests {
    use super::*;

    // Port of client-go TestObjectNames (object-names_test.go): random strings over
    // "abcdefghi/" either fail to parse (more than one '/') or round-trip through String().
    #[test]
    fn object_names_round_trip_or_fail() {
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
            match s.parse::<ObjectName>() {
                Err(err) => {
                    assert!(slashes > 1, "{s:?} failed with {err}");
                    assert!(err.to_string().contains("unexpected key format"));
                }
                Ok(name) => {
                    assert!(slashes <= 1, "{s:?} should not parse");
                    let expected = s.strip_prefix('/').unwrap_or(&s);
                    assert_eq!(name.to_string(), expected);
                }
            }
        }
    }

    #[test]
    fn split_key_follows_client_go() {
        assert_eq!(split_key(""), Ok(("", "")));
        assert_eq!(split_key("a"), Ok(("", "a")));
        assert_eq!(split_key("ns/a"), Ok(("ns", "a")));
        assert_eq!(split_key("/a"), Ok(("", "a")));
        assert!(split_key("a/b/c").is_err());
    }

    #[test]
    fn key_of_joins_namespace_and_name() {
        assert_eq!(key_of("", "node-1"), "node-1");
        assert_eq!(key_of("kube-system", "dns"), "kube-system/dns");
    }
}
