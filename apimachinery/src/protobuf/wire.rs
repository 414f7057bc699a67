//! The protobuf wire format: fields as `(number, value)` with varint, 64-bit, 32-bit and
//! length-delimited values, read ([`Reader`]) and written ([`Writer`]). It is the encoding
//! itself, small enough to read here rather than through a protobuf library's generated types.

use super::Error;

/// What is wrong with bytes that are not protobuf: small, so that the reader's results stay in
/// registers; an [`Error`] once it leaves the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Malformed {
    Varint,
    PastEnd,
    FieldNumber,
    WireType(u8),
}

impl From<Malformed> for Error {
    fn from(malformed: Malformed) -> Self {
        Error::Malformed(match malformed {
            Malformed::Varint => "a varint is truncated or longer than 10 bytes".into(),
            Malformed::PastEnd => "a value goes past the end of its message".into(),
            Malformed::FieldNumber => "a field number is too large".into(),
            Malformed::WireType(wire_type) => format!("unsupported wire type {wire_type}"),
        })
    }
}

/// A field's value as the wire carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireValue<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

impl WireValue<'_> {
    /// The wire type's number (0 varint, 1 64-bit, 2 length-delimited, 5 32-bit).
    pub(crate) fn wire_type(self) -> u8 {
        match self {
            Self::Varint(_) => 0,
            Self::Fixed64(_) => 1,
            Self::Bytes(_) => 2,
            Self::Fixed32(_) => 5,
        }
    }
}

/// Reads varints from a byte slice.
#[derive(Clone)]
pub(crate) struct Varints<'a> {
    bytes: &'a [u8],
}

impl<'a> Varints<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// The next varint, `None` at the end.
    #[inline]
    pub(crate) fn next_varint(&mut self) -> Result<Option<u64>, Malformed> {
        let Some(&first) = self.bytes.first() else {
            return Ok(None);
        };
        if first < 0x80 {
            // most keys and lengths fit in one byte
            self.bytes = &self.bytes[1..];
            return Ok(Some(u64::from(first)));
        }
        let mut value: u64 = 0;
        for (i, byte) in self.bytes.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.bytes = &self.bytes[i + 1..];
                return Ok(Some(value));
            }
        }
        Err(Malformed::Varint)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.bytes.len() < n {
            return Err(Malformed::PastEnd);
        }
        let (taken, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(taken)
    }
}

/// Iterates over the fields of a message.
#[derive(Clone)]
pub(crate) struct Reader<'a> {
    varints: Varints<'a>,
    failed: bool,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self {
            varints: Varints::new(bytes),
            failed: false,
        }
    }

    /// The bytes not read yet.
    #[inline]
    pub(crate) fn remaining(&self) -> &'a [u8] {
        self.varints.bytes
    }

    #[inline]
    fn field(&mut self, key: u64) -> Result<(u32, WireValue<'a>), Malformed> {
        let tag = u32::try_from(key >> 3).map_err(|_| Malformed::FieldNumber)?;
        let value = match key & 7 {
            0 => WireValue::Varint(self.varints.next_varint()?.ok_or(Malformed::PastEnd)?),
            1 => WireValue::Fixed64(u64::from_le_bytes(self.fixed::<8>()?)),
            2 => {
                let length = self.varints.next_varint()?.ok_or(Malformed::PastEnd)?;
                let length = usize::try_from(length).map_err(|_| Malformed::PastEnd)?;
                WireValue::Bytes(self.varints.take(length)?)
            }
            5 => WireValue::Fixed32(u32::from_le_bytes(self.fixed::<4>()?)),
            other => return Err(Malformed::WireType(other as u8)),
        };
        Ok((tag, value))
    }

    /// The next field, `None` at the end; the fast form of [`Iterator::next`].
    #[inline]
    pub(crate) fn read(&mut self) -> Result<Option<(u32, WireValue<'a>)>, Malformed> {
        match self.varints.next_varint()? {
            Some(key) => self.field(key).map(Some),
            None => Ok(None),
        }
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        let bytes = self.varints.take(N)?;
        let mut out = [0; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<(u32, WireValue<'a>), Error>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.read() {
            Ok(field) => field.map(Ok),
            Err(malformed) => {
                self.failed = true;
                Some(Err(malformed.into()))
            }
        }
    }
}

/// Appends protobuf fields to a buffer.
#[derive(Default)]
pub(crate) struct Writer(Vec<u8>);

impl Writer {
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.0
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// A 64-bit field (a `double`'s bits).
    pub(crate) fn fixed64(&mut self, tag: u32, bits: u64) {
        self.key(tag, 1);
        self.0.extend_from_slice(&bits.to_le_bytes());
    }

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

    pub(crate) fn bytes(&mut self, tag: u32, value: &[u8]) {
        self.key(tag, 2);
        self.varint(value.len() as u64);
        self.0.extend_from_slice(value);
    }

    pub(crate) fn number(&mut self, tag: u32, value: i64) {
        self.key(tag, 0);
        // negative numbers are ten-byte varints of their two's complement, as protobuf does
        self.varint(value as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_every_wire_type_are_read() {
        // 1: varint 300, 2: "hi", 3: fixed64 1, 4: fixed32 2
        let bytes = [
            0x08, 0xac, 0x02, 0x12, 0x02, b'h', b'i', 0x19, 1, 0, 0, 0, 0, 0, 0, 0, 0x25, 2, 0, 0, 0,
        ];
        let fields: Vec<_> = Reader::new(&bytes).collect::<Result<_, _>>().expect("valid");
        assert_eq!(
            fields,
            [
                (1, WireValue::Varint(300)),
                (2, WireValue::Bytes(b"hi")),
                (3, WireValue::Fixed64(1)),
                (4, WireValue::Fixed32(2)),
            ]
        );
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        for bytes in [&[0x12, 0x05, b'a'][..], &[0x08, 0xff], &[0x0b], &[0x19, 1, 2]] {
            let result: Result<Vec<_>, _> = Reader::new(bytes).collect();
            assert!(result.is_err(), "{bytes:?}");
        }
    }
}
