//! `#[informer(...)]`: strict. Every key is known, every value typed, no key given twice; every
//! mistake is recorded and parsing goes on with the next key.

use syn::{Attribute, spanned::Spanned};

use super::{
    Ctxt, Error, Value,
    suggest::did_you_mean,
    symbol::{CRATE, GROUP, INFORMER, INFORMER_KEYS, KIND, NAMESPACED, PLURAL, SINGULAR, VERSION},
    value::{Parsed, flag, key_of, set, skip, string},
};

/// What the `#[informer(...)]` attributes of an item say (all of them, merged).
#[derive(Debug, Clone, Default)]
pub struct InformerAttrs {
    /// The first `#[informer(...)]`, for mistakes about the attribute as a whole.
    pub attr: Option<Attribute>,
    /// `group = "..."`.
    pub group: Option<Value<String>>,
    /// `version = "..."`.
    pub version: Option<Value<String>>,
    /// `kind = "..."`.
    pub kind: Option<Value<String>>,
    /// `plural = "..."`.
    pub plural: Option<Value<String>>,
    /// `singular = "..."`: the base of the inferred plural.
    pub singular: Option<Value<String>>,
    /// `namespaced` / `namespaced = bool`.
    pub namespaced: Option<Value<bool>>,
    /// `crate = "path"`: the path of the runtime crate.
    pub krate: Option<Value<syn::Path>>,
    /// Every key written, valid or not (a key with a bad value is not also reported missing).
    pub seen: Vec<String>,
}

impl InformerAttrs {
    /// Reads every `#[informer(...)]` in `attrs`, recording every mistake in `cx`.
    pub fn from_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = Self::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident(INFORMER)) {
            if out.attr.is_none() {
                out.attr = Some(attr.clone());
            }
            if let Err(error) = attr.parse_nested_meta(|meta| out.key(cx, &meta)) {
                cx.syn_error(error);
            }
        }
        out
    }

    fn key(&mut self, cx: &mut Ctxt, meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = key_of(meta);
        self.seen.push(key.clone());
        let (slot, name) = match key.as_str() {
            GROUP => (&mut self.group, GROUP),
            VERSION => (&mut self.version, VERSION),
            KIND => (&mut self.kind, KIND),
            PLURAL => (&mut self.plural, PLURAL),
            SINGULAR => (&mut self.singular, SINGULAR),
            NAMESPACED => {
                let value = flag(cx, meta, INFORMER, NAMESPACED)?;
                set(cx, &mut self.namespaced, meta, INFORMER, NAMESPACED, value);
                return Ok(());
            }
            CRATE => {
                let value = match string(cx, meta, INFORMER, CRATE)? {
                    Parsed::Ok(path, span) => match syn::parse_str::<syn::Path>(&path) {
                        Ok(parsed) => Parsed::Ok(parsed, span),
                        Err(_) => {
                            cx.error_at(
                                span,
                                Error::NotAPath {
                                    key: CRATE,
                                    value: path,
                                },
                            );
                            Parsed::Bad
                        }
                    },
                    Parsed::Bad => Parsed::Bad,
                };
                set(cx, &mut self.krate, meta, INFORMER, CRATE, value);
                return Ok(());
            }
            _ => {
                skip(meta)?;
                cx.error_at(
                    meta.path.span(),
                    Error::UnknownKey {
                        attr: INFORMER,
                        suggestion: did_you_mean(&key, INFORMER_KEYS),
                        key,
                        expected: INFORMER_KEYS,
                    },
                );
                return Ok(());
            }
        };
        let value = string(cx, meta, INFORMER, name)?;
        set(cx, slot, meta, INFORMER, name, value);
        Ok(())
    }

    /// Whether `key` was written, whatever its value.
    pub fn wrote(&self, key: &str) -> bool {
        self.seen.iter().any(|k| k == key)
    }
}
