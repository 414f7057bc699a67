//! Kubernetes `Status` errors, written exactly as kube-apiserver writes them.

use serde_json::{Map, Value, json};

use crate::registry::ResourceType;

/// An API error: the HTTP code and the `Status` object the server answers with.
///
/// Every failed request, over HTTP or through the Rust API of [`TestServer`](crate::TestServer),
/// yields one of these. [`ApiError::to_status`] gives the body kube-apiserver would send.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("failed to complete the request: {message} ({code} {reason})")]
pub struct ApiError {
    /// HTTP status code, also `Status.code`.
    pub code: u16,
    /// `Status.reason`, e.g. `NotFound`, `AlreadyExists`, `Conflict`, `Expired`.
    pub reason: String,
    /// `Status.message`, e.g. `pods "x" not found`.
    pub message: String,
    /// `Status.details`, when the real server sets it.
    pub details: Option<Value>,
    /// Seconds for the `Retry-After` header (429 and 5xx answers).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// Builds an error with a code, a reason and a message and no details.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.to_string(),
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    pub(crate) fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The `Status` object for this error.
    pub fn to_status(&self) -> Value {
        let mut status = Map::new();
        status.insert("kind".into(), json!("Status"));
        status.insert("apiVersion".into(), json!("v1"));
        status.insert("metadata".into(), json!({}));
        status.insert("status".into(), json!("Failure"));
        status.insert("message".into(), json!(self.message));
        if !self.reason.is_empty() {
            status.insert("reason".into(), json!(self.reason));
        }
        if let Some(details) = &self.details {
            status.insert("details".into(), details.clone());
        }
        status.insert("code".into(), json!(self.code));
        Value::Object(status)
    }

    /// `<resource> "<name>" not found` (404 NotFound).
    pub(crate) fn not_found(rt: &ResourceType, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", rt.qualified_resource()),
        )
        .with_details(details(rt, Some(name)))
    }

    /// `<resource> "<name>" already exists` (409 AlreadyExists).
    pub(crate) fn already_exists(rt: &ResourceType, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", rt.qualified_resource()),
        )
        .with_details(details(rt, Some(name)))
    }

    /// The optimistic-concurrency conflict of an update with a stale resourceVersion (409 Conflict).
    pub(crate) fn conflict(rt: &ResourceType, name: &str) -> Self {
        Self::conflict_with(
            rt,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// A 409 Conflict with a custom explanation after `Operation cannot be fulfilled on ...: `.
    pub(crate) fn conflict_with(rt: &ResourceType, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                rt.qualified_resource()
            ),
        )
        .with_details(details(rt, Some(name)))
    }

    /// `<resource> "<name>" is forbidden: <why>` (403 Forbidden).
    pub(crate) fn forbidden(rt: &ResourceType, name: &str, why: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!("{} \"{name}\" is forbidden: {why}", rt.qualified_resource()),
        )
        .with_details(details(rt, Some(name)))
    }

    /// Adds a cause to `details.causes`.
    pub(crate) fn with_cause(mut self, reason: &str, message: &str, field: &str) -> Self {
        let mut details = self.details.take().unwrap_or_else(|| json!({}));
        let cause = json!({"reason": reason, "message": message, "field": field});
        match details.get_mut("causes").and_then(Value::as_array_mut) {
            Some(causes) => causes.push(cause),
            None => details["causes"] = json!([cause]),
        }
        self.details = Some(details);
        self
    }

    /// A 400 BadRequest.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// A 422 Invalid for an object of `kind`, with one field cause.
    pub(crate) fn invalid(
        rt: &ResourceType,
        name: &str,
        field: &str,
        cause_type: &str,
        detail: &str,
    ) -> Self {
        Self::invalid_causes(
            rt,
            name,
            &[FieldCause {
                field: field.to_string(),
                cause_type: cause_type.to_string(),
                detail: detail.to_string(),
            }],
        )
    }

    /// A 422 Invalid for an object of `kind`, with its field causes (kube-apiserver lists
    /// several in brackets).
    pub(crate) fn invalid_causes(rt: &ResourceType, name: &str, causes: &[FieldCause]) -> Self {
        let group_kind = if rt.group.is_empty() {
            rt.kind.clone()
        } else {
            format!("{}.{}", rt.kind, rt.group)
        };
        // the message lists each distinct error once, as an aggregate of field errors does
        let mut errors: Vec<String> = Vec::with_capacity(causes.len());
        for error in causes.iter().map(|c| format!("{}: {}", c.field, c.message())) {
            if !errors.contains(&error) {
                errors.push(error);
            }
        }
        let listed = match errors.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let message = format!("{group_kind} \"{name}\" is invalid: {listed}");
        let mut d = Map::new();
        d.insert("name".into(), json!(name));
        if !rt.group.is_empty() {
            d.insert("group".into(), json!(rt.group));
        }
        d.insert("kind".into(), json!(rt.kind));
        let causes: Vec<Value> = causes
            .iter()
            .map(|c| {
                json!({
                    "reason": cause_reason(&c.cause_type),
                    "message": c.message(),
                    "field": c.field,
                })
            })
            .collect();
        d.insert("causes".into(), json!(causes));
        Self::new(422, "Invalid", message).with_details(Value::Object(d))
    }

    /// A 422 Invalid for the list options (for example `sendInitialEvents` misuse).
    pub(crate) fn invalid_list_options(field: &str, detail: &str) -> Self {
        Self::new(
            422,
            "Invalid",
            format!("ListOptions.meta.k8s.io \"\" is invalid: {field}: Forbidden: {detail}"),
        )
        .with_details(json!({
            "group": "meta.k8s.io",
            "kind": "ListOptions",
            "causes": [{ "reason": "FieldValueForbidden", "message": format!("Forbidden: {detail}"), "field": field }],
        }))
    }

    /// The 410 Expired of a list continue token whose snapshot is no longer available.
    pub(crate) fn expired_continue() -> Self {
        Self::new(
            410,
            "Expired",
            "The provided continue parameter is too old to display a consistent list result. \
             You can start a new list without the continue parameter, or use the continue token \
             in this response to retrieve the remainder of the results. Continuing with the \
             provided token results in an inconsistent list - objects that were created, \
             modified, or deleted between the time the first chunk was returned and now may \
             show up in the list.",
        )
    }

    /// The 410 Expired of a list or watch from a resourceVersion older than the kept history.
    pub(crate) fn too_old(requested: u64, oldest: u64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    /// The 504 Timeout of a request for a resourceVersion the server has not reached yet.
    pub(crate) fn too_large(requested: u64, current: u64) -> Self {
        let mut e = Self::new(
            504,
            "Timeout",
            format!("Too large resource version: {requested}, current: {current}"),
        )
        .with_details(json!({
            "causes": [{ "reason": "ResourceVersionTooLarge", "message": "Too large resource version" }],
            "retryAfterSeconds": 1,
        }));
        e.retry_after = Some(1);
        e
    }

    /// The 404 of a path the server does not serve.
    pub(crate) fn unknown_path() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    /// A 405 MethodNotAllowed.
    pub(crate) fn method_not_allowed(method: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource: {method}"),
        )
        .with_details(json!({}))
    }

    /// The 413 of a request body over `limit` bytes.
    pub(crate) fn too_large_body(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// A 415 UnsupportedMediaType for a patch type the server does not know.
    pub(crate) fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json, application/apply-patch+cbor; got {content_type:?}"
            ),
        )
    }

    /// The error for an injected failure with `code` on `verb` of `resource` (may be empty).
    pub(crate) fn injected(code: u16, verb: &str, resource: &str, retry_after: Option<u64>) -> Self {
        let mut e = match code {
            400 => Self::bad_request("the request is invalid (injected)"),
            401 => Self::new(401, "Unauthorized", "Unauthorized"),
            403 => {
                let what = if resource.is_empty() {
                    "the server".to_string()
                } else {
                    resource.to_string()
                };
                Self::new(
                    403,
                    "Forbidden",
                    format!(
                        "{what} is forbidden: User \"system:anonymous\" cannot {verb} resource \"{resource}\" in API group \"\" at the cluster scope"
                    ),
                )
                .with_details(json!({ "kind": resource }))
            }
            404 => Self::unknown_path(),
            409 => Self::new(409, "Conflict", "the request conflicts (injected)"),
            410 => Self::new(410, "Expired", "the resource version is too old (injected)"),
            429 => Self::new(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
            )
            .with_details(json!({ "retryAfterSeconds": retry_after.unwrap_or(1) })),
            503 => Self::new(
                503,
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
            ),
            504 => Self::new(
                504,
                "Timeout",
                "the server was unable to return a response in the time allotted",
            ),
            c if c >= 500 => Self::new(c, "InternalError", "Internal error occurred: injected failure")
                .with_details(json!({ "causes": [{ "message": "injected failure" }] })),
            c => Self::new(c, "", "injected failure"),
        };
        if code == 429 {
            e.retry_after = Some(retry_after.unwrap_or(1));
        } else if retry_after.is_some() {
            e.retry_after = retry_after;
        }
        e
    }
}

/// The `reason` of a field cause: kube-apiserver's `FieldValue...` names of its error types.
fn cause_reason(cause_type: &str) -> String {
    match cause_type {
        "Invalid value" => "FieldValueInvalid".into(),
        "Required value" => "FieldValueRequired".into(),
        "Unsupported value" => "FieldValueNotSupported".into(),
        "Forbidden" => "FieldValueForbidden".into(),
        "Duplicate value" => "FieldValueDuplicate".into(),
        "Not found" => "FieldValueNotFound".into(),
        "Too long" => "FieldValueTooLong".into(),
        other => format!("FieldValue{}", other.replace(' ', "")),
    }
}

/// One field error of a 422 Invalid: `<field>: <cause_type>: <detail>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldCause {
    /// The field path, e.g. `metadata.name`.
    pub(crate) field: String,
    /// `Invalid value`, `Required value`, ...: the cause's reason is `Field` and this without
    /// spaces.
    pub(crate) cause_type: String,
    /// What is wrong, after the type.
    pub(crate) detail: String,
}

impl FieldCause {
    /// `<cause_type>: <detail>`, or the type alone when there is no detail (`Required value`).
    fn message(&self) -> String {
        if self.detail.is_empty() {
            self.cause_type.clone()
        } else {
            format!("{}: {}", self.cause_type, self.detail)
        }
    }

    /// `<field>: Invalid value: "<value>": <problem>`.
    pub(crate) fn invalid(field: &str, value: &str, problem: &str) -> Self {
        Self {
            field: field.to_string(),
            cause_type: "Invalid value".to_string(),
            detail: format!("{value:?}: {problem}"),
        }
    }

    /// `<field>: Invalid value: <json>: <problem>`: a value that is not a string, shown as its
    /// JSON (as kube-apiserver shows a struct or a list).
    pub(crate) fn invalid_json(field: &str, json: &str, problem: &str) -> Self {
        Self {
            field: field.to_string(),
            cause_type: "Invalid value".to_string(),
            detail: format!("{json}: {problem}"),
        }
    }

    /// `<field>: Required value: <detail>`.
    pub(crate) fn required(field: &str, detail: &str) -> Self {
        Self {
            field: field.to_string(),
            cause_type: "Required value".to_string(),
            detail: detail.to_string(),
        }
    }
}

/// `details` of a Status about one named object: `{name, group?, kind: <plural>}`.
fn details(rt: &ResourceType, name: Option<&str>) -> Value {
    let mut d = Map::new();
    if let Some(name) = name {
        d.insert("name".into(), json!(name));
    }
    if !rt.group.is_empty() {
        d.insert("group".into(), json!(rt.group));
    }
    d.insert("kind".into(), json!(rt.plural));
    Value::Object(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pods() -> ResourceType {
        ResourceType::new("", "v1", "Pod", "pods", true)
    }

    #[test]
    fn not_found_matches_kube_apiserver() {
        let status = ApiError::not_found(&pods(), "x").to_status();
        assert_eq!(
            status,
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"pods \"x\" not found","reason":"NotFound",
                "details":{"name":"x","kind":"pods"},"code":404})
        );
    }

    #[test]
    fn grouped_resources_are_qualified() {
        let deployments = ResourceType::new("apps", "v1", "Deployment", "deployments", true);
        let status = ApiError::already_exists(&deployments, "d").to_status();
        assert_eq!(status["message"], "deployments.apps \"d\" already exists");
        assert_eq!(
            status["details"],
            json!({"name":"d","group":"apps","kind":"deployments"})
        );
        assert_eq!(status["code"], 409);
    }

    #[test]
    fn conflict_message() {
        let e = ApiError::conflict(&pods(), "p");
        assert_eq!(
            e.message,
            "Operation cannot be fulfilled on pods \"p\": the object has been modified; \
             please apply your changes to the latest version and try again"
        );
        assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    }

    #[test]
    fn injected_429_has_retry_after() {
        let e = ApiError::injected(429, "list", "pods", Some(3));
        assert_eq!(e.retry_after, Some(3));
        assert_eq!(e.to_status()["details"]["retryAfterSeconds"], 3);
        let e = ApiError::injected(403, "list", "pods", None);
        assert_eq!(e.reason, "Forbidden");
        assert!(e.message.starts_with("pods is forbidden"));
    }
}
