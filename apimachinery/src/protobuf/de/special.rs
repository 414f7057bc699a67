//! apimachinery's and apiextensions' messages read as their JSON forms (Go's `MarshalJSON`).

use serde::de::{Deserializer, Visitor};
use serde_json::Value;

use super::mode::Decode;
use crate::protobuf::{
    Error,
    envelope::utf8,
    lookup::message,
    spec::{MessageSpec, Special},
    text::rfc3339,
    wire::{Reader, WireValue},
};

/// The fields of a small message by number (the last of each wins, as in protobuf).
struct SmallFields<'de> {
    varints: [Option<u64>; 4],
    bytes: [Option<&'de [u8]>; 4],
    /// Elements of field 2 when it repeats (arrays of schemas or strings).
    repeated: Vec<&'de [u8]>,
}

fn read(bytes: &[u8]) -> Result<SmallFields<'_>, Error> {
    let mut fields = SmallFields {
        varints: [None; 4],
        bytes: [None; 4],
        repeated: Vec::new(),
    };
    for field in Reader::new(bytes) {
        let (tag, value) = field?;
        let Some(at) = usize::try_from(tag).ok().filter(|t| *t < 4) else {
            continue;
        };
        match value {
            WireValue::Varint(v) => fields.varints[at] = Some(v),
            WireValue::Bytes(b) => {
                if at == 2 {
                    fields.repeated.push(b);
                }
                fields.bytes[at] = Some(b);
            }
            WireValue::Fixed64(_) | WireValue::Fixed32(_) => {}
        }
    }
    Ok(fields)
}

/// Reads a plain message (a JSON schema in a union) as JSON: the caller's message decoder.
pub(crate) type MessageAsJson = fn(&[u8], &'static MessageSpec, &Decode) -> Result<Value, Error>;

/// Reads the special message `bytes` as its JSON form, for `visitor`.
pub(crate) fn deserialize<'de, V: Visitor<'de>>(
    bytes: &'de [u8],
    spec: &'static MessageSpec,
    decode: &Decode,
    message_as_json: MessageAsJson,
    visitor: V,
) -> Result<V::Value, Error> {
    let fields = read(bytes)?;
    let special = spec.special;
    match special {
        Special::None => Err(Error::Type("a plain message is not special".into())),
        Special::Time | Special::MicroTime => {
            let seconds = fields.varints[1].unwrap_or(0) as i64;
            // Go keeps only seconds of a Time (its JSON has no more)
            let micros = (special == Special::MicroTime)
                .then(|| (fields.varints[2].unwrap_or(0) as u32 % 1_000_000_000) / 1000);
            let text = rfc3339(seconds, micros).ok_or_else(|| {
                Error::Malformed(format!("the time {seconds} s after 1970 is out of range"))
            })?;
            visitor.visit_str(text.as_str())
        }
        Special::Duration => {
            visitor.visit_string(k8s_protobuf::go_duration(fields.varints[1].unwrap_or(0) as i64))
        }
        Special::Quantity => visitor.visit_borrowed_str(utf8(fields.bytes[1].unwrap_or_default())?),
        Special::IntOrString => match fields.varints[1] {
            Some(1) => visitor.visit_borrowed_str(utf8(fields.bytes[3].unwrap_or_default())?),
            _ => visitor.visit_i32(fields.varints[2].unwrap_or(0) as i32),
        },
        Special::RawJson => match fields.bytes[1] {
            Some(raw) if !raw.is_empty() => serde_json::Deserializer::from_slice(raw)
                .deserialize_any(visitor)
                .map_err(|e| Error::Malformed(format!("embedded JSON: {e}"))),
            _ => visitor.visit_unit(),
        },
        Special::StringList => {
            let mut items = Vec::new();
            for field in Reader::new(bytes) {
                if let (1, WireValue::Bytes(item)) = field? {
                    items.push(Value::String(utf8(item)?.to_owned()));
                }
            }
            Value::Array(items)
                .deserialize_any(visitor)
                .map_err(|e| Error::Type(e.to_string()))
        }
        Special::SchemaOrBool | Special::SchemaOrArray | Special::SchemaOrStringArray => {
            schema_union(spec, &fields, decode, message_as_json)?
                .deserialize_any(visitor)
                .map_err(|e| Error::Type(e.to_string()))
        }
    }
}

/// apiextensions' unions of a schema and something else, as Go's JSON writes them: the array
/// (of schemas or strings) when it has elements, else the schema, else the boolean or `null`.
fn schema_union(
    spec: &MessageSpec,
    fields: &SmallFields<'_>,
    decode: &Decode,
    message_as_json: MessageAsJson,
) -> Result<Value, Error> {
    let special = spec.special;
    // the schema of the same API version as the union
    let module = spec.path.rsplit_once("::").map_or("", |(module, _)| module);
    let schema_spec = message(&format!("{module}::JsonSchemaProps"))
        .ok_or_else(|| Error::Malformed(format!("the table has no JSONSchemaProps in {module}")))?;
    let schema = |bytes: &[u8]| message_as_json(bytes, schema_spec, decode);
    // OrBool: allows = 1, schema = 2; OrArray and OrStringArray: schema = 1, array = 2
    let schema_at = if special == Special::SchemaOrBool { 2 } else { 1 };
    if special != Special::SchemaOrBool && !fields.repeated.is_empty() {
        return fields
            .repeated
            .iter()
            .map(|item| match special {
                Special::SchemaOrArray => schema(item),
                _ => utf8(item).map(|s| Value::String(s.to_owned())),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if let Some(bytes) = fields.bytes[schema_at] {
        return schema(bytes);
    }
    Ok(match special {
        Special::SchemaOrBool => Value::Bool(fields.varints[1].unwrap_or(0) != 0),
        _ => Value::Null,
    })
}
