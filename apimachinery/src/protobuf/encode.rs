//! Objects and lists of built-in types encoded as protobuf documents, from their JSON: the
//! inverse of the decoding, from the same table. A field present in the JSON is written, zero
//! or not; one left out is not, except a time Go holds by value, which Go writes as an empty
//! message when it is unset (left out, or `null`).

use base64::Engine as _;
use serde_json::Value;

use super::{
    Error,
    envelope::wrap,
    lookup::{kind_message, message, message_at},
    spec::{FieldSpec, MessageSpec, Presence, Special, Wire},
    text::parse_go_duration,
    wire::Writer,
};

/// Encodes `object`, the JSON of an object or a list of a built-in kind (or a meta/v1
/// `Status`), as a protobuf document (`k8s\0`, `runtime.Unknown`, the message).
///
/// # Errors
/// [`Error::UnknownKind`] when `apiVersion` and `kind` name no kind with a protobuf form;
/// [`Error::Malformed`] when a value does not fit its field (a time that is not RFC 3339, a
/// duration that is not Go's duration text, bytes that are not base64).
///
/// ```
/// use informer_apimachinery::protobuf;
/// use serde_json::json;
///
/// let bytes = protobuf::to_vec(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}))?;
/// assert!(bytes.starts_with(protobuf::MAGIC));
/// assert!(protobuf::to_vec(&json!({"apiVersion": "example.com/v1", "kind": "Widget"})).is_err());
/// # Ok::<_, protobuf::Error>(())
/// ```
pub fn to_vec(object: &Value) -> Result<Vec<u8>, Error> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let spec =
        kind_message(api_version, kind).ok_or_else(|| Error::UnknownKind(format!("{api_version} {kind}")))?;
    let raw = encode_message(object, spec)?;
    Ok(wrap(api_version, kind, &raw))
}

/// The message of `value` without an envelope, for the round-trip tests of every message.
#[cfg(test)]
pub(crate) fn encode_message_for_test(value: &Value, spec: &MessageSpec) -> Result<Vec<u8>, Error> {
    encode_message(value, spec)
}

fn encode_message(value: &Value, spec: &MessageSpec) -> Result<Vec<u8>, Error> {
    if spec.special != Special::None {
        return encode_special(value, spec);
    }
    let mut out = Writer::default();
    let Value::Object(map) = value else {
        return Err(Error::Malformed(format!(
            "{} must be a JSON object, not {value}",
            spec.path
        )));
    };
    for field in spec.fields {
        if field.json.is_empty() {
            // a message embedded inline: its fields are the object's own
            if let Wire::Message(index) = field.wire {
                let encoded = encode_message(value, message_at(index))?;
                if !encoded.is_empty() {
                    out.bytes(field.tag, &encoded);
                }
            }
            continue;
        }
        match map.get(field.json) {
            None | Some(Value::Null) => {
                if is_time_by_value(field) {
                    out.bytes(field.tag, &[]);
                }
            }
            Some(Value::Array(items)) if field.repeated => {
                for item in items {
                    encode_field(&mut out, field, item)?;
                }
            }
            Some(value) => encode_field(&mut out, field, value)?,
        }
    }
    Ok(out.into_bytes())
}

/// Whether `field` is a `Time` or `MicroTime` that Go holds by value (not a pointer): Go
/// writes it, as an empty message when it is unset, as it writes every field that is not a
/// pointer (`metadata.creationTimestamp`, a condition's `lastProbeTime`; not
/// `metadata.deletionTimestamp`, a `*Time`).
fn is_time_by_value(field: &FieldSpec) -> bool {
    let Wire::Message(index) = field.wire else {
        return false;
    };
    !field.repeated
        && field.presence != Presence::Pointer
        && matches!(message_at(index).special, Special::Time | Special::MicroTime)
}

fn encode_field(out: &mut Writer, field: &FieldSpec, value: &Value) -> Result<(), Error> {
    match field.wire {
        Wire::String => out.bytes(field.tag, text(value, field)?.as_bytes()),
        Wire::Bytes => out.bytes(field.tag, &base64_bytes(value, field)?),
        Wire::Bool => out.number(
            field.tag,
            i64::from(value.as_bool().ok_or_else(|| mismatch(field, value))?),
        ),
        Wire::Int32 | Wire::Int64 => out.number(field.tag, integer(value, field)?),
        Wire::Double => {
            let number = value.as_f64().ok_or_else(|| mismatch(field, value))?;
            out.fixed64(field.tag, number.to_bits());
        }
        Wire::Message(index) => out.bytes(field.tag, &encode_message(value, message_at(index))?),
        Wire::MapString | Wire::MapBytes | Wire::MapMessage(_) => {
            let Value::Object(entries) = value else {
                return Err(mismatch(field, value));
            };
            for (key, item) in entries {
                out.bytes(field.tag, &map_entry(field, key, item)?);
            }
        }
    }
    Ok(())
}

fn map_entry(field: &FieldSpec, key: &str, value: &Value) -> Result<Vec<u8>, Error> {
    let mut entry = Writer::default();
    entry.bytes(1, key.as_bytes());
    match field.wire {
        Wire::MapString => entry.bytes(2, text(value, field)?.as_bytes()),
        Wire::MapBytes => entry.bytes(2, &base64_bytes(value, field)?),
        Wire::MapMessage(index) => entry.bytes(2, &encode_message(value, message_at(index))?),
        _ => {}
    }
    Ok(entry.into_bytes())
}

fn mismatch(field: &FieldSpec, value: &Value) -> Error {
    Error::Malformed(format!(
        "the field {:?} ({:?}) cannot hold {value}",
        field.json, field.wire
    ))
}

fn text<'v>(value: &'v Value, field: &FieldSpec) -> Result<&'v str, Error> {
    value.as_str().ok_or_else(|| mismatch(field, value))
}

fn integer(value: &Value, field: &FieldSpec) -> Result<i64, Error> {
    value
        .as_i64()
        .or_else(|| value.as_u64().and_then(|v| i64::try_from(v).ok()))
        .ok_or_else(|| mismatch(field, value))
}

fn base64_bytes(value: &Value, field: &FieldSpec) -> Result<Vec<u8>, Error> {
    base64::engine::general_purpose::STANDARD
        .decode(text(value, field)?)
        .map_err(|e| Error::Malformed(format!("the field {:?} is not base64: {e}", field.json)))
}

/// apimachinery's and apiextensions' messages with a JSON form of their own.
fn encode_special(value: &Value, spec: &MessageSpec) -> Result<Vec<u8>, Error> {
    let mut out = Writer::default();
    let bad = || Error::Malformed(format!("{value} is not a valid {}", spec.path));
    match spec.special {
        Special::None => {}
        Special::Time | Special::MicroTime => {
            let Some(text) = value.as_str() else {
                return Ok(out.into_bytes());
            };
            let time: k8s_openapi::jiff::Timestamp = text.parse().map_err(|_| bad())?;
            // Go writes both fields of a set time, zero or not: 1970-01-01 is not unset
            out.number(1, time.as_second());
            let nanos = if spec.special == Special::MicroTime {
                time.subsec_nanosecond() / 1000 * 1000
            } else {
                0
            };
            out.number(2, i64::from(nanos));
        }
        Special::Quantity => out.bytes(1, value.as_str().ok_or_else(bad)?.as_bytes()),
        Special::IntOrString => match value {
            Value::String(text) => {
                out.number(1, 1);
                out.bytes(3, text.as_bytes());
            }
            other => {
                out.number(1, 0);
                out.number(2, other.as_i64().ok_or_else(bad)?);
            }
        },
        Special::RawJson => out.bytes(1, value.to_string().as_bytes()),
        Special::Duration => {
            let nanos = value.as_str().and_then(parse_go_duration).ok_or_else(bad)?;
            out.number(1, nanos);
        }
        Special::SchemaOrBool | Special::SchemaOrArray | Special::SchemaOrStringArray => {
            encode_schema_union(&mut out, value, spec)?;
        }
        Special::StringList => {
            for item in value.as_array().ok_or_else(bad)? {
                out.bytes(1, item.as_str().ok_or_else(bad)?.as_bytes());
            }
        }
    }
    Ok(out.into_bytes())
}

/// apiextensions' unions of a schema and a boolean or an array.
fn encode_schema_union(out: &mut Writer, value: &Value, spec: &MessageSpec) -> Result<(), Error> {
    let module = spec.path.rsplit_once("::").map_or("", |(module, _)| module);
    let schema = message(&format!("{module}::JsonSchemaProps"))
        .ok_or_else(|| Error::Malformed(format!("the table has no JSONSchemaProps in {module}")))?;
    match (spec.special, value) {
        (Special::SchemaOrBool, Value::Bool(allows)) => out.number(1, i64::from(*allows)),
        (Special::SchemaOrBool, object) => {
            out.number(1, 1);
            out.bytes(2, &encode_message(object, schema)?);
        }
        (Special::SchemaOrArray, Value::Array(items)) => {
            for item in items {
                out.bytes(2, &encode_message(item, schema)?);
            }
        }
        (Special::SchemaOrStringArray, Value::Array(items)) => {
            for item in items {
                out.bytes(2, item.as_str().unwrap_or_default().as_bytes());
            }
        }
        (_, Value::Null) => {}
        (_, object) => out.bytes(1, &encode_message(object, schema)?),
    }
    Ok(())
}
