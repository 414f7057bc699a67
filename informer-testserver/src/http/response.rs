//! Responses: objects and lists in the encoding `Accept` asks for (JSON, YAML, protobuf or
//! CBOR),
//! `Status` errors, and `Warning` headers.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use serde_json::Value;

use crate::encoding::transform::Negotiated;
use crate::encoding::{cbor, protobuf};
use crate::status::ApiError;

/// Response body: a full JSON document or a watch stream.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

/// `value` as JSON in kube-apiserver's key order, with this code and content type.
pub(crate) fn json_response(code: u16, value: &Value, content_type: &str) -> Response<Body> {
    encoded_response(code, crate::key_order::to_vec(value), content_type)
}

/// An encoded body with this code and content type.
fn encoded_response(code: u16, body: impl Into<Bytes>, content_type: &str) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    if let Ok(ct) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    response
}

/// The response kube-apiserver sends for an error: the `Status` with its code, in protobuf or
/// CBOR when `Accept` asks for it first.
pub(crate) fn error_response(error: &ApiError, negotiated: &Negotiated) -> Response<Body> {
    let mut response = answer(negotiated, error.code, &error.to_status());
    if let Some(seconds) = error.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// `response` with a `Warning: 299 - "..."` header per warning.
pub(crate) fn warned(mut response: Response<Body>, warnings: Vec<String>) -> Response<Body> {
    for warning in warnings {
        let escaped = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// An object, list or error answer in the media type `Accept` chooses: YAML (keys sorted, as
/// kube-apiserver's YAML serializer writes them), protobuf when the kind has a protobuf form,
/// CBOR (any kind), JSON otherwise.
pub(crate) fn answer(negotiated: &Negotiated, code: u16, value: &Value) -> Response<Body> {
    let encoded = match negotiated.subtype() {
        "yaml" => serde_saphyr::to_string(value)
            .ok()
            .map(|text| (text.into_bytes(), "application/yaml")),
        "vnd.kubernetes.protobuf" => {
            protobuf::encode_answer(value).map(|bytes| (bytes, protobuf::MEDIA_TYPE))
        }
        "cbor" => cbor::encode_answer(value)
            .ok()
            .map(|bytes| (bytes, cbor::MEDIA_TYPE)),
        _ => None,
    };
    match encoded {
        Some((body, content_type)) => encoded_response(code, body, content_type),
        None => json_response(code, value, "application/json"),
    }
}
