//! Where a built-in object holds Go `[]byte` fields: JSON writes them as base64 strings, while
//! binary encodings (protobuf, CBOR) carry the bytes themselves.

use serde_json::Value;

use super::{
    lookup::{kind_message, message_at},
    spec::{MessageSpec, Special, Wire},
};

/// The string values of `object`, the JSON of an object (or a list) of the built-in kind `kind`
/// of `api_version`, that hold Go `[]byte` fields (a Secret's `data` values, a
/// CertificateSigningRequest's `spec.request`, webhooks' `caBundle`, ...), as base64 text.
/// Empty for a kind without a protobuf form (a custom resource, whose strings are strings).
///
/// The values are borrowed from `object`, so a caller walking the same object can tell them by
/// address (`std::ptr::eq`).
///
/// ```
/// use informer_apimachinery::protobuf;
/// use serde_json::json;
///
/// let secret = json!({"apiVersion": "v1", "kind": "Secret", "data": {"k": "AQI="}, "type": "Opaque"});
/// let found = protobuf::bytes_values("v1", "Secret", &secret);
/// assert_eq!(found.len(), 1);
/// assert!(std::ptr::eq(found[0], &secret["data"]["k"]));
/// assert!(protobuf::bytes_values("example.com/v1", "Widget", &json!({"data": {"k": "x"}})).is_empty());
/// ```
pub fn bytes_values<'a>(api_version: &str, kind: &str, object: &'a Value) -> Vec<&'a Value> {
    let mut found = Vec::new();
    if let Some(spec) = kind_message(api_version, kind) {
        message(object, spec, &mut found);
    }
    found
}

fn message<'a>(object: &'a Value, spec: &MessageSpec, found: &mut Vec<&'a Value>) {
    let Value::Object(fields) = object else {
        return;
    };
    if spec.special != Special::None {
        return;
    }
    for field in spec.fields {
        if field.json.is_empty() {
            // a message embedded inline: its fields are the object's own
            if let Wire::Message(index) = field.wire {
                message(object, message_at(index), found);
            }
            continue;
        }
        let Some(value) = fields.get(field.json) else {
            continue;
        };
        let items: Vec<&Value> = match value {
            Value::Array(items) if field.repeated => items.iter().collect(),
            Value::Object(map) if field.wire.is_map() => map.values().collect(),
            value => vec![value],
        };
        for item in items {
            match field.wire {
                Wire::Bytes | Wire::MapBytes if item.is_string() => found.push(item),
                Wire::Message(index) | Wire::MapMessage(index) => {
                    message(item, message_at(index), found);
                }
                _ => {}
            }
        }
    }
}
