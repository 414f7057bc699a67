//! `#[kube(...)]` of kube's `CustomResource` derive: lenient, because kube-derive owns the
//! attribute and reports its own mistakes; only the keys that name the resource are read.

use syn::Attribute;

use super::{Parsed, Value, flag, set, skip, string};
use crate::{
    ctxt::Ctxt,
    symbol::{GROUP, KIND, KUBE, NAMESPACED, PLURAL, ROOT, SINGULAR, VERSION},
};

/// What `#[kube(...)]` attributes say about the resource.
#[derive(Debug, Default)]
pub(crate) struct KubeAttrs {
    /// Whether the item has any `#[kube(...)]`: it is a `CustomResource` spec.
    pub(crate) present: bool,
    /// Whether kube-derive will reject the attributes (this derive then stays silent and emits
    /// nothing, leaving the report to kube-derive).
    pub(crate) malformed: bool,
    /// `group = "..."`.
    pub(crate) group: Option<Value<String>>,
    /// `version = "..."`.
    pub(crate) version: Option<Value<String>>,
    /// `kind = "..."`.
    pub(crate) kind: Option<Value<String>>,
    /// `plural = "..."`.
    pub(crate) plural: Option<Value<String>>,
    /// `singular = "..."`.
    pub(crate) singular: Option<Value<String>>,
    /// `root = "..."`: the name of the generated type.
    pub(crate) root: Option<Value<String>>,
    /// `namespaced`.
    pub(crate) namespaced: Option<Value<bool>>,
}

impl KubeAttrs {
    /// Reads every `#[kube(...)]` in `attrs`. Mistakes are not reported (kube-derive reports
    /// them) but mark the attributes malformed.
    pub(crate) fn from_attrs(attrs: &[Attribute]) -> Self {
        let mut out = Self::default();
        // kube-derive's errors are its own: collect ours here only to notice them.
        let mut quiet = Ctxt::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident(KUBE)) {
            out.present = true;
            let result = attr.parse_nested_meta(|meta| {
                let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
                let cx = &mut quiet;
                let slot = match key.as_str() {
                    GROUP => &mut out.group,
                    VERSION => &mut out.version,
                    KIND => &mut out.kind,
                    PLURAL => &mut out.plural,
                    SINGULAR => &mut out.singular,
                    ROOT => &mut out.root,
                    NAMESPACED => {
                        let v = flag(cx, &meta, KUBE, NAMESPACED, true)?;
                        set(cx, &mut out.namespaced, &meta, KUBE, NAMESPACED, v);
                        return Ok(());
                    }
                    _ => {
                        skip(&meta)?;
                        return Ok(());
                    }
                };
                let v: Parsed<String> = string(cx, &meta, KUBE, &key, true)?;
                set(cx, slot, &meta, KUBE, &key, v);
                Ok(())
            });
            if result.is_err() {
                out.malformed = true;
            }
        }
        if !quiet.is_ok() {
            out.malformed = true;
        }
        out
    }
}
