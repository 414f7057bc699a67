//! Patch: a JSON patch, merge patch or strategic merge patch applied to the live object and
//! written as an update; an apply patch goes to server-side apply (`apply.rs`).

use serde_json::Value;

use super::patch_document::{PatchType, json_patch, merge};
use super::session::WriteSession;
use super::strategic_merge;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{UpdateMode, key, with_type};

impl WriteSession<'_> {
    /// Patches an object; an apply patch creates it when missing. Returns the object and
    /// whether it was created.
    pub(crate) fn patch(
        &mut self,
        rt: &ResourceType,
        ns: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &Value,
        status: bool,
    ) -> Result<(Value, bool), ApiError> {
        if patch_type == PatchType::Apply {
            return self.apply(rt, ns, name, body, status);
        }
        let strategic_root = match patch_type {
            PatchType::Strategic => Some(strategic_merge::root_type(&rt.group, &rt.version, &rt.kind)?),
            _ => None,
        };
        let Some(old) = self.state.store.get(rt, &key(rt, ns, name)).cloned() else {
            return Err(ApiError::not_found(rt, name));
        };
        let mut new = with_type(old, rt);
        match patch_type {
            PatchType::Json => {
                json_patch(&mut new, body).map_err(|e| ApiError::new(422, "Invalid", e.to_string()))?
            }
            _ if !body.is_object() => {
                return Err(ApiError::bad_request("the patch must be a JSON object"));
            }
            _ => match strategic_root {
                Some(root) => strategic_merge::apply(&mut new, body, root)?,
                None => merge(&mut new, body),
            },
        }
        let mode = if status {
            UpdateMode::Status
        } else {
            UpdateMode::Main
        };
        self.update(rt, ns, name, new, mode).map(|o| (o, false))
    }
}
