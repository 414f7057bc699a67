//! The first step of decoding a body: its data item's heads read one by one, as
//! fxamacker/cbor's well-formedness check (in apimachinery's decoding mode) reads them before
//! anything is decoded. No value is built: strings are skipped.

use ciborium_ll::{Decoder, Header};

use super::error::{Error, MAX_NESTED_LEVELS, major_name};

/// The tag numbers the check looks into.
const TAG_RFC3339: u64 = 0;
const TAG_EPOCH: u64 = 1;
const TAG_BIGNUM_POSITIVE: u64 = 2;
const TAG_BIGNUM_NEGATIVE: u64 = 3;

/// The simple values apimachinery's decoding mode accepts: `false`, `true`, `null`.
const ACCEPTED_SIMPLE: [u8; 3] = [20, 21, 22];

/// Checks that `data` is exactly one well-formed data item that apimachinery's decoding mode
/// accepts before decoding (see the [module](super) docs for what that covers).
pub(crate) fn check(data: &[u8]) -> Result<(), Error> {
    let mut reader = Reader::new(data);
    reader.item(0)?;
    let consumed = reader.decoder.offset();
    if consumed < data.len() {
        return Err(Error::Extraneous {
            count: data.len() - consumed,
            offset: consumed,
        });
    }
    Ok(())
}

/// The major type of a head, as Go names it.
pub(super) fn head_name(header: &Header) -> &'static str {
    major_name(match header {
        Header::Positive(_) => 0,
        Header::Negative(_) => 1,
        Header::Bytes(_) => 2,
        Header::Text(_) => 3,
        Header::Array(_) => 4,
        Header::Map(_) => 5,
        Header::Tag(_) => 6,
        Header::Float(_) | Header::Simple(_) | Header::Break => 7,
    })
}

/// The heads of one body, read in order.
pub(super) struct Reader<'a> {
    decoder: Decoder<&'a [u8]>,
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader at the start of `data`.
    pub(super) fn new(data: &'a [u8]) -> Self {
        Self {
            decoder: Decoder::from(data),
            data,
        }
    }

    /// Puts a head back, to be pulled again.
    pub(super) fn push(&mut self, header: Header) {
        self.decoder.push(header);
    }

    /// The content of a string whose head was just pulled (its chunks joined when it has an
    /// indefinite length), as bytes.
    pub(super) fn string(&mut self, header: &Header) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        match header {
            Header::Bytes(Some(len)) | Header::Text(Some(len)) => self.take(*len, &mut out)?,
            // the chunks, up to the `break` (well-formed: chunks of the string's type)
            _ => {
                while let (_, Header::Bytes(Some(len)) | Header::Text(Some(len))) = self.pull()? {
                    self.take(len, &mut out)?;
                }
            }
        }
        Ok(out)
    }

    /// Appends the next `len` bytes to `out`.
    fn take(&mut self, len: usize, out: &mut Vec<u8>) -> Result<(), Error> {
        let mut scratch = [0u8; 4096];
        let mut left = len;
        while left > 0 {
            let step = left.min(scratch.len());
            ciborium_io::Read::read_exact(&mut self.decoder, &mut scratch[..step])
                .map_err(|_| Error::Truncated)?;
            out.extend_from_slice(&scratch[..step]);
            left -= step;
        }
        Ok(())
    }

    /// The next head; a malformed one is reported with its initial byte.
    pub(super) fn pull(&mut self) -> Result<(usize, Header), Error> {
        let offset = self.decoder.offset();
        match self.decoder.pull() {
            Ok(header) => Ok((offset, header)),
            Err(ciborium_ll::Error::Io(_)) => Err(Error::Truncated),
            Err(ciborium_ll::Error::Syntax(at)) => Err(Error::Malformed {
                offset: at,
                initial: self.data.get(at).copied().unwrap_or_default(),
            }),
        }
    }

    /// Skips `len` bytes of a string's content.
    fn skip(&mut self, mut len: usize) -> Result<(), Error> {
        let mut scratch = [0u8; 4096];
        while len > 0 {
            let step = len.min(scratch.len());
            ciborium_io::Read::read_exact(&mut self.decoder, &mut scratch[..step])
                .map_err(|_| Error::Truncated)?;
            len -= step;
        }
        Ok(())
    }

    /// One data item, at a depth of `depth` enclosing arrays, maps and tags.
    pub(super) fn item(&mut self, depth: usize) -> Result<(), Error> {
        let (offset, header) = self.pull()?;
        match header {
            Header::Positive(_) | Header::Negative(_) => Ok(()),
            Header::Float(value) if value.is_nan() => Err(Error::NaN),
            Header::Float(value) if value.is_infinite() => Err(Error::Infinity),
            Header::Float(_) => Ok(()),
            Header::Simple(value) if ACCEPTED_SIMPLE.contains(&value) => Ok(()),
            Header::Simple(value) => Err(Error::SimpleValue(value)),
            Header::Break => Err(Error::Malformed {
                offset,
                initial: 0xff,
            }),
            Header::Bytes(Some(len)) | Header::Text(Some(len)) => self.skip(len),
            Header::Bytes(None) | Header::Text(None) => self.chunks(&header),
            Header::Array(len) => self.entries(depth + 1, len, 1),
            Header::Map(len) => self.entries(depth + 1, len, 2),
            Header::Tag(tag) => {
                if depth + 1 > MAX_NESTED_LEVELS {
                    return Err(Error::TooDeep);
                }
                let (_, content) = self.pull()?;
                self.decoder.push(content);
                self.tag_content(tag, &content)?;
                self.item(depth + 1)
            }
        }
    }

    /// The content type tags 0 to 3 require (fxamacker/cbor's `validBuiltinTag`), and bignums
    /// refused (apimachinery's `BignumTagForbidden`).
    fn tag_content(&self, tag: u64, content: &Header) -> Result<(), Error> {
        let got = head_name(content);
        let admissible = match tag {
            TAG_RFC3339 => matches!(content, Header::Text(_)),
            TAG_EPOCH => matches!(
                content,
                Header::Positive(_) | Header::Negative(_) | Header::Float(_)
            ),
            TAG_BIGNUM_POSITIVE | TAG_BIGNUM_NEGATIVE => {
                if matches!(content, Header::Bytes(_)) {
                    return Err(Error::Bignum);
                }
                false
            }
            _ => true,
        };
        if admissible {
            Ok(())
        } else {
            Err(Error::TagContent { tag, got })
        }
    }

    /// The chunks of an indefinite-length string, up to its `break`.
    fn chunks(&mut self, string: &Header) -> Result<(), Error> {
        let major = head_name(string);
        loop {
            let (_, chunk) = self.pull()?;
            match (string, chunk) {
                (_, Header::Break) => return Ok(()),
                (Header::Bytes(_), Header::Bytes(Some(len))) | (Header::Text(_), Header::Text(Some(len))) => {
                    self.skip(len)?
                }
                (_, chunk) => {
                    return Err(Error::IndefiniteChunk {
                        major,
                        chunk: head_name(&chunk),
                    });
                }
            }
        }
    }

    /// The entries of an array (`per_entry` 1) or a map (2): `len` of them, or up to a `break`.
    fn entries(&mut self, depth: usize, len: Option<usize>, per_entry: usize) -> Result<(), Error> {
        if depth > MAX_NESTED_LEVELS {
            return Err(Error::TooDeep);
        }
        match len {
            Some(len) => {
                for _ in 0..len.saturating_mul(per_entry) {
                    self.item(depth)?;
                }
            }
            None => loop {
                let (_, next) = self.pull()?;
                if next == Header::Break {
                    break;
                }
                self.decoder.push(next);
                for _ in 0..per_entry {
                    self.item(depth)?;
                }
            },
        }
        Ok(())
    }
}
