//! The review APIs (`tokenreviews`, `selfsubjectreviews`, `subjectaccessreviews`,
//! `selfsubjectaccessreviews`, `localsubjectaccessreviews`, `selfsubjectrulesreviews`),
//! answered as kube-apiserver answers them with an allow-all authorizer
//! (`--authorization-mode=AlwaysAllow`): a review is never stored; the answer is the request
//! with its `status` filled, code 201.
//!
//! Who the caller is, and who a token names: see `http/caller.rs`.

use serde_json::{Value, json};

use crate::http::caller::user_of_token;
use crate::registry::ResourceType;
use crate::status::ApiError;

/// The answer to a review `object` posted to `rt` (in namespace `ns` for the local subject
/// access review) by `caller`.
pub(crate) fn answer(
    rt: &ResourceType,
    ns: Option<&str>,
    mut object: Value,
    caller: &Value,
) -> Result<Value, ApiError> {
    check_type(rt, &mut object)?;
    if let Some(ns) = ns {
        in_namespace(&mut object, ns)?;
    }
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let status = match rt.plural.as_str() {
        "tokenreviews" => token_review(&object)?,
        "selfsubjectreviews" => json!({"userInfo": caller}),
        "subjectaccessreviews" => {
            attributes(rt, &name, &object, false)?;
            subject(rt, &name, &object)?;
            json!({"allowed": true})
        }
        "selfsubjectaccessreviews" => {
            attributes(rt, &name, &object, false)?;
            json!({"allowed": true})
        }
        "localsubjectaccessreviews" => {
            attributes(rt, &name, &object, true)?;
            subject(rt, &name, &object)?;
            json!({"allowed": true})
        }
        _ => json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        }),
    };
    object["status"] = status;
    Ok(object)
}

/// Checks `apiVersion` and `kind` and sets them.
fn check_type(rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
    if !object.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    for (field, expected) in [("apiVersion", rt.api_version()), ("kind", rt.kind.clone())] {
        match object[field].as_str() {
            Some(sent) if !sent.is_empty() && sent != expected => {
                return Err(ApiError::bad_request(format!(
                    "the {field} in the data ({sent}) does not match the expected {field} ({expected})"
                )));
            }
            _ => object[field] = json!(expected),
        }
    }
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    Ok(())
}

/// Sets the object's namespace to the URL's, refusing another one.
fn in_namespace(object: &mut Value, ns: &str) -> Result<(), ApiError> {
    match object["metadata"]["namespace"].as_str() {
        Some(sent) if !sent.is_empty() && sent != ns => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => {
            object["metadata"]["namespace"] = json!(ns);
            Ok(())
        }
    }
}

/// A token review's status: every non-empty token is authenticated.
fn token_review(object: &Value) -> Result<Value, ApiError> {
    let token = object["spec"]["token"].as_str().unwrap_or_default();
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let mut status = json!({"authenticated": true, "user": user_of_token(token)});
    if let Some(audiences) = object["spec"]["audiences"].as_array().filter(|a| !a.is_empty()) {
        status["audiences"] = json!(audiences);
    }
    Ok(status)
}

/// Checks that exactly one of `spec.resourceAttributes` and `spec.nonResourceAttributes` is
/// set (the local review: resource attributes in the object's namespace).
fn attributes(rt: &ResourceType, name: &str, object: &Value, local: bool) -> Result<(), ApiError> {
    let spec = &object["spec"];
    let resource = spec["resourceAttributes"].is_object();
    let non_resource = spec["nonResourceAttributes"].is_object();
    let invalid = |field: &str, cause: &str, detail: &str| ApiError::invalid(rt, name, field, cause, detail);
    if local && non_resource {
        return Err(invalid(
            "spec.nonResourceAttributes",
            "Invalid value",
            "disallowed on this kind of request",
        ));
    }
    match (resource, non_resource) {
        (false, false) => Err(invalid(
            "spec.resourceAttributes",
            "Required value",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        (true, true) => Err(invalid(
            "spec.nonResourceAttributes",
            "Invalid value",
            "cannot be specified in combination with resourceAttributes",
        )),
        _ if local => {
            let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
            let asked = spec["resourceAttributes"]["namespace"]
                .as_str()
                .unwrap_or_default();
            if asked == namespace {
                Ok(())
            } else {
                Err(invalid(
                    "spec.resourceAttributes.namespace",
                    "Invalid value",
                    &format!("{asked:?}: must match metadata.namespace"),
                ))
            }
        }
        _ => Ok(()),
    }
}

/// Checks that a subject access review names a user or a group.
fn subject(rt: &ResourceType, name: &str, object: &Value) -> Result<(), ApiError> {
    let spec = &object["spec"];
    let user = spec["user"].as_str().is_some_and(|u| !u.is_empty());
    let groups = spec["groups"].as_array().is_some_and(|g| !g.is_empty());
    if user || groups {
        Ok(())
    } else {
        Err(ApiError::invalid(
            rt,
            name,
            "spec.user",
            "Invalid value",
            "\"\": at least one of user or group must be specified",
        ))
    }
}
