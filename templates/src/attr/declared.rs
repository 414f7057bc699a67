//! From attributes to the resource an item declares, in either form: beside `CustomResource`
//! (`#[kube(...)]`, with `#[informer(...)]` keys that must agree with it) or standalone
//! (`#[informer(...)]` alone).

use proc_macro2::{Ident, Span};

use super::{
    Ctxt, Error, InformerAttrs, KubeAttrs, Value,
    symbol::{GROUP, INFORMER, KIND, KUBE, PLURAL, ROOT, SINGULAR, VERSION},
    validate,
};
use crate::{Scope, plural::infer_plural};

/// Which form an item declares its resource in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Beside `#[derive(CustomResource)]`: the resource is the root type kube-derive generates.
    CustomResource,
    /// On a type implementing `kube::Resource` itself: the resource is the item.
    Standalone,
}

/// Who reports the mistakes of `#[kube(...)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KubeMistakes {
    /// The caller: they are recorded in the context like any other (the generator, which
    /// reads sources kube-derive may never see).
    Report,
    /// kube-derive, which runs beside the caller: the declaration is dropped without a word,
    /// so the user sees kube-derive's message only once (the derive).
    LeaveToKubeDerive,
}

/// The resource an item declares.
#[derive(Debug, Clone)]
pub struct Declared {
    /// The form.
    pub form: Form,
    /// The API group.
    pub group: String,
    /// The API version.
    pub version: String,
    /// The kind.
    pub kind: String,
    /// The plural, given or inferred as kube-derive infers it.
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// The name of the Rust type that is the resource, in the item's module: kube-derive's
    /// root type (`root`, else `kind`), or the item itself.
    pub type_name: Ident,
    /// `#[informer(crate = "...")]`: the path of the runtime crate, if given.
    pub runtime: Option<syn::Path>,
    /// Where the scope is declared (`namespaced`, or the type name): type errors about the
    /// scope point there.
    pub scope_span: Span,
}

/// The form of an item with `kube` attributes that derives `CustomResource` or not (the
/// derive cannot see sibling derives and goes by `#[kube(...)]` alone).
pub fn form_of(kube: &KubeAttrs, derives_custom_resource: bool) -> Form {
    if derives_custom_resource || kube.present {
        Form::CustomResource
    } else {
        Form::Standalone
    }
}

fn scope_of(namespaced: Option<&Value<bool>>) -> Scope {
    if namespaced.is_some_and(|v| v.value) {
        Scope::Namespaced
    } else {
        Scope::Cluster
    }
}

fn listed(keys: &[&str], separator: &str) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(separator)
}

/// Records `informer`'s `key` when it says something else than kube's `expected`.
fn agree(cx: &mut Ctxt, key: &'static str, informer: Option<&Value<String>>, expected: &str, inferred: bool) {
    if let Some(v) = informer
        && v.value != expected
    {
        let kube = if inferred {
            format!("the {key} kube-derive infers from `#[kube(...)]`, `{expected}`")
        } else {
            format!("`#[kube({key} = \"{expected}\")]`")
        };
        cx.error_at(
            v.span,
            Error::Contradicts {
                key,
                value: v.value.clone(),
                kube,
            },
        );
    }
}

/// Records the group, version, plural and singular of `attr` that kube-apiserver would refuse
/// (see [`validate`]); an empty group is the core group, allowed when `core_allowed`.
fn check_names(
    cx: &mut Ctxt,
    attr: &'static str,
    group: Option<&Value<String>>,
    version: Option<&Value<String>>,
    names: [Option<&Value<String>>; 2],
    core_allowed: bool,
) {
    if let Some(group) = group {
        if group.value.is_empty() {
            if !core_allowed {
                cx.error_at(group.span, Error::CoreGroup);
            }
        } else if let Err(reason) = validate::dns1123_subdomain(&group.value) {
            cx.error_at(
                group.span,
                Error::InvalidGroup {
                    attr,
                    value: group.value.clone(),
                    reason,
                },
            );
        }
    }
    if let Some(version) = version
        && let Err(reason) = validate::dns1035_label(&version.value)
    {
        cx.error_at(
            version.span,
            Error::InvalidVersion {
                attr,
                value: version.value.clone(),
                reason,
            },
        );
    }
    for (key, name) in [PLURAL, SINGULAR].into_iter().zip(names) {
        if let Some(name) = name
            && let Err(reason) = validate::dns1123_label(&name.value)
        {
            cx.error_at(
                name.span,
                Error::InvalidName {
                    attr,
                    key,
                    value: name.value.clone(),
                    reason,
                },
            );
        }
    }
}

/// Records `kind` of `attr` when it is not a kind (see [`validate::kind`]).
fn check_kind(cx: &mut Ctxt, attr: &'static str, kind: &Value<String>) {
    if let Err(reason) = validate::kind(&kind.value) {
        cx.error_at(
            kind.span,
            Error::InvalidKind {
                attr,
                value: kind.value.clone(),
                reason,
            },
        );
    }
}

/// The resource declared beside `CustomResource` by the item named `ident`: `#[kube(...)]`
/// names it; `#[informer(...)]` may only repeat what `#[kube(...)]` says (and give `crate`).
/// `None` when `#[kube(...)]` is incomplete or wrong: recorded in `cx` with
/// [`KubeMistakes::Report`], left to kube-derive otherwise.
pub fn custom_resource(
    cx: &mut Ctxt,
    ident: &Ident,
    kube: &KubeAttrs,
    informer: &InformerAttrs,
    mistakes: KubeMistakes,
) -> Option<Declared> {
    let mut kube_cx = Ctxt::new();
    kube_cx.extend(kube.mistakes.iter().cloned());
    let missing: Vec<&str> = [
        (GROUP, kube.group.is_none()),
        (VERSION, kube.version.is_none()),
        (KIND, kube.kind.is_none()),
    ]
    .into_iter()
    .filter_map(|(key, absent)| (absent && !kube.seen.iter().any(|k| k == key)).then_some(key))
    .collect();
    if !missing.is_empty() {
        kube_cx.error_at(
            ident.span(),
            Error::MissingKubeKeys {
                keys: listed(&missing, ", "),
            },
        );
    }
    // Names kube-apiserver would refuse: kube-derive does not check them, so they are
    // reported whoever reports the other mistakes.
    check_names(
        cx,
        KUBE,
        kube.group.as_ref(),
        kube.version.as_ref(),
        [kube.plural.as_ref(), kube.singular.as_ref()],
        false,
    );
    // Without `root`, a `kind` that is not an identifier is reported as not a type name.
    if let Some(kind) = &kube.kind
        && (kube.root.is_some() || syn::parse_str::<Ident>(&kind.value).is_ok())
    {
        check_kind(cx, KUBE, kind);
    }
    let type_name = kube
        .root
        .as_ref()
        .map(|r| (ROOT, r))
        .or_else(|| kube.kind.as_ref().map(|k| (KIND, k)))
        .and_then(|(key, name)| match syn::parse_str::<Ident>(&name.value) {
            Ok(mut type_name) => {
                type_name.set_span(name.span);
                Some(type_name)
            }
            Err(_) => {
                kube_cx.error_at(
                    name.span,
                    Error::NotATypeName {
                        attr: KUBE,
                        key,
                        value: name.value.clone(),
                    },
                );
                None
            }
        });
    let (Some(group), Some(version), Some(kind), Some(type_name), true) = (
        &kube.group,
        &kube.version,
        &kube.kind,
        type_name,
        kube_cx.is_empty(),
    ) else {
        if mistakes == KubeMistakes::Report {
            cx.extend(kube_cx.into_diagnostics());
        }
        return None;
    };
    let plural = kube.plural.as_ref().map_or_else(
        || infer_plural(&kind.value, kube.singular.as_ref().map(|s| s.value.as_str())),
        |p| p.value.clone(),
    );
    agree(cx, GROUP, informer.group.as_ref(), &group.value, false);
    agree(cx, VERSION, informer.version.as_ref(), &version.value, false);
    agree(cx, KIND, informer.kind.as_ref(), &kind.value, false);
    agree(
        cx,
        PLURAL,
        informer.plural.as_ref(),
        &plural,
        kube.plural.is_none(),
    );
    if let Some(singular) = &informer.singular
        && kube.singular.as_ref().map(|s| &s.value) != Some(&singular.value)
    {
        cx.error_at(singular.span, Error::SingularContradicts);
    }
    let scope = scope_of(kube.namespaced.as_ref());
    if let Some(namespaced) = &informer.namespaced
        && scope_of(Some(namespaced)) != scope
    {
        cx.error_at(
            namespaced.span,
            Error::ScopeContradicts {
                value: namespaced.value,
                kube: match scope {
                    Scope::Namespaced => "namespaced",
                    Scope::Cluster => "cluster-scoped",
                },
            },
        );
    }
    Some(Declared {
        form: Form::CustomResource,
        group: group.value.clone(),
        version: version.value.clone(),
        kind: kind.value.clone(),
        plural,
        scope,
        type_name,
        runtime: informer.krate.as_ref().map(|k| k.value.clone()),
        scope_span: kube.namespaced.as_ref().map_or(kind.span, |n| n.key_span),
    })
}

/// The resource a standalone `#[derive(Informer)]` on the item named `ident` declares:
/// `group` and `version` are required; `kind` defaults to the item's name, `plural` to the
/// one inferred from `kind` (or `singular`). `None` after recording the missing keys in `cx`.
pub fn standalone(cx: &mut Ctxt, ident: &Ident, informer: &InformerAttrs) -> Option<Declared> {
    // The type implements `kube::Resource` itself and may be a built-in of the core group.
    check_names(
        cx,
        INFORMER,
        informer.group.as_ref(),
        informer.version.as_ref(),
        [informer.plural.as_ref(), informer.singular.as_ref()],
        true,
    );
    if let Some(kind) = &informer.kind {
        check_kind(cx, INFORMER, kind);
    }
    let (Some(group), Some(version)) = (&informer.group, &informer.version) else {
        let missing: Vec<&str> = [
            (GROUP, informer.group.is_none()),
            (VERSION, informer.version.is_none()),
        ]
        .into_iter()
        .filter_map(|(key, absent)| (absent && !informer.wrote(key)).then_some(key))
        .collect();
        // A key written with a bad value is already recorded.
        if !missing.is_empty() {
            match &informer.attr {
                Some(attr) => cx.error_spanned_by(
                    attr,
                    Error::MissingInformerKeys {
                        keys: listed(&missing, " and "),
                    },
                ),
                None => cx.error_spanned_by(ident, Error::MissingInformer),
            }
        }
        return None;
    };
    let kind = informer
        .kind
        .as_ref()
        .map_or_else(|| ident.to_string(), |k| k.value.clone());
    let plural = informer.plural.as_ref().map_or_else(
        || infer_plural(&kind, informer.singular.as_ref().map(|s| s.value.as_str())),
        |p| p.value.clone(),
    );
    Some(Declared {
        form: Form::Standalone,
        group: group.value.clone(),
        version: version.value.clone(),
        kind,
        plural,
        scope: scope_of(informer.namespaced.as_ref()),
        type_name: ident.clone(),
        runtime: informer.krate.as_ref().map(|k| k.value.clone()),
        scope_span: informer.namespaced.as_ref().map_or(ident.span(), |n| n.key_span),
    })
}
