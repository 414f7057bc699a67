//! Selectors written as text: label selectors (`app=web,tier!=db`), parsed into kube's
//! [`Selector`] with kube-apiserver's grammar, for listers and for anything else that takes a
//! `Selector`; and field selectors (`metadata.name=web,status.phase!=Failed`), parsed into a
//! [`FieldSelector`] ([`parse_field_selector`]).
//!
//! kube-core matches selectors ([`Selector`], [`Expression`], [`SelectorExt`]) and builds them
//! from pairs and expressions, but has no parser for the string form that `kubectl -l`, URLs
//! and configuration files use. [`parse_label_selector`] reads it: comma-separated
//! requirements `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k` and `!k`, keys and
//! values checked as kube-apiserver checks them (the numeric `>` and `<` are not supported).
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use informer_apimachinery::selector::parse_label_selector;
//! use kube_core::SelectorExt;
//!
//! let labels = BTreeMap::from([("app".to_owned(), "web".to_owned()), ("tier".to_owned(), "fe".to_owned())]);
//! assert!(parse_label_selector("app=web,tier!=db")?.matches(&labels));
//! assert!(!parse_label_selector("app in (api, db)")?.matches(&labels));
//! assert!(parse_label_selector("app=").is_ok()); // an empty value is a value
//! assert!(parse_label_selector("app==web,").is_err()); // a trailing ','
//! # Ok::<(), informer_apimachinery::selector::Error>(())
//! ```
//!
//! [`SelectorExt`]: kube_core::SelectorExt

use std::{collections::BTreeSet, fmt};

use kube_core::{Expression, Selector};

mod field;

pub use field::{FieldOperator, FieldRequirement, FieldSelector, parse_field_selector};

/// A selector that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed to parse {kind} selector {selector:?}: {reason}")]
pub struct Error {
    /// Whether it is a label or a field selector.
    pub kind: SelectorKind,
    /// The selector as given.
    pub selector: String,
    /// What is wrong with it.
    pub reason: String,
}

/// What a selector selects by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SelectorKind {
    /// Labels (`labelSelector`).
    Label,
    /// Fields (`fieldSelector`).
    Field,
}

impl fmt::Display for SelectorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Label => "label",
            Self::Field => "field",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Open,
    Close,
    Comma,
    Gt,
    Lt,
}

fn lex(s: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' | ',' | '>' | '<' => {
                chars.next();
                tokens.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    ',' => Token::Comma,
                    '>' => Token::Gt,
                    _ => Token::Lt,
                });
            }
            '!' | '=' => {
                chars.next();
                if chars.peek() == Some(&'=') {
                    chars.next();
                    tokens.push(if c == '!' { Token::NotEq } else { Token::DoubleEq });
                } else {
                    tokens.push(if c == '!' { Token::Not } else { Token::Eq });
                }
            }
            _ => {
                let mut ident = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || "!=(),<>".contains(c) {
                        break;
                    }
                    ident.push(c);
                    chars.next();
                }
                tokens.push(Token::Ident(ident));
            }
        }
    }
    tokens
}

fn is_name_part(s: &str, max: usize) -> bool {
    let bytes = s.as_bytes();
    !s.is_empty()
        && s.len() <= max
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

fn valid_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => {
            !prefix.is_empty()
                && prefix.len() <= 253
                && prefix.split('.').all(|l| is_name_part(l, 63) && !l.contains('_'))
                && is_name_part(name, 63)
        }
        None => is_name_part(key, 63),
    }
}

fn valid_value(value: &str) -> bool {
    value.is_empty() || is_name_part(value, 63)
}

/// Parses a label selector written as text (`app=web,tier!=db`) into a kube [`Selector`]; an
/// empty string selects everything.
///
/// ```
/// use informer_apimachinery::selector::parse_label_selector;
/// use kube_core::SelectorExt;
/// use std::collections::BTreeMap;
///
/// let selector = parse_label_selector("app=web, tier in (a,b), !legacy")?;
/// let labels = BTreeMap::from([("app".to_string(), "web".to_string()), ("tier".to_string(), "a".to_string())]);
/// assert!(selector.matches(&labels));
/// # Ok::<(), informer_apimachinery::selector::Error>(())
/// ```
///
/// # Errors
///
/// [`Error`] names the selector and what is wrong: a malformed requirement, an invalid key or
/// value, an empty value set, or an unsupported operator.
pub fn parse_label_selector(input: &str) -> Result<Selector, Error> {
    let err = |reason: String| Error {
        kind: SelectorKind::Label,
        selector: input.to_string(),
        reason,
    };
    let tokens = lex(input);
    let mut exprs = Vec::new();
    let mut pos = 0;
    if tokens.is_empty() {
        return Ok(Selector::default());
    }
    loop {
        let expr = match tokens.get(pos) {
            Some(Token::Not) => {
                pos += 1;
                match tokens.get(pos) {
                    Some(Token::Ident(key)) => {
                        pos += 1;
                        check_key(key).map_err(err)?;
                        Expression::DoesNotExist(key.clone())
                    }
                    other => return Err(err(format!("expected a key after '!', found {other:?}"))),
                }
            }
            Some(Token::Ident(key)) => {
                pos += 1;
                check_key(key).map_err(err)?;
                match tokens.get(pos) {
                    None | Some(Token::Comma) => Expression::Exists(key.clone()),
                    Some(op @ (Token::Eq | Token::DoubleEq | Token::NotEq)) => {
                        pos += 1;
                        let value = match tokens.get(pos) {
                            Some(Token::Ident(v)) => {
                                pos += 1;
                                v.clone()
                            }
                            None | Some(Token::Comma) => String::new(),
                            Some(other) => return Err(err(format!("unexpected {other:?} after operator"))),
                        };
                        check_value(&value).map_err(err)?;
                        if *op == Token::NotEq {
                            Expression::NotEqual(key.clone(), value)
                        } else {
                            Expression::Equal(key.clone(), value)
                        }
                    }
                    Some(Token::Ident(op)) if op == "in" || op == "notin" => {
                        pos += 1;
                        let values = parse_set(&tokens, &mut pos).map_err(err)?;
                        if op == "in" {
                            Expression::In(key.clone(), values)
                        } else {
                            Expression::NotIn(key.clone(), values)
                        }
                    }
                    Some(Token::Gt | Token::Lt) => {
                        return Err(err("the operators '>' and '<' are not supported".into()));
                    }
                    Some(other) => return Err(err(format!("unexpected {other:?} after key {key:?}"))),
                }
            }
            other => return Err(err(format!("expected a requirement, found {other:?}"))),
        };
        exprs.push(expr);
        match tokens.get(pos) {
            None => break,
            Some(Token::Comma) => {
                pos += 1;
                if pos >= tokens.len() {
                    return Err(err("trailing ','".into()));
                }
            }
            Some(other) => return Err(err(format!("expected ',' found {other:?}"))),
        }
    }
    Ok(Selector::from_iter(exprs))
}

fn check_key(key: &str) -> Result<(), String> {
    if valid_key(key) {
        Ok(())
    } else {
        Err(format!("invalid label key {key:?}"))
    }
}

fn check_value(value: &str) -> Result<(), String> {
    if valid_value(value) {
        Ok(())
    } else {
        Err(format!("invalid label value {value:?}"))
    }
}

fn parse_set(tokens: &[Token], pos: &mut usize) -> Result<BTreeSet<String>, String> {
    if tokens.get(*pos) != Some(&Token::Open) {
        return Err("expected '(' after set operator".into());
    }
    *pos += 1;
    let mut values = BTreeSet::new();
    let mut expect_value = true;
    loop {
        match tokens.get(*pos) {
            Some(Token::Ident(v)) if expect_value => {
                check_value(v)?;
                values.insert(v.clone());
                expect_value = false;
            }
            Some(Token::Comma) => {
                if expect_value {
                    values.insert(String::new());
                }
                expect_value = true;
            }
            Some(Token::Close) => {
                if expect_value && !values.is_empty() {
                    values.insert(String::new());
                }
                *pos += 1;
                break;
            }
            other => return Err(format!("unexpected {other:?} in value set")),
        }
        *pos += 1;
    }
    if values.is_empty() {
        return Err("for 'in', 'notin' operators, values set can't be empty".into());
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use kube_core::SelectorExt;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn exprs(s: &str) -> Vec<Expression> {
        parse_label_selector(s)
            .expect("valid selector")
            .into_iter()
            .collect()
    }

    #[test]
    fn parses_every_operator() {
        assert_eq!(exprs(""), vec![]);
        assert_eq!(exprs("a=b"), vec![Expression::Equal("a".into(), "b".into())]);
        assert_eq!(exprs("a==b"), vec![Expression::Equal("a".into(), "b".into())]);
        assert_eq!(
            exprs("a != b"),
            vec![Expression::NotEqual("a".into(), "b".into())]
        );
        assert_eq!(exprs("a"), vec![Expression::Exists("a".into())]);
        assert_eq!(exprs("!a"), vec![Expression::DoesNotExist("a".into())]);
        assert_eq!(exprs("a="), vec![Expression::Equal("a".into(), "".into())]);
        assert_eq!(
            exprs("env in (prod, dev),tier notin (x)"),
            vec![
                Expression::In("env".into(), ["prod".to_string(), "dev".to_string()].into()),
                Expression::NotIn("tier".into(), ["x".to_string()].into()),
            ]
        );
        assert_eq!(
            exprs("example.com/app=x,!k8s.io/gone"),
            vec![
                Expression::Equal("example.com/app".into(), "x".into()),
                Expression::DoesNotExist("k8s.io/gone".into()),
            ]
        );
    }

    #[test]
    fn rejects_malformed_selectors() {
        for bad in [
            "a=b,", "=b", "a in b", "a in ()", "a b", "a>1", "a=b=c", "-a=b", "a=(b)", "!", "a,,b",
        ] {
            assert!(parse_label_selector(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn matches_like_kube_apiserver() {
        let sel = parse_label_selector("app=web,tier notin (db),!legacy").expect("valid");
        assert!(sel.matches(&labels(&[("app", "web")])));
        assert!(sel.matches(&labels(&[("app", "web"), ("tier", "fe")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("tier", "db")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("legacy", "")])));
        assert!(!sel.matches(&labels(&[("app", "api")])));
        let sel = parse_label_selector("app!=web").expect("valid");
        assert!(sel.matches(&labels(&[])));
    }

    #[test]
    fn an_error_names_the_selector_and_the_reason() {
        let err = parse_label_selector("app=web,").expect_err("a trailing ','");
        assert_eq!(
            err.to_string(),
            "failed to parse label selector \"app=web,\": trailing ','"
        );
    }
}
