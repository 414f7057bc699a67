//! Resources declared k8s-openapi style: `impl Resource for X { const GROUP: &str = ...; ... }`,
//! listable when `impl ListableResource for X` exists too.

use std::path::Path;

use informer_templates::Scope;
use syn::{ImplItem, ItemImpl, spanned::Spanned};

use super::Error;
use informer_templates::plural::infer_plural;

use crate::Location;

/// The form a k8s-openapi style `impl Resource` block must have.
pub(super) const IMPL_FORM: &str = "`impl Resource for X { const GROUP: &'static str = \"...\"; const VERSION: &'static str = \"...\"; const KIND: &'static str = \"...\"; const URL_PATH_SEGMENT: &'static str = \"...\"; type Scope = NamespaceResourceScope; }`";

/// What an `impl` block is about.
pub(super) enum Implemented {
    /// `impl Resource for X` with the constants.
    Resource {
        /// The self type, as written.
        self_ty: syn::Path,
        group: String,
        version: String,
        kind: String,
        plural: String,
        scope: Scope,
    },
    /// `impl ListableResource for X`.
    Listable(syn::Path),
    /// `impl Metadata for X { type Ty = ObjectMeta; }`.
    ObjectMeta(syn::Path),
    /// Anything else (other traits, kube-style `Resource` impls without constants,
    /// sub-resources).
    Other,
}

fn trait_name(item: &ItemImpl) -> Option<String> {
    if item.modifiers.polarity.is_some() {
        return None;
    }
    let (path, _) = item.trait_.as_ref()?;
    path.segments.last().map(|s| s.ident.to_string())
}

fn self_path(item: &ItemImpl) -> Option<syn::Path> {
    match &*item.self_ty {
        syn::Type::Path(tp) if tp.qself.is_none() && item.generics.params.is_empty() => Some(tp.path.clone()),
        _ => None,
    }
}

fn str_const(expr: &syn::Expr) -> Option<String> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    }
}

/// What `item` implements, as far as resources go.
pub(super) fn classify(file: &Path, item: &ItemImpl) -> Result<Implemented, Error> {
    let Some(trait_name) = trait_name(item) else {
        return Ok(Implemented::Other);
    };
    let Some(self_ty) = self_path(item) else {
        return Ok(Implemented::Other);
    };
    match trait_name.as_str() {
        "ListableResource" => return Ok(Implemented::Listable(self_ty)),
        "Metadata" => {
            let object_meta = item.items.iter().any(|i| {
                matches!(i, ImplItem::Type(t) if t.ident == "Ty"
                    && matches!(&t.ty, syn::Type::Path(tp)
                        if tp.path.segments.last().is_some_and(|s| s.ident == "ObjectMeta")))
            });
            return Ok(if object_meta {
                Implemented::ObjectMeta(self_ty)
            } else {
                Implemented::Other
            });
        }
        "Resource" => {}
        _ => return Ok(Implemented::Other),
    }
    let (mut group, mut version, mut kind, mut plural, mut scope) = (None, None, None, None, None);
    let mut sub_resource = false;
    for impl_item in &item.items {
        match impl_item {
            ImplItem::Const(c) => {
                let slot = match c.ident.to_string().as_str() {
                    "GROUP" => &mut group,
                    "VERSION" => &mut version,
                    "KIND" => &mut kind,
                    "URL_PATH_SEGMENT" => &mut plural,
                    _ => continue,
                };
                *slot = Some(str_const(&c.expr).ok_or_else(|| Error::MalformedAttribute {
                    location: Location::of(file, c.expr.span()),
                    message: format!("`{}` is not a string literal", c.ident),
                    expected: IMPL_FORM.to_owned(),
                })?);
            }
            ImplItem::Type(t) if t.ident == "Scope" => {
                let last = match &t.ty {
                    syn::Type::Path(tp) => tp.path.segments.last().map(|s| s.ident.to_string()),
                    _ => None,
                };
                match last.as_deref() {
                    Some("NamespaceResourceScope") => scope = Some(Scope::Namespaced),
                    Some("ClusterResourceScope") => scope = Some(Scope::Cluster),
                    Some("SubResourceScope") => sub_resource = true,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if sub_resource || (group.is_none() && version.is_none() && kind.is_none()) {
        return Ok(Implemented::Other);
    }
    let location = Location::of(file, item.impl_token.span());
    let (Some(group), Some(version), Some(kind), Some(scope)) =
        (group.clone(), version.clone(), kind.clone(), scope)
    else {
        let fields = [
            ("const GROUP", group.is_some()),
            ("const VERSION", version.is_some()),
            ("const KIND", kind.is_some()),
            ("type Scope", scope.is_some()),
        ];
        let names: Vec<String> = fields
            .iter()
            .filter(|f| !f.1)
            .map(|f| format!("`{}`", f.0))
            .collect();
        return Err(Error::MissingField {
            location,
            missing: names.join(", "),
            expected: IMPL_FORM.to_owned(),
        });
    };
    Ok(Implemented::Resource {
        self_ty,
        plural: plural.unwrap_or_else(|| infer_plural(&kind, None)),
        group,
        version,
        kind,
        scope,
    })
}
