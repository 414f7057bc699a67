//! What can be wrong with `#[informer(...)]` and `#[kube(...)]` attributes.
//!
//! Each message names the attribute and the key and says what to write instead; where the
//! mistake is comes with it in a [`Diagnostic`](super::Diagnostic) (a span for the derive,
//! `file:line:col` for the generator).

use super::symbol::{KUBE_FORM, STANDALONE_FORM};

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
