//! Formatting generated tokens as Rust source.

use proc_macro2::TokenStream;

use crate::Error;

/// `tokens` (a sequence of items) formatted by prettyplease.
pub fn pretty(tokens: TokenStream) -> Result<String, Error> {
    let file: syn::File = syn::parse2(tokens)?;
    Ok(prettyplease::unparse(&file))
}
