//! A request to a subresource as the HTTP layer hands it over, and the answers and checks the
//! subresources share.

use std::collections::HashMap;

use http::Method;
use serde_json::{Value, json};

use crate::status::ApiError;
use crate::write::patch_document::PatchType;

/// A request to a subresource, its body decoded by the HTTP layer.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    /// The HTTP method.
    pub(crate) method: &'a Method,
    /// The namespace of the URL.
    pub(crate) namespace: Option<&'a str>,
    /// The object's name in the URL.
    pub(crate) name: &'a str,
    /// The query parameters.
    pub(crate) query: &'a HashMap<String, String>,
    /// Every `dryRun` value of the query.
    pub(crate) dry_run: &'a [String],
    /// The decoded body (`null` when there is none): an object, or a patch for `PATCH`.
    pub(crate) body: Value,
    /// The patch type of a `PATCH`.
    pub(crate) patch_type: Option<PatchType>,
    /// Whether the request asks for a connection upgrade (SPDY or WebSocket streams).
    pub(crate) upgrade: bool,
}

/// 405 unless the method is one of `allowed`.
pub(super) fn only(method: &Method, allowed: &[Method]) -> Result<(), ApiError> {
    if allowed.contains(method) {
        Ok(())
    } else {
        Err(ApiError::method_not_allowed(method.as_str()))
    }
}

/// The `Status` a create answers when the subresource returns success without an object.
pub(super) fn success() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

/// The `Status` error of a failure that is not an API error in kube-apiserver (a Go error
/// passed up as is): code 500 or another, no reason, the error's text as message.
pub(super) fn plain_error(code: u16, message: impl Into<String>) -> ApiError {
    ApiError::new(code, "", message)
}

/// A body naming another namespace than the URL is refused, as kube-apiserver's create and
/// update handlers refuse it.
pub(super) fn check_namespace(body: &Value, namespace: Option<&str>) -> Result<(), ApiError> {
    match body["metadata"]["namespace"].as_str() {
        Some(named) if !named.is_empty() && Some(named) != namespace => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => Ok(()),
    }
}
