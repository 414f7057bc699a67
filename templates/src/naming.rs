//! Every naming rule of generated code, in one place.
//!
//! - **Identifiers**: anything but ASCII letters, digits and `_` becomes `_`; a name starting
//!   with a digit gets a leading `_`; a Rust keyword (strict, reserved or edition 2024, such as
//!   `type`, `async`, `gen`) gets a trailing `_` (`type_`), so it also works where raw
//!   identifiers do not (`self`, `crate`, `super`).
//! - **Group accessors and modules**: a rule that looks at the group alone, so adding groups
//!   never renames the accessors of others:
//!   - the core group `""` is `core`;
//!   - a Kubernetes group, that is a group without a dot (`apps`, `batch`, `policy`) or one
//!     ending in `.k8s.io`, is the snake case of its first label (`networking.k8s.io` →
//!     `networking`, `gateway.networking.k8s.io` → `gateway`, `rbac.authorization.k8s.io` →
//!     `rbac`);
//!   - every other group is its whole name snake-cased, with dots and hyphens as `_`
//!     (`example.com` → `example_com`, `networking.istio.io` → `networking_istio_io`,
//!     `cluster.x-k8s.io` → `cluster_x_k8s_io`).
//!
//!   A pinned accessor ([`Api::with_accessors`](crate::Api::with_accessors); informer-gen's
//!   `Config::group_accessor` and `--group-accessor <group>=<name>`) replaces the rule for its
//!   group; it must be a snake-case Rust identifier that is not a keyword
//!   ([`valid_accessor`]). Two groups with the same accessor, derived or pinned, are an error
//!   naming both: nothing is renamed silently; pin another accessor for one of them.
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

/// Whether `group` is a Kubernetes group by the rule of the module docs: the core group, a
/// group without a dot, or one ending in `.k8s.io`.
pub fn is_kubernetes_group(group: &str) -> bool {
    !group.contains('.') || group.ends_with(".k8s.io")
}

/// The accessor (and module) name of `group` (see the module docs): `core` for the core
/// group, the first label of a Kubernetes group, the whole name of any other.
pub fn group_accessor(group: &str) -> String {
    if group.is_empty() {
        return "core".to_owned();
    }
    let name = if is_kubernetes_group(group) {
        group.split('.').next().unwrap_or(group).to_owned()
    } else {
        group.replace(['.', '-'], "_")
    };
    sanitize(&name.to_snake_case())
}

/// Whether `name` can be a pinned group accessor: a snake-case Rust identifier (lowercase
/// ASCII letters, digits and `_`, not starting with a digit, not `_` alone) that is not a
/// keyword.
pub fn valid_accessor(name: &str) -> bool {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    starts_well
        && name != "_"
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !KEYWORDS.contains(&name)
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
    fn kubernetes_groups_use_their_first_label() {
        assert_eq!(group_accessor(""), "core");
        assert_eq!(group_accessor("apps"), "apps");
        assert_eq!(group_accessor("policy"), "policy");
        assert_eq!(group_accessor("networking.k8s.io"), "networking");
        assert_eq!(group_accessor("gateway.networking.k8s.io"), "gateway");
        assert_eq!(group_accessor("rbac.authorization.k8s.io"), "rbac");
        assert_eq!(group_accessor("samplecontroller.k8s.io"), "samplecontroller");
        assert_eq!(group_accessor("my-group"), "my_group");
        assert_eq!(group_accessor("self"), "self_");
    }

    #[test]
    fn other_groups_use_their_whole_name() {
        assert_eq!(group_accessor("example.com"), "example_com");
        assert_eq!(group_accessor("networking.istio.io"), "networking_istio_io");
        assert_eq!(group_accessor("cluster.x-k8s.io"), "cluster_x_k8s_io");
        assert_eq!(group_accessor("my-group.example.io"), "my_group_example_io");
        assert_eq!(group_accessor("k8s.io"), "k8s_io");
        assert_eq!(group_accessor("3scale.net"), "_3scale_net");
        assert_eq!(group_type("example_com").to_string(), "ExampleCom");
    }

    #[test]
    fn pinned_accessors_are_snake_case_identifiers() {
        for name in ["example", "istio_networking", "_private", "v2"] {
            assert!(valid_accessor(name), "{name}");
        }
        for name in [
            "", "_", "Example", "9lives", "my-group", "a.b", "type", "self", "ü",
        ] {
            assert!(!valid_accessor(name), "{name}");
        }
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
