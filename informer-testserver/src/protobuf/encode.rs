//! Objects and lists of built-in types encoded as protobuf answers, for clients whose `Accept`
//! puts `application/vnd.kubernetes.protobuf` first: the inverse of the decoding in the parent
//! module, from the same generated table.

use base64::Engine as _;
use serde_json::Value;

use super::{FieldSpec, MAGIC, MessageSpec, Wire, kind_message, message};

/// Appends protobuf fields to a buffer.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn varint(&mut self, mut value: u64) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                self.0.push(byte);
                return;
            }
            self.0.push(byte | 0x80);
        }
    }

    fn key(&mut self, tag: u32, wire_type: u64) {
        self.varint(u64::from(tag) << 3 | wire_type);
    }

    fn bytes(&mut self, tag: u32, value: &[u8]) {
        self.key(tag, 2);
        self.varint(value.len() as u64);
        self.0.extend_from_slice(value);
    }

    fn number(&mut self, tag: u32, value: i64) {
        self.key(tag, 0);
        // negative numbers are ten-byte varints of their two's complement, as protobuf does
        self.varint(value as u64);
    }
}

/// The protobuf answer for `value`, an object or a list of a built-in kind (`None` for any
/// other kind, which is then answered in JSON).
pub(crate) fn encode_answer(value: &Value) -> Option<Vec<u8>> {
    let api_version = value["apiVersion"].as_str()?;
    let kind = value["kind"].as_str()?;
    let spec = if kind == "Status" {
        message("apimachinery::pkg::apis::meta::v1::Status")?
    } else {
        kind_message(api_version, kind)?
    };
    let raw = encode_message(value, spec);
    let mut type_meta = Writer::default();
    type_meta.bytes(1, api_version.as_bytes());
    type_meta.bytes(2, kind.as_bytes());
    let mut unknown = Writer::default();
    unknown.bytes(1, &type_meta.0);
    unknown.bytes(2, &raw);
    Some([MAGIC, &unknown.0].concat())
}

fn encode_message(value: &Value, spec: &MessageSpec) -> Vec<u8> {
    if let Some(special) = encode_special(value, spec.path) {
        return special;
    }
    let mut out = Writer::default();
    let Value::Object(map) = value else {
        return out.0;
    };
    for field in spec.fields {
        if field.json.is_empty() {
            // a message embedded inline: its fields are the object's own
            if let Wire::Message(path) = field.wire
                && let Some(inline) = message(path)
            {
                let encoded = encode_message(value, inline);
                if !encoded.is_empty() {
                    out.bytes(field.tag, &encoded);
                }
            }
            continue;
        }
        match map.get(field.json) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if field.repeated => {
                for item in items {
                    encode_field(&mut out, field, item);
                }
            }
            Some(value) => encode_field(&mut out, field, value),
        }
    }
    out.0
}

fn encode_field(out: &mut Writer, field: &FieldSpec, value: &Value) {
    match field.wire {
        Wire::String => out.bytes(field.tag, value.as_str().unwrap_or_default().as_bytes()),
        Wire::Bytes => out.bytes(field.tag, &base64_bytes(value)),
        Wire::Bool => out.number(field.tag, i64::from(value.as_bool().unwrap_or(false))),
        Wire::Int32 | Wire::Int64 => out.number(field.tag, value.as_i64().unwrap_or(0)),
        Wire::Double => {
            out.key(field.tag, 1);
            out.0
                .extend_from_slice(&value.as_f64().unwrap_or(0.0).to_le_bytes());
        }
        Wire::Message(path) => {
            if let Some(spec) = message(path) {
                out.bytes(field.tag, &encode_message(value, spec));
            }
        }
        Wire::MapString | Wire::MapBytes | Wire::MapMessage(_) => {
            for (key, item) in value.as_object().into_iter().flatten() {
                out.bytes(field.tag, &map_entry(field.wire, key, item));
            }
        }
    }
}

fn map_entry(wire: Wire, key: &str, value: &Value) -> Vec<u8> {
    let mut entry = Writer::default();
    entry.bytes(1, key.as_bytes());
    match wire {
        Wire::MapString => entry.bytes(2, value.as_str().unwrap_or_default().as_bytes()),
        Wire::MapBytes => entry.bytes(2, &base64_bytes(value)),
        Wire::MapMessage(path) => {
            if let Some(spec) = message(path) {
                entry.bytes(2, &encode_message(value, spec));
            }
        }
        _ => {}
    }
    entry.0
}

fn base64_bytes(value: &Value) -> Vec<u8> {
    let text = value.as_str().unwrap_or_default();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_default()
}

/// apimachinery's messages with a JSON form of their own.
fn encode_special(value: &Value, path: &str) -> Option<Vec<u8>> {
    let mut out = Writer::default();
    match path {
        "apimachinery::pkg::apis::meta::v1::Time" | "apimachinery::pkg::apis::meta::v1::MicroTime" => {
            let time: jiff::Timestamp = value.as_str()?.parse().ok()?;
            if time.as_second() != 0 {
                out.number(1, time.as_second());
            }
            if path.ends_with("MicroTime") && time.subsec_nanosecond() != 0 {
                out.number(2, i64::from(time.subsec_nanosecond()));
            }
        }
        "apimachinery::pkg::api::resource::Quantity" => {
            out.bytes(1, value.as_str().unwrap_or_default().as_bytes());
        }
        "apimachinery::pkg::util::intstr::IntOrString" => match value {
            Value::String(text) => {
                out.number(1, 1);
                out.bytes(3, text.as_bytes());
            }
            other => {
                out.number(1, 0);
                out.number(2, other.as_i64().unwrap_or(0));
            }
        },
        "apimachinery::pkg::runtime::RawExtension"
        | "apimachinery::pkg::apis::meta::v1::FieldsV1"
        | "apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON" => {
            out.bytes(1, value.to_string().as_bytes());
        }
        "apimachinery::pkg::apis::meta::v1::Duration" => {
            let seconds: f64 = value.as_str()?.trim_end_matches('s').parse().ok()?;
            out.number(1, (seconds * 1e9) as i64);
        }
        _ => return None,
    }
    Some(out.0)
}

/// A watch event line (`{"type": .., "object": ..}`) as a frame of a protobuf watch stream: the
/// length (4 bytes, big endian), then a `WatchEvent` whose object's `raw` is the protobuf
/// document of the object. `None` when the object has no protobuf form.
pub(crate) fn watch_frame(line: &[u8]) -> Option<Vec<u8>> {
    let event: Value = serde_json::from_slice(line).ok()?;
    let object = encode_answer(&event["object"])?;
    let mut raw_extension = Writer::default();
    raw_extension.bytes(1, &object);
    let mut watch_event = Writer::default();
    watch_event.bytes(1, event["type"].as_str().unwrap_or_default().as_bytes());
    watch_event.bytes(2, &raw_extension.0);
    let length = u32::try_from(watch_event.0.len()).ok()?;
    Some([&length.to_be_bytes()[..], &watch_event.0].concat())
}
