//! Label and field selectors: parsing with kube-apiserver's grammar, and the object filters the
//! server applies to lists and watches.
//!
//! kube-core matches selectors ([`Selector`], [`Expression`], [`SelectorExt`]) but has no parser for
//! the string form sent in `labelSelector`; [`parse_label_selector`] parses it with kube-apiserver's
//! grammar: comma-separated requirements `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`
//! and `!k` (the numeric `>` and `<` are not supported).

use std::collections::{BTreeMap, BTreeSet};

use kube::core::{Expression, Selector, SelectorExt};
use serde_json::Value;

/// Errors of selector parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// The label selector string is malformed.
    #[error("failed to parse label selector {selector:?}: {reason}")]
    Label {
        /// The selector as given.
        selector: String,
        /// What is wrong.
        reason: String,
    },
    /// The field selector string is malformed.
    #[error("failed to parse field selector {selector:?}: {reason}")]
    Field {
        /// The selector as given.
        selector: String,
        /// What is wrong.
        reason: String,
    },
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

/// Parses a label selector string (`labelSelector=`) into a kube [`Selector`].
///
/// ```
/// use informer_testserver::selector::parse_label_selector;
/// use kube::core::SelectorExt;
/// use std::collections::BTreeMap;
///
/// let selector = parse_label_selector("app=web, tier in (a,b), !legacy").expect("valid");
/// let labels = BTreeMap::from([("app".to_string(), "web".to_string()), ("tier".to_string(), "a".to_string())]);
/// assert!(selector.matches(&labels));
/// ```
pub fn parse_label_selector(input: &str) -> Result<Selector, SelectorError> {
    let err = |reason: String| SelectorError::Label {
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

/// One field requirement: `path=value` or `path!=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldRequirement {
    path: String,
    value: String,
    equal: bool,
}

/// A parsed field selector: all requirements must hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FieldSelector(Vec<FieldRequirement>);

/// Splits on unescaped `sep`, keeping escapes (`\,`, `\=`, `\\`) for the next step.
fn split_unescaped(s: &str, sep: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in s.chars() {
        let current = parts.last_mut();
        if escaped {
            if let Some(p) = current {
                p.push('\\');
                p.push(c);
            }
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            parts.push(String::new());
        } else if let Some(p) = current {
            p.push(c);
        }
    }
    parts
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped || c != '\\' {
            out.push(c);
            escaped = false;
        } else {
            escaped = true;
        }
    }
    out
}

/// Parses a field selector (`fieldSelector=`): `metadata.name=x,metadata.namespace!=y`.
///
/// Any dotted path parses; which fields a resource can be selected by is checked when the
/// resource is known (kube-apiserver's per-resource lists). Values compare as strings.
pub(crate) fn parse_field_selector(input: &str) -> Result<FieldSelector, SelectorError> {
    let err = |reason: String| SelectorError::Field {
        selector: input.to_string(),
        reason,
    };
    let mut reqs = Vec::new();
    if input.trim().is_empty() {
        return Ok(FieldSelector::default());
    }
    for part in split_unescaped(input, ',') {
        let (path, value, equal) = if let Some((p, v)) = part.split_once("!=") {
            (p, v, false)
        } else if let Some((p, v)) = part.split_once("==") {
            (p, v, true)
        } else if let Some((p, v)) = part.split_once('=') {
            (p, v, true)
        } else {
            return Err(err(format!(
                "invalid selector: '{part}'; can't understand '{part}'"
            )));
        };
        let path = path.trim();
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(err(format!("invalid field path {path:?}")));
        }
        reqs.push(FieldRequirement {
            path: path.to_string(),
            value: unescape(value.trim()),
            equal,
        });
    }
    Ok(FieldSelector(reqs))
}

impl FieldSelector {
    /// Whether the object satisfies every requirement.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|r| {
            let mut v = object;
            for seg in r.path.split('.') {
                v = v.get(seg).unwrap_or(&Value::Null);
            }
            let actual = match v {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (actual == r.value) == r.equal
        })
    }

    /// The fields the requirements are about, in order.
    pub(crate) fn fields(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|r| r.path.as_str())
    }

    /// Whether there is no requirement.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Which objects a list or watch wants: namespace, labels and fields.
#[derive(Debug, Clone, Default)]
pub(crate) struct ObjectFilter {
    /// Only objects in this namespace.
    pub(crate) namespace: Option<String>,
    /// Label selector.
    pub(crate) labels: Selector,
    /// Field selector.
    pub(crate) fields: FieldSelector,
}

impl ObjectFilter {
    /// Whether the object passes the filter.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let meta = &object["metadata"];
        if let Some(ns) = &self.namespace
            && meta["namespace"].as_str().unwrap_or_default() != ns
        {
            return false;
        }
        if !self.labels.selects_all() {
            let labels: BTreeMap<String, String> = meta["labels"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            if !self.labels.matches(&labels) {
                return false;
            }
        }
        self.fields.matches(object)
    }

    /// Whether a label or field selector is set (then lists omit `remainingItemCount`).
    pub(crate) fn has_selectors(&self) -> bool {
        !self.labels.selects_all() || !self.fields.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn field_selectors() {
        let pod = json!({"metadata": {"name": "p1", "namespace": "ns"}, "spec": {"nodeName": "n1"}});
        let sel = |s: &str| parse_field_selector(s).expect("valid field selector");
        assert!(sel("metadata.name=p1").matches(&pod));
        assert!(sel("metadata.name==p1,metadata.namespace=ns").matches(&pod));
        assert!(!sel("metadata.name!=p1").matches(&pod));
        assert!(sel("metadata.namespace!=other").matches(&pod));
        assert!(sel("spec.nodeName=n1").matches(&pod));
        assert!(sel("spec.missing=").matches(&pod));
        assert!(sel("").is_empty());
        assert!(parse_field_selector("metadata.name").is_err());
        assert!(parse_field_selector("=x").is_err());
        let escaped = json!({"metadata": {"name": "a,b"}});
        assert!(sel("metadata.name=a\\,b").matches(&escaped));
    }

    #[test]
    fn filter_combines_namespace_labels_fields() {
        let filter = ObjectFilter {
            namespace: Some("ns".into()),
            labels: parse_label_selector("app").expect("valid"),
            fields: parse_field_selector("metadata.name!=skip").expect("valid"),
        };
        assert!(
            filter.matches(&json!({"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "x"}}}))
        );
        assert!(
            !filter.matches(&json!({"metadata": {"name": "a", "namespace": "o", "labels": {"app": "x"}}}))
        );
        assert!(!filter.matches(&json!({"metadata": {"name": "a", "namespace": "ns"}})));
        assert!(
            !filter
                .matches(&json!({"metadata": {"name": "skip", "namespace": "ns", "labels": {"app": "x"}}}))
        );
        assert!(filter.has_selectors());
    }
}
