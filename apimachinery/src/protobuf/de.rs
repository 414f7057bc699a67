//! A serde `Deserializer` over the protobuf wire: a message reads as a map of its fields by
//! JSON name, a repeated field as a sequence, a map field as a map, a scalar as itself, and
//! apimachinery's special messages as their JSON forms. Strings are borrowed from the input.

mod fields;
mod mode;
mod read;
mod special;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor, value::BorrowedStrDeserializer};

use super::{
    Error,
    envelope::{Envelope, utf8},
    location::Segment,
    lookup::{kind_message, message_at},
    spec::{FieldSpec, MessageSpec, Special, Wire},
    wire::{Varints, WireValue},
};
use fields::{Field, MessageFields};
pub(crate) use mode::Decode;
use read::{Read, deserializer};

/// Decodes a protobuf document (`k8s\0`, a `runtime.Unknown`, the object's message) into `T`.
/// The object gets `apiVersion` and `kind` from the envelope; strings are borrowed from
/// `document` where `T` borrows.
///
/// # Errors
/// [`Error::Malformed`] for bytes that are not a protobuf document, [`Error::UnknownKind`]
/// for a kind without a protobuf form, [`Error::Type`] when the fields do not fit `T`; each
/// found inside the object's message is an [`Error::At`] that says where.
pub fn from_slice<'de, T: de::Deserialize<'de>>(document: &'de [u8]) -> Result<T, Error> {
    let envelope = Envelope::parse(document)?;
    let spec = kind_message(envelope.api_version, envelope.kind)
        .ok_or_else(|| Error::UnknownKind(format!("{} {}", envelope.api_version, envelope.kind)))?;
    Decode::fast_then_careful(document, |decode| {
        T::deserialize(MessageDeserializer {
            bytes: envelope.raw,
            spec,
            type_meta: Some((envelope.api_version, envelope.kind)),
            decode,
        })
    })
}

/// One message: a map of its fields, or a special message's JSON form.
pub(crate) struct MessageDeserializer<'de, 'm> {
    pub(crate) bytes: &'de [u8],
    pub(crate) spec: &'static MessageSpec,
    /// `apiVersion` and `kind`, read first, for a top-level object.
    pub(crate) type_meta: Option<(&'de str, &'de str)>,
    pub(crate) decode: &'m Decode,
}

deserializer!('de =>
    MessageDeserializer<'de, '_>,
    StaticStr,
    BorrowedStr<'de>,
    FieldDeserializer<'de, '_>,
    ValueDeserializer<'de, '_>,
);

impl<'de> Read<'de> for MessageDeserializer<'de, '_> {
    fn read<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.spec.special != Special::None {
            return special::deserialize(self.bytes, self.spec, self.decode, message_as_json, visitor);
        }
        visitor.visit_map(MessageAccess {
            fields: MessageFields::new(self.bytes, self.spec, self.decode),
            spec: self.spec,
            type_meta: self.type_meta,
            type_meta_read: 0,
            pending: None,
        })
    }
}

/// A message read as JSON (a JSON schema inside one of apiextensions' unions).
fn message_as_json(
    bytes: &[u8],
    spec: &'static MessageSpec,
    decode: &Decode,
) -> Result<serde_json::Value, Error> {
    serde::Deserialize::deserialize(MessageDeserializer {
        bytes,
        spec,
        type_meta: None,
        decode,
    })
}

/// The entries of a message's map: `apiVersion` and `kind` first when given, then the fields.
struct MessageAccess<'de, 'm> {
    fields: MessageFields<'de, 'm>,
    spec: &'static MessageSpec,
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

impl<'de> MapAccess<'de> for MessageAccess<'de, '_> {
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

    /// The value of the key just given; an error in it names the field and its offset.
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let (message, at) = (self.spec.path, self.fields.at());
        let within =
            |field: &'static str| move |err: Error| err.within(Some(Segment::Field { message, field }), at);
        match self.pending.take() {
            Some(Pending::Text(text)) => {
                seed.deserialize(BorrowedStr(text))
                    .map_err(within(if self.type_meta_read == 1 {
                        "apiVersion"
                    } else {
                        "kind"
                    }))
            }
            Some(Pending::Field(field)) => {
                let name = field.spec().json;
                seed.deserialize(FieldDeserializer {
                    field,
                    decode: self.fields.decode(),
                })
                .map_err(within(name))
            }
            None => Err(Error::Type("a value was asked for before its key".into())),
        }
    }
}

/// A key from the table.
struct StaticStr(&'static str);

impl<'de> Read<'de> for StaticStr {
    fn read<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(self.0)
    }
}

/// Text borrowed from the input.
struct BorrowedStr<'de>(&'de str);

impl<'de> Read<'de> for BorrowedStr<'de> {
    fn read<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    fn read_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(BorrowedStrDeserializer::new(self.0))
    }
}

/// The value of one field: a scalar or message, every element of a repeated field, or every
/// entry of a map field.
struct FieldDeserializer<'de, 'm> {
    field: Field<'de>,
    decode: &'m Decode,
}

impl<'de> Read<'de> for FieldDeserializer<'de, '_> {
    fn read<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let decode = self.decode;
        match self.field {
            Field::One(spec, value) => ValueDeserializer {
                wire: spec.wire,
                value,
                decode,
            }
            .read(visitor),
            Field::Repeated(spec, values) if spec.wire.is_map() => visitor.visit_map(MapEntries {
                spec,
                occurrences: fields::Occurrences::new(values.bytes, spec.tag),
                entry: None,
                decode,
            }),
            Field::Repeated(spec, values) => visitor.visit_seq(Elements {
                spec,
                occurrences: fields::Occurrences::new(values.bytes, spec.tag),
                packed: Varints::new(&[]),
                count: values.count.filter(|_| !is_packable(spec.wire)),
                index: 0,
                decode,
            }),
        }
    }

    fn read_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.field {
            Field::One(spec, value) => ValueDeserializer {
                wire: spec.wire,
                value,
                decode: self.decode,
            }
            .read_enum(name, variants, visitor),
            _ => self.read(visitor),
        }
    }
}

/// One value on the wire, read as its field's type.
pub(crate) struct ValueDeserializer<'de, 'm> {
    pub(crate) wire: Wire,
    pub(crate) value: WireValue<'de>,
    pub(crate) decode: &'m Decode,
}

impl<'de> Read<'de> for ValueDeserializer<'de, '_> {
    fn read<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
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
                    decode: self.decode,
                }
                .read(visitor)
            }
            (wire, value) => Err(Error::Malformed(format!(
                "a value of wire type {} was sent for a field of type {wire:?}",
                value.wire_type()
            ))),
        }
    }

    /// A string is a unit variant, as in JSON (`status: Failure`).
    fn read_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match (self.wire, self.value) {
            (Wire::String | Wire::MapString, WireValue::Bytes(bytes)) => {
                BorrowedStr(utf8(bytes)?).read_enum(name, variants, visitor)
            }
            _ => self.read(visitor),
        }
    }
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The elements of a repeated field: every occurrence of its number in the rest of the
/// message, each a run of values when packed.
struct Elements<'de, 'm> {
    spec: &'static FieldSpec,
    occurrences: fields::Occurrences<'de>,
    packed: Varints<'de>,
    /// How many elements there are, when known before reading them.
    count: Option<usize>,
    /// The index of the next element.
    index: usize,
    decode: &'m Decode,
}

impl<'de> SeqAccess<'de> for Elements<'de, '_> {
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

    /// The next element; an error in it names its index and the offset of its value.
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        let at = |elements: &Self| elements.decode.offset(elements.occurrences.last());
        let value = match self.packed.next_varint() {
            Ok(Some(varint)) => WireValue::Varint(varint),
            Ok(None) => match self.occurrences.next_value() {
                Ok(None) => return Ok(None),
                Ok(Some(WireValue::Bytes(run))) if is_packable(self.spec.wire) => {
                    self.packed = Varints::new(run);
                    return self.next_element_seed(seed);
                }
                Ok(Some(value)) => value,
                Err(err) => return Err(err.within(Some(Segment::Index(self.index)), at(self))),
            },
            Err(err) => return Err(Error::from(err).within(Some(Segment::Index(self.index)), at(self))),
        };
        if let Some(count) = &mut self.count {
            *count = count.saturating_sub(1);
        }
        let index = self.index;
        self.index += 1;
        seed.deserialize(ValueDeserializer {
            wire: self.spec.wire,
            value,
            decode: self.decode,
        })
        .map(Some)
        .map_err(|err| err.within(Some(Segment::Index(index)), at(self)))
    }
}

/// Whether a repeated field of this type may come packed (a run of varints in one value).
fn is_packable(wire: Wire) -> bool {
    matches!(wire, Wire::Bool | Wire::Int32 | Wire::Int64)
}

/// The entries of a map field: every occurrence of its number, each a `key = 1, value = 2`
/// message.
struct MapEntries<'de, 'm> {
    spec: &'static FieldSpec,
    occurrences: fields::Occurrences<'de>,
    /// The key and value of the entry just given.
    entry: Option<(&'de str, WireValue<'de>)>,
    decode: &'m Decode,
}

impl<'de> MapEntries<'de, '_> {
    /// The key and value of the next entry.
    fn next_entry(&mut self) -> Result<Option<(&'de str, WireValue<'de>)>, Error> {
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
        Ok(Some((key, value.unwrap_or(WireValue::Bytes(&[])))))
    }

    /// The offset of the entry just read.
    fn at(&self) -> usize {
        self.decode.offset(self.occurrences.last())
    }
}

impl<'de> MapAccess<'de> for MapEntries<'de, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.next_entry().map_err(|err| err.within(None, self.at()))? else {
            return Ok(None);
        };
        self.entry = Some((key, value));
        seed.deserialize(BorrowedStr(key))
            .map(Some)
            .map_err(|err| err.within(Some(Segment::Key(key.to_owned())), self.at()))
    }

    /// The value of the entry just given; an error in it names the key and the entry's offset.
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let (key, value) = self
            .entry
            .take()
            .ok_or_else(|| Error::Type("a map value was asked for before its key".into()))?;
        seed.deserialize(ValueDeserializer {
            wire: self.spec.wire,
            value,
            decode: self.decode,
        })
        .map_err(|err| err.within(Some(Segment::Key(key.to_owned())), self.at()))
    }
}
