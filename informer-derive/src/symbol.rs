//! The names the derive reads, as constants.

/// `#[informer(...)]`.
pub(crate) const INFORMER: &str = "informer";
/// `#[kube(...)]`, the attribute of kube's `CustomResource` derive.
pub(crate) const KUBE: &str = "kube";

/// `group = "..."`.
pub(crate) const GROUP: &str = "group";
/// `version = "..."`.
pub(crate) const VERSION: &str = "version";
/// `kind = "..."`.
pub(crate) const KIND: &str = "kind";
/// `plural = "..."`.
pub(crate) const PLURAL: &str = "plural";
/// `singular = "..."`.
pub(crate) const SINGULAR: &str = "singular";
/// `namespaced` or `namespaced = true`.
pub(crate) const NAMESPACED: &str = "namespaced";
/// `crate = "..."`.
pub(crate) const CRATE: &str = "crate";
/// `root = "..."` (kube only).
pub(crate) const ROOT: &str = "root";

/// Every key `#[informer(...)]` accepts, for did-you-mean suggestions.
pub(crate) const INFORMER_KEYS: &[&str] = &[GROUP, VERSION, KIND, PLURAL, SINGULAR, NAMESPACED, CRATE];
