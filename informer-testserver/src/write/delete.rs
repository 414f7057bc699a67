//! Delete: preconditions, then the plugins (a namespace's termination, a delete's
//! propagation to dependents), then finalizers, which keep the object marked as being deleted
//! until they are removed; delete-collection deletes each object a selector matches.

use serde_json::Value;

use super::session::WriteSession;
use crate::registry::ResourceType;
use crate::selector::ObjectFilter;
use crate::status::ApiError;
use crate::storage::state::{begin_deletion, key, with_type};
use crate::storage::store::{ObjectKey, meta_str, metadata_mut};

impl WriteSession<'_> {
    /// Deletes an object (honouring `preconditions` and finalizers).
    pub(crate) fn delete(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        options: &Value,
    ) -> Result<Value, ApiError> {
        let k = key(rt, ns, name);
        let Some(old) = self.state.store.get(rt, &k).cloned() else {
            return Err(ApiError::not_found(rt, name));
        };
        let pre = &options["preconditions"];
        if let Some(uid) = pre["uid"].as_str() {
            let actual = meta_str(&old, "uid").unwrap_or_default();
            if uid != actual {
                return Err(ApiError::conflict_with(
                    rt,
                    name,
                    &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"),
                ));
            }
        }
        if let Some(rv) = pre["resourceVersion"].as_str() {
            let actual = meta_str(&old, "resourceVersion").unwrap_or_default();
            if rv != actual {
                return Err(ApiError::conflict_with(
                    rt,
                    name,
                    &format!(
                        "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                    ),
                ));
            }
        }
        if let Some(answer) = self.deleting(rt, &old, options)? {
            return Ok(answer);
        }
        if old["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
        {
            if old["metadata"]["deletionTimestamp"].is_string() {
                return Ok(with_type(old, rt));
            }
            let mut new = old;
            begin_deletion(metadata_mut(&mut new));
            let stored = with_type(self.state.store.put(rt, new), rt);
            // what acts on a deleted object's finalizers may act at once
            self.stored(rt, &stored);
            return Ok(stored);
        }
        self.remove(rt, &k).ok_or_else(|| ApiError::not_found(rt, name))
    }

    /// Deletes every object passing `filter`; returns the deleted objects.
    pub(crate) fn delete_collection(
        &mut self,
        rt: &ResourceType,
        filter: &ObjectFilter,
    ) -> Result<Vec<Value>, ApiError> {
        let objects = self.state.store.snapshot(rt, None)?;
        let mut deleted = Vec::new();
        for (k, object) in objects {
            if filter.matches(&object) {
                let ns = (!k.0.is_empty()).then_some(k.0.as_str());
                deleted.push(self.delete(rt, ns, &k.1, &Value::Null)?);
            }
        }
        Ok(deleted)
    }

    /// Removes an object now; the plugins act on its removal (its dependents are garbage
    /// collected, its namespace may end, a CRD takes its resources away).
    pub(crate) fn remove(&mut self, rt: &ResourceType, k: &ObjectKey) -> Option<Value> {
        let removed = with_type(self.state.store.remove(&rt.storage_key(), k)?, rt);
        self.removed(rt, &removed);
        Some(removed)
    }
}
