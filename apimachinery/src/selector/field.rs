//! Field selectors written as text (`metadata.name=web,status.phase!=Failed`), with
//! kube-apiserver's grammar (apimachinery's `fields.ParseSelector`): comma-separated
//! requirements `field=value`, `field==value` or `field!=value`, where `\`, `,` and `=` in a
//! value are escaped with a backslash.

use std::fmt;

use super::{Error, SelectorKind};

/// How a field requirement compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FieldOperator {
    /// `field=value` (or `field==value`).
    Equal,
    /// `field!=value`.
    NotEqual,
}

/// One requirement of a [`FieldSelector`]: `field=value` or `field!=value`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldRequirement {
    /// The field's path, such as `metadata.name` or `spec.nodeName`.
    pub field: String,
    /// How the field's value compares with `value`.
    pub operator: FieldOperator,
    /// The value, unescaped.
    pub value: String,
}

impl FieldRequirement {
    /// Whether a field whose value is `actual` satisfies the requirement.
    pub fn matches(&self, actual: &str) -> bool {
        (actual == self.value) == (self.operator == FieldOperator::Equal)
    }
}

impl fmt::Display for FieldRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let operator = match self.operator {
            FieldOperator::Equal => "=",
            FieldOperator::NotEqual => "!=",
        };
        write!(f, "{}{operator}{}", self.field, escape(&self.value))
    }
}

/// A parsed field selector: every requirement must hold; none selects everything. Its
/// requirements are sorted and without repeats, so equal selectors compare equal whatever
/// their order in the text, and its text form ([`Display`](fmt::Display)) is what a list or
/// watch request sends as `fieldSelector`.
///
/// ```
/// use informer_apimachinery::selector::{FieldOperator, parse_field_selector};
///
/// let selector = parse_field_selector("status.phase!=Failed,metadata.name=web")?;
/// assert_eq!(selector.requirements()[0].field, "metadata.name");
/// assert_eq!(selector.requirements()[1].operator, FieldOperator::NotEqual);
/// assert_eq!(selector.to_string(), "metadata.name=web,status.phase!=Failed");
/// assert!(parse_field_selector("")?.selects_all());
/// # Ok::<(), informer_apimachinery::selector::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// The requirements, sorted.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Whether the selector has no requirement (it selects everything).
    pub fn selects_all(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The selector requiring both this one's requirements and `other`'s.
    #[must_use]
    pub fn and(&self, other: &Self) -> Self {
        Self::from_requirements(self.requirements.iter().chain(&other.requirements).cloned())
    }

    fn from_requirements(requirements: impl IntoIterator<Item = FieldRequirement>) -> Self {
        let mut requirements: Vec<FieldRequirement> = requirements.into_iter().collect();
        requirements.sort();
        requirements.dedup();
        Self { requirements }
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, requirement) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{requirement}")?;
        }
        Ok(())
    }
}

/// Parses a field selector written as text (`metadata.name=web,status.phase!=Failed`); an
/// empty string selects everything.
///
/// Which fields a resource can be selected by is the API server's to say (`metadata.name` and
/// `metadata.namespace` always; others per resource, such as `spec.nodeName` of pods): an
/// unsupported field parses here and is refused by the server's list.
///
/// # Errors
///
/// [`Error`] (of kind [`SelectorKind::Field`]) names the selector and what is wrong: a
/// requirement without an operator, an empty or malformed field path, or an invalid escape in
/// a value.
pub fn parse_field_selector(input: &str) -> Result<FieldSelector, Error> {
    let err = |reason: String| Error {
        kind: SelectorKind::Field,
        selector: input.to_owned(),
        reason,
    };
    let mut requirements = Vec::new();
    for term in split_unescaped_commas(input)
        .into_iter()
        .filter(|t| !t.is_empty())
    {
        let Some((field, operator, value)) = split_term(term) else {
            return Err(err(format!(
                "{term:?} has no operator: write field=value, field==value or field!=value"
            )));
        };
        if field.is_empty() || field.split('.').any(|segment| segment.trim().is_empty()) {
            return Err(err(format!(
                "invalid field path {field:?}: write dotted names such as metadata.name"
            )));
        }
        let value = unescape(value).map_err(err)?;
        requirements.push(FieldRequirement {
            field: field.to_owned(),
            operator,
            value,
        });
    }
    Ok(FieldSelector::from_requirements(requirements))
}

/// The terms between unescaped commas, escapes kept.
fn split_unescaped_commas(input: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in input.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&input[start..]);
    terms
}

/// Splits `field<op>value` at its first unescaped operator (`!=`, `==`, then `=`).
fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    let mut escaped = false;
    for (i, c) in term.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        let rest = &term[i..];
        match c {
            '\\' => escaped = true,
            '!' if rest.starts_with("!=") => {
                return Some((&term[..i], FieldOperator::NotEqual, &term[i + 2..]));
            }
            '=' if rest.starts_with("==") => return Some((&term[..i], FieldOperator::Equal, &term[i + 2..])),
            '=' => return Some((&term[..i], FieldOperator::Equal, &term[i + 1..])),
            _ => {}
        }
    }
    None
}

/// A value with its escapes resolved; only `\\`, `\,` and `\=` are escapes.
fn unescape(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(escaped @ ('\\' | ',' | '=')) => out.push(escaped),
            Some(other) => {
                return Err(format!(
                    "invalid escape sequence \\{other} in value {value:?}: only \\\\, \\, and \\= are escapes"
                ));
            }
            None => return Err(format!("value {value:?} ends with an unfinished escape")),
        }
    }
    Ok(out)
}

/// `value` with `\`, `,` and `=` escaped, as the text form of a selector needs it.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requirement(field: &str, operator: FieldOperator, value: &str) -> FieldRequirement {
        FieldRequirement {
            field: field.into(),
            operator,
            value: value.into(),
        }
    }

    /// apimachinery's `TestSelectorParse` (fields/selector_test.go): the valid and invalid
    /// forms.
    #[test]
    fn parses_what_apimachinery_parses() {
        let parsed = |s: &str| parse_field_selector(s).expect(s).requirements().to_vec();
        assert_eq!(parsed(""), []);
        assert_eq!(
            parsed("x=a,y=b,z=c"),
            [
                requirement("x", FieldOperator::Equal, "a"),
                requirement("y", FieldOperator::Equal, "b"),
                requirement("z", FieldOperator::Equal, "c"),
            ]
        );
        assert_eq!(parsed("x!=a"), [requirement("x", FieldOperator::NotEqual, "a")]);
        assert_eq!(parsed("x==a"), [requirement("x", FieldOperator::Equal, "a")]);
        assert_eq!(parsed("x="), [requirement("x", FieldOperator::Equal, "")]);
        assert_eq!(
            parsed(r"x=a\,b\=c\\d"),
            [requirement("x", FieldOperator::Equal, r"a,b=c\d")]
        );
        assert_eq!(parsed("metadata.name=web,"), parsed("metadata.name=web"));
        for bad in ["x", "x=a,y", "=a", "x=a\\", r"x=a\b", ".x=a", "a..b=c"] {
            let err = parse_field_selector(bad).expect_err(bad);
            assert_eq!(err.kind, SelectorKind::Field, "{bad}");
            assert_eq!(err.selector, bad);
        }
    }

    #[test]
    fn equal_selectors_compare_equal_and_print_one_text() {
        let a = parse_field_selector("status.phase!=Failed,metadata.name==web").expect("valid");
        let b =
            parse_field_selector("metadata.name=web,status.phase!=Failed,metadata.name=web").expect("valid");
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "metadata.name=web,status.phase!=Failed");
        let escaped = parse_field_selector(r"metadata.name=a\,b").expect("valid");
        assert_eq!(escaped.to_string(), r"metadata.name=a\,b");
        assert_eq!(
            parse_field_selector(&escaped.to_string()).expect("round trip"),
            escaped
        );
    }

    #[test]
    fn and_joins_the_requirements() {
        let a = parse_field_selector("metadata.name=web").expect("valid");
        let b = parse_field_selector("metadata.namespace=prod").expect("valid");
        assert_eq!(a.and(&b).to_string(), "metadata.name=web,metadata.namespace=prod");
        assert_eq!(a.and(&a), a);
    }

    #[test]
    fn a_requirement_matches_a_value() {
        let equal = requirement("metadata.name", FieldOperator::Equal, "web");
        assert!(equal.matches("web"));
        assert!(!equal.matches("db"));
        let not_equal = requirement("metadata.name", FieldOperator::NotEqual, "web");
        assert!(!not_equal.matches("web"));
        assert!(not_equal.matches("db"));
    }

    #[test]
    fn an_error_names_the_selector_and_the_reason() {
        let err = parse_field_selector("metadata.name").expect_err("no operator");
        assert_eq!(
            err.to_string(),
            "failed to parse field selector \"metadata.name\": \"metadata.name\" has no operator: write field=value, field==value or field!=value"
        );
    }
}
