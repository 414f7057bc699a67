//! Checks across attributes and the item: the shape of the item, required keys, and
//! `#[informer(...)]` keys that contradict `#[kube(...)]`. Produces the resource model.

use informer_templates::{RenderOptions, Resource, Scope, plural::infer_plural};
use proc_macro2::Span;
use syn::{Data, DeriveInput, Fields, spanned::Spanned};

use crate::{
    attr::{Value, informer::InformerAttrs, kube::KubeAttrs},
    ctxt::Ctxt,
};

/// Which form the derive is used in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Beside `#[derive(CustomResource)]`: the resource is the generated root type.
    CustomResource,
    /// On a type implementing `kube::Resource` itself.
    Standalone,
}

/// Everything the expansion needs.
#[derive(Debug)]
pub(crate) struct Model {
    /// The resource, as the templates take it.
    pub(crate) resource: Resource,
    /// The runtime path.
    pub(crate) options: RenderOptions,
    /// The form.
    pub(crate) form: Form,
    /// Where the scope is declared (`namespaced`, or the type name): compile-time scope errors
    /// point there.
    pub(crate) scope_span: Span,
}

/// The message of a missing `#[informer(...)]` key.
const STANDALONE_FORM: &str = "a standalone `#[derive(Informer)]` needs `#[informer(group = \"...\", version = \"...\")]` (plus optional `kind`, `plural`, `namespaced`, `crate`)";

/// Checks the item's shape, recording every problem.
pub(crate) fn shape(cx: &mut Ctxt, input: &DeriveInput) {
    match &input.data {
        Data::Enum(data) => cx.error_at(
            data.enum_token.span(),
            "`#[derive(Informer)]` works on structs only, not on enums",
        ),
        Data::Union(data) => cx.error_at(
            data.union_token.span(),
            "`#[derive(Informer)]` works on structs only, not on unions",
        ),
        Data::Struct(data) => match &data.fields {
            Fields::Named(_) => {}
            Fields::Unnamed(fields) => cx.error_spanned_by(
                fields,
                "`#[derive(Informer)]` needs a struct with named fields, not a tuple struct",
            ),
            Fields::Unit => cx.error_spanned_by(
                &input.ident,
                "`#[derive(Informer)]` needs a struct with named fields, not a unit struct",
            ),
        },
    }
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &input.generics,
            "`#[derive(Informer)]` does not support generic types: an informer is for one concrete resource type",
        );
    }
}

fn scope_of(namespaced: Option<&Value<bool>>) -> Scope {
    if namespaced.is_some_and(|v| v.value) {
        Scope::Namespaced
    } else {
        Scope::Cluster
    }
}

fn options(informer: &InformerAttrs) -> RenderOptions {
    informer.krate.as_ref().map_or_else(RenderOptions::default, |k| {
        RenderOptions::with_runtime(k.value.clone())
    })
}

/// Reports `informer`'s `key` when it says something else than kube's `expected`.
fn agree(cx: &mut Ctxt, key: &str, informer: Option<&Value<String>>, expected: &str, inferred: bool) {
    if let Some(v) = informer
        && v.value != expected
    {
        let source = if inferred {
            format!("the {key} kube-derive infers from `#[kube(...)]`, `{expected}`")
        } else {
            format!("`#[kube({key} = \"{expected}\")]`")
        };
        cx.error_at(
            v.span,
            format!("`#[informer({key} = \"{}\")]` contradicts {source}", v.value),
        );
    }
}

/// The model beside `CustomResource`; `None` when kube-derive will report its attributes.
pub(crate) fn custom_resource(cx: &mut Ctxt, kube: &KubeAttrs, informer: &InformerAttrs) -> Option<Model> {
    if kube.malformed {
        return None;
    }
    let (Some(group), Some(version), Some(kind)) = (&kube.group, &kube.version, &kube.kind) else {
        // kube-derive reports the missing keys.
        return None;
    };
    let plural = kube.plural.as_ref().map_or_else(
        || infer_plural(&kind.value, kube.singular.as_ref().map(|s| s.value.as_str())),
        |p| p.value.clone(),
    );
    agree(cx, "group", informer.group.as_ref(), &group.value, false);
    agree(cx, "version", informer.version.as_ref(), &version.value, false);
    agree(cx, "kind", informer.kind.as_ref(), &kind.value, false);
    agree(
        cx,
        "plural",
        informer.plural.as_ref(),
        &plural,
        kube.plural.is_none(),
    );
    if let Some(singular) = &informer.singular
        && kube.singular.as_ref().map(|s| &s.value) != Some(&singular.value)
    {
        cx.error_at(
            singular.span,
            "`#[informer(singular)]` contradicts `#[kube(...)]`: state `singular` in `#[kube(...)]` only",
        );
    }
    let scope = scope_of(kube.namespaced.as_ref());
    if let Some(namespaced) = &informer.namespaced
        && scope_of(Some(namespaced)) != scope
    {
        let kube_says = if scope == Scope::Namespaced {
            "namespaced"
        } else {
            "cluster-scoped"
        };
        cx.error_at(
            namespaced.span,
            format!("`#[informer(namespaced = {})]` contradicts `#[kube(...)]`, which declares the resource {kube_says}", namespaced.value),
        );
    }
    let root = kube.root.as_ref().map_or(&kind.value, |r| &r.value);
    let ident = syn::Ident::new(&informer_templates::naming::sanitize(root), kind.span);
    Some(Model {
        resource: Resource::new(
            group.value.clone(),
            version.value.clone(),
            kind.value.clone(),
            plural,
            scope,
            syn::Path::from(ident),
        ),
        options: options(informer),
        form: Form::CustomResource,
        scope_span: kube.namespaced.as_ref().map_or(kind.span, |n| n.key_span),
    })
}

/// The model of a standalone derive on `input`.
pub(crate) fn standalone(cx: &mut Ctxt, input: &DeriveInput, informer: &InformerAttrs) -> Option<Model> {
    let written = |key: &str| informer.seen.iter().any(|k| k == key);
    let missing: Vec<&str> = [
        ("group", informer.group.is_none()),
        ("version", informer.version.is_none()),
    ]
    .into_iter()
    .filter_map(|(key, absent)| (absent && !written(key)).then_some(key))
    .collect();
    if informer.group.is_none() || informer.version.is_none() {
        if missing.is_empty() {
            // Written with a bad value: already reported.
            return None;
        }
        let keys = missing
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(" and ");
        match &informer.attr {
            Some(attr) => cx.error_spanned_by(attr, format!("missing {keys}: {STANDALONE_FORM}")),
            None => cx.error_spanned_by(
                &input.ident,
                format!("missing `#[informer(...)]`: {STANDALONE_FORM}"),
            ),
        }
        return None;
    }
    let (Some(group), Some(version)) = (&informer.group, &informer.version) else {
        return None;
    };
    let kind = informer
        .kind
        .as_ref()
        .map_or_else(|| input.ident.to_string(), |k| k.value.clone());
    let plural = informer.plural.as_ref().map_or_else(
        || infer_plural(&kind, informer.singular.as_ref().map(|s| s.value.as_str())),
        |p| p.value.clone(),
    );
    Some(Model {
        resource: Resource::new(
            group.value.clone(),
            version.value.clone(),
            kind,
            plural,
            scope_of(informer.namespaced.as_ref()),
            syn::Path::from(input.ident.clone()),
        ),
        options: options(informer),
        form: Form::Standalone,
        scope_span: informer
            .namespaced
            .as_ref()
            .map_or(input.ident.span(), |n| n.key_span),
    })
}
