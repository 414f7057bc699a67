//! Create: a new object gets its name (or one generated from `generateName`), uid,
//! creationTimestamp and, where its kind keeps one, generation 1, goes through admission and
//! is stored. A client's create cannot set the status of a kind with a status subresource;
//! the server's own components and in-process fixtures can.

use serde_json::{Value, json};

use super::body::check_body;
use super::session::WriteSession;
use crate::builtin::Generation;
use crate::defaults::{GivenStatus, set_create_defaults, set_new_status};
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{name_suffix, new_uid, now_rfc3339, with_type};
use crate::storage::store::{metadata_mut, object_key};

impl WriteSession<'_> {
    /// Creates an object as a client's create does: name (or generateName), uid,
    /// creationTimestamp, generation 1 where its kind keeps one, and the status reset where
    /// its kind has a status subresource.
    pub(crate) fn create(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        object: Value,
    ) -> Result<Value, ApiError> {
        self.create_object(rt, ns, object, GivenStatus::Reset)
    }

    /// Creates an object as [`WriteSession::create`] does, keeping the status it is given:
    /// the server's own components write objects as a controller would after creating them.
    pub(crate) fn create_with_status(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        object: Value,
    ) -> Result<Value, ApiError> {
        self.create_object(rt, ns, object, GivenStatus::Kept)
    }

    fn create_object(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        mut object: Value,
        status: GivenStatus,
    ) -> Result<Value, ApiError> {
        check_body(rt, ns, &mut object)?;
        let now = now_rfc3339();
        let builtin = self.state.registry.is_builtin(rt);
        let generation = Generation::of(rt, builtin);
        let meta = metadata_mut(&mut object);
        let name = match meta.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
            Some(name) => name.to_string(),
            None => match meta
                .get("generateName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
            {
                Some(prefix) => format!("{prefix}{}", name_suffix()),
                None => {
                    return Err(ApiError::invalid(
                        rt,
                        "",
                        "metadata.name",
                        "Required value",
                        "name or generateName is required",
                    ));
                }
            },
        };
        meta.insert("name".into(), json!(name));
        meta.insert("uid".into(), json!(new_uid()));
        meta.insert("creationTimestamp".into(), json!(now));
        generation.on_create(meta);
        for field in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            meta.remove(field);
        }
        set_new_status(rt, builtin, &mut object, status, &now);
        let mut object = with_type(object, rt);
        self.before_create(rt, &object)?;
        self.admit_create(rt, &mut object)?;
        // kube-apiserver's strategies prepare a new object after mutating admission: a pod's
        // QoS class counts the resources its LimitRanges gave it
        set_create_defaults(rt, &mut object);
        if self.state.store.get(rt, &object_key(&object)).is_some() {
            return Err(ApiError::already_exists(rt, &name));
        }
        let stored = self.state.store.put(rt, object);
        self.stored(rt, &stored);
        Ok(stored)
    }
}
