//! The conditions of CertificateSigningRequests, as kube-apiserver's certificates registry
//! separates approval from issuance:
//! - a write of `.../approval` sets the conditions; `Approved` and `Denied` are mutually
//!   exclusive, each may appear once with status `True`, and an update cannot remove one that
//!   is there;
//! - a write of `.../status` cannot change the `Approved` and `Denied` conditions (those of the
//!   stored object are kept), so a signer sets `status.certificate` and `Failed` without
//!   touching the approval.
//!
//! Conditions written without `lastUpdateTime` or `lastTransitionTime` get the time of the write
//! (the transition time of an unchanged condition is kept).

use serde_json::{Value, json};

use crate::admission::context::WriteContext;
use crate::admission::plugin::Plugin;
use crate::registry::ResourceType;
use crate::status::{ApiError, FieldCause};
use crate::storage::state::State;

/// The condition types the approval subresource owns.
const APPROVAL_TYPES: [&str; 2] = ["Approved", "Denied"];

fn is_csr(rt: &ResourceType) -> bool {
    rt.group == "certificates.k8s.io" && rt.plural == "certificatesigningrequests"
}

pub(crate) fn conditions(object: &Value) -> Vec<Value> {
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

/// The CSR strategy as a write plugin: a new CSR written over HTTP records its creator.
pub(crate) struct CertificateSigningRequests;

impl Plugin for CertificateSigningRequests {
    fn admit_create(
        &self,
        _state: &State,
        context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        if is_csr(rt) && !context.user.is_null() {
            prepare_for_create(object, &context.user);
        }
        Ok(())
    }
}

/// A CSR as kube-apiserver stores a new one: `spec.username`, `uid`, `groups` and `extra` are
/// those of its creator (`user`), and the status is empty (no one creates a request already
/// approved).
fn prepare_for_create(object: &mut Value, user: &Value) {
    if !object["spec"].is_object() {
        return;
    }
    if let Some(spec) = object["spec"].as_object_mut() {
        for field in ["username", "uid", "groups", "extra"] {
            spec.remove(field);
        }
        for field in ["username", "uid", "groups", "extra"] {
            if let Some(value) = user.get(field) {
                spec.insert(field.into(), value.clone());
            }
        }
    }
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
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

pub(crate) fn set_conditions(object: &mut Value, conditions: Vec<Value>) {
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
pub(crate) fn stamp(conditions: &mut [Value], old: &[Value], now: &str) {
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
pub(crate) fn approval_errors(new: &[Value], old: &[Value]) -> Vec<FieldCause> {
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
    fn new_requests_name_their_creator_and_are_not_approved() {
        let csr = ResourceType::new(
            "certificates.k8s.io",
            "v1",
            "CertificateSigningRequest",
            "certificatesigningrequests",
            false,
        );
        let mut stored = json!({"spec": {"username": "admin", "groups": ["system:masters"], "signerName": "s"}, "status": {"conditions": [condition("Approved", "True")]}});
        let mut context = WriteContext {
            user: json!({"username": "alice", "groups": ["system:authenticated"]}),
            ..WriteContext::default()
        };
        let state = State::new(crate::registry::Registry::default(), 10);
        CertificateSigningRequests
            .admit_create(&state, &mut context, &csr, &mut stored)
            .expect("admitted");
        assert_eq!(
            stored,
            json!({"spec": {"username": "alice", "groups": ["system:authenticated"], "signerName": "s"}})
        );
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
