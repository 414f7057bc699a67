//! The cache: object keys, tombstones, the indexed store and the DeltaFIFO.

pub mod delta_fifo;
pub mod key;
mod store;
mod tombstone;

pub use key::ObjectName;
pub use store::*;
pub use tombstone::{DeletedFinalStateUnknown, MaybeTombstone};
