//! client-go's informer machinery for Rust, on kube-rs.

#[doc(hidden)]
#[path = "codegen.rs"]
pub mod __codegen;
pub mod backoff;
mod deadline;
pub mod delta_fifo;
pub mod factory;
pub mod handler;
pub mod informer;
mod informer_thread;
pub mod key;
pub mod kube_lister_watcher;
pub mod lister;
pub mod lister_watcher;
#[cfg(feature = "metrics")]
pub mod metrics;
mod pager;
mod processor;
mod reclaim;
pub mod reflector;
mod retry_window;
pub mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tombstone;
pub mod user_panic;
pub mod watch_body;
pub mod workqueue;

#[cfg(feature = "derive")]
pub use informer_derive::Informer;
pub use key::ObjectName;
pub use tombstone::{DeletedFinalStateUnknown, MaybeTombstone};
