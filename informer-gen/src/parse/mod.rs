//! Finding resources in Rust sources: the module tree, `#[kube(...)]` and `#[informer(...)]`
//! attributes, and k8s-openapi style `impl Resource` blocks.

mod attrs;
mod error;
mod impl_resource;
mod kube_attrs;
mod modules;

pub use error::Error;
pub use modules::{Found, ParsedCrate, parse_crate};
