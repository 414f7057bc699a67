//! Writes of CertificateSigningRequests' `approval` subresource, as kube-apiserver's
//! certificates registry separates approval from issuance: a write of `.../approval` changes
//! `status.conditions` only (spec, metadata and the rest of the status are kept), checked by
//! `admission::csr_conditions`.

use serde_json::Value;

use super::body::precondition_of;
use super::patch_document::{self as patch, PatchType};
use super::session::WriteSession;
use super::strategic_merge;
use crate::admission::csr_conditions::{approval_errors, conditions, set_conditions, stamp};
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::{UpdateMode, now_rfc3339};

impl WriteSession<'_> {
    /// A write of `.../approval`: the conditions of `object` replace the stored CSR's, nothing
    /// else changes. `object`'s `resourceVersion`, when set, is a precondition.
    pub(crate) fn update_approval(
        &mut self,
        rt: &ResourceType,
        name: &str,
        object: &Value,
    ) -> Result<Value, ApiError> {
        let body_name = object["metadata"]["name"].as_str().unwrap_or_default();
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let old = self.state.get(rt, None, name)?;
        let old_conditions = conditions(&old);
        let mut new_conditions = conditions(object);
        let errors = approval_errors(&new_conditions, &old_conditions);
        if !errors.is_empty() {
            return Err(ApiError::invalid_causes(rt, name, &errors));
        }
        stamp(&mut new_conditions, &old_conditions, &now_rfc3339());
        let mut new = old;
        set_conditions(&mut new, new_conditions);
        precondition_of(&mut new, object);
        self.update(rt, None, name, new, UpdateMode::Full)
    }

    /// A patch of `.../approval`: the patch applies to the stored CSR, then its conditions are
    /// written as by [`update_approval`](Self::update_approval). Server-side apply is refused (`415`).
    pub(crate) fn patch_approval(
        &mut self,
        rt: &ResourceType,
        name: &str,
        patch_type: PatchType,
        body: &Value,
    ) -> Result<Value, ApiError> {
        let mut patched = self.state.get(rt, None, name)?;
        match patch_type {
            PatchType::Json => patch::json_patch(&mut patched, body)
                .map_err(|e| ApiError::new(422, "Invalid", e.to_string()))?,
            PatchType::Apply => {
                return Err(ApiError::unsupported_media_type("application/apply-patch+yaml"));
            }
            _ if !body.is_object() => {
                return Err(ApiError::bad_request("the patch must be a JSON object"));
            }
            PatchType::Merge => patch::merge(&mut patched, body),
            PatchType::Strategic => {
                let root = strategic_merge::root_type(&rt.group, &rt.version, &rt.kind)?;
                strategic_merge::apply(&mut patched, body, root)?;
            }
        }
        self.update_approval(rt, name, &patched)
    }
}
