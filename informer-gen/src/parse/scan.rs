//! Cheap scans of Rust source text, run before the text is parsed: whole words, declarations of
//! modules in other files, and string escapes. Each scan may answer "maybe" where the text does
//! not have what is asked for (in a comment, say), but never "no" where it has it.

/// Whether `byte` can be part of an identifier: ASCII letters, digits and `_`. Other bytes
/// (non-ASCII ones included) end a word, so a word is found even next to a non-ASCII
/// identifier character, a "maybe" at worst.
fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Rust's whitespace (`Pattern_White_Space`), and the rest of Unicode's `White_Space`: more than
/// Rust skips, which makes a scan answer "maybe" more often, never "no" wrongly.
fn is_whitespace(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{200E}' | '\u{200F}')
}

/// The byte offsets where `word` occurs with no identifier byte right before or after it.
fn word_offsets<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bytes = text.as_bytes();
    text.match_indices(word).map(|(at, _)| at).filter(move |&at| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + word.len()).copied();
        !before.is_some_and(is_ident_byte) && !after.is_some_and(is_ident_byte)
    })
}

/// Whether `word` occurs in `text` as a whole word, as an identifier or keyword token does.
pub(super) fn has_word(text: &str, word: &str) -> bool {
    word_offsets(text, word).next().is_some()
}

/// Whether `text` may declare a module whose items are in another file: the keyword `mod`, an
/// identifier and `;`, with only whitespace and comments between them. `mod name { ... }`
/// declares none (its items are in `text`).
pub(super) fn may_declare_file_module(text: &str) -> bool {
    word_offsets(text, "mod").any(|at| {
        let rest = skip_trivia(&text[at + "mod".len()..]);
        identifier_end(rest).is_some_and(|rest| skip_trivia(rest).starts_with(';'))
    })
}

/// `text` after the whitespace and comments it starts with.
fn skip_trivia(mut text: &str) -> &str {
    loop {
        text = text.trim_start_matches(is_whitespace);
        if let Some(rest) = text.strip_prefix("//") {
            text = rest.find('\n').map_or("", |end| &rest[end..]);
        } else if text.starts_with("/*") {
            text = after_block_comment(text);
        } else {
            return text;
        }
    }
}

/// `text`, which starts with `/*`, after that comment (comments nest); empty when unclosed.
fn after_block_comment(text: &str) -> &str {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while at + 1 < bytes.len() {
        match (bytes[at], bytes[at + 1]) {
            (b'/', b'*') => {
                depth += 1;
                at += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                at += 2;
                if depth == 0 {
                    return &text[at..];
                }
            }
            _ => at += 1,
        }
    }
    ""
}

/// `text` after the identifier (`name` or `r#name`) it starts with; `None` if it starts with
/// none. Non-ASCII characters other than whitespace count as identifier characters.
fn identifier_end(text: &str) -> Option<&str> {
    let text = text.strip_prefix("r#").unwrap_or(text);
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || (!c.is_ascii() && !is_whitespace(c));
    let first = text.chars().next()?;
    if first.is_ascii_digit() || !is_ident(first) {
        return None;
    }
    Some(text.trim_start_matches(is_ident))
}

/// Whether `text` may spell a name in a string literal with escapes: `\x2e`, `\u{2e}`, or a
/// `\` ending a line (which drops the line break and the next line's indentation). A group or
/// version written so would not be found by its plain text.
pub(super) fn may_escape_names(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices('\\').any(|(at, _)| {
        let rest = &bytes[at + 1..];
        match rest {
            [b'x', high, low, ..] => high.is_ascii_hexdigit() && low.is_ascii_hexdigit(),
            [b'u', b'{', ..] | [b'\n' | b'\r', ..] => true,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words() {
        assert!(has_word("#[derive(kube::CustomResource)]", "CustomResource"));
        assert!(has_word("impl Resource for X", "Resource"));
        assert!(!has_word("#[derive(CustomResource)]", "Resource"));
        assert!(!has_word("an implementation", "impl"));
        assert!(has_word("r#impl", "impl"), "a raw identifier is a maybe");
        assert!(has_word("éimpl", "impl"), "a non-ASCII neighbour is a maybe");
        assert!(!has_word("", "impl"));
    }

    #[test]
    fn file_modules() {
        for declares in [
            "pub mod v1;",
            "mod v1 ;",
            "#[cfg(feature = \"x\")]\npub(crate) mod\n  x\n;",
            "mod /* a */ v1 // b\n /* c /* nested */ */ ;",
            "mod r#type;",
            "mod\u{200E}v1;",
            "mod ünï;",
            "/// see `mod x;`\nstruct S;",
        ] {
            assert!(may_declare_file_module(declares), "{declares:?}");
        }
        for inline in [
            "mod prelude {\n pub use kube::CustomResource;\n}",
            "/// the mode of x; its model;",
            "mod",
            "mod x",
            "mod 1;",
            "mod /* unclosed ;",
            "// mod",
            "remod x;",
        ] {
            assert!(!may_declare_file_module(inline), "{inline:?}");
        }
    }

    #[test]
    fn escapes() {
        assert!(may_escape_names(r#"group = "example\x2ecom""#));
        assert!(may_escape_names(r#"group = "example\u{2e}com""#));
        assert!(may_escape_names("group = \"exam\\\n    ple.com\""));
        assert!(may_escape_names("group = \"exam\\\r\n    ple.com\""));
        assert!(!may_escape_names(r#"/// from ! (\u0021) to \. or \x"#));
        assert!(!may_escape_names(
            r#"group = "example.com", doc = "a \"quote\"\n""#
        ));
        assert!(!may_escape_names("ends with \\"));
    }
}
