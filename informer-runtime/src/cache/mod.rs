//! The cache: the indexed [`Store`] (read-only) and its [`Writer`], typed [`Index`] handles,
//! tombstones, the [`delta_fifo`] queue between a reflector and an informer's store, and what
//! a reflector writes to ([`ReflectorStore`], [`Relist`]). Objects are keyed by
//! [`ObjectKey`](crate::ObjectKey).

pub mod delta_fifo;
pub mod index;
mod reflector_store;
mod store;
mod tombstone;
mod undelta;

pub use index::{Index, IndexFunc, Indexers, NAMESPACE_INDEX, namespace_index_func, namespace_indexers};
pub use reflector_store::{BufferedRelist, ReflectorStore, Relist};
pub use store::*;
pub use tombstone::{DeletedFinalStateUnknown, MaybeTombstone};
pub use undelta::{PushFunc, UndeltaStore};
