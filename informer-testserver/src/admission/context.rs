//! The context of one request's writes: who writes, how strictly, whether for real, and the
//! warnings the writes gave.

use crate::admission::field_ownership::Writer;
use crate::admission::field_validation::Mode;

/// What one request's writes carry besides their objects.
///
/// The default is the Rust API's: no field manager (its writes leave `managedFields` as they
/// are), warnings for unknown fields, written for real.
#[derive(Debug, Default)]
pub(crate) struct WriteContext {
    /// Who writes (its field manager); `None` for the Rust API.
    pub(crate) field_manager: Option<Writer>,
    /// Whether an apply takes conflicting fields over (`force=true`).
    pub(crate) force: bool,
    /// What the writes do about unknown fields (`fieldValidation`).
    pub(crate) field_validation: Mode,
    /// Whether the writes are a dry run (`dryRun=All`): answered as if written, nothing kept.
    pub(crate) dry_run: bool,
    /// The warnings the writes gave, for the answer's `Warning` headers.
    pub(crate) warnings: Vec<String>,
}
