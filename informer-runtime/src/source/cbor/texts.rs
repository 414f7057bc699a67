//! A deserializer adapter that reads kube-apiserver's CBOR as the caller's types expect it.
//!
//! kube-apiserver writes every string as a byte string, and a type that wants a string (a
//! field name, a `String`, a `Time`) gets one when its bytes are UTF-8, as serde_json reads a
//! JSON string. Numbers and strings are read by what the item itself says it is (an integer
//! where a float is wanted, as JSON reads it). Everything else passes through to the CBOR
//! deserializer.
//!
//! A [`Skip`] carried along names fields passed over: a map it applies to has its keys read
//! here, and the value of a skipped key is passed over as ignored data, without reaching the
//! visitor and without building anything.

use std::{fmt, marker::PhantomData};

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
    value::{BorrowedBytesDeserializer, BytesDeserializer, MapAccessDeserializer},
};

use crate::source::skip::{Entry, Skip};

/// A deserializer whose byte strings are also strings, passing over what `skip` names.
pub(crate) struct Texts<'s, D> {
    inner: D,
    skip: Option<&'s Skip>,
}

impl<D> Texts<'static, D> {
    /// `inner` with its byte strings read as strings, nothing skipped.
    pub(crate) fn new(inner: D) -> Self {
        Self { inner, skip: None }
    }
}

impl<'s, D> Texts<'s, D> {
    /// `inner` with its byte strings read as strings, passing over what `skip` names.
    pub(crate) fn skipping(inner: D, skip: Option<&'s Skip>) -> Self {
        Self { inner, skip }
    }
}

/// A visitor given strings for the UTF-8 byte strings it is offered.
struct TextVisitor<'s, V> {
    inner: V,
    skip: Option<&'s Skip>,
}

/// A seed whose deserializer is seen through [`Texts`].
struct TextSeed<'s, S> {
    inner: S,
    skip: Option<&'s Skip>,
}

/// Sequence access whose elements are seen through [`Texts`].
struct TextSeq<'s, A> {
    inner: A,
    /// What is skipped in each element.
    element: Option<&'s Skip>,
}

/// Map access whose keys and values are seen through [`Texts`].
struct TextMap<'s, A> {
    inner: A,
    /// What is skipped among the entries; `None` forwards them as they are.
    skip: Option<&'s Skip>,
    /// What is skipped in the value of the key just given.
    value_skip: Option<&'s Skip>,
}

/// A visitor of an enum written as a string (a unit variant) or a one-entry map.
struct EnumVisitor<V>(V);

impl<'s, A> TextMap<'s, A> {
    fn new(inner: A, skip: Option<&'s Skip>) -> Self {
        Self {
            inner,
            skip: skip.filter(|skip| skip.reads_entries()),
            value_skip: None,
        }
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for TextSeed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Texts::skipping(deserializer, self.skip))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for TextSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.inner.next_element_seed(TextSeed {
            inner: seed,
            skip: self.element,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A map key as the CBOR deserializer lends or gives it.
enum Key<'de> {
    Borrowed(&'de [u8]),
    Owned(Vec<u8>),
}

impl Key<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Borrowed(bytes) => bytes,
            Self::Owned(bytes) => bytes,
        }
    }
}

/// Reads a map key (a byte or text string) as bytes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string map key")
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Key<'de>, E> {
        Ok(Key::Borrowed(v))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key::Borrowed(v.as_bytes()))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v.to_vec()))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v.as_bytes().to_vec()))
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v.into_bytes()))
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TextMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let Some(skip) = self.skip else {
            return self.inner.next_key_seed(TextSeed {
                inner: seed,
                skip: None,
            });
        };
        // the keys are read here, so that skipped entries never reach the visitor
        loop {
            let Some(key) = self.inner.next_key_seed(KeySeed)? else {
                return Ok(None);
            };
            let entry = match std::str::from_utf8(key.bytes()) {
                Ok(name) => skip.entry(name),
                Err(_) => Entry::Kept(None),
            };
            match entry {
                Entry::Skipped => {
                    self.inner.next_value_seed(PhantomData::<IgnoredAny>)?;
                }
                Entry::Kept(below) => {
                    self.value_skip = below;
                    return match key {
                        Key::Borrowed(key) => {
                            seed.deserialize(Texts::new(BorrowedBytesDeserializer::new(key)))
                        }
                        Key::Owned(key) => seed.deserialize(Texts::new(BytesDeserializer::new(&key))),
                    }
                    .map(Some);
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.inner.next_value_seed(TextSeed {
            inner: seed,
            skip: self.value_skip.take(),
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

macro_rules! forward_visits {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
                self.inner.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for TextVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
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
            Ok(text) => self.inner.visit_str(text),
            Err(_) => self.inner.visit_bytes(v),
        }
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
        match std::str::from_utf8(v) {
            Ok(text) => self.inner.visit_borrowed_str(text),
            Err(_) => self.inner.visit_borrowed_bytes(v),
        }
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
        match String::from_utf8(v) {
            Ok(text) => self.inner.visit_string(text),
            Err(err) => self.inner.visit_byte_buf(err.into_bytes()),
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_some(Texts::skipping(deserializer, self.skip))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.inner
            .visit_newtype_struct(Texts::skipping(deserializer, self.skip))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_seq(TextSeq {
            inner: seq,
            element: self.skip.and_then(Skip::element),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_map(TextMap::new(map, self.skip))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_enum(data)
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
        self.0
            .visit_enum(MapAccessDeserializer::new(TextMap::new(map, None)))
    }
}

macro_rules! as_any {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.inner.deserialize_any(TextVisitor { inner: visitor, skip: self.skip })
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Texts<'_, D> {
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
        deserialize_unit,
    );

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_bool(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_bytes(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_byte_buf(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.inner.deserialize_option(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.inner.deserialize_any(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.inner.deserialize_seq(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.inner.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.inner.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.inner.deserialize_map(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.inner.deserialize_struct(name, fields, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(EnumVisitor(visitor))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_ignored_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        // what the values were written from: JSON
        true
    }
}

impl<'s, D> Texts<'s, D> {
    /// `visitor`, given strings for byte strings and passing over what this skips.
    fn visitor<V>(&self, visitor: V) -> TextVisitor<'s, V> {
        TextVisitor {
            inner: visitor,
            skip: self.skip,
        }
    }
}
