//! The cache: object keys ([`key`]), tombstones, the indexed [`Store`] (read-only) and its
//! [`Writer`], and the [`delta_fifo`] queue between a reflector and an informer's store.

pub mod delta_fifo;
pub mod index;
pub mod key;
mod store;
mod tombstone;
mod undelta;

pub use index::Index;
pub use key::ObjectName;
pub use store::*;
pub use tombstone::{DeletedFinalStateUnknown, MaybeTombstone};
pub use undelta::{PushFunc, UndeltaStore};
