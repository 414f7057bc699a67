//! Request bodies: read under the size limit, decoded by their content type (JSON, YAML,
//! protobuf or CBOR).

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde_json::Value;

use crate::encoding::{cbor, protobuf};
use crate::registry::ResourceType;
use crate::status::ApiError;

pub(crate) async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, ApiError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(ApiError::too_large_body(limit)),
        Err(e) => Err(ApiError::bad_request(format!(
            "failed to read the request body: {e}"
        ))),
    }
}

pub(crate) fn parse_json(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}")))
}

/// The kind a body is decoded as (kube-apiserver's `Decode` into the request's type): the
/// resource's, or its subresource's (`Scale`, `Eviction`, ...).
pub(crate) struct Expected {
    /// The kind.
    pub(crate) kind: String,
    /// The version.
    pub(crate) version: String,
    /// The group (empty: core).
    pub(crate) group: String,
}

impl Expected {
    /// What a request on `rt` (or on its `subresource`) decodes its body as.
    pub(crate) fn of(rt: &ResourceType, subresource: Option<&str>) -> Self {
        let own = |kind: &str, group: &str, version: &str| Self {
            kind: kind.to_owned(),
            group: group.to_owned(),
            version: version.to_owned(),
        };
        match subresource.and_then(|name| rt.subresource(name)) {
            Some(sub) if !sub.kind.is_empty() => {
                let (group, version) = if sub.version.is_empty() {
                    (rt.group.as_str(), rt.version.as_str())
                } else {
                    (sub.group, sub.version)
                };
                own(sub.kind, group, version)
            }
            _ => own(&rt.kind, &rt.group, &rt.version),
        }
    }

    /// What a delete or deletecollection decodes its body as: `DeleteOptions`.
    pub(crate) fn delete_options() -> Self {
        Self {
            kind: "DeleteOptions".to_owned(),
            group: "meta.k8s.io".to_owned(),
            version: "v1".to_owned(),
        }
    }
}

/// The `DeleteOptions` of a delete or deletecollection body, in JSON, YAML or protobuf (as
/// client-go sends it with protobuf content type) or CBOR.
pub(crate) fn delete_options(
    content_type: &str,
    body: &Bytes,
    expected: &Expected,
) -> Result<Value, ApiError> {
    if body.is_empty() {
        Ok(Value::Null)
    } else {
        parse_object(content_type, body, expected)
    }
}

pub(crate) fn parse_yaml(body: &Bytes) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    serde_saphyr::from_str::<Value>(text).map_err(|e| ApiError::bad_request(format!("yaml parse error: {e}")))
}

/// The media type of a `Content-Type` header, without its parameters.
fn mime_of(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or_default().trim()
}

/// Decodes a create/update body: JSON, YAML, protobuf or CBOR; other media types get
/// kube-apiserver's 415, after which client-go falls back to JSON.
pub(crate) fn parse_object(content_type: &str, body: &Bytes, expected: &Expected) -> Result<Value, ApiError> {
    let mime = mime_of(content_type);
    match mime {
        "" | "application/json" | "*/*" => parse_json(body),
        "application/yaml" => parse_yaml(body),
        protobuf::MEDIA_TYPE => Ok(protobuf::decode_object(body)?),
        cbor::MEDIA_TYPE => cbor::decode_object(body).map_err(|e| cbor_body_error(&e, body, expected)),
        _ => Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor; got {mime:?}"
            ),
        )),
    }
}

/// A server-side apply patch: JSON or YAML (`application/apply-patch+yaml`), or CBOR
/// (`application/apply-patch+cbor`, refused as kube-apiserver refuses it: `error decoding
/// patch: ...`).
pub(crate) fn parse_apply_patch(content_type: &str, body: &Bytes) -> Result<Value, ApiError> {
    if mime_of(content_type) == cbor::APPLY_PATCH_MEDIA_TYPE {
        return cbor::decode_value(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {}", e.go_text())));
    }
    serde_json::from_slice(body).or_else(|_| parse_yaml(body))
}

/// kube-apiserver's `400` for a CBOR body it cannot decode (`transformDecodeError` of the
/// apiserver's handlers): "the object provided is unrecognized" with the first bytes of the
/// body when its kind could not be read, else "KIND in version V cannot be handled as a
/// KIND", the kind and version the body names defaulted from the request's type.
fn cbor_body_error(failure: &cbor::BodyError, body: &[u8], expected: &Expected) -> ApiError {
    let cause = failure.error.go_text();
    if failure.error.hides_kind() {
        return ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): unable to determine group/version/kind: {cause} ({})",
            expected.kind,
            summarize(body)
        ));
    }
    // a value not built at all (a text string that is not UTF-8) names no kind: the request's
    let (api_version, kind) = failure.type_meta.clone().unwrap_or_default();
    let kind = if kind.is_empty() {
        expected.kind.clone()
    } else {
        kind
    };
    let (group, version) = match api_version.rsplit_once('/') {
        Some((group, version)) => (group.to_owned(), version.to_owned()),
        None => (String::new(), api_version),
    };
    // apimachinery's gvkWithDefaults: a missing version is the request's when the group is too
    let version = if version.is_empty() && (group.is_empty() || group == expected.group) {
        expected.version.clone()
    } else {
        version
    };
    ApiError::bad_request(format!(
        "{kind} in version {version:?} cannot be handled as a {}: {cause}",
        expected.kind
    ))
}

/// The first 30 bytes of a body as kube-apiserver's `summarizeData` writes them (hex, or text
/// for what looks like JSON), `...` after when there is more.
fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    if body.is_empty() {
        return "<empty>".to_owned();
    }
    let head = &body[..body.len().min(MAX)];
    let mut text = if head[0] == b'{' {
        String::from_utf8_lossy(head).into_owned()
    } else {
        head.iter().map(|b| format!("{b:02x}")).collect()
    };
    if body.len() > MAX {
        text.push_str(" ...");
    }
    text
}
