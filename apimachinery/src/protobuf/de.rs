//! A serde `Deserializer` over the protobuf wire: a message reads as a map of its fields by
//! JSON name, a repeated field as a sequence, a map field as a map, a scalar as itself, and
//! apimachinery's special messages as their JSON forms. Strings are borrowed from the input.

mod fields;
mod special;

use serde::de::{
    self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor, value::BorrowedStrDeserializer,
};

use super::{
    Error,
    envelope::{Envelope, utf8},
    lookup::{kind_message, message_at},
    spec::{FieldSpec, MessageSpec, Special, Wire},
    wire::{Varints, WireValue},
};
use fields::{Field, MessageFields};

/// Decodes a protobuf document (`k8s\0`, a `runtime.Unknown`, the object's message) into `T`.
/// The object gets `apiVersion` and `kind` from the envelope; strings are borrowed from
/// `document` where `T` borrows.
///
/// # Errors
/// [`Error::Malformed`] for bytes that are not a protobuf document, [`Error::UnknownKind`]
/// for a kind without a protobuf form, [`Error::Type`] when the fields do not fit `T`.
pub fn from_slice<'de, T: de::Deserialize<'de>>(document: &'de [u8]) -> Result<T, Error> {
    let envelope = Envelope::parse(document)?;
    let spec = kind_message(envelope.api_version, envelope.kind)
        .ok_or_else(|| Error::UnknownKind(format!("{} {}", envelope.api_version, envelope.kind)))?;
    fields::fast_then_careful(|| {
        T::deserialize(MessageDeserializer {
            bytes: envelope.raw,
            spec,
            type_meta: Some((envelope.api_version, envelope.kind)),
        })
    })
}

/// One message: a map of its fields, or a special message's JSON form.
pub(crate) struct MessageDeserializer<'de> {
    pub(crate) bytes: &'de [u8],
    pub(crate) spec: &'static MessageSpec,
    /// `apiVersion` and `kind`, read first, for a top-level object.
    pub(crate) type_meta: Option<(&'de str, &'de str)>,
}

impl<'de> Deserializer<'de> for MessageDeserializer<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.spec.special != Special::None {
            return special::deserialize(self.bytes, self.spec, message_as_json, visitor);
        }
        visitor.visit_map(MessageAccess {
            fields: MessageFields::new(self.bytes, self.spec),
            type_meta: self.type_meta,
            type_meta_read: 0,
            pending: None,
        })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct enum identifier
    }
}

/// A message read as JSON (a JSON schema inside one of apiextensions' unions).
fn message_as_json(bytes: &[u8], spec: &'static MessageSpec) -> Result<serde_json::Value, Error> {
    serde::Deserialize::deserialize(MessageDeserializer {
        bytes,
        spec,
        type_meta: None,
    })
}

/// The entries of a message's map: `apiVersion` and `kind` first when given, then the fields.
struct MessageAccess<'de> {
    fields: MessageFields<'de>,
    type_meta: Option<(&'de str, &'de str)>,
    /// How many of `apiVersion` and `kind` were given.
    type_meta_read: u8,
    pending: Option<Pending<'de>>,
}

/// The value of the key just given.
enum Pending<'de> {
    Text(&'de str),
    Field(Field<'de>),
}

impl<'de> MapAccess<'de> for MessageAccess<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        while let Some((api_version, kind)) = self.type_meta {
            let (key, value) = if self.type_meta_read == 0 {
                ("apiVersion", api_version)
            } else {
                ("kind", kind)
            };
            self.type_meta_read += 1;
            if self.type_meta_read == 2 {
                self.type_meta = None;
            }
            if !value.is_empty() {
                self.pending = Some(Pending::Text(value));
                return seed.deserialize(StaticStr(key)).map(Some);
            }
        }
        let Some(field) = self.fields.next_field()? else {
            return Ok(None);
        };
        let key = field.spec().json;
        self.pending = Some(Pending::Field(field));
        seed.deserialize(StaticStr(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.pending.take() {
            Some(Pending::Text(text)) => seed.deserialize(BorrowedStr(text)),
            Some(Pending::Field(field)) => seed.deserialize(FieldDeserializer(field)),
            None => Err(Error::Type("a value was asked for before its key".into())),
        }
    }
}

/// A key from the table.
struct StaticStr(&'static str);

impl<'de> Deserializer<'de> for StaticStr {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(self.0)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// Text borrowed from the input.
struct BorrowedStr<'de>(&'de str);

impl<'de> Deserializer<'de> for BorrowedStr<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(BorrowedStrDeserializer::new(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The value of one field: a scalar or message, every element of a repeated field, or every
/// entry of a map field.
struct FieldDeserializer<'de>(Field<'de>);

impl<'de> Deserializer<'de> for FieldDeserializer<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Field::One(spec, value) => ValueDeserializer {
                wire: spec.wire,
                value,
            }
            .deserialize_any(visitor),
            Field::Repeated(spec, values) if spec.wire.is_map() => visitor.visit_map(MapEntries {
                spec,
                occurrences: fields::Occurrences::new(values.bytes, spec.tag),
                value: None,
            }),
            Field::Repeated(spec, values) => visitor.visit_seq(Elements {
                spec,
                occurrences: fields::Occurrences::new(values.bytes, spec.tag),
                packed: Varints::new(&[]),
                count: values.count.filter(|_| !is_packable(spec.wire)),
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Field::One(spec, value) => ValueDeserializer {
                wire: spec.wire,
                value,
            }
            .deserialize_enum(name, variants, visitor),
            repeated => FieldDeserializer(repeated).deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// One value on the wire, read as its field's type.
pub(crate) struct ValueDeserializer<'de> {
    pub(crate) wire: Wire,
    pub(crate) value: WireValue<'de>,
}

impl<'de> Deserializer<'de> for ValueDeserializer<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match (self.wire, self.value) {
            (Wire::String | Wire::MapString, WireValue::Bytes(bytes)) => {
                visitor.visit_borrowed_str(utf8(bytes)?)
            }
            (Wire::Bytes | Wire::MapBytes, WireValue::Bytes(bytes)) => visitor.visit_string(base64(bytes)),
            (Wire::Bool, WireValue::Varint(v)) => visitor.visit_bool(v != 0),
            // int32 is sign-extended to 64 bits on the wire
            (Wire::Int32, WireValue::Varint(v)) => visitor.visit_i32(v as i32),
            (Wire::Int64, WireValue::Varint(v)) => visitor.visit_i64(v as i64),
            (Wire::Double, WireValue::Fixed64(v)) => visitor.visit_f64(f64::from_bits(v)),
            (Wire::Message(index) | Wire::MapMessage(index), WireValue::Bytes(bytes)) => {
                MessageDeserializer {
                    bytes,
                    spec: message_at(index),
                    type_meta: None,
                }
                .deserialize_any(visitor)
            }
            (wire, value) => Err(Error::Malformed(format!(
                "a value of wire type {} was sent for a field of type {wire:?}",
                value.wire_type()
            ))),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    /// A string is a unit variant, as in JSON (`status: Failure`).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match (self.wire, self.value) {
            (Wire::String | Wire::MapString, WireValue::Bytes(bytes)) => {
                BorrowedStr(utf8(bytes)?).deserialize_enum(name, variants, visitor)
            }
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier
    }
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The elements of a repeated field: every occurrence of its number in the rest of the
/// message, each a run of values when packed.
struct Elements<'de> {
    spec: &'static FieldSpec,
    occurrences: fields::Occurrences<'de>,
    packed: Varints<'de>,
    /// How many elements there are, when known before reading them.
    count: Option<usize>,
}

impl<'de> SeqAccess<'de> for Elements<'de> {
    type Error = Error;

    /// The exact count, so a `Vec` is allocated at its length once.
    fn size_hint(&self) -> Option<usize> {
        if self.count.is_some() {
            return self.count;
        }
        let mut packed = self.packed.clone();
        let in_run = std::iter::from_fn(|| packed.next_varint().ok().flatten()).count();
        Some(in_run + self.occurrences.remaining(is_packable(self.spec.wire)))
    }

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        let value = match self.packed.next_varint()? {
            Some(varint) => WireValue::Varint(varint),
            None => match self.occurrences.next_value()? {
                None => return Ok(None),
                Some(WireValue::Bytes(run)) if is_packable(self.spec.wire) => {
                    self.packed = Varints::new(run);
                    return self.next_element_seed(seed);
                }
                Some(value) => value,
            },
        };
        if let Some(count) = &mut self.count {
            *count = count.saturating_sub(1);
        }
        seed.deserialize(ValueDeserializer {
            wire: self.spec.wire,
            value,
        })
        .map(Some)
    }
}

/// Whether a repeated field of this type may come packed (a run of varints in one value).
fn is_packable(wire: Wire) -> bool {
    matches!(wire, Wire::Bool | Wire::Int32 | Wire::Int64)
}

/// The entries of a map field: every occurrence of its number, each a `key = 1, value = 2`
/// message.
struct MapEntries<'de> {
    spec: &'static FieldSpec,
    occurrences: fields::Occurrences<'de>,
    value: Option<WireValue<'de>>,
}

impl<'de> MapAccess<'de> for MapEntries<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let Some(entry) = self.occurrences.next_value()? else {
            return Ok(None);
        };
        let WireValue::Bytes(entry) = entry else {
            return Err(Error::Malformed(format!(
                "an entry of the map {:?} is not a message",
                self.spec.json
            )));
        };
        let (mut key, mut value) = ("", None);
        for field in super::wire::Reader::new(entry) {
            match field? {
                (1, WireValue::Bytes(k)) => key = utf8(k)?,
                (2, v) => value = Some(v),
                _ => {}
            }
        }
        // a value left out is the empty value of its type
        self.value = Some(value.unwrap_or(WireValue::Bytes(&[])));
        seed.deserialize(BorrowedStr(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| Error::Type("a map value was asked for before its key".into()))?;
        seed.deserialize(ValueDeserializer {
            wire: self.spec.wire,
            value,
        })
    }
}
