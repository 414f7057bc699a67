//! client-go's informer machinery for Rust, on kube-rs.

#[doc(hidden)]
#[path = "codegen.rs"]
pub mod __codegen;
pub mod cache;
mod deadline;
pub mod factory;
pub mod informer;
pub mod lister;
#[cfg(feature = "metrics")]
pub mod metrics;
pub mod reflector;
pub mod source;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod user_panic;
pub mod workqueue;

pub use cache::{DeletedFinalStateUnknown, MaybeTombstone, ObjectName};
#[cfg(feature = "derive")]
pub use informer_derive::Informer;
