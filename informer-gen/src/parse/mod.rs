//! Finding resources in Rust sources: the module tree, `#[kube(...)]` and `#[informer(...)]`
//! attributes, and k8s-openapi style `impl Resource` blocks.

mod attrs;
mod error;
mod impl_resource;
mod modules;
mod prune;
mod scan;

pub use error::Error;
pub(crate) use modules::{Found, parse_crate};
pub(crate) use prune::Prune;
