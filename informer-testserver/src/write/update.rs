//! Update: an object replaced as a whole, under its resourceVersion precondition; what the
//! [`UpdateMode`] keeps of the old object is kept, and `generation` counts the changes its
//! kind's strategy compares ([`Generation`]).

use serde_json::{Value, json};

use super::body::check_body;
use super::session::WriteSession;
use crate::admission::csr_conditions::keep_approval_conditions;
use crate::builtin::Generation;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{UpdateMode, key, with_type};
use crate::storage::store::{as_stored, meta_str, metadata_mut, object_key};

impl WriteSession<'_> {
    /// Replaces an object, checking the resourceVersion precondition.
    pub(crate) fn update(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        mut object: Value,
        mode: UpdateMode,
    ) -> Result<Value, ApiError> {
        check_body(rt, ns, &mut object)?;
        let body_name = meta_str(&object, "name").unwrap_or_default().to_string();
        if body_name.is_empty() {
            metadata_mut(&mut object).insert("name".into(), json!(name));
        } else if body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let Some(old) = self.state.store.get(rt, &key(rt, ns, name)).cloned() else {
            return Err(ApiError::not_found(rt, name));
        };
        if let Some(rv) = meta_str(&object, "resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != meta_str(&old, "resourceVersion")
        {
            return Err(ApiError::conflict(rt, name));
        }
        let mut new = match mode {
            UpdateMode::Status => {
                let mut new = old.clone();
                if let Some(map) = new.as_object_mut() {
                    map.insert(
                        "status".into(),
                        object.get("status").cloned().unwrap_or(Value::Null),
                    );
                }
                keep_approval_conditions(rt, &old, &mut new);
                new
            }
            UpdateMode::Main if rt.status_subresource => {
                let mut new = object;
                if let Some(map) = new.as_object_mut() {
                    match old.get("status") {
                        Some(status) => map.insert("status".into(), status.clone()),
                        None => map.remove("status"),
                    };
                }
                new
            }
            _ => object,
        };
        let old_meta = old.get("metadata").cloned().unwrap_or_default();
        let meta = metadata_mut(&mut new);
        for field in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            match old_meta.get(field) {
                Some(v) => meta.insert(field.into(), v.clone()),
                None => meta.remove(field),
            };
        }
        Generation::of(rt, self.state.registry.is_builtin(rt)).on_update(&old, &mut new);
        let mut new = with_type(new, rt);
        self.admit_update(rt, &old, &mut new)?;
        // compared as stored: admission may add what the stored form leaves out (an empty
        // field manager's name)
        as_stored(rt, &mut new);
        if without_rv(&new) == without_rv(&old) {
            return Ok(with_type(old, rt));
        }
        // As kube-apiserver's `shouldDeleteDuringUpdate`: only an object whose deletion has no
        // grace period left (a pod in graceful deletion stays until its kubelet removes it).
        let finalized = new["metadata"]["deletionTimestamp"].is_string()
            && old["metadata"]["deletionGracePeriodSeconds"]
                .as_i64()
                .unwrap_or(0)
                == 0
            && new["metadata"]["finalizers"].as_array().is_none_or(Vec::is_empty)
            && !self.held(rt, &new);
        if finalized {
            self.state.store.put(rt, new.clone());
            return self
                .remove(rt, &object_key(&new))
                .ok_or_else(|| ApiError::not_found(rt, name));
        }
        let stored = self.state.store.put(rt, new);
        self.stored(rt, &stored);
        Ok(stored)
    }
}

fn without_rv(object: &Value) -> Value {
    let mut v = object.clone();
    metadata_mut(&mut v).remove("resourceVersion");
    v
}
