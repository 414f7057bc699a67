//! `#[derive(Informer)]`: a typed informer (`FooInformer`), lister (`FooLister`) and, for
//! namespaced resources, namespace lister (`FooNamespaceLister`) for a Kubernetes resource type
//! defined in your own crate, without a build step. Use it through `informer-runtime`'s
//! `derive` feature as `informer_runtime::Informer`.
//!
//! The items are the ones `informer-gen` generates for the same resource, rendered by the same
//! templates (`informer_templates::render::resource::render_resource`), plus the checks below.
//! They are `pub` and go next to the type, so the type should be `pub` as well. The attributes
//! are read by the parser `informer-gen` uses too (`informer_templates::attr`), so a crate of
//! derived types can also be fed to `informer-gen` and gets the same resources.
//!
//! # Beside `CustomResource`
//!
//! The derive reads kube's `#[kube(group, version, kind, plural, singular, namespaced, root)]`
//! and generates the informer of the root type kube-derive generates (named `root`, else
//! `kind`), with the plural inferred as kube-derive infers it (the examples of this page are
//! compiled and run by `informer-runtime`'s `tests/derive.rs`, beside the runtime they need):
//!
//! ```ignore
//! use informer_runtime::Informer;
//! use kube::CustomResource;
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// The spec of a `Foo`.
//! #[derive(CustomResource, Informer, Serialize, Deserialize, Clone, Debug, JsonSchema)]
//! #[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
//! pub struct FooSpec {
//!     /// A size.
//!     pub size: u32,
//! }
//!
//! fn foos(factory: &informer_runtime::factory::SharedInformerFactory) -> Option<std::sync::Arc<Foo>> {
//!     FooInformer::new(factory).lister().foos("default").get("x")
//! }
//! ```
//!
//! # Standalone
//!
//! On a struct that implements `kube::Resource` (by hand, or with kube's `Resource` derive),
//! `#[informer(...)]` names the resource; `kind` defaults to the struct name and `plural` to
//! kube's rule:
//!
//! ```ignore
//! use informer_runtime::Informer;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::{Resource, api::ObjectMeta};
//! use serde::{Deserialize, Serialize};
//!
//! /// A config map, as far as this program cares.
//! #[derive(Resource, Informer, Serialize, Deserialize, Clone, Debug)]
//! #[resource(inherit = ConfigMap)]
//! #[informer(group = "", version = "v1", kind = "ConfigMap", namespaced)]
//! pub struct Settings {
//!     /// The metadata.
//!     pub metadata: ObjectMeta,
//! }
//!
//! // Informer types are named after the kind: `ConfigMapInformer`, `ConfigMapLister`, …
//! assert_eq!(ConfigMapInformer::verify_resource(), Ok(()));
//! ```
//!
//! # `#[informer(...)]`
//!
//! | key | value | |
//! |---|---|---|
//! | `group` | string | required standalone; beside `CustomResource`, must equal `#[kube(group)]` |
//! | `version` | string | required standalone; must equal `#[kube(version)]` |
//! | `kind` | string | default: the struct name (standalone); must equal `#[kube(kind)]` |
//! | `plural` | string | default: inferred from `kind` (or `singular`) as kube-derive does |
//! | `singular` | string | the base of the inferred plural (standalone) |
//! | `namespaced` | flag or bool | default: cluster-scoped; must equal `#[kube(namespaced)]` |
//! | `crate` | string path | the runtime, default `::informer_runtime` (the derive's only; `informer-gen` takes its runtime path from its configuration) |
//!
//! Several `#[informer(...)]` attributes on one item are merged; a key may appear once in all.
//!
//! # What is checked, and when
//!
//! - **Expansion** (all mistakes at once, each at its token): unknown keys (with a suggestion),
//!   values of the wrong type, duplicate keys, missing `group`/`version` (standalone), enums,
//!   unions, tuple and unit structs, generic types, and `#[informer(...)]` values contradicting
//!   `#[kube(...)]`. Mistakes inside `#[kube(...)]` are left to kube-derive, except names
//!   kube-apiserver would refuse, which kube-derive does not check.
//! - **Names** (expansion too, in either attribute): the group must be a DNS-1123 subdomain
//!   (empty, the core group, only standalone: a custom resource has a group of its own); the
//!   version a DNS-1035 label, as kube-apiserver requires of CRD versions (`v1`, `v1beta2`);
//!   `plural` and `singular` DNS-1123 labels (lowercase); `kind` a letter followed by letters
//!   and digits. See `informer_templates::attr::validate`.
//! - **Type checking**: `<T as kube::Resource>::Scope` must be the declared scope
//!   (`NamespaceResourceScope` with `namespaced`, else `ClusterResourceScope`), and
//!   `DynamicType` must be `()`; a mismatch is a type error pointing at `namespaced` (or at the
//!   type name when no scope is declared).
//! - **Run time** (standalone only): `kube::Resource::{group, version, kind, plural}` are not
//!   `const fn`s, so they cannot be compared during compilation; `FooInformer::verify_resource()`
//!   compares them with the declared values and returns every disagreement. Call it in a test or
//!   at start-up. Requests always go where the `Resource` impl says; a disagreement means the
//!   generated names and docs, and `informer-gen`'s output for the same type, are wrong.
//!   Beside `CustomResource` both come from the same `#[kube(...)]`, so they cannot disagree.

mod check;
mod expand;

/// Generates `FooInformer`, `FooLister` and (namespaced) `FooNamespaceLister` for the resource
/// the item declares; see the [crate docs](crate).
#[proc_macro_derive(Informer, attributes(informer))]
pub fn derive_informer(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand::expand(input.into()).into()
}

#[cfg(test)]
mod tests;
