//! Request bodies: read under the size limit, decoded by their content type (JSON, YAML or
//! protobuf).

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde_json::Value;

use crate::encoding::protobuf;
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

/// The `DeleteOptions` of a delete or deletecollection body, in JSON, YAML or protobuf (as
/// client-go sends it with protobuf content type).
pub(crate) fn delete_options(content_type: &str, body: &Bytes) -> Result<Value, ApiError> {
    if body.is_empty() {
        Ok(Value::Null)
    } else {
        parse_object(content_type, body)
    }
}

pub(crate) fn parse_yaml(body: &Bytes) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    serde_saphyr::from_str::<Value>(text).map_err(|e| ApiError::bad_request(format!("yaml parse error: {e}")))
}

/// Decodes a create/update body: JSON or YAML; other media types (protobuf, CBOR) get 415, after
/// which client-go falls back to JSON.
pub(crate) fn parse_object(content_type: &str, body: &Bytes) -> Result<Value, ApiError> {
    let mime = content_type.split(';').next().unwrap_or_default().trim();
    match mime {
        "" | "application/json" | "*/*" => parse_json(body),
        "application/yaml" => parse_yaml(body),
        protobuf::MEDIA_TYPE => Ok(protobuf::decode_object(body)?),
        _ => Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf; got {mime:?}"
            ),
        )),
    }
}
