//! What can be wrong with `#[informer(...)]` and `#[kube(...)]` attributes.
//!
//! Each message names the attribute and the key and says what to write instead; where the
//! mistake is comes with it in a [`Diagnostic`](super::Diagnostic) (a span for the derive,
//! `file:line:col` for the generator).

use super::{
    symbol::{KUBE_FORM, STANDALONE_FORM},
    validate::Invalid,
};

/// One mistake in the attributes of an item.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A key the attribute does not have.
    #[error("unknown key `{key}` in `#[{attr}(...)]`{}", unknown_hint(*.suggestion, .expected))]
    UnknownKey {
        /// The attribute, such as `informer`.
        attr: &'static str,
        /// The key as written.
        key: String,
        /// A known key close to it, if any.
        suggestion: Option<&'static str>,
        /// Every key the attribute has.
        expected: &'static [&'static str],
    },
    /// A key given twice.
    #[error("duplicate `{key}` in `#[{attr}(...)]`")]
    Duplicate {
        /// The attribute.
        attr: &'static str,
        /// The key.
        key: &'static str,
    },
    /// A string key with a value that is not a string literal.
    #[error("expected a string literal for `{key}`; expected `{key} = \"...\"` in `#[{attr}(...)]`")]
    NotAString {
        /// The attribute.
        attr: &'static str,
        /// The key.
        key: &'static str,
    },
    /// A string key without `= "..."`.
    #[error("expected `{key} = \"...\"` in `#[{attr}(...)]`")]
    MissingString {
        /// The attribute.
        attr: &'static str,
        /// The key.
        key: &'static str,
    },
    /// A flag with a value that is not `true` or `false`.
    #[error("expected a boolean for `{key}`; expected `{key}` or `{key} = true|false` in `#[{attr}(...)]`")]
    NotABool {
        /// The attribute.
        attr: &'static str,
        /// The key.
        key: &'static str,
    },
    /// A flag written as a list, such as `namespaced(true)`.
    #[error("expected `{key}` or `{key} = true|false` in `#[{attr}(...)]`")]
    FlagForm {
        /// The attribute.
        attr: &'static str,
        /// The key.
        key: &'static str,
    },
    /// `crate = "..."` that is not a Rust path.
    #[error("`{key} = \"{value}\"` is not a path, such as `::informer_runtime`")]
    NotAPath {
        /// The key.
        key: &'static str,
        /// The value as written.
        value: String,
    },
    /// A type name (`kind` or `root` of `#[kube(...)]`) that is not a Rust identifier.
    #[error(
        "`{key} = \"{value}\"` in `#[{attr}(...)]` is not a type name; write a Rust identifier, such as `Foo`"
    )]
    NotATypeName {
        /// The attribute.
        attr: &'static str,
        /// The key.
        key: &'static str,
        /// The value as written.
        value: String,
    },
    /// A group that is not a DNS-1123 subdomain.
    #[error(
        "`group = \"{value}\"` in `#[{attr}(...)]` is not an API group: {reason}; write a DNS-1123 subdomain (lowercase letters, digits, `-` and `.`, at most 253 characters), such as `example.com`"
    )]
    InvalidGroup {
        /// The attribute.
        attr: &'static str,
        /// The value as written.
        value: String,
        /// What is wrong with it.
        reason: Invalid,
    },
    /// `group = ""` in `#[kube(...)]`: a custom resource cannot be in the core group.
    #[error(
        "`group = \"\"` in `#[kube(...)]` is the core group, which only built-in resources are in; give the custom resource a group of its own, such as `example.com`"
    )]
    CoreGroup,
    /// A version that is not a DNS-1035 label.
    #[error(
        "`version = \"{value}\"` in `#[{attr}(...)]` is not an API version: {reason}; write a DNS-1035 label (a lowercase letter, then lowercase letters, digits and `-`, at most 63 characters), such as `v1` or `v1beta1`"
    )]
    InvalidVersion {
        /// The attribute.
        attr: &'static str,
        /// The value as written.
        value: String,
        /// What is wrong with it.
        reason: Invalid,
    },
    /// A plural or singular that is not a DNS-1123 label.
    #[error(
        "`{key} = \"{value}\"` in `#[{attr}(...)]` is not a resource name: {reason}; write a DNS-1123 label (lowercase letters, digits and `-`, at most 63 characters), such as `foos`"
    )]
    InvalidName {
        /// The attribute.
        attr: &'static str,
        /// `plural` or `singular`.
        key: &'static str,
        /// The value as written.
        value: String,
        /// What is wrong with it.
        reason: Invalid,
    },
    /// A kind that is not a letter followed by letters and digits.
    #[error(
        "`kind = \"{value}\"` in `#[{attr}(...)]` is not a kind: {reason}; write an ASCII letter followed by ASCII letters and digits, such as `Foo`"
    )]
    InvalidKind {
        /// The attribute.
        attr: &'static str,
        /// The value as written.
        value: String,
        /// What is wrong with it.
        reason: Invalid,
    },
    /// Tokens that do not form `key`, `key = value` or `key(...)`.
    #[error("{message}; expected `key = value` pairs separated by commas")]
    Syntax {
        /// syn's message.
        message: String,
    },
    /// A standalone `#[derive(Informer)]` whose `#[informer(...)]` lacks required keys.
    #[error("missing {keys}: {STANDALONE_FORM}")]
    MissingInformerKeys {
        /// The missing keys, such as `` `group` and `version` ``.
        keys: String,
    },
    /// A standalone `#[derive(Informer)]` without `#[informer(...)]`.
    #[error("missing `#[informer(...)]`: {STANDALONE_FORM}")]
    MissingInformer,
    /// `#[kube(...)]` without a key kube-derive needs.
    #[error("missing {keys} in `#[kube(...)]`; expected {KUBE_FORM}")]
    MissingKubeKeys {
        /// The missing keys, such as `` `kind` ``.
        keys: String,
    },
    /// An `#[informer(...)]` string that says something else than `#[kube(...)]`.
    #[error("`#[informer({key} = \"{value}\")]` contradicts {kube}")]
    Contradicts {
        /// The key.
        key: &'static str,
        /// The `#[informer]` value.
        value: String,
        /// What `#[kube(...)]` says, such as `` `#[kube(group = "a")]` ``.
        kube: String,
    },
    /// `#[informer(singular)]` beside a `#[kube(...)]` that does not state the same singular.
    #[error("`#[informer(singular)]` contradicts `#[kube(...)]`: state `singular` in `#[kube(...)]` only")]
    SingularContradicts,
    /// `#[informer(namespaced = ...)]` that says something else than `#[kube(...)]`.
    #[error(
        "`#[informer(namespaced = {value})]` contradicts `#[kube(...)]`, which declares the resource {kube}"
    )]
    ScopeContradicts {
        /// The `#[informer]` value.
        value: bool,
        /// `namespaced` or `cluster-scoped`.
        kube: &'static str,
    },
}

fn unknown_hint(suggestion: Option<&str>, expected: &[&str]) -> String {
    match suggestion {
        Some(key) => format!(", did you mean `{key}`?"),
        None => format!(
            "; expected one of {}",
            expected
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
