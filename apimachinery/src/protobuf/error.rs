//! [`Error`]: what fails a decode or an encode, and where in the document.

use super::location::{FieldPath, Place, Segment};

/// Errors of protobuf decoding and encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The bytes are not a valid protobuf encoding (truncated, a value of the wrong wire type,
    /// a string that is not UTF-8, no `k8s\0` prefix).
    #[error("failed to decode protobuf: {0}")]
    Malformed(String),
    /// The document names a kind without a protobuf form here (a custom resource, or a kind
    /// newer than the table): ask for JSON.
    #[error("failed to decode protobuf: no protobuf form is known for {0}; ask for JSON instead")]
    UnknownKind(String),
    /// The decoded fields do not fit the target type (a required field missing, a value out of
    /// range), or the document holds another kind than the one asked for.
    #[error("failed to decode protobuf into its type: {0}")]
    Type(String),
    /// A generated decoder (`k8s-protobuf`) found the bytes malformed: the error names the
    /// fields it was found in.
    #[error(transparent)]
    Decode(#[from] k8s_protobuf::Error),
    /// One of the errors above, found inside the object's message: at byte `offset` of the
    /// document (the key of the innermost field it was found in, or where the reader stood),
    /// in the value at `path` (see [`Error::cause`] and [`Error::location`]).
    #[error("{error} ({})", Place(.offset, .path))]
    At {
        /// The offset in the document.
        offset: usize,
        /// The fields, elements and entries down to the value.
        path: FieldPath,
        /// The error.
        error: Box<Error>,
    },
}

impl serde::de::Error for Error {
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        Self::Type(message.to_string())
    }
}

impl Error {
    /// This error, found at byte `offset` of the document when it has no place yet, inside
    /// `segment` of the value that holds it (the innermost place sets the offset; each value
    /// it leaves adds its segment).
    pub(crate) fn within(self, segment: Option<Segment>, offset: usize) -> Self {
        let (offset, mut path, error) = match self {
            Self::At { offset, path, error } => (offset, path, error),
            error => (offset, FieldPath::default(), Box::new(error)),
        };
        if let Some(segment) = segment {
            path.push_outer(segment);
        }
        Self::At { offset, path, error }
    }

    /// The error without its place: what [`Error::At`] holds, or the error itself.
    pub fn cause(&self) -> &Self {
        match self {
            Self::At { error, .. } => error,
            error => error,
        }
    }

    /// The byte offset in the document and the field path where the decode failed, if the
    /// error was found inside the object's message.
    pub fn location(&self) -> Option<(usize, &FieldPath)> {
        match self {
            Self::At { offset, path, .. } => Some((*offset, path)),
            _ => None,
        }
    }
}
