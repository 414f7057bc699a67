//! The shared internals of `informer-gen` and `#[derive(Informer)]` (`informer-derive`): the
//! resource model ([`Resource`], [`Api`]), the one parser of the `#[informer(...)]` and
//! `#[kube(...)]` attributes that declare resources ([`attr`]), the naming rules
//! ([`naming`], [`plural`]) and the `quote!` templates of generated code ([`render`]).
//!
//! It is not meant to be used directly: its API follows the needs of those two crates and may
//! change with them. Generate informers with `informer-gen` (a build script or the CLI) or
//! `#[derive(Informer)]` instead.
//!
//! Generated code reaches its runtime only through `<runtime>::__codegen::…` (default
//! `::informer_runtime::__codegen`), with absolute paths, so it compiles wherever it is
//! included, whatever the including crate shadows.
//!
//! ```
//! use informer_templates::{Api, RenderOptions, Resource, Scope, format, render};
//!
//! let foo = Resource::new("example.com", "v1", "Foo", "foos", Scope::Namespaced, syn::parse_quote!(::crds::Foo));
//! let options = RenderOptions::default();
//! let code = format::pretty(render::resource::render_resource(&foo, &options)).expect("valid tokens");
//! assert!(code.contains("pub struct FooInformer"));
//! let api = Api::new(vec![foo]).expect("no collisions");
//! assert_eq!(api.groups[0].accessor.to_string(), "example_com");
//! ```

pub mod api;
pub mod attr;
mod error;
pub mod format;
pub mod model;
pub mod naming;
pub mod plural;
pub mod render;

pub use api::{Api, Group, Version};
pub use error::Error;
pub use model::{Nesting, RenderOptions, Resource, Scope};
