//! Sample documents of the built-in kinds, every field set and none of them zero: what the
//! round-trip tests encode and decode, here and in the test server's tests (feature
//! `samples`; not a supported API).

use serde_json::{Value, json};

use super::{
    lookup::{message, message_at},
    spec::{MessageSpec, Special, Wire},
};

/// A sample JSON object of the message at `path` (such as `k8s.io/api/core/v1.Pod`), messages
/// `depth` deep; `None` for a path the table does not hold.
pub fn sample_of(path: &str, depth: usize) -> Option<Value> {
    message(path).map(|spec| sample(spec, depth))
}

/// A JSON value for every field of `spec` (messages `depth` deep), none of them zero.
pub(crate) fn sample(spec: &MessageSpec, depth: usize) -> Value {
    if spec.special != Special::None {
        return sample_special(spec.special);
    }
    let mut object = serde_json::Map::new();
    for field in spec.fields {
        let value = match field.wire {
            Wire::Message(index) | Wire::MapMessage(index) => {
                let inner = message_at(index);
                if depth == 0 && inner.special == Special::None {
                    continue;
                }
                sample(inner, depth.saturating_sub(1))
            }
            Wire::String | Wire::MapString => json!(format!("s{}", field.tag)),
            Wire::Bytes | Wire::MapBytes => json!("AQI="),
            Wire::Bool => json!(true),
            Wire::Int32 | Wire::Int64 => json!(field.tag + 1),
            Wire::Double => json!(1.5),
        };
        if field.json.is_empty() {
            if let Value::Object(inline) = value {
                object.extend(inline);
            }
            continue;
        }
        let value = if field.wire.is_map() {
            json!({"k": value})
        } else if field.repeated {
            json!([value])
        } else {
            value
        };
        object.insert(field.json.to_owned(), value);
    }
    Value::Object(object)
}

fn sample_special(special: Special) -> Value {
    match special {
        Special::None => json!({}),
        Special::Time => json!("2024-01-02T03:04:05Z"),
        Special::MicroTime => json!("2024-01-02T03:04:05.123456Z"),
        Special::Duration => json!("1m30s"),
        Special::Quantity => json!("500m"),
        Special::IntOrString => json!("http"),
        Special::RawJson => json!({"a": [1, "b"]}),
        Special::SchemaOrBool => json!(true),
        Special::SchemaOrArray => json!([{"type": "string"}]),
        Special::SchemaOrStringArray => json!(["a", "b"]),
        Special::StringList => json!(["get", "list"]),
    }
}
