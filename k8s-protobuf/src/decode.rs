//! The [`Decode`] trait the generated code implements for k8s-openapi's types, and the ways in:
//! a message, a message with fields skipped, a whole document.

use crate::{Context, Envelope, Error, ErrorKind, SkipFields};

/// A k8s-openapi type read from its protobuf message by generated code: field number to
/// field, no intermediate form.
///
/// `merge` follows protobuf's rules: a scalar read twice keeps the last value, a message read
/// twice is merged, repeated fields append. What is kept follows Go's JSON, as the JSON
/// answer of the same object would give it: a zero value of an `omitempty` field that is not a
/// pointer in Go is left out (`None`), an empty `Time` message is an unset time.
pub trait Decode: Sized {
    /// The message's full protobuf name (`k8s.io.api.core.v1.Pod`).
    const MESSAGE: &'static str;

    /// The value before any field is read: the type's `Default`, or for a type without one (it
    /// holds a required time) every field's empty value, a time of 1970.
    fn empty() -> Self;

    /// Reads the fields of `message` into `self`.
    ///
    /// # Errors
    /// When `message` is not valid protobuf, or a field's value does not fit its type.
    fn merge(&mut self, message: &[u8], cx: Context<'_>) -> Result<(), Error>;

    /// The JSON name of field `tag` (`""` when unknown), for errors.
    fn field_name(tag: u32) -> &'static str;
}

/// Decodes a `T` from its message (the bytes a field of its type holds, or an envelope's
/// `raw`).
///
/// ```
/// use k8s_protobuf::decode_message;
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// // ConfigMap.metadata (1) = ObjectMeta { name (1) = "settings" }
/// let message = [0x0a, 0x0a, 0x0a, 0x08, b's', b'e', b't', b't', b'i', b'n', b'g', b's'];
/// let config_map: ConfigMap = decode_message(&message)?;
/// assert_eq!(config_map.metadata.name.as_deref(), Some("settings"));
/// # Ok::<_, k8s_protobuf::Error>(())
/// ```
///
/// # Errors
/// When `message` is not valid protobuf, or a field's value does not fit its type.
pub fn decode_message<T: Decode>(message: &[u8]) -> Result<T, Error> {
    let mut value = T::empty();
    value.merge(message, Context::new())?;
    Ok(value)
}

/// Decodes a `T` from its message, passing over the fields `skip` names unread.
///
/// # Errors
/// When `message` is not valid protobuf, or a field's value does not fit its type.
pub fn decode_message_with<T: Decode>(message: &[u8], skip: &SkipFields) -> Result<T, Error> {
    let mut value = T::empty();
    value.merge(message, Context::skipping(skip))?;
    Ok(value)
}

/// Decodes a `T` from a protobuf document (`k8s\0`, then a `runtime.Unknown` holding the
/// message), checking that the document holds a `T`.
///
/// # Errors
/// When the document is not a protobuf document, holds another kind, or its message does not
/// decode.
pub fn decode_document<T: Decode + k8s_openapi::Resource>(document: &[u8]) -> Result<T, Error> {
    let envelope = Envelope::parse(document)?;
    if envelope.api_version != T::API_VERSION || envelope.kind != T::KIND {
        return Err(Error::new(ErrorKind::Kind {
            found: format!("{} {}", envelope.api_version, envelope.kind),
            expected: format!("{} {}", T::API_VERSION, T::KIND),
        }));
    }
    decode_message(envelope.raw)
}
