//! The checks every written body goes through first: a JSON object of the URL's type, in the
//! URL's namespace, read as kube-apiserver reads it into its Go type.

use serde_json::{Value, json};

use crate::defaults::set_defaults;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::store::{as_stored, metadata_mut};

/// Checks the body's `apiVersion`/`kind` and namespace and sets the URL's namespace; a body of
/// a built-in kind loses what Go's type would not keep ([`as_stored`]) and gets the defaults of
/// its kind ([`set_defaults`]), so that a write differs from the stored object (a new revision,
/// a new generation) only where kube-apiserver's would.
pub(crate) fn check_body(rt: &ResourceType, ns: Option<&str>, object: &mut Value) -> Result<(), ApiError> {
    if !object.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    if let Some(av) = object["apiVersion"].as_str()
        && !av.is_empty()
        && av != rt.api_version()
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({})",
            rt.api_version()
        )));
    }
    if let Some(kind) = object["kind"].as_str()
        && !kind.is_empty()
        && kind != rt.kind
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            rt.kind
        )));
    }
    let meta = metadata_mut(object);
    if rt.namespaced {
        let ns = ns.unwrap_or("default");
        match meta.get("namespace").and_then(Value::as_str) {
            Some(body_ns) if !body_ns.is_empty() && body_ns != ns => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {
                meta.insert("namespace".into(), json!(ns));
            }
        }
    } else {
        meta.remove("namespace");
    }
    as_stored(rt, object);
    set_defaults(rt, object);
    Ok(())
}

/// Makes the `resourceVersion` of the body a subresource write sent (`wanted`) the
/// precondition of writing `new`: the stored object's version when the body has none, so a
/// body without one is no precondition.
pub(crate) fn precondition_of(new: &mut Value, wanted: &Value) {
    match wanted["metadata"]["resourceVersion"]
        .as_str()
        .filter(|rv| !rv.is_empty())
    {
        Some(rv) => new["metadata"]["resourceVersion"] = json!(rv),
        None => {
            if let Some(meta) = new["metadata"].as_object_mut() {
                meta.remove("resourceVersion");
            }
        }
    }
}
