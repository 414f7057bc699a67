//! [`Decode`]: what every deserializer of one decode shares, passed down from the document to
//! each value: whether repeated fields are read the fast way or carefully, whether the fast
//! way met one it cannot read, and where the document starts (for the offsets of errors).

use std::cell::Cell;

use crate::protobuf::Error;

/// One decode of a document.
pub(crate) struct Decode {
    /// Whether repeated fields are located with a pass over the rest of their message
    /// (careful) rather than taken as the run of values where they start (the fast way, right
    /// for what Go writes: a repeated field's values one after the other).
    careful: bool,
    /// Whether the fast way met a repeated field whose values are not together.
    scattered: Cell<bool>,
    /// The address of the document's first byte.
    start: usize,
}

impl Decode {
    /// Runs `decode` over `document` the fast way, and once more carefully when it met a
    /// repeated field whose values other fields separate (valid protobuf that Go never writes).
    pub(crate) fn fast_then_careful<T>(
        document: &[u8],
        decode: impl Fn(&Decode) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let fast = Self {
            careful: false,
            scattered: Cell::new(false),
            start: document.as_ptr().addr(),
        };
        match decode(&fast) {
            Err(_) if fast.scattered.get() => decode(&Self {
                careful: true,
                ..fast
            }),
            result => result,
        }
    }

    /// Whether repeated fields are located carefully.
    pub(crate) fn careful(&self) -> bool {
        self.careful
    }

    /// Records that the fast way met a repeated field whose values are not together.
    pub(crate) fn met_scattered(&self) {
        self.scattered.set(true);
    }

    /// The offset in the document of `at`, a part of it.
    pub(crate) fn offset(&self, at: &[u8]) -> usize {
        at.as_ptr().addr().saturating_sub(self.start)
    }
}
