//! The fields of a message in the order the wire gives them, as the map of a message shows
//! them: a repeated or map field once (its elements are gathered from the rest of the
//! message), a message embedded inline as its own fields, unknown fields skipped, and zero
//! values left out where Go's JSON leaves them out.

use super::mode::Decode;
use crate::protobuf::{
    Error,
    lookup::message_at,
    spec::{FieldSpec, MessageSpec, Presence, Special, Wire},
    wire::{Reader, WireValue},
};

/// A field as the map of its message gives it.
pub(crate) enum Field<'de> {
    /// A field that occurs once.
    One(&'static FieldSpec, WireValue<'de>),
    /// A repeated or map field and where its values lie.
    Repeated(&'static FieldSpec, Values<'de>),
}

/// Where the values of a repeated or map field lie: the bytes from its first value to its
/// last, and how many there are when known. Go writes them one after the other, so usually
/// the bytes hold nothing else; other fields between them are passed over.
#[derive(Clone, Copy)]
pub(crate) struct Values<'de> {
    pub(crate) bytes: &'de [u8],
    pub(crate) count: Option<usize>,
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
    bytes: &'de [u8],
    reader: Reader<'de>,
    /// The repeated and map fields already given, by their index in the spec.
    given: u64,
    /// Where the repeated fields lie, found at the first of them (careful decodes only; boxed
    /// so that a level stays small to move).
    runs: Option<Box<Runs>>,
}

impl<'de> Level<'de> {
    fn new(bytes: &'de [u8], spec: &'static MessageSpec) -> Self {
        Self {
            spec,
            bytes,
            reader: Reader::new(bytes),
            given: 0,
            runs: None,
        }
    }

    /// The offset of the reader in the message.
    fn offset(&self) -> usize {
        self.bytes.len() - self.reader.remaining().len()
    }
}

/// The most repeated fields of one message that are located in one pass; a message with more
/// (a JSON schema) finds each field's values by reading the rest of the message.
const MAX_RUNS: usize = 16;

/// Where one repeated field's values lie in its message.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    index: u8,
    count: u32,
    start: u32,
    end: u32,
    /// No other field lies between its values.
    contiguous: bool,
}

/// The repeated fields of a message from the first of them on, read in one pass.
#[derive(Debug, Clone, Copy)]
struct Runs {
    runs: [Run; MAX_RUNS],
    len: usize,
    /// Every repeated field was located (none beyond `MAX_RUNS`, no malformed field).
    complete: bool,
}

impl Runs {
    /// Reads `bytes` from `from` on.
    fn locate(bytes: &[u8], from: usize, spec: &MessageSpec) -> Self {
        let mut runs = Self {
            runs: [Run::default(); MAX_RUNS],
            len: 0,
            complete: true,
        };
        let mut reader = Reader::new(&bytes[from..]);
        let mut previous = None;
        loop {
            let start = bytes.len() - reader.remaining().len();
            let Some(Ok((tag, _))) = reader.next() else {
                runs.complete &= reader.remaining().is_empty();
                return runs;
            };
            let end = bytes.len() - reader.remaining().len();
            let Some((index, field)) = spec.field(tag) else {
                previous = None;
                continue;
            };
            if !(field.repeated || field.wire.is_map()) {
                previous = None;
                continue;
            }
            let slot = match runs.runs[..runs.len]
                .iter()
                .position(|r| usize::from(r.index) == index)
            {
                Some(slot) => slot,
                None if runs.len == MAX_RUNS => {
                    runs.complete = false;
                    return runs;
                }
                None => {
                    runs.runs[runs.len] = Run {
                        index: index as u8,
                        count: 0,
                        start: start as u32,
                        end: start as u32,
                        contiguous: true,
                    };
                    runs.len += 1;
                    runs.len - 1
                }
            };
            let run = &mut runs.runs[slot];
            run.contiguous &= run.count == 0 || previous == Some(slot);
            run.count += 1;
            run.end = end as u32;
            previous = Some(slot);
        }
    }

    fn of(&self, index: usize) -> Option<&Run> {
        self.runs[..self.len]
            .iter()
            .find(|r| usize::from(r.index) == index)
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
pub(crate) struct MessageFields<'de, 'm> {
    top: Level<'de>,
    /// Messages embedded inline (a volume's source), innermost last.
    inline: Vec<Level<'de>>,
    decode: &'m Decode,
    /// The offset in the document of the last field read.
    at: usize,
}

impl<'de, 'm> MessageFields<'de, 'm> {
    pub(crate) fn new(bytes: &'de [u8], spec: &'static MessageSpec, decode: &'m Decode) -> Self {
        Self {
            top: Level::new(bytes, spec),
            inline: Vec::new(),
            decode,
            at: decode.offset(bytes),
        }
    }

    /// The decode the message is read in.
    pub(crate) fn decode(&self) -> &'m Decode {
        self.decode
    }

    /// The offset in the document of the key of the last field read.
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    /// The next field to give, `None` at the end of the message.
    ///
    /// # Errors
    /// A malformed field, at its offset.
    pub(crate) fn next_field(&mut self) -> Result<Option<Field<'de>>, Error> {
        loop {
            let level = self.inline.last_mut().unwrap_or(&mut self.top);
            self.at = self.decode.offset(level.reader.remaining());
            let step = step(level, self.decode).map_err(|err| err.within(None, self.at))?;
            match step {
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

fn step<'de>(level: &mut Level<'de>, decode: &Decode) -> Result<Step<'de>, Error> {
    let start = level.offset();
    let Some((tag, value)) = level.reader.read()? else {
        return Ok(Step::LevelEnded);
    };
    let Some((index, spec)) = level.spec.field(tag) else {
        // a field newer than the table, as Go's decoder skips it
        return Ok(Step::Skip);
    };
    if spec.repeated || spec.wire.is_map() {
        return if decode.careful() {
            Ok(repeated_located(level, start, index, spec))
        } else {
            repeated_run(level, start, index, spec, decode)
        };
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

/// A repeated or map field met at `start`, the fast way: given with the run of values that
/// starts there, which the reader then goes past. Met again later, it is scattered: an error
/// that has the message decoded again carefully.
fn repeated_run<'de>(
    level: &mut Level<'de>,
    start: usize,
    index: usize,
    spec: &'static FieldSpec,
    decode: &Decode,
) -> Result<Step<'de>, Error> {
    let bit = 1_u64 << index;
    if level.given & bit != 0 {
        decode.met_scattered();
        return Err(Error::Malformed(format!(
            "the values of the repeated field {:?} are separated by other fields",
            spec.json
        )));
    }
    level.given |= bit;
    let mut count = 1;
    let mut end = level.offset();
    let mut reader = level.reader.clone();
    while let Ok(Some((tag, _))) = reader.read() {
        if tag != spec.tag {
            break;
        }
        count += 1;
        end = level.bytes.len() - reader.remaining().len();
    }
    level.reader = Reader::new(&level.bytes[end..]);
    Ok(Step::Give(Field::Repeated(
        spec,
        Values {
            bytes: &level.bytes[start..end],
            count: Some(count),
        },
    )))
}

/// A repeated or map field met at `start`, carefully: given with all its values the first
/// time (located in one pass over the rest of the message), passed over (with its run of
/// values, when they lie together) after.
fn repeated_located<'de>(
    level: &mut Level<'de>,
    start: usize,
    index: usize,
    spec: &'static FieldSpec,
) -> Step<'de> {
    let (bytes, message) = (level.bytes, level.spec);
    let runs = level
        .runs
        .get_or_insert_with(|| Box::new(Runs::locate(bytes, start, message)));
    let run = runs.of(index).filter(|_| runs.complete).copied();
    let bit = 1_u64 << index;
    if level.given & bit != 0 {
        if let Some(run) = run.filter(|r| r.contiguous) {
            // the rest of the run was given with the field: go past it
            level.reader = Reader::new(&level.bytes[run.end as usize..]);
        }
        return Step::Skip;
    }
    level.given |= bit;
    let values = match run {
        Some(run) => Values {
            bytes: &level.bytes[run.start as usize..run.end as usize],
            count: Some(run.count as usize),
        },
        None => Values {
            bytes: &level.bytes[start..],
            count: None,
        },
    };
    Step::Give(Field::Repeated(spec, values))
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
    /// The rest of the message from the key of the last value read.
    last: &'de [u8],
}

impl<'de> Occurrences<'de> {
    pub(crate) fn new(rest: &'de [u8], tag: u32) -> Self {
        Self {
            reader: Reader::new(rest),
            tag,
            last: rest,
        }
    }

    /// The rest of the message from the key of the last value read (from the first value
    /// before any).
    pub(crate) fn last(&self) -> &'de [u8] {
        self.last
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
        loop {
            let at = self.reader.remaining();
            let Some((tag, value)) = self.reader.read()? else {
                return Ok(None);
            };
            if tag == self.tag {
                self.last = at;
                return Ok(Some(value));
            }
        }
    }
}
