//! Reading the attributes every item may carry: `#[cfg]`, `#[path]`, `#[derive]`.

use std::path::Path;

use syn::{Attribute, Meta, Token, punctuated::Punctuated, spanned::Spanned};

use super::Error;
use crate::Location;

/// The predicates of the `#[cfg(...)]` attributes in `attrs`.
pub(super) fn cfgs(file: &Path, attrs: &[Attribute]) -> Result<Vec<Meta>, Error> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .map(|a| {
            a.parse_args::<Meta>().map_err(|e| Error::MalformedAttribute {
                location: Location::of(file, e.span()),
                message: e.to_string(),
                expected: "`#[cfg(predicate)]`".to_owned(),
            })
        })
        .collect()
}

/// Whether `cfgs` is exactly `#[cfg(test)]`: such modules are not part of the library.
pub(super) fn is_test_only(cfgs: &[Meta]) -> bool {
    cfgs.iter()
        .any(|m| matches!(m, Meta::Path(p) if p.is_ident("test")))
}

/// The value of `#[path = "..."]`, if any.
pub(super) fn path_attr(file: &Path, attrs: &[Attribute]) -> Result<Option<String>, Error> {
    if let Some(attr) = attrs.iter().find(|a| a.path().is_ident("path")) {
        let value = match &attr.meta {
            Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        };
        return value.map(Some).ok_or_else(|| Error::MalformedAttribute {
            location: Location::of(file, attr.span()),
            message: "not a string".to_owned(),
            expected: "`#[path = \"file.rs\"]`".to_owned(),
        });
    }
    Ok(None)
}

/// The last segments of the paths in `#[derive(...)]` attributes (`kube::CustomResource` →
/// `CustomResource`).
pub(super) fn derives(file: &Path, attrs: &[Attribute]) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let paths = attr
            .parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated)
            .map_err(|e| Error::MalformedAttribute {
                location: Location::of(file, e.span()),
                message: e.to_string(),
                expected: "`#[derive(Trait, ...)]`".to_owned(),
            })?;
        names.extend(
            paths
                .iter()
                .filter_map(|p| p.segments.last())
                .map(|s| s.ident.to_string()),
        );
    }
    Ok(names)
}
