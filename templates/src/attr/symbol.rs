//! The names of the attributes and of their keys, as constants, so the parser, the checks and
//! the messages cannot spell them differently.

/// `#[informer(...)]`, the attribute of `#[derive(Informer)]`.
pub const INFORMER: &str = "informer";
/// `#[kube(...)]`, the attribute of kube's `CustomResource` derive.
pub const KUBE: &str = "kube";

/// `group = "..."`: the API group (`""` for the core group).
pub const GROUP: &str = "group";
/// `version = "..."`: the API version.
pub const VERSION: &str = "version";
/// `kind = "..."`: the kind.
pub const KIND: &str = "kind";
/// `plural = "..."`: the plural resource name.
pub const PLURAL: &str = "plural";
/// `singular = "..."`: the base of the inferred plural.
pub const SINGULAR: &str = "singular";
/// `namespaced` or `namespaced = true|false`.
pub const NAMESPACED: &str = "namespaced";
/// `crate = "..."`: the path of the runtime crate (`#[informer]` only).
pub const CRATE: &str = "crate";
/// `root = "..."`: the name of the type kube-derive generates (`#[kube]` only).
pub const ROOT: &str = "root";

/// Every key `#[informer(...)]` accepts, in the order messages list them.
pub const INFORMER_KEYS: &[&str] = &[GROUP, VERSION, KIND, PLURAL, SINGULAR, NAMESPACED, CRATE];
/// The keys of `#[kube(...)]` that name the resource; kube-derive owns the others, which are
/// skipped.
pub const KUBE_KEYS: &[&str] = &[GROUP, VERSION, KIND, PLURAL, SINGULAR, NAMESPACED, ROOT];

/// The form `#[kube(...)]` must have to name a resource.
pub const KUBE_FORM: &str = "`#[kube(group = \"...\", version = \"...\", kind = \"...\")]` (plus optional `plural = \"...\"`, `singular = \"...\"`, `root = \"...\"`, `namespaced`)";
/// The form a standalone `#[derive(Informer)]` needs.
pub const STANDALONE_FORM: &str = "a standalone `#[derive(Informer)]` needs `#[informer(group = \"...\", version = \"...\")]` (plus optional `kind`, `plural`, `namespaced`, `crate`)";
