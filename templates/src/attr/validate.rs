//! The names of a resource, checked as kube-apiserver checks them, so a declaration the API
//! server would refuse is a mistake here rather than generated code that never works.
//!
//! - group: a DNS-1123 subdomain (lowercase letters, digits, `-` and `.`, at most 253
//!   characters, dot-separated labels of at most 63), or empty for the core group, which only
//!   built-in resources are in (a `#[kube(...)]` custom resource cannot be);
//! - version: a DNS-1035 label (a lowercase letter, then lowercase letters, digits and `-`,
//!   at most 63 characters), which is what kube-apiserver accepts for the versions of a
//!   CustomResourceDefinition; built-in versions (`v1`, `v1beta2`, `v2alpha1`) are such labels;
//! - plural and singular: DNS-1123 labels (lowercase letters, digits and `-`, at most 63
//!   characters);
//! - kind: an ASCII letter followed by ASCII letters and digits, such as `Foo` (a Rust type
//!   name whose lowercase form is a DNS-1035 label, as kube-apiserver requires of a
//!   CustomResourceDefinition's kind).

use std::fmt;

/// Why a name breaks its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// The name is empty.
    Empty,
    /// The name is longer than the rule allows.
    TooLong {
        /// The most characters allowed.
        max: usize,
    },
    /// A character the rule does not allow.
    Character(char),
    /// The name, or one of its dot-separated labels, starts with a character it cannot start
    /// with.
    Start(char),
    /// The name, or one of its dot-separated labels, ends with a character it cannot end with.
    End(char),
    /// A dot-separated label is empty (`a..b`, `.a`) or longer than 63 characters.
    Label,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "it is empty"),
            Self::TooLong { max } => write!(f, "it is longer than {max} characters"),
            Self::Character(c) => write!(f, "it contains {c:?}"),
            Self::Start(c) => write!(f, "it starts with {c:?}"),
            Self::End(c) => write!(f, "it ends with {c:?}"),
            Self::Label => write!(f, "a dot-separated part is empty or longer than 63 characters"),
        }
    }
}

/// The most characters of a DNS label.
const LABEL_MAX: usize = 63;
/// The most characters of a DNS subdomain.
const SUBDOMAIN_MAX: usize = 253;

fn lower_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// A DNS-1123 label: lowercase letters, digits and `-`, starting and ending with a letter or
/// digit, at most 63 characters (plurals and singulars).
pub fn dns1123_label(name: &str) -> Result<(), Invalid> {
    label(name, LABEL_MAX, lower_alnum)
}

/// A DNS-1035 label: like a DNS-1123 label but starting with a letter (CRD versions).
pub fn dns1035_label(name: &str) -> Result<(), Invalid> {
    label(name, LABEL_MAX, |c| c.is_ascii_lowercase())
}

/// A DNS-1123 subdomain: DNS-1123 labels joined by `.`, at most 253 characters (API groups).
pub fn dns1123_subdomain(name: &str) -> Result<(), Invalid> {
    if name.is_empty() {
        return Err(Invalid::Empty);
    }
    if name.len() > SUBDOMAIN_MAX {
        return Err(Invalid::TooLong { max: SUBDOMAIN_MAX });
    }
    for part in name.split('.') {
        match label(part, LABEL_MAX, lower_alnum) {
            Ok(()) => {}
            Err(Invalid::Empty | Invalid::TooLong { .. }) => return Err(Invalid::Label),
            Err(other) => return Err(other),
        }
    }
    Ok(())
}

/// A kind: an ASCII letter followed by ASCII letters and digits.
pub fn kind(name: &str) -> Result<(), Invalid> {
    let first = name.chars().next().ok_or(Invalid::Empty)?;
    if !first.is_ascii_alphabetic() {
        return Err(Invalid::Start(first));
    }
    match name.chars().find(|c| !c.is_ascii_alphanumeric()) {
        Some(c) => Err(Invalid::Character(c)),
        None => Ok(()),
    }
}

fn label(name: &str, max: usize, first_ok: impl Fn(char) -> bool) -> Result<(), Invalid> {
    let (Some(first), Some(last)) = (name.chars().next(), name.chars().last()) else {
        return Err(Invalid::Empty);
    };
    if let Some(c) = name.chars().find(|&c| !(lower_alnum(c) || c == '-')) {
        return Err(Invalid::Character(c));
    }
    if !first_ok(first) {
        return Err(Invalid::Start(first));
    }
    if !lower_alnum(last) {
        return Err(Invalid::End(last));
    }
    if name.len() > max {
        return Err(Invalid::TooLong { max });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_dns_subdomains() {
        for ok in ["example.com", "gateway.networking.k8s.io", "a", "a-b.c1"] {
            assert_eq!(dns1123_subdomain(ok), Ok(()), "{ok}");
        }
        assert_eq!(dns1123_subdomain(""), Err(Invalid::Empty));
        assert_eq!(dns1123_subdomain("Example.com"), Err(Invalid::Character('E')));
        assert_eq!(dns1123_subdomain("a..b"), Err(Invalid::Label));
        assert_eq!(dns1123_subdomain("-a.b"), Err(Invalid::Start('-')));
        assert_eq!(dns1123_subdomain("a_b"), Err(Invalid::Character('_')));
        assert_eq!(dns1123_subdomain(&"a".repeat(64)), Err(Invalid::Label));
        let long = vec!["a".repeat(63); 4].join(".") + ".ab";
        assert_eq!(dns1123_subdomain(&long), Err(Invalid::TooLong { max: 253 }));
    }

    #[test]
    fn versions_are_dns_1035_labels() {
        for ok in ["v1", "v1beta2", "v2alpha1", "v1-preview", "stable"] {
            assert_eq!(dns1035_label(ok), Ok(()), "{ok}");
        }
        assert_eq!(dns1035_label(""), Err(Invalid::Empty));
        assert_eq!(dns1035_label("1v"), Err(Invalid::Start('1')));
        assert_eq!(dns1035_label("V1"), Err(Invalid::Character('V')));
        assert_eq!(dns1035_label("v1-"), Err(Invalid::End('-')));
    }

    #[test]
    fn plurals_are_dns_1123_labels_and_kinds_are_names() {
        assert_eq!(dns1123_label("foos"), Ok(()));
        assert_eq!(dns1123_label("3d-models"), Ok(()));
        assert_eq!(dns1123_label("Foos"), Err(Invalid::Character('F')));
        assert_eq!(dns1123_label("a.b"), Err(Invalid::Character('.')));
        assert_eq!(dns1123_label(&"a".repeat(64)), Err(Invalid::TooLong { max: 63 }));
        assert_eq!(kind("Foo2"), Ok(()));
        assert_eq!(kind(""), Err(Invalid::Empty));
        assert_eq!(kind("my-kind"), Err(Invalid::Character('-')));
        assert_eq!(kind("2Foo"), Err(Invalid::Start('2')));
    }
}
