//! Collecting every mistake of an item, so they are all reported together.

use proc_macro2::{Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;

use super::Error;

/// One mistake and the tokens it is about.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// What is wrong.
    pub error: Error,
    /// The first token's span.
    start: Span,
    /// The last token's span.
    end: Span,
}

impl Diagnostic {
    /// A mistake at `span`.
    pub fn new(span: Span, error: Error) -> Self {
        Self {
            error,
            start: span,
            end: span,
        }
    }

    /// A mistake about `tokens`: it covers the first to the last of them.
    pub fn spanned_by(tokens: impl ToTokens, error: Error) -> Self {
        let mut iter = tokens.into_token_stream().into_iter();
        let start = iter.next().map_or_else(Span::call_site, |t| t.span());
        let end = iter.last().map_or(start, |t| t.span());
        Self { error, start, end }
    }

    /// Where the mistake starts (with proc-macro2's `span-locations`, its line and column).
    pub fn span(&self) -> Span {
        self.start
    }

    /// The mistake as a `syn::Error` covering its tokens, for `compile_error!`.
    pub fn to_syn_error(&self) -> syn::Error {
        let message = self.error.to_string();
        let mut first = Punct::new('#', Spacing::Alone);
        first.set_span(self.start);
        let mut last = Punct::new('#', Spacing::Alone);
        last.set_span(self.end);
        let range: TokenStream = [TokenTree::Punct(first), TokenTree::Punct(last)]
            .into_iter()
            .collect();
        syn::Error::new_spanned(range, message)
    }
}

/// The mistakes found so far in the attributes of one item.
#[derive(Debug, Default)]
pub struct Ctxt {
    diagnostics: Vec<Diagnostic>,
}

impl Ctxt {
    /// A context without mistakes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `error` at `span`.
    pub fn error_at(&mut self, span: Span, error: Error) {
        self.diagnostics.push(Diagnostic::new(span, error));
    }

    /// Records `error` about `tokens`.
    pub fn error_spanned_by(&mut self, tokens: impl ToTokens, error: Error) {
        self.diagnostics.push(Diagnostic::spanned_by(tokens, error));
    }

    /// Records a parse error from syn (each of its messages, at its span).
    pub fn syn_error(&mut self, error: syn::Error) {
        for one in error {
            self.error_at(
                one.span(),
                Error::Syntax {
                    message: one.to_string(),
                },
            );
        }
    }

    /// Records every mistake of `diagnostics`.
    pub fn extend(&mut self, diagnostics: impl IntoIterator<Item = Diagnostic>) {
        self.diagnostics.extend(diagnostics);
    }

    /// Whether no mistake was recorded.
    pub fn is_empty(&self) -> bool {
        self.diagnostics.is_empty()
    }

    /// The mistakes, in the order they were found.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics
    }

    /// `Ok` without mistakes, else every mistake combined into one `syn::Error` (for the
    /// derive: one `compile_error!` per mistake, each at its tokens).
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.diagnostics.iter().map(Diagnostic::to_syn_error);
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
