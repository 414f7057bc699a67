//! Where in a document a decode failed: the [`FieldPath`] of [`Error::At`](super::Error::At),
//! built as the error leaves each value that holds the failing one (as prost keeps a stack of
//! message and field), and how the place is shown.

use std::fmt;

/// One step of a [`FieldPath`]: a field of a message, an element of a repeated field, or an
/// entry of a map field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A field, by its JSON name, of the message at `message` (k8s-openapi's module path of
    /// its type, `api::core::v1::PodSpec`).
    Field {
        /// The message the field is in.
        message: &'static str,
        /// The field's JSON name.
        field: &'static str,
    },
    /// The element at an index of a repeated field.
    Index(usize),
    /// The entry of a map field at a key.
    Key(String),
}

/// The fields, elements and entries from a document's object down to the value a decode
/// failed in, outermost first: shown as JSON would name it, `spec.containers[0].image`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath {
    /// Innermost first, as the error collected them on its way out.
    inward: Vec<Segment>,
}

impl FieldPath {
    /// Adds `segment` as the outermost one (the error leaves the value it names).
    pub(crate) fn push_outer(&mut self, segment: Segment) {
        self.inward.push(segment);
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> impl DoubleEndedIterator<Item = &Segment> {
        self.inward.iter().rev()
    }

    /// Whether the path has no segment (the error is in the object's own message).
    pub fn is_empty(&self) -> bool {
        self.inward.is_empty()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, segment) in self.segments().enumerate() {
            match segment {
                Segment::Field { field, .. } if at == 0 => f.write_str(field)?,
                Segment::Field { field, .. } => write!(f, ".{field}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
                Segment::Key(key) => write!(f, "[{key:?}]")?,
            }
        }
        Ok(())
    }
}

/// Shown after the error: ` (at byte 14, in metadata.name)`.
pub(super) struct Place<'a>(pub(super) &'a usize, pub(super) &'a FieldPath);

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}", self.0)?;
        if !self.1.is_empty() {
            write!(f, ", in {}", self.1)?;
        }
        Ok(())
    }
}
