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
pub(crate) mod interpret;
pub(crate) mod wellformed;

use serde_json::Value;

/// The media type of CBOR answers and bodies.
pub(crate) const MEDIA_TYPE: &str = "application/cbor";
/// The media type of a CBOR watch stream: a CBOR sequence (RFC 8742).
pub(crate) const SEQ_MEDIA_TYPE: &str = "application/cbor-seq";
/// The patch type of server-side apply with a CBOR body.
pub(crate) const APPLY_PATCH_MEDIA_TYPE: &str = "application/apply-patch+cbor";

/// The self-described CBOR tag number (RFC 8949 section 3.4.6).
pub(crate) const SELF_DESCRIBED: u64 = 55799;

/// The greatest depth of nested arrays, maps and tags a body may have. kube-apiserver allows
/// 10000; this server stops at 256, the depth its decoder recurses to safely.
pub(crate) const MAX_NESTED_LEVELS: usize = 256;

/// A CBOR body that kube-apiserver's decoder refuses, or an answer that cannot be encoded.
/// Each variant's [`go_text`](Error::go_text) is the text of the error apimachinery's
/// serializer (fxamacker/cbor) returns, which kube-apiserver's `400` messages quote.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum Error {
    /// The data ends inside a data item.
    #[error("failed to decode CBOR: the data ends inside a data item")]
    Truncated,
    /// A head is not well-formed: reserved additional information, or a misplaced `break`.
    #[error("failed to decode CBOR: malformed head at offset {offset}")]
    Malformed {
        /// The offset of the head.
        offset: usize,
        /// The initial byte of the head.
        initial: u8,
    },
    /// A chunk of an indefinite-length string is not a definite-length string of its type.
    #[error("failed to decode CBOR: wrong chunk in an indefinite-length {major}")]
    IndefiniteChunk {
        /// The string's type, as Go names it.
        major: &'static str,
        /// The chunk's type, as Go names it.
        chunk: &'static str,
    },
    /// Bytes follow the data item.
    #[error("failed to decode CBOR: {count} bytes of extraneous data at offset {offset}")]
    Extraneous {
        /// How many.
        count: usize,
        /// Where they start.
        offset: usize,
    },
    /// Arrays, maps and tags nest deeper than [`MAX_NESTED_LEVELS`].
    #[error("failed to decode CBOR: nested deeper than {MAX_NESTED_LEVELS} levels")]
    TooDeep,
    /// A NaN float.
    #[error("failed to decode CBOR: a NaN float")]
    NaN,
    /// An infinite float.
    #[error("failed to decode CBOR: an infinite float")]
    Infinity,
    /// A bignum tag (2 or 3).
    #[error("failed to decode CBOR: a bignum tag")]
    Bignum,
    /// A simple value other than `false`, `true` and `null`.
    #[error("failed to decode CBOR: simple value {0} is not accepted")]
    SimpleValue(u8),
    /// A tag among 0 to 3 whose content has the wrong type.
    #[error("failed to decode CBOR: tag {tag} encloses a {got}")]
    TagContent {
        /// The tag number.
        tag: u64,
        /// The content's type, as Go names it.
        got: &'static str,
    },
    /// A text string that is not valid UTF-8.
    #[error("failed to decode CBOR: a text string is not valid UTF-8")]
    InvalidUtf8,
    /// A top-level key, or the value of `apiVersion` or `kind`, is a text string that is not
    /// valid UTF-8.
    #[error("failed to decode CBOR: a text string of the body's kind is not valid UTF-8")]
    InvalidUtf8InTypeMeta,
    /// A top-level key that is neither a string nor an integer.
    #[error("failed to decode CBOR: a top-level key is a {0}")]
    KeyNotAField(&'static str),
    /// `apiVersion` or `kind` is not a string.
    #[error("failed to decode CBOR: {field} is a {got}, not a string")]
    TypeMetaField {
        /// The field.
        field: &'static str,
        /// Its type, as Go names it.
        got: &'static str,
    },
    /// A map key that is not a string.
    #[error("failed to decode CBOR: a map key is a {0}, not a string")]
    KeyType(&'static str),
    /// A map key seen twice in one map.
    #[error("failed to decode CBOR: duplicate map key {key:?} at index {index}")]
    DuplicateKey {
        /// The key.
        key: String,
        /// The index of the second entry in its map.
        index: usize,
        /// Whether the map is the body's top level (whose keys kube-apiserver reads first).
        top_level: bool,
    },
    /// An integer outside `int64`.
    #[error("failed to decode CBOR: integer {value} does not fit 64 signed bits")]
    IntegerOverflow {
        /// The integer.
        value: i128,
    },
    /// A time tag whose content is not a time.
    #[error("failed to decode CBOR: tag {tag} encloses no valid time")]
    InvalidTime {
        /// The tag number (0 or 1).
        tag: u64,
    },
    /// The body is not a map.
    #[error("failed to decode CBOR: the body is a {0}, not a map")]
    NotAnObject(&'static str),
    /// A data item of a kind the reader gave that this server does not turn into JSON.
    #[error("failed to decode CBOR: a data item this server does not read")]
    Unsupported,
    /// The answer could not be written.
    #[error("failed to encode CBOR: {0}")]
    Encode(String),
}

impl Error {
    /// The text apimachinery's serializer gives for this error (fxamacker/cbor's messages, with
    /// Go's type names).
    pub(crate) fn go_text(&self) -> String {
        match self {
            Self::Truncated => "unexpected EOF".to_owned(),
            Self::Malformed { initial, .. } => {
                let (major, info) = (initial >> 5, initial & 0x1f);
                if *initial == 0xff {
                    "cbor: unexpected \"break\" code".to_owned()
                } else {
                    format!(
                        "cbor: invalid additional information {info} for type {}",
                        major_name(major)
                    )
                }
            }
            Self::IndefiniteChunk { major, chunk } if major == chunk => {
                format!("cbor: indefinite-length {major} chunk is not definite-length")
            }
            Self::IndefiniteChunk { major, chunk } => {
                format!("cbor: wrong element type {chunk} for indefinite-length {major}")
            }
            Self::Extraneous { count, offset } => {
                format!("cbor: {count} bytes of extraneous data starting at index {offset}")
            }
            Self::TooDeep => format!("cbor: exceeded max nested level {MAX_NESTED_LEVELS}"),
            Self::NaN => unacceptable("primitives", "floating-point NaN"),
            Self::Infinity => unacceptable("primitives", "floating-point infinity"),
            Self::Bignum => unacceptable("tag", "bignum"),
            Self::SimpleValue(value) => {
                unacceptable("primitives", &format!("simple value {value} is not recognized"))
            }
            Self::TagContent { tag: 0, got } => {
                format!("cbor: tag number 0 must be followed by text string, got {got}")
            }
            Self::TagContent { tag: 1, got } => {
                format!("cbor: tag number 1 must be followed by integer or floating-point number, got {got}")
            }
            Self::TagContent { got, .. } => {
                format!("cbor: tag number 2 or 3 must be followed by byte string, got {got}")
            }
            Self::InvalidUtf8 | Self::InvalidUtf8InTypeMeta => "cbor: invalid UTF-8 string".to_owned(),
            Self::KeyNotAField(major) => format!(
                "cbor: cannot unmarshal {major} into Go value of type string (map key is of type {major} and cannot be used to match struct field name)"
            ),
            Self::TypeMetaField { field, got } => format!(
                "cbor: cannot unmarshal {got} into Go struct field v1.TypeMeta.{field} of type string"
            ),
            Self::KeyType(major) => {
                format!("cbor: cannot unmarshal {major} into Go value of type string")
            }
            Self::DuplicateKey { key, index, .. } => {
                format!("cbor: found duplicate map key {key:?} at map element index {index}")
            }
            Self::IntegerOverflow { value } => {
                let major = if *value < 0 {
                    "negative integer"
                } else {
                    "positive integer"
                };
                format!(
                    "cbor: cannot unmarshal {major} into Go value of type int64 ({value} overflows Go's int64)"
                )
            }
            Self::InvalidTime { tag } => format!("cbor: tag number {tag} encloses no valid time"),
            Self::NotAnObject(major) => {
                let mut text = format!("cbor: cannot unmarshal {major} into Go value of type v1.TypeMeta");
                if *major == "array" {
                    text.push_str(" (cannot decode CBOR array to struct without toarray option)");
                }
                text
            }
            Self::Unsupported => "cbor: unsupported data item".to_owned(),
            Self::Encode(message) => message.clone(),
        }
    }

    /// Whether kube-apiserver fails to read the body's kind at all (its first, lax decoding into
    /// `TypeMeta` fails): the body is not well-formed, or its top level is not a map of unique
    /// string (or integer) keys with string `apiVersion` and `kind`. Other errors come after
    /// the kind is known.
    pub(crate) fn hides_kind(&self) -> bool {
        match self {
            Self::InvalidUtf8
            | Self::KeyType(_)
            | Self::IntegerOverflow { .. }
            | Self::InvalidTime { .. }
            | Self::Unsupported
            | Self::Encode(_) => false,
            Self::DuplicateKey { top_level, .. } => *top_level,
            _ => true,
        }
    }
}

/// fxamacker/cbor's `UnacceptableDataItemError` text.
fn unacceptable(major: &str, message: &str) -> String {
    format!("cbor: data item of cbor type {major} is not accepted by protocol: {message}")
}

/// Go's name (fxamacker/cbor's `cborType.String`) of a major type.
pub(crate) fn major_name(major: u8) -> &'static str {
    match major {
        0 => "positive integer",
        1 => "negative integer",
        2 => "byte string",
        3 => "UTF-8 text string",
        4 => "array",
        5 => "map",
        6 => "tag",
        _ => "primitives",
    }
}

/// A request body that could not be decoded, with what kube-apiserver reads of its kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BodyError {
    /// Why.
    pub(crate) error: Error,
    /// The body's top-level `apiVersion` and `kind` (empty when absent or not strings), when
    /// the body was read that far.
    pub(crate) type_meta: Option<(String, String)>,
}

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
