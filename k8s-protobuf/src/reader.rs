//! The protobuf wire format, read: keys (field number and wire type), varints, 64-bit values
//! and length-delimited bytes, with every length checked against what is left.

use crate::{Error, ErrorKind};

/// Wire type 0: a varint.
pub const VARINT: u8 = 0;
/// Wire type 1: eight bytes, little-endian.
pub const FIXED64: u8 = 1;
/// Wire type 2: a varint length, then that many bytes.
pub const LEN: u8 = 2;
/// Wire type 5: four bytes, little-endian.
pub const FIXED32: u8 = 5;

/// A field's key: its number and wire type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key(u32);

impl Key {
    /// The key of field `tag` with `wire_type`.
    pub const fn new(tag: u32, wire_type: u8) -> Self {
        Self(tag << 3 | wire_type as u32)
    }

    /// The field number.
    #[inline(always)]
    pub fn tag(self) -> u32 {
        self.0 >> 3
    }

    /// The wire type.
    #[inline(always)]
    pub fn wire_type(self) -> u8 {
        (self.0 & 7) as u8
    }

    /// An error unless the key has `wire_type`.
    #[inline(always)]
    pub fn expect(self, wire_type: u8) -> Result<(), Error> {
        if self.wire_type() == wire_type {
            Ok(())
        } else {
            Err(wrong_wire_type(self, wire_type))
        }
    }
}

#[cold]
fn wrong_wire_type(key: Key, expected: u8) -> Error {
    Error::new(ErrorKind::WireType {
        sent: key.wire_type(),
        expected,
    })
}

/// Reads a message's fields from a byte slice.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader of `bytes`.
    #[inline(always)]
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// The bytes not read yet.
    #[inline(always)]
    pub fn remaining(&self) -> &'a [u8] {
        self.bytes
    }

    /// The next field's key, `None` at the end of the message.
    #[inline(always)]
    pub fn key(&mut self) -> Result<Option<Key>, Error> {
        match self.bytes {
            [] => Ok(None),
            // keys of field numbers below 16 are one byte
            [first, rest @ ..] if *first < 0x80 && *first >= 8 => {
                self.bytes = rest;
                Ok(Some(Key(u32::from(*first))))
            }
            _ => self.key_slow().map(Some),
        }
    }

    #[cold]
    fn key_slow(&mut self) -> Result<Key, Error> {
        let key = self.varint()?;
        let key = u32::try_from(key).map_err(|_| Error::new(ErrorKind::FieldNumber))?;
        if key >> 3 == 0 {
            return Err(Error::new(ErrorKind::FieldNumber));
        }
        Ok(Key(key))
    }

    /// A varint.
    #[inline(always)]
    pub fn varint(&mut self) -> Result<u64, Error> {
        match self.bytes {
            [first, rest @ ..] if *first < 0x80 => {
                self.bytes = rest;
                Ok(u64::from(*first))
            }
            _ => self.varint_slow(),
        }
    }

    fn varint_slow(&mut self) -> Result<u64, Error> {
        let mut value: u64 = 0;
        for (at, byte) in self.bytes.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * at);
            if byte & 0x80 == 0 {
                self.bytes = &self.bytes[at + 1..];
                return Ok(value);
            }
        }
        Err(Error::new(ErrorKind::Varint))
    }

    /// The bytes of a length-delimited value.
    #[inline(always)]
    pub fn len_delimited(&mut self) -> Result<&'a [u8], Error> {
        let length = self.varint()?;
        match usize::try_from(length) {
            Ok(length) if length <= self.bytes.len() => {
                let (value, rest) = self.bytes.split_at(length);
                self.bytes = rest;
                Ok(value)
            }
            _ => Err(Error::new(ErrorKind::PastEnd)),
        }
    }

    /// Eight bytes, little-endian.
    #[inline]
    pub fn fixed64(&mut self) -> Result<u64, Error> {
        self.fixed::<8>().map(u64::from_le_bytes)
    }

    /// Four bytes, little-endian.
    #[inline]
    pub fn fixed32(&mut self) -> Result<u32, Error> {
        self.fixed::<4>().map(u32::from_le_bytes)
    }

    #[inline]
    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        match self.bytes.split_first_chunk::<N>() {
            Some((value, rest)) => {
                self.bytes = rest;
                Ok(*value)
            }
            None => Err(Error::new(ErrorKind::PastEnd)),
        }
    }

    /// Passes over the value of `key`, unread (an unknown field, or one skipped on purpose).
    pub fn skip(&mut self, key: Key) -> Result<(), Error> {
        match key.wire_type() {
            VARINT => self.varint().map(drop),
            FIXED64 => self.fixed64().map(drop),
            LEN => self.len_delimited().map(drop),
            FIXED32 => self.fixed32().map(drop),
            other => Err(Error::new(ErrorKind::UnsupportedWireType(other))),
        }
    }

    /// How many values of `key` follow one another from here, counting the one whose key was
    /// just read: the length of a repeated field's run, which Go writes in one piece. A value
    /// that does not read ends the count (the decode reports it).
    pub fn run_length(&self, key: Key) -> usize {
        let mut ahead = self.clone();
        let mut count = 1;
        while ahead.skip(key).is_ok() {
            match ahead.key() {
                Ok(Some(next)) if next == key => count += 1,
                _ => break,
            }
        }
        count
    }

    /// How many varints a packed run holds.
    pub fn packed_count(bytes: &[u8]) -> usize {
        bytes.iter().filter(|b| **b < 0x80).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_of_every_wire_type_are_read() {
        // 1: varint 300, 2: "hi", 3: fixed64 1, 4: fixed32 2, 20: varint 1
        let bytes = [
            0x08, 0xac, 0x02, 0x12, 0x02, b'h', b'i', 0x19, 1, 0, 0, 0, 0, 0, 0, 0, 0x25, 2, 0, 0, 0, 0xa0,
            0x01, 1,
        ];
        let mut reader = Reader::new(&bytes);
        let key = reader.key().expect("valid").expect("a key");
        assert_eq!((key.tag(), key.wire_type()), (1, VARINT));
        assert_eq!(reader.varint().expect("valid"), 300);
        assert_eq!(reader.key().expect("valid"), Some(Key::new(2, LEN)));
        assert_eq!(reader.len_delimited().expect("valid"), b"hi");
        assert_eq!(reader.key().expect("valid"), Some(Key::new(3, FIXED64)));
        assert_eq!(reader.fixed64().expect("valid"), 1);
        assert_eq!(reader.key().expect("valid"), Some(Key::new(4, FIXED32)));
        assert_eq!(reader.fixed32().expect("valid"), 2);
        assert_eq!(reader.key().expect("valid"), Some(Key::new(20, VARINT)));
        assert_eq!(reader.varint().expect("valid"), 1);
        assert_eq!(reader.key().expect("valid"), None);
    }

    #[test]
    fn truncated_and_invalid_input_is_an_error_not_a_panic() {
        let length_past_end = [0x12, 0x05, b'a'];
        let mut reader = Reader::new(&length_past_end);
        let key = reader.key().expect("valid").expect("a key");
        assert_eq!(
            reader.skip(key).map_err(|e| e.kind().clone()),
            Err(ErrorKind::PastEnd)
        );
        let varint = [0x08, 0xff];
        let mut reader = Reader::new(&varint);
        let key = reader.key().expect("valid").expect("a key");
        assert_eq!(
            reader.skip(key).map_err(|e| e.kind().clone()),
            Err(ErrorKind::Varint)
        );
        for key in [&[0x00][..], &[0x80, 0x00], &[0xff, 0xff, 0xff, 0xff, 0x7f]] {
            let error = Reader::new(key).key().expect_err("field number 0 or too large");
            assert_eq!(error.kind(), &ErrorKind::FieldNumber, "{key:?}");
        }
        let group = [0x0b];
        let mut reader = Reader::new(&group);
        let key = reader.key().expect("valid").expect("a key");
        assert_eq!(
            reader.skip(key).map_err(|e| e.kind().clone()),
            Err(ErrorKind::UnsupportedWireType(3))
        );
    }

    #[test]
    fn a_run_is_the_values_of_one_key_that_follow_one_another() {
        // 2: "a", 2: "bc", 3: varint 1, 2: "d"
        let bytes = [0x12, 1, b'a', 0x12, 2, b'b', b'c', 0x18, 1, 0x12, 1, b'd'];
        let mut reader = Reader::new(&bytes);
        let key = reader.key().expect("valid").expect("a key");
        assert_eq!(reader.run_length(key), 2);
        assert_eq!(Reader::packed_count(&[0x01, 0xac, 0x02, 0x7f]), 3);
    }
}
