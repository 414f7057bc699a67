//! How a lister-watcher reads CBOR (RFC 8949) as kube-apiserver writes it (KEP-4222): one
//! data item per answer, in the self-described tag (55799), every string a byte string, map
//! keys included; watch bodies are CBOR sequences (RFC 8742) of `{type, object}` items.
//!
//! Items are cut by their heads alone ([`item_end`], the [`Items`] framing of watch bodies):
//! the length of a data item is known from the heads of its parts without decoding any value.
//! Values are decoded straight into the caller's types by `cbor4ii`'s serde deserializer,
//! seen through [`Texts`], which reads a byte string that is UTF-8 wherever a string is
//! wanted (as serde_json reads a JSON string): the presence rules are those of JSON (missing
//! fields are `None` or defaults, unknown fields are passed over).

use std::{fmt, marker::PhantomData};

use kube::core::{ObjectList, Status, WatchEvent, watch::Bookmark};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess,
    SeqAccess, Visitor, value::MapAccessDeserializer,
};

use crate::source::{
    Error,
    body_frames::{Frame, FrameDecoder, Framing},
    list_fields::ListFields,
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
    let end = item_end(bytes, 0, usize::MAX)?.ok_or(CborError::Truncated)?;
    if end < bytes.len() {
        return Err(CborError::Trailing(bytes.len() - end));
    }
    decode_item(untagged(bytes)?)
}

/// The list a CBOR answer holds, read as the JSON list is (a list without its kind is a `v1`
/// `List`).
pub(crate) fn list<K: DeserializeOwned + Clone>(bytes: &[u8]) -> Result<ObjectList<K>, CborError> {
    let list: ListFields<K> = from_slice(bytes)?;
    Ok(list.into_object_list())
}

/// Decodes one untagged, complete data item.
fn decode_item<T: DeserializeOwned>(item: &[u8]) -> Result<T, CborError> {
    let mut deserializer = cbor4ii::serde::Deserializer::new(cbor4ii::core::utils::SliceReader::new(item));
    T::deserialize(Texts(&mut deserializer)).map_err(|err| CborError::Value(err.to_string()))
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
pub(crate) struct CborEvents<K>(pub(crate) PhantomData<fn() -> K>);

impl<K: DeserializeOwned> FrameDecoder for CborEvents<K> {
    type Item = WatchEvent<K>;

    fn decode(&self, item: &[u8], last: bool) -> Option<Result<WatchEvent<K>, Error>> {
        if last {
            return Some(Err(decode_error(CborError::Truncated)));
        }
        Some(decode_event(item))
    }
}

/// Decodes one watch event item; an item that is a `Status` and not an event is
/// [`Error::Api`].
pub(crate) fn decode_event<K: DeserializeOwned>(item: &[u8]) -> Result<WatchEvent<K>, Error> {
    let (event_type, object) = match event_parts(item) {
        Ok(parts) => parts,
        Err(err) => {
            return Err(
                match decode_item::<Status>(untagged(item).map_err(decode_error)?) {
                    Ok(status) if status.code != 0 || status.status.is_some() => Error::Api(Box::new(status)),
                    _ => decode_error(err),
                },
            );
        }
    };
    let object = untagged(object).map_err(decode_error)?;
    let decoded = match event_type {
        b"ADDED" => decode_item(object).map(WatchEvent::Added),
        b"MODIFIED" => decode_item(object).map(WatchEvent::Modified),
        b"DELETED" => decode_item(object).map(WatchEvent::Deleted),
        b"BOOKMARK" => decode_item::<Bookmark>(object).map(WatchEvent::Bookmark),
        b"ERROR" => decode_item::<Status>(object).map(|status| WatchEvent::Error(Box::new(status))),
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

// What follows reads byte strings as strings: kube-apiserver writes every string as a byte
// string, and a type that wants a string (a field name, a `String`, a `Time`) gets one when its
// bytes are UTF-8. Everything else passes through to the CBOR deserializer.

/// A deserializer whose byte strings are also strings.
pub(crate) struct Texts<D>(pub(crate) D);

/// A visitor given strings for the UTF-8 byte strings it is offered.
struct TextVisitor<V>(V);

/// A seed whose deserializer is seen through [`Texts`].
struct TextSeed<S>(S);

/// Sequence and map access whose elements are seen through [`Texts`].
struct TextAccess<A>(A);

/// A visitor of an enum written as a string (a unit variant) or a one-entry map.
struct EnumVisitor<V>(V);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for TextSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Texts(deserializer))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for TextAccess<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(TextSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TextAccess<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(TextSeed(seed))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(TextSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

macro_rules! forward_visits {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
                self.0.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for TextVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visits!(
        visit_bool(bool),
        visit_i8(i8),
        visit_i16(i16),
        visit_i32(i32),
        visit_i64(i64),
        visit_i128(i128),
        visit_u8(u8),
        visit_u16(u16),
        visit_u32(u32),
        visit_u64(u64),
        visit_u128(u128),
        visit_f32(f32),
        visit_f64(f64),
        visit_char(char),
        visit_str(&str),
        visit_borrowed_str(&'de str),
        visit_string(String),
    );

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        match std::str::from_utf8(v) {
            Ok(text) => self.0.visit_str(text),
            Err(_) => self.0.visit_bytes(v),
        }
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
        match std::str::from_utf8(v) {
            Ok(text) => self.0.visit_borrowed_str(text),
            Err(_) => self.0.visit_borrowed_bytes(v),
        }
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
        match String::from_utf8(v) {
            Ok(text) => self.0.visit_string(text),
            Err(err) => self.0.visit_byte_buf(err.into_bytes()),
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.visit_some(Texts(deserializer))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit()
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.visit_newtype_struct(Texts(deserializer))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(TextAccess(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(TextAccess(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.0.visit_enum(data)
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for EnumVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.0.visit_enum(v.into_deserializer())
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        match std::str::from_utf8(v) {
            Ok(text) => self.visit_str(text),
            Err(_) => Err(E::invalid_type(de::Unexpected::Bytes(v), &self)),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_enum(MapAccessDeserializer::new(TextAccess(map)))
    }
}

macro_rules! as_any {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.deserialize_any(TextVisitor(visitor))
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Texts<D> {
    type Error = D::Error;

    // Strings may be byte strings, and numbers are read as JSON reads them (an integer where a
    // float is wanted): the item itself says what it is.
    as_any!(
        deserialize_any,
        deserialize_str,
        deserialize_string,
        deserialize_identifier,
        deserialize_char,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
    );

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_bool(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_bytes(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_byte_buf(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_option(TextVisitor(visitor))
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(TextVisitor(visitor))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(TextVisitor(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_seq(TextVisitor(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, TextVisitor(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, TextVisitor(visitor))
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(TextVisitor(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, TextVisitor(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(EnumVisitor(visitor))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_ignored_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        // what the values were written from: JSON
        true
    }
}

#[cfg(test)]
mod tests;
