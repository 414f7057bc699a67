//! What a piece of syntax names: the leaves of `use` trees, the paths written in code (found
//! in the tokens, so the bodies of macro calls count too), the names items define, and which
//! items only exist in tests.

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::{
    Attribute, ForeignItem, Ident, Item, ItemUse, Meta, Token, UseTree, ext::IdentExt, punctuated::Punctuated,
};

/// What a name brought in by a `use` item stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Binding {
    /// `use a::b;` binds `b`; `use a::b as c;` binds `c`.
    Name(String),
    /// `use a::*;` brings in every name of `a`.
    Glob,
    /// `use a::Trait as _;` binds no name.
    Hidden,
}

/// One path a `use` item imports: `use a::{b, c::*};` has two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UseLeaf {
    /// The path as written; for a glob, the path of what is globbed.
    pub(super) path: Vec<String>,
    /// The name it binds.
    pub(super) binding: Binding,
    /// Whether the item hands the name on: any visibility but the inherited one.
    pub(super) reexport: bool,
}

/// The paths a stretch of code names, and the `use` items inside it (in function bodies).
#[derive(Debug, Default)]
pub(super) struct Names {
    /// Paths outside `use` items, each as its segments: `crate::cache::Store` is three.
    pub(super) paths: Vec<Vec<String>>,
    /// The leaves of the `use` items.
    pub(super) uses: Vec<UseLeaf>,
}

/// An identifier without its `r#`.
pub(super) fn name(ident: &Ident) -> String {
    ident.unraw().to_string()
}

/// Whether one of the attributes is `#[cfg(test)]` (or `#[cfg(all(test, ..))]`).
pub(super) fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| is_test_cfg(&attr.meta))
}

/// Whether an attribute's content is `cfg(test)` or `cfg(all(.., test, ..))`.
fn is_test_cfg(meta: &Meta) -> bool {
    let Meta::List(list) = meta else { return false };
    list.path.is_ident("cfg")
        && list
            .parse_args::<Meta>()
            .is_ok_and(|predicate| is_test_predicate(&predicate))
}

fn is_test_predicate(predicate: &Meta) -> bool {
    match predicate {
        Meta::Path(path) => path.is_ident("test"),
        Meta::List(list) if list.path.is_ident("all") => list
            .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            .is_ok_and(|all| all.iter().any(is_test_predicate)),
        _ => false,
    }
}

/// The attributes of an item.
pub(super) fn attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(item) => &item.attrs,
        Item::Enum(item) => &item.attrs,
        Item::ExternCrate(item) => &item.attrs,
        Item::Fn(item) => &item.attrs,
        Item::ForeignMod(item) => &item.attrs,
        Item::Impl(item) => &item.attrs,
        Item::Macro(item) => &item.attrs,
        Item::Mod(item) => &item.attrs,
        Item::Static(item) => &item.attrs,
        Item::Struct(item) => &item.attrs,
        Item::Trait(item) => &item.attrs,
        Item::TraitAlias(item) => &item.attrs,
        Item::Type(item) => &item.attrs,
        Item::Union(item) => &item.attrs,
        Item::Use(item) => &item.attrs,
        _ => &[],
    }
}

/// The names an item defines in its module (none for `impl` blocks, `use` and `mod` items).
pub(super) fn defined_names(item: &Item) -> Vec<String> {
    let ident = match item {
        Item::Const(item) => &item.ident,
        Item::Enum(item) => &item.ident,
        Item::Fn(item) => &item.sig.ident,
        Item::Static(item) => &item.ident,
        Item::Struct(item) => &item.ident,
        Item::Trait(item) => &item.ident,
        Item::TraitAlias(item) => &item.ident,
        Item::Type(item) => &item.ident,
        Item::Union(item) => &item.ident,
        Item::Macro(item) => match &item.ident {
            Some(ident) => ident,
            None => return Vec::new(),
        },
        Item::ForeignMod(item) => return item.items.iter().filter_map(foreign_name).collect(),
        _ => return Vec::new(),
    };
    if ident == "_" {
        Vec::new()
    } else {
        vec![name(ident)]
    }
}

fn foreign_name(item: &ForeignItem) -> Option<String> {
    match item {
        ForeignItem::Fn(item) if !is_test(&item.attrs) => Some(name(&item.sig.ident)),
        ForeignItem::Static(item) if !is_test(&item.attrs) => Some(name(&item.ident)),
        ForeignItem::Type(item) if !is_test(&item.attrs) => Some(name(&item.ident)),
        _ => None,
    }
}

/// The leaves of a `use` item; none for `use ::krate::..` (a path outside the crate).
pub(super) fn use_item_leaves(item: &ItemUse) -> Vec<UseLeaf> {
    let mut leaves = Vec::new();
    if item.leading_colon.is_none() {
        let reexport = !matches!(item.vis, syn::Visibility::Inherited);
        use_leaves(&item.tree, &mut Vec::new(), reexport, &mut leaves);
    }
    leaves
}

/// Adds the leaves of `tree`, under the path `prefix`, to `leaves`.
fn use_leaves(tree: &UseTree, prefix: &mut Vec<String>, reexport: bool, leaves: &mut Vec<UseLeaf>) {
    let mut leaf = |path: Vec<String>, binding| {
        leaves.push(UseLeaf {
            path,
            binding,
            reexport,
        })
    };
    match tree {
        UseTree::Path(path) => {
            prefix.push(name(&path.ident));
            use_leaves(&path.tree, prefix, reexport, leaves);
            prefix.pop();
        }
        // `use a::{self}` imports `a` itself.
        UseTree::Name(item) if item.ident == "self" => leaf(
            prefix.clone(),
            prefix.last().cloned().map_or(Binding::Hidden, Binding::Name),
        ),
        UseTree::Name(item) => leaf(joined(prefix, &item.ident), Binding::Name(name(&item.ident))),
        UseTree::Rename(item) => {
            let path = if item.ident == "self" {
                prefix.clone()
            } else {
                joined(prefix, &item.ident)
            };
            let binding = if item.rename == "_" {
                Binding::Hidden
            } else {
                Binding::Name(name(&item.rename))
            };
            leaf(path, binding);
        }
        UseTree::Glob(_) => leaf(prefix.clone(), Binding::Glob),
        UseTree::Group(group) => {
            for tree in &group.items {
                use_leaves(tree, prefix, reexport, leaves);
            }
        }
    }
}

fn joined(prefix: &[String], ident: &Ident) -> Vec<String> {
    let mut path = prefix.to_vec();
    path.push(name(ident));
    path
}

/// Adds to `names` every path written in `tokens` and the leaves of every `use` item among
/// them. Attributes are skipped, and so is whatever follows a `#[cfg(test)]` up to the end of
/// the item, statement, field or arm it marks.
pub(super) fn scan(tokens: TokenStream, names: &mut Names) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut at = 0;
    while at < tokens.len() {
        at = match &tokens[at] {
            TokenTree::Group(group) => {
                scan(group.stream(), names);
                at + 1
            }
            TokenTree::Punct(punct) if punct.as_char() == '#' => skip_attribute(&tokens, at),
            TokenTree::Ident(ident) if ident == "use" => scan_use(&tokens, at, names),
            TokenTree::Ident(_) => scan_path(&tokens, at, names),
            TokenTree::Punct(_) | TokenTree::Literal(_) => at + 1,
        };
    }
}

fn is_punct(token: Option<&TokenTree>, ch: char) -> bool {
    matches!(token, Some(TokenTree::Punct(punct)) if punct.as_char() == ch)
}

/// Where the code after the attribute starting at `at` (`#` or `#!`, then `[..]`) goes on;
/// past the marked item too when the attribute is `#[cfg(test)]`.
fn skip_attribute(tokens: &[TokenTree], at: usize) -> usize {
    let bracket = if is_punct(tokens.get(at + 1), '!') {
        at + 2
    } else {
        at + 1
    };
    let Some(TokenTree::Group(group)) = tokens.get(bracket) else {
        return at + 1;
    };
    if group.delimiter() != proc_macro2::Delimiter::Bracket {
        return at + 1;
    }
    let after = bracket + 1;
    match syn::parse2::<Meta>(group.stream()) {
        Ok(meta) if is_test_cfg(&meta) => skip_marked(tokens, after),
        _ => after,
    }
}

/// Where the item, statement, field or arm starting at `at` ends: after its first `;`, its
/// first `{..}`, or before its first `,` outside angle brackets.
fn skip_marked(tokens: &[TokenTree], mut at: usize) -> usize {
    let mut angles = 0usize;
    while let Some(token) = tokens.get(at) {
        match token {
            TokenTree::Group(group) if group.delimiter() == proc_macro2::Delimiter::Brace => return at + 1,
            TokenTree::Punct(punct) => match punct.as_char() {
                ';' => return at + 1,
                ',' if angles == 0 => return at,
                '<' => angles += 1,
                // not the `>` of `->` or `=>`
                '>' if !is_arrow(tokens, at) => angles = angles.saturating_sub(1),
                _ => {}
            },
            _ => {}
        }
        at += 1;
    }
    at
}

fn is_arrow(tokens: &[TokenTree], at: usize) -> bool {
    let before = at.checked_sub(1).and_then(|before| tokens.get(before));
    matches!(before, Some(TokenTree::Punct(punct))
        if matches!(punct.as_char(), '-' | '=') && punct.spacing() == Spacing::Joint)
}

/// Adds the leaves of the `use` item whose `use` is at `at`; where scanning goes on. A `use`
/// that does not parse (`use $crate::..` in a macro) is scanned as paths.
fn scan_use(tokens: &[TokenTree], at: usize, names: &mut Names) -> usize {
    let end = (at + 1..tokens.len()).find(|&end| is_punct(tokens.get(end), ';'));
    let Some(end) = end else { return at + 1 };
    let tree: TokenStream = tokens[at + 1..end].iter().cloned().collect();
    match syn::parse2::<UseTree>(tree) {
        Ok(tree) => {
            use_leaves(&tree, &mut Vec::new(), false, &mut names.uses);
            end + 1
        }
        Err(_) => at + 1,
    }
}

/// Adds the path that starts with the identifier at `at` (`a::b::c`); where scanning goes on.
/// Not a path: a field or method after `.`, a lifetime, a macro variable (`$x`, but `$crate`
/// is `crate`), and `::a::b` names another crate.
fn scan_path(tokens: &[TokenTree], at: usize, names: &mut Names) -> usize {
    let before = |back: usize| at.checked_sub(back).and_then(|before| tokens.get(before));
    let Some(TokenTree::Ident(first)) = tokens.get(at) else {
        return at + 1;
    };
    let skip = is_punct(before(1), '.')
        || is_punct(before(1), '\'')
        || (is_punct(before(1), '$') && first != "crate")
        || (is_punct(before(1), ':') && is_punct(before(2), ':'));
    let mut path = vec![name(first)];
    let mut next = at + 1;
    while let (Some(TokenTree::Punct(colon)), true, Some(TokenTree::Ident(segment))) = (
        tokens.get(next),
        is_punct(tokens.get(next + 1), ':'),
        tokens.get(next + 2),
    ) {
        if colon.as_char() != ':' || colon.spacing() != Spacing::Joint {
            break;
        }
        path.push(name(segment));
        next += 3;
    }
    if !skip {
        names.paths.push(path);
    }
    next
}
