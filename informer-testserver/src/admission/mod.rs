//! Admission: what checks and changes an object on its way into storage.

pub(crate) mod builtin_schema;
pub(crate) mod crd;
pub(crate) mod crd_schema;
pub(crate) mod field_ownership;
pub(crate) mod field_validation;
pub(crate) mod garbage_collector;
pub(crate) mod namespace_lifecycle;
pub(crate) mod validation;
