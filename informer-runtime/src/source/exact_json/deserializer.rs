//! A deserializer that tells every sequence its length, so decoded vectors are allocated at
//! their exact size.
//!
//! It wraps another deserializer and every visitor, seed and access it hands out, so that
//! every array the inner deserializer meets reaches [`ExactSeq`] in document order; there the
//! next of the counts found by the scan becomes the sequence's size hint. Ignored values are
//! decoded through the wrapper too (as ignored data), so their arrays keep the order. A hint
//! only sizes allocations: if it were ever wrong, the result would be the same.
//!
//! A [`Skip`] carried along names fields passed over: an object it applies to has its keys
//! read here, and the value of a skipped key is parsed as ignored data (counting its arrays)
//! without reaching the visitor.

use std::{cell::Cell, fmt, marker::PhantomData};

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
    value::{BorrowedStrDeserializer, StringDeserializer},
};

use crate::source::skip::{Entry, Skip};

/// The array lengths of one text, taken in order.
pub(crate) struct Lengths<'a> {
    counts: &'a [u32],
    next: Cell<usize>,
}

impl<'a> Lengths<'a> {
    pub(crate) fn new(counts: &'a [u32]) -> Self {
        Self {
            counts,
            next: Cell::new(0),
        }
    }

    /// The length of the next array met.
    fn take(&self) -> Option<usize> {
        let at = self.next.get();
        self.next.set(at + 1);
        self.counts.get(at).map(|&count| count as usize)
    }
}

/// A deserializer whose sequences know their length.
pub(crate) struct ExactDeserializer<'l, D> {
    pub(crate) inner: D,
    pub(crate) lengths: &'l Lengths<'l>,
    /// What is skipped in the value, if anything.
    pub(crate) skip: Option<&'l Skip>,
}

struct ExactVisitor<'l, V> {
    inner: V,
    lengths: &'l Lengths<'l>,
    skip: Option<&'l Skip>,
}

struct ExactSeed<'l, S> {
    inner: S,
    lengths: &'l Lengths<'l>,
    skip: Option<&'l Skip>,
}

struct ExactSeq<'l, A> {
    inner: A,
    lengths: &'l Lengths<'l>,
    remaining: Option<usize>,
    /// What is skipped in each element.
    skip: Option<&'l Skip>,
}

struct ExactMap<'l, A> {
    inner: A,
    lengths: &'l Lengths<'l>,
    /// What is skipped among the entries; `None` forwards them as they are.
    skip: Option<&'l Skip>,
    /// What is skipped in the value of the key just given.
    value_skip: Option<&'l Skip>,
}

struct ExactEnum<'l, A> {
    inner: A,
    lengths: &'l Lengths<'l>,
}

fn exact_visitor<'l, V>(inner: V, lengths: &'l Lengths<'l>, skip: Option<&'l Skip>) -> ExactVisitor<'l, V> {
    ExactVisitor { inner, lengths, skip }
}

/// Forwards `deserialize_*` methods to the inner deserializer with a wrapped visitor.
macro_rules! forward_deserialize {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
                let visitor = exact_visitor(visitor, self.lengths, self.skip);
                self.inner.$method($($arg,)* visitor)
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ExactDeserializer<'_, D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any(), deserialize_bool(), deserialize_i8(), deserialize_i16(),
        deserialize_i32(), deserialize_i64(), deserialize_i128(), deserialize_u8(),
        deserialize_u16(), deserialize_u32(), deserialize_u64(), deserialize_u128(),
        deserialize_f32(), deserialize_f64(), deserialize_char(), deserialize_str(),
        deserialize_string(), deserialize_bytes(), deserialize_byte_buf(),
        deserialize_option(), deserialize_unit(), deserialize_seq(), deserialize_map(),
        deserialize_identifier(),
        deserialize_unit_struct(name: &'static str),
        deserialize_newtype_struct(name: &'static str),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_struct(name: &'static str, fields: &'static [&'static str]),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
    }

    /// Ignored values are decoded as any value, so arrays inside them are counted in order.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = exact_visitor(visitor, self.lengths, None);
        self.inner.deserialize_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Forwards `visit_*` methods of plain values to the inner visitor.
macro_rules! forward_visit {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, value: $ty) -> Result<V::Value, E> {
                self.inner.$method(value)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for ExactVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_visit! {
        visit_bool(bool), visit_i8(i8), visit_i16(i16), visit_i32(i32), visit_i64(i64),
        visit_i128(i128), visit_u8(u8), visit_u16(u16), visit_u32(u32), visit_u64(u64),
        visit_u128(u128), visit_f32(f32), visit_f64(f64), visit_char(char), visit_str(&str),
        visit_borrowed_str(&'de str), visit_string(String), visit_bytes(&[u8]),
        visit_borrowed_bytes(&'de [u8]), visit_byte_buf(Vec<u8>),
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(ExactDeserializer {
            inner,
            lengths: self.lengths,
            skip: self.skip,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(ExactDeserializer {
            inner,
            lengths: self.lengths,
            skip: self.skip,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, inner: A) -> Result<V::Value, A::Error> {
        let remaining = self.lengths.take();
        self.inner.visit_seq(ExactSeq {
            inner,
            lengths: self.lengths,
            remaining,
            skip: self.skip.and_then(Skip::element),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, inner: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(ExactMap {
            inner,
            lengths: self.lengths,
            skip: self.skip.filter(|skip| skip.reads_entries()),
            value_skip: None,
        })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, inner: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(ExactEnum {
            inner,
            lengths: self.lengths,
        })
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for ExactSeed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(ExactDeserializer {
            inner,
            lengths: self.lengths,
            skip: self.skip,
        })
    }
}

impl<'l, S> ExactSeed<'l, S> {
    fn new(inner: S, lengths: &'l Lengths<'l>) -> Self {
        Self {
            inner,
            lengths,
            skip: None,
        }
    }

    fn skipping(inner: S, lengths: &'l Lengths<'l>, skip: Option<&'l Skip>) -> Self {
        Self { inner, lengths, skip }
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for ExactSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        let element = self
            .inner
            .next_element_seed(ExactSeed::skipping(seed, self.lengths, self.skip))?;
        if element.is_some() {
            self.remaining = self.remaining.map(|n| n.saturating_sub(1));
        }
        Ok(element)
    }

    fn size_hint(&self) -> Option<usize> {
        self.remaining.or_else(|| self.inner.size_hint())
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for ExactMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let Some(skip) = self.skip else {
            return self.inner.next_key_seed(ExactSeed::new(seed, self.lengths));
        };
        // the keys are read here, so that skipped entries never reach the visitor
        loop {
            let Some(key) = self.inner.next_key_seed(KeyText)? else {
                return Ok(None);
            };
            match skip.entry(key.as_str()) {
                Entry::Skipped => {
                    self.inner
                        .next_value_seed(ExactSeed::new(PhantomData::<IgnoredAny>, self.lengths))?;
                }
                Entry::Kept(below) => {
                    self.value_skip = below;
                    return match key {
                        Key::Borrowed(key) => seed.deserialize(BorrowedStrDeserializer::new(key)),
                        Key::Owned(key) => {
                            let key: StringDeserializer<A::Error> = key.into_deserializer();
                            seed.deserialize(key)
                        }
                    }
                    .map(Some);
                }
            }
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        let skip = self.value_skip.take();
        self.inner
            .next_value_seed(ExactSeed::skipping(seed, self.lengths, skip))
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, 'l, A: EnumAccess<'de>> EnumAccess<'de> for ExactEnum<'l, A> {
    type Error = A::Error;
    type Variant = ExactEnum<'l, A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, inner) = self.inner.variant_seed(ExactSeed::new(seed, self.lengths))?;
        Ok((
            value,
            ExactEnum {
                inner,
                lengths: self.lengths,
            },
        ))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for ExactEnum<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.inner
            .newtype_variant_seed(ExactSeed::new(seed, self.lengths))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        let visitor = exact_visitor(visitor, self.lengths, None);
        self.inner.tuple_variant(len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let visitor = exact_visitor(visitor, self.lengths, None);
        self.inner.struct_variant(fields, visitor)
    }
}

/// An object's key as the text holds it: borrowed, or unescaped into a string of its own.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn as_str(&self) -> &str {
        match self {
            Self::Borrowed(key) => key,
            Self::Owned(key) => key,
        }
    }
}

/// Reads a key as [`Key`].
struct KeyText;

impl<'de> DeserializeSeed<'de> for KeyText {
    type Value = Key<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key<'de>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyText {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
        Ok(Key::Borrowed(key))
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
        Ok(Key::Owned(key.to_owned()))
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<Key<'de>, E> {
        Ok(Key::Owned(key))
    }
}
