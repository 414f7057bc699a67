//! Every naming rule of generated code, in one place.
//!
//! - **Identifiers**: anything but ASCII letters, digits and `_` becomes `_`; a name starting
//!   with a digit gets a leading `_`; a Rust keyword (strict, reserved or edition 2024, such as
//!   `type`, `async`, `gen`) gets a trailing `_` (`type_`), so it also works where raw
//!   identifiers do not (`self`, `crate`, `super`).
//! - **Group accessors and modules**: the snake case of the group's first DNS label
//!   (`example.com` → `example`, `my-group.io` → `my_group`); the core group `""` is `core`.
//!   When two or more groups share a first label, every one of them except the core group uses
//!   its full name instead, snake-cased, with dots and hyphens as `_`
//!   (`example.com` → `example_com`, `example.org` → `example_org`).
//! - **Group structs**: the upper camel case of the accessor (`example_com` → `ExampleCom`).
//! - **Version modules**: the version lowercased (`v1beta1`); **version structs** have its
//!   first letter uppercased (`V1beta1`).
//! - **Resource methods** (on the version struct and the namespaced lister): the snake case of
//!   the plural, split where the kind's words are (`networkpolicies` of `NetworkPolicy` →
//!   `network_policies`); when the plural does not start with the kind's leading words it is
//!   snake-cased as it is (`foos`, `endpoints`).
//! - **Types**: the kind (upper camel case) plus `Informer`, `Lister`, `NamespaceLister`
//!   (`FooInformer`, `FooLister`, `FooNamespaceLister`); standalone constructors are
//!   `new_<kind>_informer` and `new_filtered_<kind>_informer`; a resource's file in directory
//!   output is `<kind>.rs`, all snake case.

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Ident, Span};

/// Rust's strict, reserved and edition-specific keywords.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop",
    "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "self", "Self",
    "static", "struct", "super", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];

/// `name` made a valid identifier by the rules in the module docs (never panics).
pub fn ident(name: &str) -> Ident {
    Ident::new(&sanitize(name), Span::call_site())
}

/// `name` as a valid identifier string (see [`ident`]).
pub fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.chars().all(|c| c == '_') {
        out.push_str("unnamed");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// The accessor (and module) name of `group` when no other group shares its first label.
pub fn group_short_name(group: &str) -> String {
    if group.is_empty() {
        return "core".to_owned();
    }
    let first = group.split('.').next().unwrap_or(group);
    sanitize(&first.to_snake_case())
}

/// The accessor (and module) name of `group` when another group shares its first label.
pub fn group_full_name(group: &str) -> String {
    if group.is_empty() {
        return "core".to_owned();
    }
    sanitize(&group.replace(['.', '-'], "_").to_snake_case())
}

/// The struct name of a group accessor (`example_com` → `ExampleCom`).
pub fn group_type(accessor: &str) -> Ident {
    ident(&accessor.to_upper_camel_case())
}

/// The module name of `version` (`v1beta1`).
pub fn version_module(version: &str) -> String {
    sanitize(&version.to_ascii_lowercase())
}

/// The struct name of `version` (`V1beta1`).
pub fn version_type(version: &str) -> Ident {
    let module = version_module(version);
    let mut chars = module.chars();
    let name = match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => module,
    };
    ident(&name)
}

/// The method name of a resource (see the module docs).
pub fn resource_method(kind: &str, plural: &str) -> String {
    let kind_snake = kind.to_snake_case();
    let words: Vec<&str> = kind_snake.split('_').filter(|w| !w.is_empty()).collect();
    let plural_lower = plural.to_ascii_lowercase();
    if let Some((_, leading)) = words.split_last()
        && !leading.is_empty()
    {
        let prefix: String = leading.concat();
        if let Some(rest) = plural_lower.strip_prefix(&prefix)
            && !rest.is_empty()
            && rest.chars().all(|c| c.is_ascii_alphanumeric())
        {
            return sanitize(&format!("{}_{rest}", leading.join("_")));
        }
    }
    sanitize(&plural.to_snake_case())
}

/// The kind as a type-name stem: kept when it is already an upper camel case identifier
/// (`APIService` stays), converted otherwise.
pub fn kind_type_stem(kind: &str) -> String {
    let valid =
        kind.starts_with(|c: char| c.is_ascii_uppercase()) && kind.chars().all(|c| c.is_ascii_alphanumeric());
    if valid {
        kind.to_owned()
    } else {
        sanitize(&kind.to_upper_camel_case())
    }
}

/// `FooInformer`.
pub fn informer_type(kind: &str) -> Ident {
    ident(&format!("{}Informer", kind_type_stem(kind)))
}

/// `FooLister`.
pub fn lister_type(kind: &str) -> Ident {
    ident(&format!("{}Lister", kind_type_stem(kind)))
}

/// `FooNamespaceLister`.
pub fn namespace_lister_type(kind: &str) -> Ident {
    ident(&format!("{}NamespaceLister", kind_type_stem(kind)))
}

/// The snake case of the kind (`CronTab` → `cron_tab`), the stem of function and file names.
pub fn kind_snake(kind: &str) -> String {
    sanitize(&kind.to_snake_case())
}

/// `new_foo_informer`.
pub fn new_informer_fn(kind: &str) -> Ident {
    ident(&format!("new_{}_informer", kind.to_snake_case()))
}

/// `new_filtered_foo_informer`.
pub fn new_filtered_informer_fn(kind: &str) -> Ident {
    ident(&format!("new_filtered_{}_informer", kind.to_snake_case()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_use_their_first_label() {
        assert_eq!(group_short_name("example.com"), "example");
        assert_eq!(group_short_name(""), "core");
        assert_eq!(group_short_name("my-group.example.io"), "my_group");
        assert_eq!(group_short_name("rbac.authorization.k8s.io"), "rbac");
        assert_eq!(group_short_name("type.example.com"), "type_");
        assert_eq!(group_short_name("3scale.net"), "_3scale");
    }

    #[test]
    fn colliding_groups_use_their_full_name() {
        assert_eq!(group_full_name("example.com"), "example_com");
        assert_eq!(group_full_name("my-group.example.io"), "my_group_example_io");
        assert_eq!(group_type("example_com").to_string(), "ExampleCom");
    }

    #[test]
    fn versions() {
        assert_eq!(version_module("v1beta1"), "v1beta1");
        assert_eq!(version_type("v1beta1").to_string(), "V1beta1");
        assert_eq!(version_type("v2").to_string(), "V2");
    }

    #[test]
    fn resource_methods_follow_the_kind_words() {
        assert_eq!(resource_method("Foo", "foos"), "foos");
        assert_eq!(
            resource_method("NetworkPolicy", "networkpolicies"),
            "network_policies"
        );
        assert_eq!(resource_method("CronTab", "crontabs"), "cron_tabs");
        assert_eq!(resource_method("Endpoints", "endpoints"), "endpoints");
        assert_eq!(resource_method("Policy", "policies"), "policies");
        assert_eq!(resource_method("Foo", "my-foos"), "my_foos");
        assert_eq!(resource_method("Type", "types"), "types");
        assert_eq!(resource_method("Impl", "impl"), "impl_");
    }

    #[test]
    fn types_and_functions() {
        assert_eq!(informer_type("Foo").to_string(), "FooInformer");
        assert_eq!(lister_type("APIService").to_string(), "APIServiceLister");
        assert_eq!(
            namespace_lister_type("cronTab").to_string(),
            "CronTabNamespaceLister"
        );
        assert_eq!(new_informer_fn("CronTab").to_string(), "new_cron_tab_informer");
        assert_eq!(
            new_filtered_informer_fn("Foo").to_string(),
            "new_filtered_foo_informer"
        );
        assert_eq!(kind_snake("APIService"), "api_service");
    }

    #[test]
    fn identifiers_are_always_valid() {
        for name in ["", "_", "self", "Self", "crate", "9", "a.b", "ü"] {
            let _ = ident(name);
        }
        assert_eq!(sanitize("self"), "self_");
        assert_eq!(sanitize(""), "unnamed");
    }
}
