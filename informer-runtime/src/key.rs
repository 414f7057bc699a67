//! Object keys: the one way the runtime names an object, in stores and their indexes, queues,
//! tombstones, handlers and controllers.

use std::{
    cmp::Ordering,
    fmt,
    hash::{Hash, Hasher},
    str::FromStr,
    sync::Arc,
};

use kube::Resource;

/// A failure to parse an object key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The key has more than one `/`.
    #[error(
        "failed to parse key {key:?}: unexpected key format, expected \"namespace/name\" or \"name\" (at most one '/')"
    )]
    TooManySegments {
        /// The key that was given.
        key: String,
    },
}

/// The key of an object: its namespace (none for a cluster-scoped object) and its name.
///
/// Stores, indexes, work queues, controllers, tombstones and handlers all name objects with
/// this one type (kube-runtime's `ObjectRef` without the type information, client-go's
/// `ObjectName` and `namespace/name` string in one). A key holds its parts in one shared
/// allocation, so cloning it is a reference-count increment, and it keeps its text
/// (`namespace/name`, or `name` for cluster-scoped objects, as client-go's
/// `MetaNamespaceKeyFunc` renders it), so logs and metrics show it without formatting.
///
/// ```
/// use std::sync::Arc;
///
/// use informer_runtime::key::{ObjectKey, ObjectKeyExt};
/// use k8s_openapi::api::core::v1::{Namespace, Pod};
///
/// let key = ObjectKey::new("prod", "web");
/// assert_eq!(key.namespace(), Some("prod"));
/// assert_eq!(key.name(), "web");
/// assert_eq!(key.as_str(), "prod/web");
/// assert_eq!(key, "prod/web".parse::<ObjectKey>()?);
/// assert_eq!(key, "prod/web"); // a key equals its text
/// assert_eq!(key, ObjectKey::from(("prod", "web")));
///
/// let mut pod = Pod::default();
/// pod.metadata.namespace = Some("prod".into());
/// pod.metadata.name = Some("web".into());
/// let pod = Arc::new(pod);
/// assert_eq!(ObjectKey::of(pod.as_ref()), key);
/// assert_eq!(pod.object_key(), key); // also on `Arc<K>`
///
/// let cluster_scoped = ObjectKey::new("", "kube-system");
/// assert_eq!(cluster_scoped.namespace(), None);
/// assert_eq!(cluster_scoped.to_string(), "kube-system");
/// # let _ = Namespace::default();
/// # Ok::<(), informer_runtime::key::Error>(())
/// ```
#[derive(Clone)]
pub struct ObjectKey {
    /// `namespace/name`, or `name` for a cluster-scoped object.
    text: Arc<str>,
    /// The length of the namespace at the start of `text`; 0 for a cluster-scoped object.
    namespace_len: usize,
}

/// Keys are joined on the stack up to this length (a namespace is at most 63 bytes and a name
/// at most 253), so that building a key allocates once.
const STACK_KEY_LEN: usize = 320;

impl ObjectKey {
    /// The key of `name` in `namespace`; an empty namespace is a cluster-scoped object.
    pub fn new(namespace: &str, name: &str) -> Self {
        if namespace.is_empty() {
            return Self {
                text: Arc::from(name),
                namespace_len: 0,
            };
        }
        Self {
            text: join(namespace, name),
            namespace_len: namespace.len(),
        }
    }

    /// The key of an object, read from its metadata (a missing name or namespace counts as
    /// empty).
    pub fn of<K: Resource>(obj: &K) -> Self {
        let parts = KeyParts::of(obj);
        Self::new(parts.namespace, parts.name)
    }

    /// The namespace; `None` for a cluster-scoped object.
    pub fn namespace(&self) -> Option<&str> {
        (self.namespace_len > 0).then(|| &self.text[..self.namespace_len])
    }

    /// The name.
    pub fn name(&self) -> &str {
        if self.namespace_len == 0 {
            &self.text
        } else {
            &self.text[self.namespace_len + 1..]
        }
    }

    /// The key as text: `namespace/name`, or `name` for a cluster-scoped object.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The namespace, empty for a cluster-scoped object.
    fn namespace_or_empty(&self) -> &str {
        &self.text[..self.namespace_len]
    }

    /// The parts that equality, ordering and hashing compare.
    fn parts(&self) -> (&str, &str) {
        (self.namespace_or_empty(), self.name())
    }
}

/// `namespace/name` in one allocation (joined on the stack when it fits).
fn join(namespace: &str, name: &str) -> Arc<str> {
    let len = namespace.len() + 1 + name.len();
    if len > STACK_KEY_LEN {
        return Arc::from(format!("{namespace}/{name}"));
    }
    let mut buffer = [0u8; STACK_KEY_LEN];
    buffer[..namespace.len()].copy_from_slice(namespace.as_bytes());
    buffer[namespace.len()] = b'/';
    buffer[namespace.len() + 1..len].copy_from_slice(name.as_bytes());
    // Two strings joined by an ASCII byte are UTF-8; the fallback only keeps this panic-free.
    std::str::from_utf8(&buffer[..len]).map_or_else(|_| Arc::from(format!("{namespace}/{name}")), Arc::from)
}

impl PartialEq for ObjectKey {
    fn eq(&self, other: &Self) -> bool {
        self.namespace_len == other.namespace_len
            && (Arc::ptr_eq(&self.text, &other.text) || self.text == other.text)
    }
}

impl Eq for ObjectKey {}

impl Hash for ObjectKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // The same as `KeyParts`, so that stores find a key from its parts without building it.
        self.parts().hash(state);
    }
}

impl PartialOrd for ObjectKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// By namespace (cluster-scoped objects first), then by name.
impl Ord for ObjectKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts().cmp(&other.parts())
    }
}

/// A key equals the text it renders as (`namespace/name`, or `name`).
impl PartialEq<str> for ObjectKey {
    fn eq(&self, text: &str) -> bool {
        *self.text == *text
    }
}

/// A key equals the text it renders as (`namespace/name`, or `name`).
impl PartialEq<&str> for ObjectKey {
    fn eq(&self, text: &&str) -> bool {
        *self.text == **text
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ObjectKey").field(&&*self.text).finish()
    }
}

impl AsRef<str> for ObjectKey {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

/// Parses `namespace/name` or `name` (client-go's `SplitMetaNamespaceKey`): `"/name"` is the
/// cluster-scoped `name`, and a key with two or more `/` is an error.
impl FromStr for ObjectKey {
    type Err = Error;

    fn from_str(key: &str) -> Result<Self, Error> {
        let mut parts = key.splitn(3, '/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(name), None, None) => Ok(Self::new("", name)),
            (Some(namespace), Some(name), None) => Ok(Self::new(namespace, name)),
            _ => Err(Error::TooManySegments { key: key.to_owned() }),
        }
    }
}

impl<K: Resource> From<&K> for ObjectKey {
    fn from(obj: &K) -> Self {
        Self::of(obj)
    }
}

impl<K: Resource> From<Arc<K>> for ObjectKey {
    fn from(obj: Arc<K>) -> Self {
        Self::of(obj.as_ref())
    }
}

/// `(namespace, name)`; an empty namespace is a cluster-scoped object.
impl<N: AsRef<str>, M: AsRef<str>> From<(N, M)> for ObjectKey {
    fn from((namespace, name): (N, M)) -> Self {
        Self::new(namespace.as_ref(), name.as_ref())
    }
}

/// `object.object_key()` on any Kubernetes object, and on an `Arc` of one (method calls see
/// through the `Arc`, where `ObjectKey::of(&arc)` would not).
pub trait ObjectKeyExt: Resource + Sized {
    /// The object's key.
    fn object_key(&self) -> ObjectKey {
        ObjectKey::of(self)
    }
}

impl<K: Resource> ObjectKeyExt for K {}

/// A key given by its parts, to look up a store without building an [`ObjectKey`]: it hashes
/// and compares as the key with these parts does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyParts<'a> {
    /// The namespace, empty for a cluster-scoped object.
    pub(crate) namespace: &'a str,
    /// The name.
    pub(crate) name: &'a str,
}

impl<'a> KeyParts<'a> {
    /// The parts of `obj`'s key, borrowed from its metadata (a missing name or namespace
    /// counts as empty).
    pub(crate) fn of<K: Resource>(obj: &'a K) -> Self {
        let meta = obj.meta();
        Self {
            namespace: meta.namespace.as_deref().unwrap_or(""),
            name: meta.name.as_deref().unwrap_or(""),
        }
    }
}

impl Hash for KeyParts<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.namespace, self.name).hash(state);
    }
}

impl hashbrown::Equivalent<ObjectKey> for KeyParts<'_> {
    fn equivalent(&self, key: &ObjectKey) -> bool {
        key.parts() == (self.namespace, self.name)
    }
}

#[cfg(test)]
mod tests;
