//! The state a server serves: its resource types and its objects, behind one lock so that a
//! write changing the served types (a CRD) changes them together with the objects; reads of one
//! object, and the metadata helpers writes share.

use serde_json::{Value, json};

use crate::registry::{Registry, ResourceType};
use crate::status::ApiError;
use crate::storage::store::{ObjectKey, Store};

/// What an update may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdateMode {
    /// PUT on the resource: the status of types with a status subresource is kept.
    Main,
    /// PUT on `.../status`: only the status changes.
    Status,
    /// Rust API update: everything changes.
    Full,
}

/// The registry and the store, behind one lock so CRD writes and served types change together.
pub(crate) struct State {
    /// Served resource types.
    pub(crate) registry: Registry,
    /// Objects and history.
    pub(crate) store: Store,
    /// Creating an object in a namespace that does not exist first creates the namespace
    /// (otherwise it is refused with 404, as kube-apiserver refuses it).
    pub(crate) auto_create_namespaces: bool,
    /// The nodes a simulated kubelet runs: deleting a pod bound to one of them is graceful
    /// (see `admission::graceful_pod_deletion`). Empty without a kubelet.
    pub(crate) simulated_nodes: std::collections::BTreeSet<String>,
}

/// Current time as RFC 3339 with second precision, like `metav1.Time`.
pub(crate) fn now_rfc3339() -> String {
    jiff::Timestamp::from_second(jiff::Timestamp::now().as_second())
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// Marks an object's metadata as being deleted, as kube-apiserver's graceful deletion does for
/// an object that finalizers keep: a `deletionTimestamp` (now), a grace period of 0, and the
/// generation raised by one where the type keeps one, so that controllers filtering on
/// generation changes see the deletion begin.
pub(crate) fn begin_deletion(meta: &mut serde_json::Map<String, Value>) {
    meta.insert("deletionTimestamp".into(), json!(now_rfc3339()));
    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
    if let Some(generation) = meta.get("generation").and_then(Value::as_i64)
        && generation > 0
    {
        meta.insert("generation".into(), json!(generation + 1));
    }
}

/// The random suffix of a generated name (`generateName`, a pod's token volume): five
/// characters from the alphabet kube-apiserver uses.
pub(crate) fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| ALPHABET[fastrand::usize(..ALPHABET.len())] as char)
        .collect()
}

/// A random UUID (version 4 layout).
pub(crate) fn new_uid() -> String {
    let n = fastrand::u128(..);
    let n = (n & !(0xf << 76)) | (0x4 << 76);
    let n = (n & !(0x3 << 62)) | (0x2 << 62);
    let h = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Sets `apiVersion` and `kind` of an object to those of `rt`.
pub(crate) fn with_type(mut object: Value, rt: &ResourceType) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), json!(rt.api_version()));
        map.insert("kind".into(), json!(rt.kind));
    }
    object
}

/// `object` without `apiVersion` and `kind`: an item of a built-in list.
pub(crate) fn without_type(mut object: Value) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.remove("apiVersion");
        map.remove("kind");
    }
    object
}

impl State {
    /// State with the given types and history size.
    pub(crate) fn new(registry: Registry, history_limit: usize) -> Self {
        Self {
            registry,
            store: Store::new(history_limit),
            auto_create_namespaces: false,
            simulated_nodes: std::collections::BTreeSet::new(),
        }
    }

    /// Current object or 404.
    pub(crate) fn get(&self, rt: &ResourceType, ns: Option<&str>, name: &str) -> Result<Value, ApiError> {
        self.store
            .get(rt, &key(rt, ns, name))
            .map(|o| with_type(o.clone(), rt))
            .ok_or_else(|| ApiError::not_found(rt, name))
    }
}

/// Storage key of `name` in `ns` (ignored for cluster-scoped types; `default` when a
/// namespaced type has none).
pub(crate) fn key(rt: &ResourceType, ns: Option<&str>, name: &str) -> ObjectKey {
    let ns = if rt.namespaced {
        ns.unwrap_or("default")
    } else {
        ""
    };
    (ns.to_string(), name.to_string())
}
