//! The second step of decoding a body, once [`wellformed`](super::wellformed) has accepted it:
//! the data item read by `ciborium` and turned into JSON as apimachinery's decoding mode turns
//! it into Go's `map[string]interface{}` (`DefaultMapType`, `DefaultByteStringType` string,
//! `IntDecConvertSignedOrFail`, `DupMapKeyEnforcedAPF`, `UTF8RejectInvalid`,
//! `ByteStringToStringAllowedWithExpectedLaterEncoding`, `TimeTagToRFC3339Nano`,
//! `UnrecognizedTagContentToAny`).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ciborium::Value as Cbor;
use serde_json::{Map, Number, Value};

use super::error::{BodyError, Error, MAX_NESTED_LEVELS};

/// The "expected later encoding" tags (RFC 8949 section 3.4.5.2).
const TAG_BASE64URL: u64 = 21;
const TAG_BASE64: u64 = 22;
const TAG_BASE16: u64 = 23;
/// The time tags.
const TAG_RFC3339: u64 = 0;
const TAG_EPOCH: u64 = 1;

/// How byte strings become strings: as they are, or in the encoding an enclosing tag expects.
#[derive(Debug, Clone, Copy)]
enum Later {
    AsIs,
    Base64Url,
    Base64,
    Base16,
}

/// Reads the data item (already checked to be well-formed).
fn read(body: &[u8]) -> Result<Cbor, Error> {
    let limit = MAX_NESTED_LEVELS + 1;
    ciborium::de::from_reader_with_recursion_limit::<Cbor, _>(body, limit).map_err(|error| {
        match error {
            ciborium::de::Error::Io(_) => Error::Truncated,
            // the heads are well-formed: what the reader refuses is a text string's content
            ciborium::de::Error::Syntax(_) => Error::InvalidUtf8,
            ciborium::de::Error::Semantic(offset, _) => {
                let offset = offset.unwrap_or_default();
                Error::Malformed {
                    offset,
                    initial: body.get(offset).copied().unwrap_or_default(),
                }
            }
            ciborium::de::Error::RecursionLimitExceeded => Error::TooDeep,
        }
    })
}

/// `item` without the tags enclosing it that do not change it (self-described, unrecognized).
fn untagged(item: Cbor) -> Cbor {
    match item {
        Cbor::Tag(tag, content) if !matches!(tag, TAG_RFC3339 | TAG_EPOCH | TAG_BASE64URL..=TAG_BASE16) => {
            untagged(*content)
        }
        other => other,
    }
}

/// Go's name of the type of a decoded item.
fn type_name(item: &Cbor) -> &'static str {
    match item {
        Cbor::Integer(value) if i128::from(*value) < 0 => "negative integer",
        Cbor::Integer(_) => "positive integer",
        Cbor::Bytes(_) => "byte string",
        Cbor::Text(_) => "UTF-8 text string",
        Cbor::Array(_) => "array",
        Cbor::Map(_) => "map",
        Cbor::Tag(..) => "tag",
        _ => "primitives",
    }
}

/// A string key or value (text, or bytes as Go keeps them), `None` for other types.
fn string_of(item: &Cbor) -> Option<String> {
    match item {
        Cbor::Text(text) => Some(text.clone()),
        Cbor::Bytes(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        _ => None,
    }
}

/// The top-level `apiVersion` and `kind` of a map, empty when absent or not strings.
fn type_meta(entries: &[(Cbor, Cbor)]) -> (String, String) {
    let field = |name: &str| {
        entries
            .iter()
            .find(|(key, _)| string_of(key).as_deref() == Some(name))
            .and_then(|(_, value)| string_of(&untagged(value.clone())))
            .unwrap_or_default()
    };
    (field("apiVersion"), field("kind"))
}

/// Decodes a well-formed body that must be an object.
pub(crate) fn object(body: &[u8]) -> Result<Value, BodyError> {
    let item = read(body).map(untagged).map_err(|error| BodyError {
        error,
        type_meta: None,
    })?;
    let Cbor::Map(entries) = &item else {
        return Err(BodyError {
            error: Error::NotAnObject(type_name(&item)),
            type_meta: None,
        });
    };
    let meta = type_meta(entries);
    convert(item, Later::AsIs, true).map_err(|error| BodyError {
        error,
        type_meta: Some(meta),
    })
}

/// Decodes a well-formed body of any type.
pub(crate) fn value(body: &[u8]) -> Result<Value, Error> {
    convert(read(body)?, Later::AsIs, true)
}

/// A decoded item as JSON; byte strings in the encoding `later` says.
fn convert(item: Cbor, later: Later, top_level: bool) -> Result<Value, Error> {
    Ok(match item {
        Cbor::Null => Value::Null,
        Cbor::Bool(value) => Value::Bool(value),
        Cbor::Integer(value) => {
            let value = i128::from(value);
            let fits = i64::try_from(value).map_err(|_| Error::IntegerOverflow { value })?;
            Value::from(fits)
        }
        Cbor::Float(value) => Value::Number(Number::from_f64(value).ok_or(if value.is_nan() {
            Error::NaN
        } else {
            Error::Infinity
        })?),
        Cbor::Text(text) => Value::String(text),
        Cbor::Bytes(bytes) => Value::String(match later {
            Later::AsIs => String::from_utf8_lossy(&bytes).into_owned(),
            Later::Base64Url => URL_SAFE_NO_PAD.encode(&bytes),
            Later::Base64 => STANDARD.encode(&bytes),
            Later::Base16 => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        }),
        Cbor::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| convert(item, later, false))
                .collect::<Result<_, _>>()?,
        ),
        Cbor::Map(entries) => {
            let mut map = Map::new();
            for (index, (key, value)) in entries.into_iter().enumerate() {
                let key = string_of(&key).ok_or_else(|| Error::KeyType(type_name(&key)))?;
                if map.contains_key(&key) {
                    return Err(Error::DuplicateKey {
                        key,
                        index,
                        top_level,
                    });
                }
                let value = convert(value, later, false)?;
                map.insert(key, value);
            }
            Value::Object(map)
        }
        Cbor::Tag(TAG_RFC3339, content) => {
            let text = string_of(&content).unwrap_or_default();
            if text.parse::<jiff::Timestamp>().is_err() {
                return Err(Error::InvalidTime { tag: TAG_RFC3339 });
            }
            Value::String(text)
        }
        Cbor::Tag(TAG_EPOCH, content) => Value::String(epoch_time(&content)?),
        Cbor::Tag(TAG_BASE64URL, content) => convert(*content, Later::Base64Url, top_level)?,
        Cbor::Tag(TAG_BASE64, content) => convert(*content, Later::Base64, top_level)?,
        Cbor::Tag(TAG_BASE16, content) => convert(*content, Later::Base16, top_level)?,
        // the self-described tag and unrecognized tags: their content
        Cbor::Tag(_, content) => convert(*content, later, top_level)?,
        _ => return Err(Error::Unsupported),
    })
}

/// The RFC 3339 text (UTC, fractional seconds only as needed) of an epoch time tag's content.
fn epoch_time(content: &Cbor) -> Result<String, Error> {
    let invalid = Error::InvalidTime { tag: TAG_EPOCH };
    let timestamp = match content {
        Cbor::Integer(seconds) => i64::try_from(i128::from(*seconds))
            .ok()
            .and_then(|seconds| jiff::Timestamp::from_second(seconds).ok()),
        Cbor::Float(seconds) if seconds.is_finite() => {
            let nanos = (seconds * 1e9).round();
            (nanos.abs() < 1e30)
                .then(|| jiff::Timestamp::from_nanosecond(nanos as i128).ok())
                .flatten()
        }
        _ => None,
    };
    let timestamp = timestamp.ok_or(invalid.clone())?;
    // Go's RFC 3339 text has a four-digit year
    if !(0..=9999).contains(&timestamp.to_zoned(jiff::tz::TimeZone::UTC).year()) {
        return Err(invalid);
    }
    Ok(timestamp.to_string())
}
