//! CertificateSigningRequests' `approval` and `status` subresources, as kube-apiserver's
//! certificates registry separates approval from issuance:
//! - a write of `.../approval` changes `status.conditions` only (spec, metadata and the rest of
//!   the status are kept); `Approved` and `Denied` are mutually exclusive, each may appear once
//!   with status `True`, and an update cannot remove one that is there;
//! - a write of `.../status` cannot change the `Approved` and `Denied` conditions (those of the
//!   stored object are kept), so a signer sets `status.certificate` and `Failed` without
//!   touching the approval.
//!
//! Conditions written without `lastUpdateTime` or `lastTransitionTime` get the time of the write
//! (the transition time of an unchanged condition is kept).

use serde_json::{Value, json};

use crate::patch::{self, PatchType};
use crate::registry::ResourceType;
use crate::state::{State, UpdateMode, now_rfc3339};
use crate::status::{ApiError, FieldCause};
use crate::strategic_merge;

/// The condition types the approval subresource owns.
const APPROVAL_TYPES: [&str; 2] = ["Approved", "Denied"];

fn is_csr(rt: &ResourceType) -> bool {
    rt.group == "certificates.k8s.io" && rt.plural == "certificatesigningrequests"
}

fn conditions(object: &Value) -> Vec<Value> {
    object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn is_approval(condition: &Value) -> bool {
    condition["type"]
        .as_str()
        .is_some_and(|t| APPROVAL_TYPES.contains(&t))
}

/// For a status write of a CSR: the approval conditions of `old` replace those of `new`.
pub(crate) fn keep_approval_conditions(rt: &ResourceType, old: &Value, new: &mut Value) {
    if !is_csr(rt) {
        return;
    }
    let mut kept: Vec<Value> = conditions(new).into_iter().filter(|c| !is_approval(c)).collect();
    kept.extend(conditions(old).into_iter().filter(is_approval));
    set_conditions(new, kept);
}

fn set_conditions(object: &mut Value, conditions: Vec<Value>) {
    if !object["status"].is_object() {
        if conditions.is_empty() {
            return;
        }
        object["status"] = json!({});
    }
    if conditions.is_empty() {
        if let Some(status) = object["status"].as_object_mut() {
            status.remove("conditions");
        }
    } else {
        object["status"]["conditions"] = Value::Array(conditions);
    }
}

/// Fills missing condition times: now, or the old transition time of an unchanged condition.
fn stamp(conditions: &mut [Value], old: &[Value], now: &str) {
    for condition in conditions.iter_mut() {
        if condition["lastUpdateTime"].as_str().is_none_or(str::is_empty) {
            condition["lastUpdateTime"] = json!(now);
        }
        if condition["lastTransitionTime"].as_str().is_none_or(str::is_empty) {
            let before = old
                .iter()
                .find(|o| o["type"] == condition["type"] && o["status"] == condition["status"])
                .and_then(|o| o["lastTransitionTime"].as_str());
            condition["lastTransitionTime"] = json!(before.unwrap_or(now));
        }
    }
}

/// The field errors of approval conditions `new` replacing `old`.
fn approval_errors(new: &[Value], old: &[Value]) -> Vec<FieldCause> {
    let cause = |field: String, cause_type: &str, detail: String| FieldCause {
        field,
        cause_type: cause_type.to_string(),
        detail,
    };
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in new.iter().enumerate() {
        let Some(kind) = condition["type"].as_str().filter(|t| !t.is_empty()) else {
            errors.push(cause(
                format!("status.conditions[{i}].type"),
                "Required value",
                String::new(),
            ));
            continue;
        };
        if !(APPROVAL_TYPES.contains(&kind) || kind == "Failed") {
            continue;
        }
        if seen.contains(&kind) {
            errors.push(cause(
                format!("status.conditions[{i}].type"),
                "Duplicate value",
                format!("{kind:?}"),
            ));
        }
        seen.push(kind);
        let status = condition["status"].as_str().unwrap_or_default();
        if APPROVAL_TYPES.contains(&kind) && status != "True" {
            errors.push(cause(
                format!("status.conditions[{i}].status"),
                "Unsupported value",
                format!("{status:?}: supported values: \"True\""),
            ));
        }
    }
    if seen.contains(&"Approved") && seen.contains(&"Denied") {
        errors.push(cause(
            "status.conditions".into(),
            "Invalid value",
            "\"Approved\": Approved and Denied conditions are mutually exclusive".into(),
        ));
    }
    for kind in APPROVAL_TYPES {
        let had = old.iter().any(|c| c["type"] == kind);
        if had && !seen.contains(&kind) {
            errors.push(cause(
                "status.conditions".into(),
                "Forbidden",
                format!("updates may not remove a condition of type {kind:?}"),
            ));
        }
    }
    errors
}

impl State {
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
        let old = self.get(rt, None, name)?;
        let old_conditions = conditions(&old);
        let mut new_conditions = conditions(object);
        let errors = approval_errors(&new_conditions, &old_conditions);
        if !errors.is_empty() {
            return Err(ApiError::invalid_causes(rt, name, &errors));
        }
        stamp(&mut new_conditions, &old_conditions, &now_rfc3339());
        let mut new = old;
        set_conditions(&mut new, new_conditions);
        match object["metadata"]["resourceVersion"].as_str() {
            Some(rv) if !rv.is_empty() => new["metadata"]["resourceVersion"] = json!(rv),
            _ => {
                if let Some(meta) = new["metadata"].as_object_mut() {
                    meta.remove("resourceVersion");
                }
            }
        }
        self.update(rt, None, name, new, UpdateMode::Full)
    }

    /// A patch of `.../approval`: the patch applies to the stored CSR, then its conditions are
    /// written as by [`State::update_approval`]. Server-side apply is refused (`415`).
    pub(crate) fn patch_approval(
        &mut self,
        rt: &ResourceType,
        name: &str,
        patch_type: PatchType,
        body: &Value,
    ) -> Result<Value, ApiError> {
        let mut patched = self.get(rt, None, name)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(kind: &str, status: &str) -> Value {
        json!({"type": kind, "status": status})
    }

    #[test]
    fn approval_conditions_are_checked() {
        let approved = condition("Approved", "True");
        let denied = condition("Denied", "True");
        assert!(approval_errors(std::slice::from_ref(&approved), &[]).is_empty());
        let both = approval_errors(&[approved.clone(), denied], &[]);
        assert_eq!(both.len(), 1);
        assert!(both[0].detail.contains("mutually exclusive"));
        let twice = approval_errors(&[approved.clone(), approved.clone()], &[]);
        assert_eq!(twice[0].cause_type, "Duplicate value");
        let unsupported = approval_errors(&[condition("Approved", "False")], &[]);
        assert_eq!(unsupported[0].field, "status.conditions[0].status");
        let removed = approval_errors(&[], &[approved]);
        assert_eq!(removed[0].cause_type, "Forbidden");
    }

    #[test]
    fn status_writes_keep_the_stored_approval() {
        let csr = ResourceType::new(
            "certificates.k8s.io",
            "v1",
            "CertificateSigningRequest",
            "certificatesigningrequests",
            false,
        );
        let old = json!({"status": {"conditions": [condition("Approved", "True")]}});
        let mut new = json!({"status": {"certificate": "Y2VydA==", "conditions": [condition("Denied", "True"), condition("Failed", "True")]}});
        keep_approval_conditions(&csr, &old, &mut new);
        assert_eq!(
            new["status"]["conditions"],
            json!([condition("Failed", "True"), condition("Approved", "True")])
        );
        assert_eq!(new["status"]["certificate"], "Y2VydA==");
    }
}
