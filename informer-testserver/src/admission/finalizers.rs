//! Finalizers as the server's own controllers read and write them: the garbage collector's
//! `foregroundDeletion` and the storage protection's `kubernetes.io/pv(c)-protection`.

use serde_json::{Map, Value, json};

use crate::admission::plugin::Cascade;
use crate::registry::ResourceType;
use crate::storage::state::UpdateMode;
use crate::storage::store::ObjectKey;

/// Whether `object` holds `finalizer`.
pub(crate) fn has_finalizer(object: &Value, finalizer: &str) -> bool {
    object["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|list| list.iter().any(|f| f == finalizer))
}

/// Adds `finalizer` to the finalizers of `meta` (an object's metadata) unless it is there.
pub(crate) fn add_finalizer(meta: &mut Map<String, Value>, finalizer: &str) {
    let finalizers = meta.entry("finalizers").or_insert_with(|| json!([]));
    if finalizers.is_null() {
        *finalizers = json!([]);
    }
    if let Some(list) = finalizers.as_array_mut()
        && !list.iter().any(|f| f == finalizer)
    {
        list.push(json!(finalizer));
    }
}

/// Removes `finalizer` from the stored object at `key`; an update that removes the last
/// finalizer of a deleted object removes it.
pub(crate) fn remove_finalizer(
    writes: &mut dyn Cascade,
    rt: &ResourceType,
    key: &ObjectKey,
    finalizer: &str,
) {
    let Some(mut object) = writes.state().store.get(rt, key).cloned() else {
        return;
    };
    if let Some(list) = object["metadata"]["finalizers"].as_array_mut() {
        list.retain(|f| f != finalizer);
    }
    let namespace = (!key.0.is_empty()).then_some(key.0.as_str());
    // the object was just read from the store, so the update cannot conflict
    let _ = writes.update(rt, namespace, &key.1, object, UpdateMode::Full);
}
