//! Reading attributes: one module per attribute source, sharing the value parsers below.
//!
//! Parsers never stop at the first mistake: each bad key or value is recorded in the
//! [`Ctxt`](crate::ctxt::Ctxt) at its own span and parsing goes on with the next key.

pub(crate) mod informer;
pub(crate) mod kube;

use proc_macro2::Span;
use syn::{Expr, ExprLit, Lit, meta::ParseNestedMeta, spanned::Spanned};

use crate::ctxt::Ctxt;

/// A value read from an attribute, with the spans of its key and of the value itself.
#[derive(Debug, Clone)]
pub(crate) struct Value<T> {
    /// The value.
    pub(crate) value: T,
    /// The span of the key (`group` in `group = "x"`).
    pub(crate) key_span: Span,
    /// The span of the value (`"x"`); the key's for a bare flag.
    pub(crate) span: Span,
}

/// What the value of a key turned out to be.
pub(crate) enum Parsed<T> {
    /// A value of the expected type.
    Ok(T, Span),
    /// Something else, already reported (or deliberately ignored).
    Bad,
}

/// Consumes whatever follows a key (`= expr`, `(...)` or nothing), returning the expression
/// after `=` if there is one.
pub(crate) fn skip(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Expr>> {
    if meta.input.peek(syn::Token![=]) {
        Ok(Some(meta.value()?.parse::<Expr>()?))
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<proc_macro2::TokenStream>()?;
        Ok(None)
    } else {
        Ok(None)
    }
}

/// The string of `key = "..."`; other forms are reported in `cx` (when `report`) as the
/// wrong type.
pub(crate) fn string(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta<'_>,
    attr: &str,
    key: &str,
    report: bool,
) -> syn::Result<Parsed<String>> {
    let expected = format!("expected `{key} = \"...\"` in `#[{attr}(...)]`");
    match skip(meta)? {
        Some(Expr::Lit(ExprLit { lit: Lit::Str(s), .. })) => Ok(Parsed::Ok(s.value(), s.span())),
        Some(other) => {
            if report {
                cx.error_spanned_by(
                    &other,
                    format!("expected a string literal for `{key}`; {expected}"),
                );
            }
            Ok(Parsed::Bad)
        }
        None => {
            if report {
                cx.error_at(meta.path.span(), expected);
            }
            Ok(Parsed::Bad)
        }
    }
}

/// The value of a flag: `key` alone is `true`, `key = true` / `key = false` as written.
pub(crate) fn flag(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta<'_>,
    attr: &str,
    key: &str,
    report: bool,
) -> syn::Result<Parsed<bool>> {
    if !meta.input.peek(syn::Token![=]) && !meta.input.peek(syn::token::Paren) {
        return Ok(Parsed::Ok(true, meta.path.span()));
    }
    let expected = format!("expected `{key}` or `{key} = true|false` in `#[{attr}(...)]`");
    match skip(meta)? {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        })) => Ok(Parsed::Ok(b.value, b.span())),
        Some(other) => {
            if report {
                cx.error_spanned_by(&other, format!("expected a boolean for `{key}`; {expected}"));
            }
            Ok(Parsed::Bad)
        }
        None => {
            if report {
                cx.error_at(meta.path.span(), expected);
            }
            Ok(Parsed::Bad)
        }
    }
}

/// Stores `parsed` in `slot`, reporting a second occurrence of `key` in `attr`.
pub(crate) fn set<T>(
    cx: &mut Ctxt,
    slot: &mut Option<Value<T>>,
    meta: &ParseNestedMeta<'_>,
    attr: &str,
    key: &str,
    parsed: Parsed<T>,
) {
    let key_span = meta.path.span();
    if slot.is_some() {
        cx.error_at(key_span, format!("duplicate `{key}` in `#[{attr}(...)]`"));
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

/// The known key closest to `unknown`, if it is close enough to be a likely typo.
pub(crate) fn did_you_mean(unknown: &str, known: &[&'static str]) -> Option<&'static str> {
    known
        .iter()
        .map(|candidate| (edit_distance(unknown, candidate), *candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len().max(unknown.len()) / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// The Damerau–Levenshtein distance (with adjacent transpositions) between `a` and `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    if let Some(first) = rows.first_mut() {
        for (j, cell) in first.iter_mut().enumerate() {
            *cell = j;
        }
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;
    use crate::symbol::INFORMER_KEYS;

    #[test]
    fn typos_get_suggestions() {
        assert_eq!(did_you_mean("namepsaced", INFORMER_KEYS), Some("namespaced"));
        assert_eq!(did_you_mean("gruop", INFORMER_KEYS), Some("group"));
        assert_eq!(did_you_mean("verison", INFORMER_KEYS), Some("version"));
        assert_eq!(did_you_mean("plurals", INFORMER_KEYS), Some("plural"));
        assert_eq!(did_you_mean("colour", INFORMER_KEYS), None);
    }
}
