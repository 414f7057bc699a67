//! Protobuf (`application/vnd.kubernetes.protobuf`) for built-in types: request bodies, as
//! client-go and kubectl 1.32 and later send them, and answers to clients whose `Accept` puts
//! protobuf first. The encoding is the one the runtime reads ([`informer_apimachinery::protobuf`]), so the
//! server and the informers read and write it from one table; bodies are decoded to the JSON
//! the rest of the server works with, answers encoded from it. Custom resources have no
//! protobuf form: 415, as on kube-apiserver.

use informer_apimachinery::protobuf::{self as wire, Error};
use serde_json::Value;

use crate::status::ApiError;

pub(crate) use wire::{MEDIA_TYPE, WATCH_MEDIA_TYPE, has_form};

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        match error {
            Error::UnknownKind(kind) => ApiError::new(
                415,
                "UnsupportedMediaType",
                format!(
                    "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/cbor; got {MEDIA_TYPE:?} for {kind}"
                ),
            ),
            other => ApiError::bad_request(other.to_string()),
        }
    }
}

/// Decodes a protobuf request body into the JSON object it carries.
pub(crate) fn decode_object(body: &[u8]) -> Result<Value, Error> {
    wire::from_slice(body)
}

/// The protobuf answer for `value`, an object, a list or a `Status` of a built-in kind (`None`
/// for any other kind, which is then answered in JSON).
pub(crate) fn encode_answer(value: &Value) -> Option<Vec<u8>> {
    wire::to_vec(value).ok()
}

/// A watch event line (`{"type": .., "object": ..}`) as a frame of a protobuf watch stream.
/// `None` when the object has no protobuf form.
pub(crate) fn watch_frame(line: &[u8]) -> Option<Vec<u8>> {
    let event: Value = serde_json::from_slice(line).ok()?;
    let object = encode_answer(&event["object"])?;
    let event_type = event["type"].as_str().unwrap_or_default();
    Some(
        wire::WatchFrame {
            event_type,
            object: &object,
        }
        .encode(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds newer than k8s-pb's messages: answered in JSON even when protobuf is asked
    /// for first (clients that ask for protobuf also accept JSON).
    const WITHOUT_PROTOBUF: &[&str] = &[
        "certificates.k8s.io/v1 ClusterTrustBundle",
        "certificates.k8s.io/v1 PodCertificateRequest",
        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding",
        "resource.k8s.io/v1 DeviceTaintRule",
        "storagemigration.k8s.io/v1 StorageVersionMigration",
    ];

    #[test]
    fn every_built_in_kind_but_the_newest_has_a_protobuf_form() {
        let missing: Vec<String> = crate::builtin::ALL
            .iter()
            .filter(|b| {
                let object = serde_json::json!({
                    "apiVersion": b.api_version(),
                    "kind": b.kind,
                    "metadata": {"name": "x"},
                });
                encode_answer(&object).is_none()
            })
            .map(|b| format!("{} {}", b.api_version(), b.kind))
            .collect();
        assert_eq!(missing, WITHOUT_PROTOBUF);
    }
}
