//! The envelope of every protobuf document: `k8s\0`, then a `runtime.Unknown` (`typeMeta = 1`
//! with `apiVersion = 1` and `kind = 2`, `raw = 2`, `contentEncoding = 3`, `contentType = 4`).

use super::{Error, wire::Writer};

pub use k8s_protobuf::{Envelope, MAGIC};

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
