//! What the encoder and the decoder's steps share: the errors of a CBOR body or answer (with
//! the texts kube-apiserver quotes), the names of CBOR's major types in them, and the limits of
//! apimachinery's modes.

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
