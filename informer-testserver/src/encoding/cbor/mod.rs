//! CBOR (`application/cbor`, RFC 8949) as kube-apiserver serves and accepts it with the
//! `CBORServingAndStorage` feature (KEP-4222), in the encoding modes of apimachinery's
//! `pkg/runtime/serializer/cbor`:
//!
//! - **answers** ([`encode_answer`]) are one data item enclosed in the self-described CBOR tag
//!   (55799, the prefix `d9 d9 f7`); every string, map keys included, is a byte string (the
//!   encoder's `StringToByteString` and `FieldNameToByteString`); map keys are sorted
//!   bytewise by their encoding (`SortBytewiseLexical`: all keys being byte strings, shorter
//!   keys first, then by their bytes); integers and floats take their shortest form that keeps
//!   the value (`ShortestFloat16`); no indefinite lengths. A JSON integer past `i64` is a float,
//!   as Go's decoding of an unstructured object makes it. The `[]byte` fields of built-in kinds
//!   (base64 strings in JSON: a Secret's `data`, `caBundle`s, ...) are byte strings of the
//!   bytes enclosed in tag 22, "expected later encoding: base64" (`ByteSliceLaterFormatBase64`),
//!   for the kinds the protobuf table knows;
//! - **watch events** ([`watch_item`]) are `application/cbor-seq` (RFC 8742): one such data
//!   item per event, nothing between them, each a `WatchEvent` map `{type, object}` whose
//!   object is the encoded object with its own self-described tag (a `RawExtension` is
//!   embedded as encoded);
//! - **bodies** ([`decode_object`]) are checked as the decoder checks them, in two steps. The
//!   first ([`wellformed`]) reads the data item's heads as fxamacker/cbor's well-formedness
//!   check does: truncation, reserved heads, misplaced `break`, extraneous data, nesting
//!   depth, NaN and infinite floats, bignum tags (2, 3) and the content types of tags 0 to 3,
//!   simple values other than `false`, `true` and `null`. An error there, or in the lax
//!   reading of the body's top level for its kind ([`interpret`]), means the kind of the body
//!   cannot be read (kube-apiserver's "unable to determine group/version/kind"). The second
//!   ([`decode`]) builds the JSON value: text strings must be valid UTF-8, map keys must
//!   be strings (text or byte) and unique, integers must fit `int64`; byte strings become
//!   strings (base64, base64url or hex when enclosed in the "expected later encoding" tags 22,
//!   21, 23), time tags RFC 3339 strings, other tags their content. Indefinite-length items
//!   are accepted. A byte string that is not UTF-8 becomes a string with U+FFFD in place of
//!   the bad bytes (Go keeps them in its string, and its JSON writes the same replacements).
//!
//! The data items are read and written by `ciborium` (`ciborium-ll` for the heads of the first
//! step); this module adds the modes' checks and choices.

pub(crate) mod decode;
pub(crate) mod encode;
mod error;
pub(crate) mod interpret;
pub(crate) mod wellformed;

pub(crate) use self::error::{BodyError, Error};

use serde_json::Value;

/// The media type of CBOR answers and bodies.
pub(crate) const MEDIA_TYPE: &str = "application/cbor";
/// The media type of a CBOR watch stream: a CBOR sequence (RFC 8742).
pub(crate) const SEQ_MEDIA_TYPE: &str = "application/cbor-seq";
/// The patch type of server-side apply with a CBOR body.
pub(crate) const APPLY_PATCH_MEDIA_TYPE: &str = "application/apply-patch+cbor";

/// Decodes a CBOR request body (an object, as create and update send it) into the JSON value
/// the rest of the server works with.
pub(crate) fn decode_object(body: &[u8]) -> Result<Value, BodyError> {
    wellformed::check(body)
        .and_then(|()| interpret::check(body))
        .map_err(|error| BodyError {
            error,
            type_meta: None,
        })?;
    decode::object(body)
}

/// Decodes a CBOR document of any type (an apply patch), with the body checks of
/// [`decode_object`].
pub(crate) fn decode_value(body: &[u8]) -> Result<Value, Error> {
    wellformed::check(body)?;
    decode::value(body)
}

/// The CBOR answer for `value` (an object, a list or a `Status`), with the self-described tag.
pub(crate) fn encode_answer(value: &Value) -> Result<Vec<u8>, Error> {
    encode::to_vec(value)
}

/// A watch event line (`{"type": .., "object": ..}` in JSON) as one data item of a CBOR
/// sequence. `None` when the line is not an event (an injected malformed line).
pub(crate) fn watch_item(line: &[u8]) -> Option<Vec<u8>> {
    let event: Value = serde_json::from_slice(line).ok()?;
    let event_type = event.get("type")?.as_str()?;
    encode::watch_event(event_type, event.get("object")?).ok()
}

#[cfg(test)]
mod tests;
