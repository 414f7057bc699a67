//! How the generated decoders read one field into one Rust field, by the field's shape: a
//! scalar, a time, a message, a list of either, a map. Each reads its value at the reader, whose
//! key is `key`, and writes it where the Rust type keeps it.
//!
//! Presence follows Go's JSON: `keep_zero` is false for a Go field that is not a pointer and
//! says `omitempty`, whose zero value the JSON form leaves out (the Rust field stays `None`).

#![allow(
    dead_code,
    reason = "each API group reads some of these shapes: a build with fewer groups leaves some unused"
)]

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString,
    apimachinery::pkg::apis::meta::v1::{MicroTime, Time},
};

use crate::{
    Context, Decode, Error, ErrorKind, Reader,
    envelope::utf8,
    reader::{FIXED64, Key, LEN, VARINT},
    time,
};

/// A string, validated once and allocated at its length.
#[inline]
fn string_of(bytes: &[u8]) -> Result<String, Error> {
    utf8(bytes).map(String::from)
}

/// A string field's value.
#[inline]
fn read_string(reader: &mut Reader<'_>, key: Key) -> Result<String, Error> {
    key.expect(LEN)?;
    string_of(reader.len_delimited()?)
}

/// A required string.
#[inline]
pub(crate) fn string(field: &mut String, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    *field = read_string(reader, key)?;
    Ok(())
}

/// An optional string.
#[inline]
pub(crate) fn opt_string(
    field: &mut Option<String>,
    reader: &mut Reader<'_>,
    key: Key,
    keep_zero: bool,
) -> Result<(), Error> {
    let value = read_string(reader, key)?;
    if keep_zero || !value.is_empty() {
        *field = Some(value);
    }
    Ok(())
}

/// Optional bytes.
#[inline]
pub(crate) fn opt_bytes(
    field: &mut Option<ByteString>,
    reader: &mut Reader<'_>,
    key: Key,
    keep_zero: bool,
) -> Result<(), Error> {
    key.expect(LEN)?;
    let value = reader.len_delimited()?;
    if keep_zero || !value.is_empty() {
        *field = Some(ByteString(value.to_vec()));
    }
    Ok(())
}

/// Required bytes.
#[inline]
pub(crate) fn bytes(field: &mut ByteString, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    key.expect(LEN)?;
    *field = ByteString(reader.len_delimited()?.to_vec());
    Ok(())
}

/// A varint field's value.
#[inline]
fn read_varint(reader: &mut Reader<'_>, key: Key) -> Result<u64, Error> {
    key.expect(VARINT)?;
    reader.varint()
}

/// An optional varint field, set from the raw value (zero is left out unless `keep_zero`).
#[inline]
fn opt_varint<T>(
    field: &mut Option<T>,
    reader: &mut Reader<'_>,
    key: Key,
    keep_zero: bool,
    convert: impl FnOnce(u64) -> T,
) -> Result<(), Error> {
    let raw = read_varint(reader, key)?;
    if keep_zero || raw != 0 {
        *field = Some(convert(raw));
    }
    Ok(())
}

/// A required boolean.
#[inline]
pub(crate) fn bool(field: &mut bool, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    *field = read_varint(reader, key)? != 0;
    Ok(())
}

/// An optional boolean.
#[inline]
pub(crate) fn opt_bool(
    field: &mut Option<bool>,
    reader: &mut Reader<'_>,
    key: Key,
    keep_zero: bool,
) -> Result<(), Error> {
    opt_varint(field, reader, key, keep_zero, |raw| raw != 0)
}

/// A required `int32` (sign-extended to 64 bits on the wire).
#[inline]
pub(crate) fn int32(field: &mut i32, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    *field = read_varint(reader, key)? as i32;
    Ok(())
}

/// An optional `int32`.
#[inline]
pub(crate) fn opt_int32(
    field: &mut Option<i32>,
    reader: &mut Reader<'_>,
    key: Key,
    keep_zero: bool,
) -> Result<(), Error> {
    opt_varint(field, reader, key, keep_zero, |raw| raw as i32)
}

/// A required `int64`.
#[inline]
pub(crate) fn int64(field: &mut i64, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    *field = read_varint(reader, key)? as i64;
    Ok(())
}

/// An optional `int64`.
#[inline]
pub(crate) fn opt_int64(
    field: &mut Option<i64>,
    reader: &mut Reader<'_>,
    key: Key,
    keep_zero: bool,
) -> Result<(), Error> {
    opt_varint(field, reader, key, keep_zero, |raw| raw as i64)
}

/// An optional `double`.
#[inline]
pub(crate) fn opt_double(
    field: &mut Option<f64>,
    reader: &mut Reader<'_>,
    key: Key,
    keep_zero: bool,
) -> Result<(), Error> {
    key.expect(FIXED64)?;
    let value = f64::from_bits(reader.fixed64()?);
    if keep_zero || value.to_bits() != 0 {
        *field = Some(value);
    }
    Ok(())
}

/// Strings of a repeated field, appended; the list is allocated at the length of the run of
/// values it starts with.
#[inline]
pub(crate) fn strings(field: &mut Vec<String>, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    key.expect(LEN)?;
    if field.len() == field.capacity() {
        field.reserve_exact(reader.run_length(key));
    }
    field.push(string_of(reader.len_delimited()?)?);
    Ok(())
}

/// Strings of an optional repeated field.
#[inline]
pub(crate) fn opt_strings(
    field: &mut Option<Vec<String>>,
    reader: &mut Reader<'_>,
    key: Key,
) -> Result<(), Error> {
    strings(field.get_or_insert_with(Vec::new), reader, key)
}

/// Varints of a repeated field, one per value or packed in one (both are valid protobuf).
fn varints<T>(
    field: &mut Vec<T>,
    reader: &mut Reader<'_>,
    key: Key,
    convert: impl Fn(u64) -> T,
) -> Result<(), Error> {
    match key.wire_type() {
        VARINT => {
            if field.len() == field.capacity() {
                field.reserve_exact(reader.run_length(key));
            }
            field.push(convert(reader.varint()?));
        }
        LEN => {
            let packed = reader.len_delimited()?;
            field.reserve_exact(Reader::packed_count(packed));
            let mut values = Reader::new(packed);
            while !values.remaining().is_empty() {
                field.push(convert(values.varint()?));
            }
        }
        _ => key.expect(VARINT)?,
    }
    Ok(())
}

/// `int32`s of an optional repeated field.
pub(crate) fn opt_int32s(
    field: &mut Option<Vec<i32>>,
    reader: &mut Reader<'_>,
    key: Key,
) -> Result<(), Error> {
    varints(field.get_or_insert_with(Vec::new), reader, key, |v| v as i32)
}

/// `int32`s of a required repeated field.
pub(crate) fn int32s(field: &mut Vec<i32>, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    varints(field, reader, key, |v| v as i32)
}

/// `int64`s of an optional repeated field.
pub(crate) fn opt_int64s(
    field: &mut Option<Vec<i64>>,
    reader: &mut Reader<'_>,
    key: Key,
) -> Result<(), Error> {
    varints(field.get_or_insert_with(Vec::new), reader, key, |v| v as i64)
}

/// A message field's bytes, at a depth that is allowed.
#[inline]
fn read_message<'a>(reader: &mut Reader<'a>, key: Key, cx: Context<'_>) -> Result<&'a [u8], Error> {
    key.expect(LEN)?;
    cx.check_depth()?;
    reader.len_delimited()
}

/// A required message, merged into what the field holds.
#[inline]
pub(crate) fn message<T: Decode>(
    field: &mut T,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let bytes = read_message(reader, key, cx)?;
    field.merge(bytes, cx)
}

/// An optional message: set, and merged into what the field holds.
#[inline]
pub(crate) fn opt_message<T: Decode>(
    field: &mut Option<T>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let bytes = read_message(reader, key, cx)?;
    field.get_or_insert_with(T::empty).merge(bytes, cx)
}

/// An optional boxed message (a JSON schema inside one).
pub(crate) fn opt_boxed_message<T: Decode>(
    field: &mut Option<Box<T>>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let bytes = read_message(reader, key, cx)?;
    field.get_or_insert_with(|| Box::new(T::empty())).merge(bytes, cx)
}

/// A message embedded inline in Go (a volume's source, a probe's handler): its fields are the
/// enclosing type's own, read by `merge`.
pub(crate) fn inline<T>(
    target: &mut T,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
    merge: fn(&mut T, &[u8], Context<'_>) -> Result<(), Error>,
) -> Result<(), Error> {
    let bytes = read_message(reader, key, cx)?;
    merge(target, bytes, cx)
}

/// Messages of a repeated field, appended and decoded in place; the list is allocated at the
/// length of the run of values it starts with.
#[inline]
pub(crate) fn messages<T: Decode>(
    field: &mut Vec<T>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    key.expect(LEN)?;
    if field.len() == field.capacity() {
        field.reserve_exact(reader.run_length(key));
    }
    let bytes = read_message(reader, key, cx)?;
    let at = field.len();
    field.push(T::empty());
    field[at].merge(bytes, cx)
}

/// Messages of an optional repeated field.
#[inline]
pub(crate) fn opt_messages<T: Decode>(
    field: &mut Option<Vec<T>>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    messages(field.get_or_insert_with(Vec::new), reader, key, cx)
}

/// The key and value of a map entry (`key = 1`, `value = 2`); a part left out is empty.
#[inline]
pub(crate) fn entry<'a>(reader: &mut Reader<'a>, key: Key) -> Result<(&'a str, &'a [u8]), Error> {
    key.expect(LEN)?;
    let mut entry = Reader::new(reader.len_delimited()?);
    let (mut name, mut value): (&str, &[u8]) = ("", &[]);
    while let Some(key) = entry.key()? {
        match key.tag() {
            1 => {
                key.expect(LEN)?;
                name = utf8(entry.len_delimited()?)?;
            }
            2 => {
                key.expect(LEN)?;
                value = entry.len_delimited()?;
            }
            _ => entry.skip(key)?,
        }
    }
    Ok((name, value))
}

/// Whether `name` is a key skipped in this map.
#[inline]
fn skipped(cx: Context<'_>, name: &str) -> bool {
    let keys = cx.skipped_keys();
    !keys.is_empty() && keys.iter().any(|k| k == name)
}

/// An entry of a map of strings.
#[inline]
pub(crate) fn string_map(
    field: &mut BTreeMap<String, String>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let (name, value) = entry(reader, key)?;
    if !skipped(cx, name) {
        field.insert(name.to_owned(), string_of(value)?);
    }
    Ok(())
}

/// An entry of an optional map of strings.
#[inline]
pub(crate) fn opt_string_map(
    field: &mut Option<BTreeMap<String, String>>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    string_map(field.get_or_insert_with(BTreeMap::new), reader, key, cx)
}

/// An entry of an optional map of bytes.
pub(crate) fn opt_bytes_map(
    field: &mut Option<BTreeMap<String, ByteString>>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let (name, value) = entry(reader, key)?;
    if !skipped(cx, name) {
        field
            .get_or_insert_with(BTreeMap::new)
            .insert(name.to_owned(), ByteString(value.to_vec()));
    }
    Ok(())
}

/// An entry of a map of messages.
pub(crate) fn message_map<T: Decode>(
    field: &mut BTreeMap<String, T>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    cx.check_depth()?;
    let (name, value) = entry(reader, key)?;
    if !skipped(cx, name) {
        let mut message = T::empty();
        message.merge(value, cx)?;
        field.insert(name.to_owned(), message);
    }
    Ok(())
}

/// An entry of an optional map of messages.
pub(crate) fn opt_message_map<T: Decode>(
    field: &mut Option<BTreeMap<String, T>>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    message_map(field.get_or_insert_with(BTreeMap::new), reader, key, cx)
}

/// An entry of an optional map whose values are lists of strings, sent as a message holding
/// the list in field 1 (authentication's `ExtraValue`).
pub(crate) fn opt_string_list_map(
    field: &mut Option<BTreeMap<String, Vec<String>>>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let (name, value) = entry(reader, key)?;
    if skipped(cx, name) {
        return Ok(());
    }
    let mut items = Vec::new();
    let mut list = Reader::new(value);
    while let Some(key) = list.key()? {
        match key.tag() {
            1 => strings(&mut items, &mut list, key)?,
            _ => list.skip(key)?,
        }
    }
    field
        .get_or_insert_with(BTreeMap::new)
        .insert(name.to_owned(), items);
    Ok(())
}

/// A list of strings sent as a message holding the list in field 1 (meta's `Verbs`),
/// appended.
pub(crate) fn string_list(field: &mut Vec<String>, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    key.expect(LEN)?;
    let mut list = Reader::new(reader.len_delimited()?);
    while let Some(key) = list.key()? {
        match key.tag() {
            1 => strings(field, &mut list, key)?,
            _ => list.skip(key)?,
        }
    }
    Ok(())
}

/// An entry of an optional map of times (a disruption budget's `disruptedPods`); an empty
/// time in a map is 1970, as its JSON form writes it.
pub(crate) fn opt_time_map(
    field: &mut Option<BTreeMap<String, Time>>,
    reader: &mut Reader<'_>,
    key: Key,
    cx: Context<'_>,
) -> Result<(), Error> {
    let (name, value) = entry(reader, key)?;
    if !skipped(cx, name) {
        let (seconds, _) = seconds_and_nanos(value)?;
        field
            .get_or_insert_with(BTreeMap::new)
            .insert(name.to_owned(), Time(time::timestamp(seconds, 0)?));
    }
    Ok(())
}

/// The seconds and nanoseconds of a `Time` or `MicroTime` message (the last of each wins).
fn seconds_and_nanos(message: &[u8]) -> Result<(i64, u64), Error> {
    let (mut seconds, mut nanos) = (0, 0);
    let mut reader = Reader::new(message);
    while let Some(key) = reader.key()? {
        match key.tag() {
            1 => seconds = read_varint(&mut reader, key)? as i64,
            2 => nanos = read_varint(&mut reader, key)?,
            _ => reader.skip(key)?,
        }
    }
    Ok((seconds, nanos))
}

/// An optional `Time`: whole seconds (its JSON form has no more); an empty message is an
/// unset time and leaves the field as it was.
#[inline]
pub(crate) fn opt_time(field: &mut Option<Time>, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    key.expect(LEN)?;
    let message = reader.len_delimited()?;
    if !message.is_empty() {
        let (seconds, _) = seconds_and_nanos(message)?;
        *field = Some(Time(time::timestamp(seconds, 0)?));
    }
    Ok(())
}

/// A required `Time`.
pub(crate) fn time(field: &mut Time, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    let mut value = None;
    opt_time(&mut value, reader, key)?;
    if let Some(value) = value {
        *field = value;
    }
    Ok(())
}

/// An optional `MicroTime`: seconds and microseconds.
pub(crate) fn opt_micro_time(
    field: &mut Option<MicroTime>,
    reader: &mut Reader<'_>,
    key: Key,
) -> Result<(), Error> {
    key.expect(LEN)?;
    let message = reader.len_delimited()?;
    if !message.is_empty() {
        let (seconds, nanos) = seconds_and_nanos(message)?;
        let micros = (nanos as u32 % 1_000_000_000) / 1000;
        *field = Some(MicroTime(time::timestamp(seconds, micros * 1000)?));
    }
    Ok(())
}

/// A required `MicroTime`.
pub(crate) fn micro_time(field: &mut MicroTime, reader: &mut Reader<'_>, key: Key) -> Result<(), Error> {
    let mut value = None;
    opt_micro_time(&mut value, reader, key)?;
    if let Some(value) = value {
        *field = value;
    }
    Ok(())
}

/// An optional `Duration`, as Go's duration text (`1m30s`).
pub(crate) fn opt_duration(
    field: &mut Option<String>,
    reader: &mut Reader<'_>,
    key: Key,
) -> Result<(), Error> {
    key.expect(LEN)?;
    let mut nanos = 0;
    let mut message = Reader::new(reader.len_delimited()?);
    while let Some(key) = message.key()? {
        match key.tag() {
            1 => nanos = read_varint(&mut message, key)? as i64,
            _ => message.skip(key)?,
        }
    }
    *field = Some(time::go_duration(nanos));
    Ok(())
}

/// An error of embedded JSON.
pub(crate) fn json_error(error: &k8s_openapi::serde_json::Error) -> Error {
    Error::new(ErrorKind::Json(error.to_string()))
}
