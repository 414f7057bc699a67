//! apiextensions' JSON schema unions and embedded JSON, as Go's JSON writes them: the array (of
//! schemas or strings) when it has elements, else the schema, else the boolean or nothing.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSON, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, JSONSchemaPropsOrStringArray,
};

use crate::{
    Context, Decode, Error, ErrorKind, Reader,
    envelope::utf8,
    fields::entry,
    reader::{Key, LEN, VARINT},
};

crate::special::raw_json_newtype!(
    JSON,
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON",
    "raw"
);

/// The parts of a union message: the varint of field 1, the last bytes of field 1 and field
/// 2, and every value of field 2.
#[derive(Default)]
struct Parts<'a> {
    flag: Option<u64>,
    first: Option<&'a [u8]>,
    second: Option<&'a [u8]>,
    all_second: Vec<&'a [u8]>,
}

fn parts<'a>(reader: &mut Reader<'a>, key: Key, cx: Context<'_>) -> Result<Parts<'a>, Error> {
    key.expect(LEN)?;
    parts_of(reader.len_delimited()?, cx)
}

fn parts_of<'a>(message: &'a [u8], cx: Context<'_>) -> Result<Parts<'a>, Error> {
    cx.check_depth()?;
    let mut message = Reader::new(message);
    let mut parts = Parts::default();
    while let Some(key) = message.key()? {
        match (key.tag(), key.wire_type()) {
            (1, VARINT) => parts.flag = Some(message.varint()?),
            (1, LEN) => parts.first = Some(message.len_delimited()?),
            (2, LEN) => {
                let value = message.len_delimited()?;
                parts.second = Some(value);
                parts.all_second.push(value);
            }
            _ => message.skip(key)?,
        }
    }
    Ok(parts)
}

fn schema(bytes: &[u8], cx: Context<'_>) -> Result<JSONSchemaProps, Error> {
    let mut schema = JSONSchemaProps::empty();
    schema.merge(bytes, cx.enter(1))?;
    Ok(schema)
}

/// `allows = 1`, `schema = 2`: the schema when there is one, else the boolean.
pub(crate) fn opt_schema_or_bool(
    field: &mut Option<JSONSchemaPropsOrBool>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let parts = parts(reader, key, cx)?;
    *field = Some(match parts.second {
        Some(bytes) => JSONSchemaPropsOrBool::Schema(Box::new(schema(bytes, cx)?)),
        None => JSONSchemaPropsOrBool::Bool(parts.flag.unwrap_or(0) != 0),
    });
    Ok(())
}

/// `schema = 1`, `jSONSchemas = 2` (repeated): the array when it has elements, else the
/// schema, else nothing (Go's JSON writes `null`).
pub(crate) fn opt_schema_or_array(
    field: &mut Option<JSONSchemaPropsOrArray>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let parts = parts(reader, key, cx)?;
    *field = if !parts.all_second.is_empty() {
        let schemas = parts
            .all_second
            .iter()
            .map(|bytes| schema(bytes, cx))
            .collect::<Result<_, _>>()?;
        Some(JSONSchemaPropsOrArray::Schemas(schemas))
    } else if let Some(bytes) = parts.first {
        Some(JSONSchemaPropsOrArray::Schema(Box::new(schema(bytes, cx)?)))
    } else {
        None
    };
    Ok(())
}

/// `schema = 1`, `property = 2` (repeated strings): the strings when there are some, else the
/// schema, else nothing.
fn schema_or_string_array(
    parts: &Parts<'_>,
    cx: Context<'_>,
) -> Result<Option<JSONSchemaPropsOrStringArray>, Error> {
    if !parts.all_second.is_empty() {
        let strings = parts
            .all_second
            .iter()
            .map(|bytes| utf8(bytes).map(str::to_owned))
            .collect::<Result<_, _>>()?;
        return Ok(Some(JSONSchemaPropsOrStringArray::Strings(strings)));
    }
    match parts.first {
        Some(bytes) => Ok(Some(JSONSchemaPropsOrStringArray::Schema(Box::new(schema(
            bytes, cx,
        )?)))),
        None => Ok(None),
    }
}

/// An entry of `dependencies`: a map of schemas or string arrays. A value that is neither is
/// `null` in Go's JSON, which no Rust value holds: an error, as the JSON decode of it is.
pub(crate) fn opt_schema_or_string_array_map(
    field: &mut Option<BTreeMap<String, JSONSchemaPropsOrStringArray>>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let (name, value) = entry(reader, key)?;
    let value = schema_or_string_array(&parts_of(value, cx)?, cx)?.ok_or_else(|| {
        Error::new(ErrorKind::Json(format!(
            "the dependency {name:?} is neither a schema nor a list of properties"
        )))
    })?;
    field
        .get_or_insert_with(BTreeMap::new)
        .insert(name.to_owned(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read<T>(
        message: &[u8],
        read: fn(&mut Option<T>, &mut Reader<'_>, Key, Context<'_>) -> Result<(), Error>,
    ) -> Result<Option<T>, Error> {
        let mut field = None;
        let mut framed = vec![0x0a, message.len() as u8];
        framed.extend_from_slice(message);
        let mut reader = Reader::new(&framed);
        let key = reader.key()?.expect("a key");
        read(&mut field, &mut reader, key, Context::new())?;
        Ok(field)
    }

    #[test]
    fn unions_take_the_array_then_the_schema_then_the_rest() {
        // OrBool: allows = true, no schema
        assert_eq!(
            read(&[0x08, 1], opt_schema_or_bool).expect("valid"),
            Some(JSONSchemaPropsOrBool::Bool(true))
        );
        // OrBool: a schema with type (field 5) "string"
        let with_schema = [0x08, 0, 0x12, 8, 0x2a, 6, b's', b't', b'r', b'i', b'n', b'g'];
        let Some(JSONSchemaPropsOrBool::Schema(schema)) =
            read(&with_schema, opt_schema_or_bool).expect("valid")
        else {
            panic!("a schema");
        };
        assert_eq!(schema.type_.as_deref(), Some("string"));
        // OrArray: two schemas in field 2
        let array = read(&[0x12, 0, 0x12, 0], opt_schema_or_array).expect("valid");
        assert!(matches!(array, Some(JSONSchemaPropsOrArray::Schemas(s)) if s.len() == 2));
        // OrArray: nothing is null
        assert_eq!(read(&[], opt_schema_or_array).expect("valid"), None);
    }
}
