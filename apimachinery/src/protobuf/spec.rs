//! The shape of the generated table: messages, their fields by number, and the built-in kinds.

/// How a field is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    String,
    Bytes,
    Bool,
    Int32,
    Int64,
    Double,
    /// A message, by its index in the table.
    Message(usize),
    MapString,
    MapBytes,
    /// A map whose values are messages, by the index of the value's message.
    MapMessage(usize),
}

impl Wire {
    pub(crate) fn is_map(self) -> bool {
        matches!(self, Self::MapString | Self::MapBytes | Self::MapMessage(_))
    }
}

/// Whether a zero value read from the wire is kept. Go's protobuf writes every field that is
/// not a pointer, zero or not, and a pointer field whenever it is set; Go's JSON leaves out
/// the zero values of `omitempty` fields. Keeping a zero only where Go's JSON would show it
/// gives the object the JSON answer would give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presence {
    /// A pointer in Go (or a field the Go table lacks): sent means set, zero or not.
    Pointer,
    /// Not a pointer, `omitempty`: a zero value is left out.
    OmitEmpty,
    /// Not a pointer, not `omitempty`: JSON shows zero values too.
    Always,
}

/// apimachinery's and apiextensions' messages whose JSON form is not an object of their fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    None,
    /// RFC 3339 in whole seconds; an empty message is an unset time.
    Time,
    /// RFC 3339 with microseconds.
    MicroTime,
    /// Go's duration text (`1m30s`).
    Duration,
    /// The quantity's text.
    Quantity,
    /// A number or a string.
    IntOrString,
    /// Embedded JSON bytes (`RawExtension`, `FieldsV1`, apiextensions' `JSON`).
    RawJson,
    /// A schema, or a boolean.
    SchemaOrBool,
    /// A schema, or an array of schemas.
    SchemaOrArray,
    /// A schema, or an array of strings.
    SchemaOrStringArray,
    /// A list of strings (Go's `type Verbs []string`): a message whose repeated field 1 holds
    /// the strings.
    StringList,
}

/// A field of a message: its number, JSON name (empty: embedded inline), encoding, whether it
/// repeats, and when a zero value counts.
#[derive(Debug)]
pub(crate) struct FieldSpec {
    pub(crate) tag: u32,
    pub(crate) json: &'static str,
    pub(crate) wire: Wire,
    pub(crate) repeated: bool,
    pub(crate) presence: Presence,
}

/// A message and its fields, sorted by number.
#[derive(Debug)]
pub(crate) struct MessageSpec {
    pub(crate) path: &'static str,
    pub(crate) special: Special,
    pub(crate) fields: &'static [FieldSpec],
}

impl MessageSpec {
    /// The field numbered `tag` and its index among the fields.
    pub(crate) fn field(&self, tag: u32) -> Option<(usize, &'static FieldSpec)> {
        // most messages number their fields 1, 2, 3, ...
        let guess = (tag as usize).wrapping_sub(1);
        if let Some(field) = self.fields.get(guess).filter(|f| f.tag == tag) {
            return Some((guess, field));
        }
        let at = self.fields.binary_search_by_key(&tag, |f| f.tag).ok()?;
        Some((at, &self.fields[at]))
    }
}

/// A built-in kind and the index of its message.
#[derive(Debug)]
pub(crate) struct Kind {
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) message: usize,
}
