//! Choosing resources: GVR patterns (`example.com/*/*`, `*/v1/foos`) and Rust path prefixes.

use informer_templates::Resource;

/// A `group/version/resource` pattern; each part is matched whole, `*` matching any run of
/// characters (`*.example.com/v1*/*`). The core group is written `core` (or left empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GvrPattern {
    group: String,
    version: String,
    resource: String,
}

impl GvrPattern {
    /// Parses `group/version/resource`; `None` unless there are exactly three parts.
    pub(crate) fn parse(pattern: &str) -> Option<Self> {
        let mut parts = pattern.split('/');
        let (Some(group), Some(version), Some(resource), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let group = if group == "core" { "" } else { group };
        Some(Self {
            group: group.to_owned(),
            version: version.to_owned(),
            resource: resource.to_owned(),
        })
    }

    /// The group and version patterns (`""` for the core group).
    pub(crate) fn group_and_version(&self) -> [&str; 2] {
        [&self.group, &self.version]
    }

    /// Whether `resource` matches.
    pub(crate) fn matches(&self, resource: &Resource) -> bool {
        glob(&self.group, &resource.group)
            && glob(&self.version, &resource.version)
            && glob(&self.resource, &resource.plural)
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether the Rust path of `resource` starts with `prefix` (whole segments; a leading `::`
/// on either is ignored).
pub(crate) fn has_path_prefix(resource: &Resource, prefix: &str) -> bool {
    let path = quote::ToTokens::to_token_stream(&resource.rust_path)
        .to_string()
        .replace(' ', "");
    let path = path.trim_start_matches("::");
    let prefix = prefix.trim_start_matches("::").trim_end_matches("::");
    path == prefix || path.starts_with(&format!("{prefix}::")) || prefix.is_empty()
}

/// Which resources to keep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    /// Keep only resources matching one of these (all when empty).
    pub(crate) include: Vec<GvrPattern>,
    /// Drop resources matching one of these.
    pub(crate) exclude: Vec<GvrPattern>,
    /// Keep only resources whose Rust path starts with one of these (all when empty).
    pub(crate) include_paths: Vec<String>,
    /// Drop resources whose Rust path starts with one of these.
    pub(crate) exclude_paths: Vec<String>,
}

impl Filter {
    /// Whether `resource` is kept.
    pub(crate) fn keeps(&self, resource: &Resource) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| p.matches(resource)))
            && !self.exclude.iter().any(|p| p.matches(resource))
            && (self.include_paths.is_empty()
                || self.include_paths.iter().any(|p| has_path_prefix(resource, p)))
            && !self.exclude_paths.iter().any(|p| has_path_prefix(resource, p))
    }
}

#[cfg(test)]
mod tests {
    use informer_templates::Scope;

    use super::*;

    fn foo() -> Resource {
        Resource::new(
            "example.com",
            "v1beta1",
            "Foo",
            "foos",
            Scope::Namespaced,
            syn::parse_quote!(::c::v1::Foo),
        )
    }

    #[test]
    fn globs() {
        assert!(glob("*", ""));
        assert!(glob("*.com", "example.com"));
        assert!(glob("ex*le.c*", "example.com"));
        assert!(!glob("*.org", "example.com"));
        assert!(glob("foos", "foos"));
        assert!(!glob("foo", "foos"));
        assert!(!glob("a*a", "a"));
    }

    #[test]
    fn gvr_patterns() {
        let p = |s: &str| GvrPattern::parse(s).expect("pattern");
        assert!(p("example.com/*/*").matches(&foo()));
        assert!(p("*/v1*/foos").matches(&foo()));
        assert!(!p("*/v1/foos").matches(&foo()));
        assert!(GvrPattern::parse("a/b").is_none());
        assert_eq!(p("core/v1*/pods").group_and_version(), ["", "v1*"]);
        let pod = Resource::new(
            "",
            "v1",
            "Pod",
            "pods",
            Scope::Namespaced,
            syn::parse_quote!(::k::Pod),
        );
        assert!(p("core/v1/pods").matches(&pod));
    }

    #[test]
    fn path_prefixes() {
        assert!(has_path_prefix(&foo(), "::c::v1"));
        assert!(has_path_prefix(&foo(), "c"));
        assert!(!has_path_prefix(&foo(), "::c::v"));
    }
}
