//! The fields of a message in the order the wire gives them, as the map of a message shows
//! them: a repeated or map field once (its elements are gathered from the rest of the
//! message), a message embedded inline as its own fields, unknown fields skipped, and zero
//! values left out where Go's JSON leaves them out.

use crate::protobuf::{
    Error,
    spec::{FieldSpec, MessageSpec, Presence, Special, Wire, message_at},
    wire::{Reader, WireValue},
};

/// A field as the map of its message gives it.
pub(crate) enum Field<'de> {
    /// A field that occurs once.
    One(&'static FieldSpec, WireValue<'de>),
    /// A repeated or map field: the rest of its message, from its first occurrence on.
    Repeated(&'static FieldSpec, &'de [u8]),
}

impl Field<'_> {
    pub(crate) fn spec(&self) -> &'static FieldSpec {
        match self {
            Self::One(spec, _) | Self::Repeated(spec, _) => spec,
        }
    }
}

/// Reading one message (or one embedded inline).
struct Level<'de> {
    spec: &'static MessageSpec,
    reader: Reader<'de>,
    /// The repeated and map fields already given, by their index in the spec.
    given: u64,
}

impl<'de> Level<'de> {
    fn new(bytes: &'de [u8], spec: &'static MessageSpec) -> Self {
        Self {
            spec,
            reader: Reader::new(bytes),
            given: 0,
        }
    }
}

/// What the next field on the wire asks for.
enum Step<'de> {
    Give(Field<'de>),
    Skip,
    Enter(Level<'de>),
    LevelEnded,
}

/// The fields of a message.
pub(crate) struct MessageFields<'de> {
    top: Level<'de>,
    /// Messages embedded inline (a volume's source), innermost last.
    inline: Vec<Level<'de>>,
}

impl<'de> MessageFields<'de> {
    pub(crate) fn new(bytes: &'de [u8], spec: &'static MessageSpec) -> Self {
        Self {
            top: Level::new(bytes, spec),
            inline: Vec::new(),
        }
    }

    /// The next field to give, `None` at the end of the message.
    pub(crate) fn next_field(&mut self) -> Result<Option<Field<'de>>, Error> {
        loop {
            let level = self.inline.last_mut().unwrap_or(&mut self.top);
            match step(level)? {
                Step::Give(field) => return Ok(Some(field)),
                Step::Skip => {}
                Step::Enter(inner) => self.inline.push(inner),
                Step::LevelEnded => {
                    if self.inline.pop().is_none() {
                        return Ok(None);
                    }
                }
            }
        }
    }
}

fn step<'de>(level: &mut Level<'de>) -> Result<Step<'de>, Error> {
    let rest = level.reader.remaining();
    let Some(read) = level.reader.next() else {
        return Ok(Step::LevelEnded);
    };
    let (tag, value) = read?;
    let Some((index, spec)) = level.spec.field(tag) else {
        // a field newer than the table, as Go's decoder skips it
        return Ok(Step::Skip);
    };
    if spec.repeated || spec.wire.is_map() {
        let bit = 1_u64 << index;
        if level.given & bit != 0 {
            return Ok(Step::Skip);
        }
        level.given |= bit;
        return Ok(Step::Give(Field::Repeated(spec, rest)));
    }
    if spec.json.is_empty() {
        return Ok(match (spec.wire, value) {
            (Wire::Message(inner), WireValue::Bytes(bytes)) => {
                Step::Enter(Level::new(bytes, message_at(inner)))
            }
            _ => Step::Skip,
        });
    }
    if left_out(spec, value) {
        return Ok(Step::Skip);
    }
    Ok(Step::Give(Field::One(spec, value)))
}

/// Whether Go's JSON would leave the value out: a zero scalar of an `omitempty` field that is
/// not a pointer, or an unset time (an empty message; Go's JSON writes `null`).
fn left_out(spec: &FieldSpec, value: WireValue<'_>) -> bool {
    match (spec.wire, value) {
        (Wire::Message(index), WireValue::Bytes(bytes)) => {
            bytes.is_empty() && matches!(message_at(index).special, Special::Time | Special::MicroTime)
        }
        (_, value) if spec.presence == Presence::OmitEmpty => match value {
            WireValue::Varint(v) | WireValue::Fixed64(v) => v == 0,
            WireValue::Fixed32(v) => v == 0,
            WireValue::Bytes(bytes) => bytes.is_empty(),
        },
        _ => false,
    }
}

/// Every value of one field number in the rest of a message.
#[derive(Clone)]
pub(crate) struct Occurrences<'de> {
    reader: Reader<'de>,
    tag: u32,
}

impl<'de> Occurrences<'de> {
    pub(crate) fn new(rest: &'de [u8], tag: u32) -> Self {
        Self {
            reader: Reader::new(rest),
            tag,
        }
    }

    /// How many elements are left: one per value, or per number of a packed run (a value of
    /// `packed` type sent length-delimited). A malformed rest counts what reads.
    pub(crate) fn remaining(&self, packed: bool) -> usize {
        let mut rest = self.clone();
        let mut count = 0;
        while let Ok(Some(value)) = rest.next_value() {
            count += match value {
                WireValue::Bytes(run) if packed => {
                    let mut varints = crate::protobuf::wire::Varints::new(run);
                    std::iter::from_fn(|| varints.next_varint().ok().flatten()).count()
                }
                _ => 1,
            };
        }
        count
    }

    pub(crate) fn next_value(&mut self) -> Result<Option<WireValue<'de>>, Error> {
        for field in self.reader.by_ref() {
            let (tag, value) = field?;
            if tag == self.tag {
                return Ok(Some(value));
            }
        }
        Ok(None)
    }
}
