//! `#[kube(...)]` of kube's `CustomResource` derive: lenient about keys, because kube-derive
//! owns the attribute; only the keys that name the resource are read, the others are skipped.
//! Mistakes in the keys read are kept apart: kube-derive reports them beside the derive, the
//! generator reports them itself.

use syn::Attribute;

use super::{
    Ctxt, Diagnostic, Value,
    symbol::{GROUP, KIND, KUBE, NAMESPACED, PLURAL, ROOT, SINGULAR, VERSION},
    value::{flag, key_of, set, skip, string},
};

/// What the `#[kube(...)]` attributes of an item say about the resource.
#[derive(Debug, Clone, Default)]
pub struct KubeAttrs {
    /// Whether the item has any `#[kube(...)]`: it is a `CustomResource` spec.
    pub present: bool,
    /// `group = "..."`.
    pub group: Option<Value<String>>,
    /// `version = "..."`.
    pub version: Option<Value<String>>,
    /// `kind = "..."`.
    pub kind: Option<Value<String>>,
    /// `plural = "..."`.
    pub plural: Option<Value<String>>,
    /// `singular = "..."`.
    pub singular: Option<Value<String>>,
    /// `root = "..."`: the name of the generated type.
    pub root: Option<Value<String>>,
    /// `namespaced` / `namespaced = bool`.
    pub namespaced: Option<Value<bool>>,
    /// Every key read, valid or not (a key with a bad value is not also reported missing).
    pub seen: Vec<String>,
    /// The mistakes in the keys read (values of the wrong type, duplicates, syntax).
    pub mistakes: Vec<Diagnostic>,
}

impl KubeAttrs {
    /// Reads every `#[kube(...)]` in `attrs`; mistakes go to [`KubeAttrs::mistakes`].
    pub fn from_attrs(attrs: &[Attribute]) -> Self {
        let mut out = Self::default();
        let mut cx = Ctxt::new();
        for attr in attrs.iter().filter(|a| a.path().is_ident(KUBE)) {
            out.present = true;
            if let Err(error) = attr.parse_nested_meta(|meta| out.key(&mut cx, &meta)) {
                cx.syn_error(error);
            }
        }
        out.mistakes = cx.into_diagnostics();
        out
    }

    fn key(&mut self, cx: &mut Ctxt, meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = key_of(meta);
        let (slot, name) = match key.as_str() {
            GROUP => (&mut self.group, GROUP),
            VERSION => (&mut self.version, VERSION),
            KIND => (&mut self.kind, KIND),
            PLURAL => (&mut self.plural, PLURAL),
            SINGULAR => (&mut self.singular, SINGULAR),
            ROOT => (&mut self.root, ROOT),
            NAMESPACED => {
                self.seen.push(key);
                let value = flag(cx, meta, KUBE, NAMESPACED)?;
                set(cx, &mut self.namespaced, meta, KUBE, NAMESPACED, value);
                return Ok(());
            }
            _ => {
                skip(meta)?;
                return Ok(());
            }
        };
        self.seen.push(key);
        let value = string(cx, meta, KUBE, name)?;
        set(cx, slot, meta, KUBE, name, value);
        Ok(())
    }
}
