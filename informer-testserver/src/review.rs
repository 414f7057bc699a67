//! The review APIs (`tokenreviews`, `selfsubjectreviews`, `subjectaccessreviews`,
//! `selfsubjectaccessreviews`, `localsubjectaccessreviews`, `selfsubjectrulesreviews`),
//! answered as kube-apiserver answers them with an allow-all authorizer
//! (`--authorization-mode=AlwaysAllow`): a review is never stored; the answer is the request
//! with its `status` filled, code 201.
//!
//! Who a caller is, and who a token names, the server learns without checking anything (it has
//! no credentials to check):
//! - a request without an `Authorization` header is `system:anonymous` in the group
//!   `system:unauthenticated`, as with kube-apiserver's anonymous authentication;
//! - a bearer token that is a JWT (a service account token) names the user of its `sub` claim;
//!   `system:serviceaccount:NS:NAME` users are in `system:serviceaccounts` and
//!   `system:serviceaccounts:NS`;
//! - any other bearer token names the user of that name (the token `alice` is user `alice`);
//! - basic authentication names the user of its user name.
//!
//! Authenticated users are also in `system:authenticated`. A `TokenReview` reviews its
//! `spec.token` by the same rules, so every non-empty token is authenticated.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::status::ApiError;

/// The `UserInfo` of the caller whose request carries this `Authorization` header value (empty
/// when there is none).
pub(crate) fn caller(authorization: &str) -> Value {
    let authorization = authorization.trim();
    if let Some(token) = authorization.strip_prefix("Bearer ") {
        return user_of_token(token.trim());
    }
    if let Some(user) = authorization
        .strip_prefix("Basic ")
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b.trim()).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.split(':').next().map(str::to_string))
        .filter(|user| !user.is_empty())
    {
        return authenticated(&user, &[]);
    }
    json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]})
}

/// The `UserInfo` a bearer token names (see the module doc).
fn user_of_token(token: &str) -> Value {
    match jwt_subject(token) {
        Some(subject) => {
            let namespace = subject
                .strip_prefix("system:serviceaccount:")
                .and_then(|rest| rest.split(':').next())
                .map(str::to_string);
            match namespace {
                Some(ns) => authenticated(
                    &subject,
                    &["system:serviceaccounts", &format!("system:serviceaccounts:{ns}")],
                ),
                None => authenticated(&subject, &[]),
            }
        }
        None => authenticated(token, &[]),
    }
}

fn authenticated(username: &str, groups: &[&str]) -> Value {
    let mut all: Vec<&str> = groups.to_vec();
    all.push("system:authenticated");
    json!({"username": username, "groups": all})
}

/// The `sub` claim of a JWT, when `token` is one.
fn jwt_subject(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims["sub"].as_str().map(str::to_string)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_are_named_by_their_credentials() {
        assert_eq!(caller("")["username"], "system:anonymous");
        assert_eq!(caller("Bearer alice")["username"], "alice");
        assert_eq!(caller("Bearer alice")["groups"], json!(["system:authenticated"]));
        let basic = base64::engine::general_purpose::STANDARD.encode("bob:secret");
        assert_eq!(caller(&format!("Basic {basic}"))["username"], "bob");
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"sub":"system:serviceaccount:ns:builder"}"#);
        let sa = caller(&format!("Bearer eyJhbGciOiJSUzI1NiJ9.{payload}.c2ln"));
        assert_eq!(sa["username"], "system:serviceaccount:ns:builder");
        assert_eq!(
            sa["groups"],
            json!([
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                "system:authenticated"
            ])
        );
    }
}
