//! How a lister-watcher reads CBOR (RFC 8949) as kube-apiserver writes it (KEP-4222): one
//! data item per answer, in the self-described tag (55799), every string a byte string, map
//! keys included; watch bodies are CBOR sequences (RFC 8742) of `{type, object}` items.
//!
//! Items are cut by their heads alone ([`item_end`], the [`Items`] framing of watch bodies):
//! the length of a data item is known from the heads of its parts without decoding any value.
//! Values are decoded straight into the caller's types by `cbor4ii`'s serde deserializer,
//! seen through [`Texts`], which reads a byte string that is UTF-8 wherever a string is
//! wanted (as serde_json reads a JSON string): the presence rules are those of JSON (missing
//! fields are `None` or defaults, unknown fields are passed over). Fields a lister-watcher
//! skips ([`CborObjects`]) are passed over by their heads, never built.

mod texts;

use std::{fmt, marker::PhantomData, sync::Arc};

use kube::core::{ObjectList, Status, WatchEvent, watch::Bookmark};
use serde::de::DeserializeOwned;

pub(crate) use texts::Texts;

use crate::source::{
    Error, FieldPath,
    body_frames::{Frame, FrameDecoder, Framing},
    list_fields::ListFields,
    skip::Skip,
};

/// The media type of a CBOR answer.
pub(crate) const MEDIA_TYPE: &str = "application/cbor";
/// The media type of a CBOR watch body.
pub(crate) const SEQ_MEDIA_TYPE: &str = "application/cbor-seq";

/// The deepest nesting of arrays, maps and tags read; deeper items are refused.
const MAX_DEPTH: usize = 256;

/// CBOR that cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CborError {
    /// The bytes end inside a data item.
    #[error("failed to decode CBOR: the data ends inside a data item")]
    Truncated,
    /// A head that is not well-formed: reserved additional information, a `break` outside an
    /// indefinite-length item, or an indefinite length on a type that has none.
    #[error("failed to decode CBOR: malformed head 0x{initial:02x} at offset {offset}")]
    Malformed {
        /// Where the head is.
        offset: usize,
        /// Its initial byte.
        initial: u8,
    },
    /// Arrays, maps and tags nested deeper than [`MAX_DEPTH`].
    #[error("failed to decode CBOR: data items nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// A data item longer than a watch event may be.
    #[error("failed to decode CBOR: a watch event longer than {max} bytes")]
    TooLong {
        /// The longest item read.
        max: usize,
    },
    /// Bytes after the data item of an answer.
    #[error("failed to decode CBOR: {0} bytes after the data item")]
    Trailing(usize),
    /// A watch event that is not a map with a `type` and an `object`.
    #[error("failed to decode CBOR: a watch event {0}")]
    NotAnEvent(&'static str),
    /// A watch event of a type that does not exist.
    #[error("failed to decode CBOR: a watch event has the unknown type {0:?}")]
    UnknownEventType(String),
    /// A value that does not fit the type it is read into.
    #[error("failed to decode CBOR: {0}")]
    Value(String),
}

/// The bytes a scan reads: one slice, or a frame's start and the chunk that continues it.
trait Source: Copy {
    fn len(&self) -> usize;
    fn get(&self, at: usize) -> Option<u8>;
}

impl Source for &[u8] {
    #[inline]
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }

    #[inline]
    fn get(&self, at: usize) -> Option<u8> {
        <[u8]>::get(self, at).copied()
    }
}

/// A frame's start and the chunk that continues it.
#[derive(Clone, Copy)]
struct Joined<'a>(&'a [u8], &'a [u8]);

impl Source for Joined<'_> {
    fn len(&self) -> usize {
        self.0.len() + self.1.len()
    }

    fn get(&self, at: usize) -> Option<u8> {
        match at.checked_sub(self.0.len()) {
            None => self.0.get(at).copied(),
            Some(at) => self.1.get(at).copied(),
        }
    }
}

/// One head: major type, argument (`None`: indefinite length or `break`) and its length.
struct Head {
    major: u8,
    argument: Option<u64>,
    len: usize,
}

/// The head at `at`; `Ok(None)` when the bytes end inside it.
#[inline]
fn head(bytes: impl Source, at: usize) -> Result<Option<Head>, CborError> {
    let Some(initial) = bytes.get(at) else {
        return Ok(None);
    };
    let (major, info) = (initial >> 5, initial & 0x1f);
    let extra = match info {
        0..=23 => {
            return Ok(Some(Head {
                major,
                argument: Some(u64::from(info)),
                len: 1,
            }));
        }
        24 => 1,
        25 => 2,
        26 => 4,
        27 => 8,
        31 if matches!(major, 2..=5 | 7) => {
            return Ok(Some(Head {
                major,
                argument: None,
                len: 1,
            }));
        }
        _ => return Err(CborError::Malformed { offset: at, initial }),
    };
    let mut argument = 0u64;
    for i in 1..=extra {
        let Some(byte) = bytes.get(at + i) else {
            return Ok(None);
        };
        argument = (argument << 8) | u64::from(byte);
    }
    Ok(Some(Head {
        major,
        argument: Some(argument),
        len: 1 + extra,
    }))
}

/// Items still to read at an open level that ends with a `break`.
const UNTIL_BREAK: u64 = u64::MAX;

/// Where the data item starting at `start` ends, read from its heads (no value is decoded);
/// `Ok(None)` when the bytes end first. `max` bounds the item's length.
fn item_end(bytes: impl Source, start: usize, max: usize) -> Result<Option<usize>, CborError> {
    Scan::new(start).run(bytes, start, max)
}

/// How far the heads of an item were read: a scan stopped where the bytes ended goes on from
/// there when more come.
#[derive(Clone)]
struct Scan {
    /// The next head.
    at: usize,
    /// Open levels.
    depth: usize,
    /// Items still to read at each open level (`UNTIL_BREAK`: until a `break`).
    levels: [u64; MAX_DEPTH + 2],
}

impl Scan {
    /// A scan of the item at `start`.
    fn new(start: usize) -> Self {
        let mut levels = [0u64; MAX_DEPTH + 2];
        levels[0] = 1;
        Self {
            at: start,
            depth: 1,
            levels,
        }
    }

    /// Reads heads until the item ends (its end) or the bytes do (`Ok(None)`: call again with
    /// the same bytes and more after them).
    fn run(&mut self, bytes: impl Source, start: usize, max: usize) -> Result<Option<usize>, CborError> {
        let too_long = || CborError::TooLong { max };
        loop {
            if self.at - start > max {
                return Err(too_long());
            }
            if self.at > bytes.len() {
                // inside a string whose bytes have not all come
                return Ok(None);
            }
            while self.depth > 0 && self.levels[self.depth - 1] == 0 {
                self.depth -= 1;
            }
            if self.depth == 0 {
                return Ok(Some(self.at));
            }
            let Some(head) = head(bytes, self.at)? else {
                return Ok(None);
            };
            let initial_at = self.at;
            self.at += head.len;
            let top = &mut self.levels[self.depth - 1];
            if head.major == 7 && head.argument.is_none() {
                // a break ends the innermost indefinite-length item
                if *top == UNTIL_BREAK {
                    self.depth -= 1;
                    continue;
                }
                return Err(CborError::Malformed {
                    offset: initial_at,
                    initial: 0xff,
                });
            }
            if *top != UNTIL_BREAK {
                *top -= 1;
            }
            let open = match (head.major, head.argument) {
                (2 | 3, Some(len)) => {
                    self.at = usize::try_from(len)
                        .ok()
                        .and_then(|len| self.at.checked_add(len))
                        .ok_or_else(too_long)?;
                    continue;
                }
                (2..=5, None) => UNTIL_BREAK,
                (4, Some(n)) => n,
                (5, Some(n)) => n
                    .checked_mul(2)
                    .filter(|n| *n != UNTIL_BREAK)
                    .ok_or_else(too_long)?,
                (6, Some(_)) => 1,
                _ => continue,
            };
            if open == UNTIL_BREAK && head.argument.is_some() {
                return Err(too_long());
            }
            if self.depth > MAX_DEPTH {
                return Err(CborError::TooDeep);
            }
            self.levels[self.depth] = open;
            self.depth += 1;
        }
    }
}

/// The data item that `bytes` holds, past the tags that enclose it (the self-described tag,
/// 55799, that kube-apiserver puts on answers, watch events and the objects in them).
fn untagged(bytes: &[u8]) -> Result<&[u8], CborError> {
    let mut at = 0;
    loop {
        match head(bytes, at)? {
            Some(Head { major: 6, len, .. }) => at += len,
            Some(_) => return Ok(&bytes[at..]),
            None => return Err(CborError::Truncated),
        }
    }
}

/// Decodes `bytes`, one data item (in the self-described tag or not), into `T`.
pub(crate) fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CborError> {
    from_slice_skipping(bytes, None)
}

/// [`from_slice`], passing over what `skip` names.
fn from_slice_skipping<T: DeserializeOwned>(bytes: &[u8], skip: Option<&Skip>) -> Result<T, CborError> {
    let end = item_end(bytes, 0, usize::MAX)?.ok_or(CborError::Truncated)?;
    if end < bytes.len() {
        return Err(CborError::Trailing(bytes.len() - end));
    }
    decode_item(untagged(bytes)?, skip)
}

/// Decodes one untagged, complete data item, passing over what `skip` names.
fn decode_item<T: DeserializeOwned>(item: &[u8], skip: Option<&Skip>) -> Result<T, CborError> {
    let mut deserializer = cbor4ii::serde::Deserializer::new(cbor4ii::core::utils::SliceReader::new(item));
    T::deserialize(Texts::skipping(&mut deserializer, skip)).map_err(|err| CborError::Value(err.to_string()))
}

/// The CBOR decoding of one lister-watcher's objects: lists and watch events, passing over
/// the fields [`FieldPath`]s name in each object.
#[derive(Debug, Clone, Default)]
pub(crate) struct CborObjects {
    /// What is skipped in a list.
    list: Option<Arc<Skip>>,
    /// What is skipped in each object.
    object: Option<Arc<Skip>>,
}

impl CborObjects {
    /// Skips `paths` in every object.
    pub(crate) fn new(paths: &[FieldPath]) -> Self {
        let Some(object) = Skip::of_objects(paths) else {
            return Self::default();
        };
        Self {
            list: Some(Arc::new(object.clone().in_list())),
            object: Some(Arc::new(object)),
        }
    }

    /// The list a CBOR answer holds, read as the JSON list is (a list without its kind is a
    /// `v1` `List`).
    pub(crate) fn list<K: DeserializeOwned + Clone>(&self, bytes: &[u8]) -> Result<ObjectList<K>, CborError> {
        let list: ListFields<K> = from_slice_skipping(bytes, self.list.as_deref())?;
        Ok(list.into_object_list())
    }

    /// The decoder of a watch body's items into events of `K`.
    pub(crate) fn events<K>(&self) -> CborEvents<K> {
        CborEvents {
            skip: self.object.clone(),
            _events: PhantomData,
        }
    }
}

/// A watch body's data items ([`Framing`] of CBOR sequences): each frame is one whole item,
/// cut by its heads. The scan of an item split across chunks goes on from where the last chunk
/// ended, so each byte's head is read once however many chunks the item spans.
#[derive(Debug)]
pub(crate) struct Items {
    /// The longest item read; a longer one ends the body with an error.
    max: usize,
    /// The scan of the item being gathered across chunks.
    resume: Option<Box<Scan>>,
}

impl fmt::Debug for Scan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scan")
            .field("at", &self.at)
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

impl Items {
    /// Items of at most `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        Self { max, resume: None }
    }
}

impl Framing for Items {
    fn frame(&mut self, bytes: &[u8]) -> Result<Option<Frame>, Error> {
        let mut scan = Scan::new(0);
        let end = scan.run(bytes, 0, self.max).map_err(decode_error)?;
        match end {
            Some(end) => {
                self.resume = None;
                Ok(Some(Frame {
                    payload: 0..end,
                    next: end,
                }))
            }
            None => {
                // the bytes become the start of a frame gathered across chunks
                self.resume = Some(Box::new(scan));
                Ok(None)
            }
        }
    }

    fn end_in(&mut self, started: &[u8], more: &[u8]) -> Result<Option<Frame>, Error> {
        let mut scan = self.resume.take().unwrap_or_else(|| Box::new(Scan::new(0)));
        match scan
            .run(Joined(started, more), 0, self.max)
            .map_err(decode_error)?
        {
            Some(end) => Ok(Some(Frame {
                payload: 0..end,
                next: end,
            })),
            None => {
                self.resume = Some(scan);
                Ok(None)
            }
        }
    }

    fn reads_an_unended_last_frame(&self) -> bool {
        // handed to the decoder, which reports it cut short
        true
    }
}

fn decode_error(err: CborError) -> Error {
    Error::Decode(Box::new(err))
}

/// Decodes each item of a CBOR watch body into a watch event of `K`.
pub(crate) struct CborEvents<K> {
    /// What is skipped in each event's object.
    skip: Option<Arc<Skip>>,
    _events: PhantomData<fn() -> K>,
}

impl<K: DeserializeOwned> FrameDecoder for CborEvents<K> {
    type Item = WatchEvent<K>;

    fn decode(&self, item: &[u8], last: bool) -> Option<Result<WatchEvent<K>, Error>> {
        if last {
            return Some(Err(decode_error(CborError::Truncated)));
        }
        Some(decode_event(item, self.skip.as_deref()))
    }
}

/// Decodes one watch event item, passing over what `skip` names in its object; an item that is
/// a `Status` and not an event is [`Error::Api`].
pub(crate) fn decode_event<K: DeserializeOwned>(
    item: &[u8],
    skip: Option<&Skip>,
) -> Result<WatchEvent<K>, Error> {
    let (event_type, object) = match event_parts(item) {
        Ok(parts) => parts,
        Err(err) => {
            return Err(
                match decode_item::<Status>(untagged(item).map_err(decode_error)?, None) {
                    Ok(status) if status.code != 0 || status.status.is_some() => Error::Api(Box::new(status)),
                    _ => decode_error(err),
                },
            );
        }
    };
    let object = untagged(object).map_err(decode_error)?;
    let decoded = match event_type {
        b"ADDED" => decode_item(object, skip).map(WatchEvent::Added),
        b"MODIFIED" => decode_item(object, skip).map(WatchEvent::Modified),
        b"DELETED" => decode_item(object, skip).map(WatchEvent::Deleted),
        b"BOOKMARK" => decode_item::<Bookmark>(object, None).map(WatchEvent::Bookmark),
        b"ERROR" => decode_item::<Status>(object, None).map(|status| WatchEvent::Error(Box::new(status))),
        other => Err(CborError::UnknownEventType(
            String::from_utf8_lossy(other).into_owned(),
        )),
    };
    decoded.map_err(decode_error)
}

/// The `type` and the `object` item of a watch event, found by their heads.
fn event_parts(item: &[u8]) -> Result<(&[u8], &[u8]), CborError> {
    let item = untagged(item)?;
    let bytes = item;
    let map = head(bytes, 0)?.ok_or(CborError::Truncated)?;
    if map.major != 5 {
        return Err(CborError::NotAnEvent("is not a map"));
    }
    let (mut at, mut left) = (map.len, map.argument);
    let (mut event_type, mut object) = (None, None);
    while left != Some(0) {
        let key_head = head(bytes, at)?.ok_or(CborError::Truncated)?;
        if key_head.major == 7 && key_head.argument.is_none() && left.is_none() {
            break;
        }
        let key_end = item_end(bytes, at, usize::MAX)?.ok_or(CborError::Truncated)?;
        let key = string_value(&item[at..key_end]);
        // the last value of a definite-length map ends where the item ends (the framing
        // found that end): kube-apiserver writes the object last, so it is not scanned again
        let value_end = if left == Some(1) {
            item.len()
        } else {
            item_end(bytes, key_end, usize::MAX)?.ok_or(CborError::Truncated)?
        };
        match key {
            Some(b"type") => event_type = string_value(untagged(&item[key_end..value_end])?),
            Some(b"object") => object = Some(&item[key_end..value_end]),
            _ => {}
        }
        at = value_end;
        left = left.map(|left| left - 1);
    }
    match (event_type, object) {
        (Some(event_type), Some(object)) => Ok((event_type, object)),
        (None, _) => Err(CborError::NotAnEvent("has no type")),
        (Some(_), None) => Err(CborError::NotAnEvent("has no object")),
    }
}

/// The bytes of a definite-length text or byte string item.
fn string_value(item: &[u8]) -> Option<&[u8]> {
    let head = head(item, 0).ok()??;
    match (head.major, head.argument) {
        (2 | 3, Some(len)) => item.get(head.len..head.len + usize::try_from(len).ok()?),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
