//! The one model and parser of the attributes that declare resources: `#[informer(...)]` of
//! `#[derive(Informer)]` and the resource keys of kube's `#[kube(...)]`. `informer-gen` reads
//! them from source files and `#[derive(Informer)]` from its input, through the same code, so
//! both accept the same keys, infer the same plurals and reject the same mistakes.
//!
//! - [`symbol`]: the attribute and key names, as constants.
//! - [`InformerAttrs`]: `#[informer(...)]`, strict: unknown keys (with a did-you-mean
//!   suggestion), values of the wrong type and duplicate keys are mistakes.
//! - [`KubeAttrs`]: `#[kube(...)]`, lenient about keys: only the keys that name the resource
//!   are read and the others, kube-derive's business, are skipped. Mistakes in the keys read
//!   are kept apart ([`KubeAttrs::mistakes`]) and reported or left to kube-derive
//!   ([`KubeMistakes`]).
//! - [`custom_resource`] and [`standalone`]: the [`Declared`] resource of either form, with
//!   `#[informer(...)]` keys that contradict `#[kube(...)]` as mistakes.
//! - [`validate`]: group, version, kind, plural and singular checked as kube-apiserver
//!   checks them (an invalid one is a mistake, at its value).
//! - [`Ctxt`]: every mistake of an item, each with its span ([`Diagnostic`]), collected
//!   rather than stopping at the first, so they are all reported together: as one
//!   `compile_error!` each by the derive ([`Ctxt::check`]), with `file:line:col` by the
//!   generator ([`Diagnostic::span`] with proc-macro2's `span-locations`).
//!
//! ```
//! use informer_templates::attr::{Ctxt, InformerAttrs, standalone};
//!
//! let item: syn::ItemStruct = syn::parse_quote! {
//!     #[informer(group = "example.com", version = "v1", namespaced)]
//!     pub struct Foo { pub metadata: ObjectMeta }
//! };
//! let mut cx = Ctxt::new();
//! let informer = InformerAttrs::from_attrs(&mut cx, &item.attrs);
//! let declared = standalone(&mut cx, &item.ident, &informer).expect("declared");
//! assert!(cx.is_empty());
//! assert_eq!(declared.plural, "foos");
//! ```

mod ctxt;
mod declared;
mod error;
mod informer;
mod kube;
mod suggest;
pub mod symbol;
pub mod validate;
mod value;

pub use ctxt::{Ctxt, Diagnostic};
pub use declared::{Declared, Form, KubeMistakes, custom_resource, form_of, standalone};
pub use error::Error;
pub use informer::InformerAttrs;
pub use kube::KubeAttrs;
pub use value::Value;

#[cfg(test)]
mod tests;
