//! Reading the value of one key: strings, flags, and keys to skip.

use proc_macro2::{Span, TokenStream};
use syn::{Expr, ExprLit, Lit, meta::ParseNestedMeta, spanned::Spanned};

use super::{Ctxt, Error};

/// A value read from an attribute, with the spans of its key and of the value itself.
#[derive(Debug, Clone)]
pub struct Value<T> {
    /// The value.
    pub value: T,
    /// The span of the key (`group` in `group = "x"`).
    pub key_span: Span,
    /// The span of the value (`"x"`); the key's for a bare flag.
    pub span: Span,
}

/// What the value of a key turned out to be.
pub(crate) enum Parsed<T> {
    /// A value of the expected type, and its span.
    Ok(T, Span),
    /// Something else, already reported.
    Bad,
}

/// Consumes whatever follows a key (`= expr`, `(...)` or nothing), returning the expression
/// after `=` if there is one and whether a parenthesized list followed.
pub(crate) fn skip(meta: &ParseNestedMeta<'_>) -> syn::Result<(Option<Expr>, bool)> {
    if meta.input.peek(syn::Token![=]) {
        Ok((Some(meta.value()?.parse::<Expr>()?), false))
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
        Ok((None, true))
    } else {
        Ok((None, false))
    }
}

/// The string of `key = "..."`; other forms are recorded in `cx` as the wrong type.
pub(crate) fn string(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta<'_>,
    attr: &'static str,
    key: &'static str,
) -> syn::Result<Parsed<String>> {
    match skip(meta)? {
        (Some(Expr::Lit(ExprLit { lit: Lit::Str(s), .. })), _) => Ok(Parsed::Ok(s.value(), s.span())),
        (Some(other), _) => {
            cx.error_spanned_by(&other, Error::NotAString { attr, key });
            Ok(Parsed::Bad)
        }
        (None, _) => {
            cx.error_at(meta.path.span(), Error::MissingString { attr, key });
            Ok(Parsed::Bad)
        }
    }
}

/// The value of a flag: `key` alone is `true`, `key = true` / `key = false` as written.
pub(crate) fn flag(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta<'_>,
    attr: &'static str,
    key: &'static str,
) -> syn::Result<Parsed<bool>> {
    match skip(meta)? {
        (
            Some(Expr::Lit(ExprLit {
                lit: Lit::Bool(b), ..
            })),
            _,
        ) => Ok(Parsed::Ok(b.value, b.span())),
        (Some(other), _) => {
            cx.error_spanned_by(&other, Error::NotABool { attr, key });
            Ok(Parsed::Bad)
        }
        (None, true) => {
            cx.error_at(meta.path.span(), Error::FlagForm { attr, key });
            Ok(Parsed::Bad)
        }
        (None, false) => Ok(Parsed::Ok(true, meta.path.span())),
    }
}

/// Stores `parsed` in `slot`, recording a second occurrence of `key` in `attr` as a duplicate.
pub(crate) fn set<T>(
    cx: &mut Ctxt,
    slot: &mut Option<Value<T>>,
    meta: &ParseNestedMeta<'_>,
    attr: &'static str,
    key: &'static str,
    parsed: Parsed<T>,
) {
    let key_span = meta.path.span();
    if slot.is_some() {
        cx.error_at(key_span, Error::Duplicate { attr, key });
        return;
    }
    if let Parsed::Ok(value, span) = parsed {
        *slot = Some(Value {
            value,
            key_span,
            span,
        });
    }
}

/// The key of `meta` as written: its identifier, or the whole path (`a::b`) when it is not one.
pub(crate) fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    meta.path.get_ident().map_or_else(
        || {
            quote::ToTokens::to_token_stream(&meta.path)
                .to_string()
                .replace(' ', "")
        },
        ToString::to_string,
    )
}
