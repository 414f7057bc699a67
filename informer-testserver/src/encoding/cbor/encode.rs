//! Answers and watch events written as apimachinery's encoding mode (`modes.Encode`) writes
//! an object: see the [module](super) docs. The `[]byte` fields of built-in kinds are byte
//! strings of the bytes in the base64 tag, as Go's types encode them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ciborium::Value as Cbor;
use informer_apimachinery::protobuf::bytes_values;
use serde_json::Value;

use super::error::{Error, SELF_DESCRIBED};

/// The "expected later encoding: base64" tag (RFC 8949 section 3.4.5.2), which apimachinery's
/// encoder puts on the byte strings of Go `[]byte` fields (`ByteSliceLaterFormatBase64`).
const TAG_BASE64: u64 = 22;

/// A string as a byte string (`StringToByteString`).
fn bytes(text: &str) -> Cbor {
    Cbor::Bytes(text.as_bytes().to_vec())
}

/// `item` enclosed in the self-described tag.
fn self_described(item: Cbor) -> Cbor {
    Cbor::Tag(SELF_DESCRIBED, Box::new(item))
}

/// Writes the CBOR form of JSON values, knowing which strings of the value being written hold
/// Go `[]byte` fields.
struct Writer<'a> {
    bytes_fields: Vec<&'a Value>,
}

impl<'a> Writer<'a> {
    /// The writer of `value`, an object or a list (of a built-in kind, whose `[]byte` fields it
    /// finds) or anything else.
    fn of(value: &'a Value) -> Self {
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
        Self {
            bytes_fields: bytes_values(text("apiVersion"), text("kind"), value),
        }
    }

    /// The CBOR form of a JSON value.
    fn item(&self, value: &Value) -> Cbor {
        match value {
            Value::Null => Cbor::Null,
            Value::Bool(value) => Cbor::Bool(*value),
            Value::Number(number) => match (number.as_i64(), number.as_u64()) {
                (Some(integer), _) => Cbor::Integer(integer.into()),
                // past int64, Go's unstructured decoding of the JSON made it a float64
                (None, Some(integer)) => Cbor::Float(integer as f64),
                (None, None) => Cbor::Float(number.as_f64().unwrap_or_default()),
            },
            Value::String(text) if self.bytes_fields.iter().any(|f| std::ptr::eq(*f, value)) => {
                match STANDARD.decode(text) {
                    Ok(raw) => Cbor::Tag(TAG_BASE64, Box::new(Cbor::Bytes(raw))),
                    Err(_) => bytes(text),
                }
            }
            Value::String(text) => bytes(text),
            Value::Array(items) => Cbor::Array(items.iter().map(|i| self.item(i)).collect()),
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                // bytewise order of the encoded keys: all byte strings, so the shorter first
                entries.sort_by(|(a, _), (b, _)| {
                    a.len().cmp(&b.len()).then_with(|| a.as_bytes().cmp(b.as_bytes()))
                });
                Cbor::Map(
                    entries
                        .into_iter()
                        .map(|(key, value)| (bytes(key), self.item(value)))
                        .collect(),
                )
            }
        }
    }
}

/// Writes one data item.
fn write(item: &Cbor) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    ciborium::ser::into_writer(item, &mut out).map_err(|error| Error::Encode(format!("{error:?}")))?;
    Ok(out)
}

/// `value` as one self-described data item.
pub(crate) fn to_vec(value: &Value) -> Result<Vec<u8>, Error> {
    write(&self_described(Writer::of(value).item(value)))
}

/// A `WatchEvent` (`{type, object}`, keys in the encoder's order) as one self-described data
/// item, its object embedded with its own self-described tag.
pub(crate) fn watch_event(event_type: &str, object: &Value) -> Result<Vec<u8>, Error> {
    let event = Cbor::Map(vec![
        (bytes("type"), bytes(event_type)),
        (bytes("object"), self_described(Writer::of(object).item(object))),
    ]);
    write(&self_described(event))
}
