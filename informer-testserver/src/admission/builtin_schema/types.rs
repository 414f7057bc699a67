//! The shapes of the generated table: types, their fields and how each field merges.

/// How a field merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// A scalar, or a struct merged field by field.
    Granular,
    /// A list replaced as a whole.
    AtomicList,
    /// A list of unique scalars.
    SetList,
    /// A list of items identified by these key fields (the first is the patch merge key).
    MapList(&'static [&'static str]),
    /// A map merged key by key.
    GranularMap,
    /// A map replaced as a whole.
    AtomicMap,
}

/// A field of a built-in type.
#[derive(Debug)]
pub(crate) struct Field {
    /// Its JSON name.
    pub(crate) json: &'static str,
    /// How it merges.
    pub(crate) strategy: Strategy,
    /// The type of the field, of its items or of its map values, when a struct.
    pub(crate) nested: Option<&'static str>,
}

/// A struct of k8s-openapi (`api::core::v1::Container`) and its fields.
#[derive(Debug)]
pub(crate) struct TypeInfo {
    pub(crate) path: &'static str,
    pub(crate) fields: &'static [Field],
}

/// A resource kind and its root type.
#[derive(Debug)]
pub(crate) struct Kind {
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) root: &'static str,
}
