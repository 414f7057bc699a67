//! client-go's informer machinery for Rust, on kube-rs.

pub mod delta_fifo;
pub mod key;
pub mod store;
pub mod tombstone;

pub use key::ObjectName;
pub use tombstone::{DeletedFinalStateUnknown, MaybeTombstone};
