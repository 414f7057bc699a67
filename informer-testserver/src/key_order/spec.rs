//! The shape of the generated key order table: a message's JSON keys and what each holds.

/// What a field's value holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Child {
    /// Written as it is (scalars, maps of scalars, times, quantities, raw JSON).
    Plain,
    /// The message at this index of the generated `MESSAGES` (or a list of them).
    Msg(usize),
    /// A map whose values are the message at this index.
    Map(usize),
    /// An embedded object of any kind, ordered by its own `apiVersion` and `kind`.
    Embedded,
}

/// A built-in message: its path in k8s-pb and its JSON keys in Go's order.
#[derive(Debug)]
pub(crate) struct Message {
    pub(crate) path: &'static str,
    pub(crate) fields: &'static [(&'static str, Child)],
}
