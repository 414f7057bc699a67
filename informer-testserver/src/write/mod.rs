//! Writes: patches, dry runs and the scale subresource.

pub(crate) mod dry_run;
pub(crate) mod patch;
pub(crate) mod scale;
pub(crate) mod strategic_merge;
