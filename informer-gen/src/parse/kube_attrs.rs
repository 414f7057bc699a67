//! Resources declared by `#[derive(CustomResource)]` with `#[kube(...)]`, and by
//! `#[derive(Informer)]` with `#[informer(...)]`.

use std::path::Path;

use informer_templates::Scope;
use proc_macro2::TokenStream;
use syn::{Attribute, LitBool, LitStr, meta::ParseNestedMeta};

use super::Error;
use crate::{Location, plural::infer_plural};

/// The form `#[kube(...)]` must have.
pub(super) const KUBE_FORM: &str = "`#[kube(group = \"...\", version = \"...\", kind = \"...\")]` (plus optional `plural = \"...\"`, `root = \"...\"`, `namespaced`)";
/// The form `#[informer(...)]` must have.
pub(super) const INFORMER_FORM: &str = "`#[informer(group = \"...\", version = \"...\")]` (plus optional `kind = \"...\"`, `plural = \"...\"`, `namespaced`)";

/// What a derive attribute declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Declared {
    pub(super) group: String,
    pub(super) version: String,
    pub(super) kind: String,
    pub(super) plural: String,
    pub(super) scope: Scope,
    /// The name of the Rust type the resource is (in the item's module).
    pub(super) type_name: String,
}

#[derive(Default)]
struct Args {
    group: Option<String>,
    version: Option<String>,
    kind: Option<String>,
    plural: Option<String>,
    singular: Option<String>,
    root: Option<String>,
    namespaced: bool,
}

fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<String> {
    Ok(meta.value()?.parse::<LitStr>()?.value())
}

/// Consumes the value of an argument this crate does not need (`status = "..."`,
/// `printcolumn = r#"..."#`, `crates(...)`, bare flags).
fn skip(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

fn parse_args(file: &Path, attrs: &[Attribute], name: &str, form: &str) -> Result<Option<Args>, Error> {
    let mut args = Args::default();
    let mut any = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident(name)) {
        any = true;
        attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
            match key.as_str() {
                "group" => args.group = Some(string(&meta)?),
                "version" => args.version = Some(string(&meta)?),
                "kind" => args.kind = Some(string(&meta)?),
                "plural" => args.plural = Some(string(&meta)?),
                "singular" => args.singular = Some(string(&meta)?),
                "root" => args.root = Some(string(&meta)?),
                "namespaced" => {
                    args.namespaced = if meta.input.peek(syn::Token![=]) {
                        meta.value()?.parse::<LitBool>()?.value
                    } else {
                        true
                    };
                }
                _ => skip(&meta)?,
            }
            Ok(())
        })
        .map_err(|e| Error::MalformedAttribute {
            location: Location::of(file, e.span()),
            message: e.to_string(),
            expected: form.to_owned(),
        })?;
    }
    Ok(any.then_some(args))
}

fn missing(location: Location, fields: &[(&str, bool)], form: &str) -> Error {
    let names: Vec<String> = fields
        .iter()
        .filter(|(_, present)| !present)
        .map(|(name, _)| format!("`{name}`"))
        .collect();
    Error::MissingField {
        location,
        missing: names.join(", "),
        expected: form.to_owned(),
    }
}

/// The resource `#[derive(CustomResource)]` on `item` declares: its root type is named by
/// `root`, else by `kind`.
pub(super) fn custom_resource(file: &Path, item: &syn::ItemStruct) -> Result<Declared, Error> {
    let location = Location::of(file, item.ident.span());
    let args = parse_args(file, &item.attrs, "kube", KUBE_FORM)?.unwrap_or_default();
    let (Some(group), Some(version), Some(kind)) =
        (args.group.clone(), args.version.clone(), args.kind.clone())
    else {
        return Err(missing(
            location,
            &[
                ("group", args.group.is_some()),
                ("version", args.version.is_some()),
                ("kind", args.kind.is_some()),
            ],
            KUBE_FORM,
        ));
    };
    let plural = args
        .plural
        .unwrap_or_else(|| infer_plural(&kind, args.singular.as_deref()));
    Ok(Declared {
        type_name: args.root.unwrap_or_else(|| kind.clone()),
        group,
        version,
        kind,
        plural,
        scope: if args.namespaced {
            Scope::Namespaced
        } else {
            Scope::Cluster
        },
    })
}

/// The resource `#[derive(Informer)]` on `item` declares: the item itself; the kind defaults
/// to its name.
pub(super) fn informer(file: &Path, attrs: &[Attribute], ident: &syn::Ident) -> Result<Declared, Error> {
    let location = Location::of(file, ident.span());
    let args = parse_args(file, attrs, "informer", INFORMER_FORM)?.unwrap_or_default();
    let (Some(group), Some(version)) = (args.group.clone(), args.version.clone()) else {
        return Err(missing(
            location,
            &[
                ("group", args.group.is_some()),
                ("version", args.version.is_some()),
            ],
            INFORMER_FORM,
        ));
    };
    let kind = args.kind.unwrap_or_else(|| ident.to_string());
    let plural = args
        .plural
        .unwrap_or_else(|| infer_plural(&kind, args.singular.as_deref()));
    Ok(Declared {
        type_name: ident.to_string(),
        group,
        version,
        kind,
        plural,
        scope: if args.namespaced {
            Scope::Namespaced
        } else {
            Scope::Cluster
        },
    })
}
