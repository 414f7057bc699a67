//! The envelope of every protobuf document: `k8s\0`, then a `runtime.Unknown` (`typeMeta = 1`
//! with `apiVersion = 1` and `kind = 2`, `raw = 2`, `contentEncoding = 3`, `contentType = 4`).

use crate::{Error, ErrorKind, Reader, reader::LEN};

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
    /// ```
    /// use k8s_protobuf::Envelope;
    ///
    /// // k8s\0, typeMeta { apiVersion "v1", kind "Pod" }, raw []
    /// let document = b"k8s\0\x0a\x09\x0a\x02v1\x12\x03Pod\x12\x00";
    /// let envelope = Envelope::parse(document)?;
    /// assert_eq!((envelope.api_version, envelope.kind), ("v1", "Pod"));
    /// # Ok::<_, k8s_protobuf::Error>(())
    /// ```
    ///
    /// # Errors
    /// Without the `k8s\0` prefix, for a truncated envelope, or for a content encoding
    /// (kube-apiserver sends none).
    pub fn parse(document: &'a [u8]) -> Result<Self, Error> {
        let unknown = document.strip_prefix(MAGIC).ok_or_else(|| {
            Error::new(ErrorKind::Envelope(
                "the document does not start with the k8s protobuf prefix `k8s\\0`".into(),
            ))
        })?;
        let mut envelope = Self {
            api_version: "",
            kind: "",
            raw: &[],
        };
        let mut reader = Reader::new(unknown);
        while let Some(key) = reader.key()? {
            match (key.tag(), key.wire_type()) {
                (1, LEN) => {
                    let mut type_meta = Reader::new(reader.len_delimited()?);
                    while let Some(key) = type_meta.key()? {
                        match (key.tag(), key.wire_type()) {
                            (1, LEN) => envelope.api_version = utf8(type_meta.len_delimited()?)?,
                            (2, LEN) => envelope.kind = utf8(type_meta.len_delimited()?)?,
                            _ => type_meta.skip(key)?,
                        }
                    }
                }
                (2, LEN) => envelope.raw = reader.len_delimited()?,
                (3, LEN) => {
                    let encoding = reader.len_delimited()?;
                    if !encoding.is_empty() {
                        return Err(Error::new(ErrorKind::Envelope(format!(
                            "the document has the content encoding {:?}, which is not supported",
                            String::from_utf8_lossy(encoding)
                        ))));
                    }
                }
                _ => reader.skip(key)?,
            }
        }
        Ok(envelope)
    }
}

/// `bytes` as UTF-8 text.
#[inline]
pub fn utf8(bytes: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::Utf8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_without_the_prefix_or_with_an_encoding_are_refused() {
        assert!(matches!(
            Envelope::parse(b"{}").map_err(|e| e.kind().clone()),
            Err(ErrorKind::Envelope(_))
        ));
        let gzip = b"k8s\0\x1a\x04gzip";
        assert!(matches!(
            Envelope::parse(gzip).map_err(|e| e.kind().clone()),
            Err(ErrorKind::Envelope(_))
        ));
        let truncated = b"k8s\0\x12\x05ab";
        assert_eq!(
            Envelope::parse(truncated).map_err(|e| e.kind().clone()),
            Err(ErrorKind::PastEnd)
        );
    }
}
