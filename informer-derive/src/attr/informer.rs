//! `#[informer(...)]`: strict, every key known, every value typed.

use syn::{Attribute, spanned::Spanned};

use super::{Value, did_you_mean, flag, set, string};
use crate::{
    ctxt::Ctxt,
    symbol::{CRATE, GROUP, INFORMER, INFORMER_KEYS, KIND, NAMESPACED, PLURAL, SINGULAR, VERSION},
};

/// What `#[informer(...)]` attributes say (all of them on the item, merged).
#[derive(Debug, Default)]
pub(crate) struct InformerAttrs {
    /// The first `#[informer]` attribute, for errors about the attribute as a whole.
    pub(crate) attr: Option<Attribute>,
    /// `group = "..."`.
    pub(crate) group: Option<Value<String>>,
    /// `version = "..."`.
    pub(crate) version: Option<Value<String>>,
    /// `kind = "..."`.
    pub(crate) kind: Option<Value<String>>,
    /// `plural = "..."`.
    pub(crate) plural: Option<Value<String>>,
    /// `singular = "..."`: the base of the inferred plural.
    pub(crate) singular: Option<Value<String>>,
    /// `namespaced` / `namespaced = bool`.
    pub(crate) namespaced: Option<Value<bool>>,
    /// `crate = "path"`: the runtime path.
    pub(crate) krate: Option<Value<syn::Path>>,
    /// Every key written, valid or not (a key with a bad value is not also reported missing).
    pub(crate) seen: Vec<String>,
}

impl InformerAttrs {
    /// Reads every `#[informer(...)]` in `attrs`, recording every mistake in `cx`.
    pub(crate) fn from_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = Self::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident(INFORMER)) {
            if out.attr.is_none() {
                out.attr = Some(attr.clone());
            }
            let result = attr.parse_nested_meta(|meta| {
                let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
                out.seen.push(key.clone());
                match key.as_str() {
                    GROUP => {
                        let v = string(cx, &meta, INFORMER, GROUP, true)?;
                        set(cx, &mut out.group, &meta, INFORMER, GROUP, v);
                    }
                    VERSION => {
                        let v = string(cx, &meta, INFORMER, VERSION, true)?;
                        set(cx, &mut out.version, &meta, INFORMER, VERSION, v);
                    }
                    KIND => {
                        let v = string(cx, &meta, INFORMER, KIND, true)?;
                        set(cx, &mut out.kind, &meta, INFORMER, KIND, v);
                    }
                    PLURAL => {
                        let v = string(cx, &meta, INFORMER, PLURAL, true)?;
                        set(cx, &mut out.plural, &meta, INFORMER, PLURAL, v);
                    }
                    SINGULAR => {
                        let v = string(cx, &meta, INFORMER, SINGULAR, true)?;
                        set(cx, &mut out.singular, &meta, INFORMER, SINGULAR, v);
                    }
                    NAMESPACED => {
                        let v = flag(cx, &meta, INFORMER, NAMESPACED, true)?;
                        set(cx, &mut out.namespaced, &meta, INFORMER, NAMESPACED, v);
                    }
                    CRATE => {
                        let v = match string(cx, &meta, INFORMER, CRATE, true)? {
                            super::Parsed::Ok(path, span) => match syn::parse_str::<syn::Path>(&path) {
                                Ok(parsed) => super::Parsed::Ok(parsed, span),
                                Err(_) => {
                                    cx.error_at(
                                        span,
                                        format!("`crate = \"{path}\"` is not a path, such as `::informer_runtime`"),
                                    );
                                    super::Parsed::Bad
                                }
                            },
                            super::Parsed::Bad => super::Parsed::Bad,
                        };
                        set(cx, &mut out.krate, &meta, INFORMER, CRATE, v);
                    }
                    _ => {
                        super::skip(&meta)?;
                        let shown = if key.is_empty() {
                            quote::ToTokens::to_token_stream(&meta.path).to_string()
                        } else {
                            key.clone()
                        };
                        let message = match did_you_mean(&shown, INFORMER_KEYS) {
                            Some(suggestion) => {
                                format!("unknown key `{shown}` in `#[informer(...)]`, did you mean `{suggestion}`?")
                            }
                            None => format!(
                                "unknown key `{shown}` in `#[informer(...)]`; expected one of {}",
                                INFORMER_KEYS
                                    .iter()
                                    .map(|k| format!("`{k}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        };
                        cx.error_at(meta.path.span(), message);
                    }
                }
                Ok(())
            });
            if let Err(error) = result {
                cx.syn_error(error);
            }
        }
        out
    }
}
