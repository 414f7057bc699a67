//! The envelope of every protobuf document: `k8s\0`, then a `runtime.Unknown` (`typeMeta = 1`
//! with `apiVersion = 1` and `kind = 2`, `raw = 2`, `contentEncoding = 3`, `contentType = 4`).

use super::{
    Error,
    wire::{Reader, WireValue, Writer},
};

/// The prefix of every Kubernetes protobuf document.
pub const MAGIC: &[u8] = b"k8s\0";

/// A protobuf document's kind and the bytes of its object's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// `v1`, `apps/v1`.
    pub api_version: &'a str,
    /// `Pod`, `PodList`, `Status`.
    pub kind: &'a str,
    /// The object's message.
    pub raw: &'a [u8],
}

impl<'a> Envelope<'a> {
    /// Reads the envelope of `document`.
    ///
    /// # Errors
    /// [`Error::Malformed`] without the `k8s\0` prefix, for a truncated envelope, or for a
    /// content encoding (kube-apiserver sends none).
    pub fn parse(document: &'a [u8]) -> Result<Self, Error> {
        let unknown = document.strip_prefix(MAGIC).ok_or_else(|| {
            Error::Malformed("the document does not start with the k8s protobuf prefix `k8s\\0`".into())
        })?;
        let mut envelope = Self {
            api_version: "",
            kind: "",
            raw: &[],
        };
        for field in Reader::new(unknown) {
            match field? {
                (1, WireValue::Bytes(type_meta)) => {
                    for meta in Reader::new(type_meta) {
                        match meta? {
                            (1, WireValue::Bytes(v)) => envelope.api_version = utf8(v)?,
                            (2, WireValue::Bytes(v)) => envelope.kind = utf8(v)?,
                            _ => {}
                        }
                    }
                }
                (2, WireValue::Bytes(raw)) => envelope.raw = raw,
                (3, WireValue::Bytes(encoding)) if !encoding.is_empty() => {
                    return Err(Error::Malformed(format!(
                        "the document has the content encoding {:?}, which is not supported",
                        String::from_utf8_lossy(encoding)
                    )));
                }
                _ => {}
            }
        }
        Ok(envelope)
    }
}

/// `bytes` as UTF-8 text.
pub(crate) fn utf8(bytes: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(bytes).map_err(|_| Error::Malformed("a string is not UTF-8".into()))
}

/// The envelope of an encoded message.
pub(crate) fn wrap(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Writer::default();
    type_meta.bytes(1, api_version.as_bytes());
    type_meta.bytes(2, kind.as_bytes());
    let mut unknown = Writer::default();
    unknown.bytes(1, type_meta.as_slice());
    unknown.bytes(2, raw);
    [MAGIC, unknown.as_slice()].concat()
}
