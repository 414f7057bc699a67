//! What goes wrong when bytes are not the message they claim to be.

use std::fmt;

/// A failed decode: what was wrong, and the fields it was found in, outermost first.
///
/// Boxed, so that a decode's `Result` stays one pointer wide on the path where nothing fails.
///
/// ```
/// use k8s_protobuf::{ErrorKind, decode_message};
/// use k8s_openapi::api::core::v1::Pod;
///
/// // field 1 (metadata) says it is 5 bytes long, and the message ends after 1
/// let error = decode_message::<Pod>(&[0x0a, 0x05, 0x0a]).expect_err("truncated");
/// assert_eq!(error.kind(), &ErrorKind::PastEnd);
/// assert_eq!(
///     error.to_string(),
///     "failed to decode protobuf at k8s.io.api.core.v1.Pod field 1 (metadata): a value goes past the end of its message"
/// );
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    /// `(message, field number, field name)`, innermost first.
    within: Vec<(&'static str, u32, &'static str)>,
}

/// What was wrong with the bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// A varint runs past ten bytes or past the end of the input.
    #[error("a varint is truncated or longer than 10 bytes")]
    Varint,
    /// A length or a fixed-size value goes past the end of its message.
    #[error("a value goes past the end of its message")]
    PastEnd,
    /// A field number is 0 or above 2^29 - 1.
    #[error("a field number is 0 or too large")]
    FieldNumber,
    /// A wire type that is not 0, 1, 2 or 5 (groups are not used by Kubernetes).
    #[error("unsupported wire type {0}")]
    UnsupportedWireType(u8),
    /// A field was sent with a wire type its type cannot have.
    #[error("wire type {sent} was sent for a field that takes wire type {expected}")]
    WireType {
        /// The wire type on the wire.
        sent: u8,
        /// The wire type of the field's type.
        expected: u8,
    },
    /// A string field holds bytes that are not UTF-8.
    #[error("a string is not UTF-8")]
    Utf8,
    /// Messages nested deeper than [`crate::MAX_DEPTH`].
    #[error("messages are nested more than {} deep", crate::MAX_DEPTH)]
    TooDeep,
    /// A time outside the years 0000 to 9999, which its JSON form cannot hold.
    #[error("the time {0} s after 1970 is out of range")]
    TimeOutOfRange(i64),
    /// Embedded JSON (`RawExtension`, `FieldsV1`, apiextensions' `JSON`) that does not parse.
    #[error("embedded JSON does not parse: {0}")]
    Json(String),
    /// The document does not start with `k8s\0`, or carries a content encoding.
    #[error("{0}")]
    Envelope(String),
    /// The document's kind is not the type it is decoded into.
    #[error("the document holds {found}, not {expected}")]
    Kind {
        /// What the document says it holds (`apps/v1 Deployment`).
        found: String,
        /// What the caller decodes (`v1 Pod`).
        expected: String,
    },
}

impl Error {
    /// An error of `kind`, found at the innermost level.
    #[cold]
    pub fn new(kind: ErrorKind) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                within: Vec::new(),
            }),
        }
    }

    /// What was wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// The fields the error was found in, outermost first: `(message, number, name)`.
    pub fn fields(&self) -> impl Iterator<Item = (&'static str, u32, &'static str)> + '_ {
        self.inner.within.iter().rev().copied()
    }

    /// The error, found in field `tag` (named `name`) of `message`.
    #[cold]
    #[must_use]
    pub fn within(mut self, message: &'static str, tag: u32, name: &'static str) -> Self {
        self.inner.within.push((message, tag, name));
        self
    }
}

impl From<ErrorKind> for Error {
    #[cold]
    fn from(kind: ErrorKind) -> Self {
        Self::new(kind)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("failed to decode protobuf")?;
        for (at, (message, tag, name)) in self.fields().enumerate() {
            let lead = if at == 0 { " at" } else { " >" };
            if name.is_empty() {
                write!(f, "{lead} {message} field {tag}")?;
            } else {
                write!(f, "{lead} {message} field {tag} ({name})")?;
            }
        }
        write!(f, ": {}", self.inner.kind)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("within", &self.inner.within)
            .finish()
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_every_field_outermost_first() {
        let error = Error::new(ErrorKind::Utf8)
            .within("k8s.io.api.core.v1.Container", 1, "name")
            .within("k8s.io.api.core.v1.PodSpec", 2, "containers");
        assert_eq!(
            error.to_string(),
            "failed to decode protobuf at k8s.io.api.core.v1.PodSpec field 2 (containers) > \
             k8s.io.api.core.v1.Container field 1 (name): a string is not UTF-8"
        );
        assert_eq!(
            std::mem::size_of::<Result<(), Error>>(),
            std::mem::size_of::<usize>()
        );
    }
}
