//! apimachinery's messages whose Rust form is not a struct of their fields: a quantity's text,
//! a number or a string, embedded JSON.

use k8s_openapi::{
    apimachinery::pkg::{
        api::resource::Quantity, apis::meta::v1::FieldsV1, runtime::RawExtension, util::intstr::IntOrString,
    },
    serde_json::{self, Value},
};

use crate::{
    Context, Decode, Error, Reader,
    envelope::utf8,
    fields::json_error,
    reader::{LEN, VARINT},
};

impl Decode for Quantity {
    const MESSAGE: &'static str = "k8s.io.apimachinery.pkg.api.resource.Quantity";

    fn empty() -> Self {
        Self(String::new())
    }

    /// `string = 1`: the quantity's text.
    fn merge(&mut self, message: &[u8], _: Context<'_>) -> Result<(), Error> {
        let mut reader = Reader::new(message);
        while let Some(key) = reader.key()? {
            match key.tag() {
                1 => {
                    key.expect(LEN)?;
                    self.0 = utf8(reader.len_delimited()?)?.to_owned();
                }
                _ => reader.skip(key)?,
            }
        }
        Ok(())
    }

    fn field_name(tag: u32) -> &'static str {
        if tag == 1 { "string" } else { "" }
    }
}

impl Decode for IntOrString {
    const MESSAGE: &'static str = "k8s.io.apimachinery.pkg.util.intstr.IntOrString";

    fn empty() -> Self {
        Self::Int(0)
    }

    /// `type = 1` (1 for a string), `intVal = 2`, `strVal = 3`; the message read last decides.
    fn merge(&mut self, message: &[u8], _: Context<'_>) -> Result<(), Error> {
        let (mut is_string, mut int, mut text) = (false, 0, "");
        let mut reader = Reader::new(message);
        while let Some(key) = reader.key()? {
            match key.tag() {
                1 => {
                    key.expect(VARINT)?;
                    is_string = reader.varint()? == 1;
                }
                2 => {
                    key.expect(VARINT)?;
                    int = reader.varint()? as i32;
                }
                3 => {
                    key.expect(LEN)?;
                    text = utf8(reader.len_delimited()?)?;
                }
                _ => reader.skip(key)?,
            }
        }
        *self = if is_string {
            Self::String(text.to_owned())
        } else {
            Self::Int(int)
        };
        Ok(())
    }

    fn field_name(tag: u32) -> &'static str {
        match tag {
            1 => "type",
            2 => "intVal",
            3 => "strVal",
            _ => "",
        }
    }
}

/// The JSON of a `raw = 1` message (`null` when empty), parsed.
pub(crate) fn raw_json(message: &[u8]) -> Result<Value, Error> {
    let mut raw: &[u8] = &[];
    let mut reader = Reader::new(message);
    while let Some(key) = reader.key()? {
        match key.tag() {
            1 => {
                key.expect(LEN)?;
                raw = reader.len_delimited()?;
            }
            _ => reader.skip(key)?,
        }
    }
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    // one UTF-8 check of the text, then serde_json's fastest path (from bytes it checks every
    // string on its own)
    let text = utf8(raw)?;
    serde_json::from_str(text).map_err(|e| json_error(&e))
}

/// `Decode` of a newtype holding embedded JSON as a `serde_json::Value`.
macro_rules! raw_json_newtype {
    ($type:ty, $message:literal, $field:literal) => {
        impl $crate::Decode for $type {
            const MESSAGE: &'static str = $message;

            fn empty() -> Self {
                Self(::k8s_openapi::serde_json::Value::Null)
            }

            fn merge(&mut self, message: &[u8], _: $crate::Context<'_>) -> Result<(), $crate::Error> {
                self.0 = $crate::special::raw_json(message)?;
                Ok(())
            }

            fn field_name(tag: u32) -> &'static str {
                if tag == 1 { $field } else { "" }
            }
        }
    };
}
// The JSON schema's `JSON` message is its other user.
#[cfg(feature = "apiextensions")]
pub(crate) use raw_json_newtype;

raw_json_newtype!(
    RawExtension,
    "k8s.io.apimachinery.pkg.runtime.RawExtension",
    "raw"
);
raw_json_newtype!(FieldsV1, "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1", "Raw");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode_message;

    #[test]
    fn an_int_or_string_is_what_its_type_says() {
        // type 1, strVal "50%"
        let text: IntOrString = decode_message(&[0x08, 1, 0x1a, 3, b'5', b'0', b'%']).expect("valid");
        assert_eq!(text, IntOrString::String("50%".into()));
        // type 0, intVal 8080
        let number: IntOrString = decode_message(&[0x08, 0, 0x10, 0x90, 0x3f]).expect("valid");
        assert_eq!(number, IntOrString::Int(8080));
        let empty: IntOrString = decode_message(&[]).expect("valid");
        assert_eq!(empty, IntOrString::Int(0));
    }

    #[test]
    fn embedded_json_is_parsed_and_empty_is_null() {
        let raw: RawExtension = decode_message(&[0x0a, 2, b'{', b'}']).expect("valid");
        assert_eq!(raw.0, serde_json::json!({}));
        let empty: FieldsV1 = decode_message(&[]).expect("valid");
        assert_eq!(empty.0, Value::Null);
        assert!(decode_message::<RawExtension>(&[0x0a, 1, b'{']).is_err());
    }
}
