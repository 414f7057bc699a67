//! Skipping the files of an input that cannot declare a resource the filters keep, decided
//! from a file's module path and a scan of its text before the file is parsed.
//!
//! Without `--include`, a file whose module path fits the Rust path filters is parsed without
//! a scan. Otherwise a file is parsed when it may declare a module in another file (whose
//! files are found only through it), when it mentions `ListableResource` (whether the crate
//! uses that marker decides which `impl Resource` blocks count, wherever they are), and when it
//! may declare a resource the filters keep:
//!
//! - it names `CustomResource` or `Informer` (derived resources) or has `impl` and `Resource`
//!   (k8s-openapi style);
//! - for some `--include` pattern, the text holds the string literals its group and version
//!   patterns match (every group and version is declared by one): each part between `*`s
//!   occurs, the first right after a `"`, the last right before one (`apps.example.com/v1/*`
//!   needs `"apps.example.com"` and `"v1"`), unless the text has escapes that could spell a
//!   name otherwise;
//! - a derived resource's Rust path is the module's path followed by the type (and any inline
//!   modules), so the module's path must fit an `--include-path` prefix and must not be under
//!   an `--exclude-path` one; an `impl Resource for super::X` or `crate::x::X` can name a type
//!   anywhere, so a file with such paths is not pruned by Rust path.

use super::scan::{has_word, may_declare_file_module, may_escape_names};
use crate::filter::Filter;

/// The filters, as far as they can rule files out before they are parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prune {
    /// For each `--include` pattern, what the text declaring a resource it matches holds
    /// ([`needles`]).
    include: Vec<Vec<String>>,
    /// The `--include-path` prefixes, without leading and trailing `::`.
    include_paths: Vec<String>,
    /// The `--exclude-path` prefixes, without leading and trailing `::`.
    exclude_paths: Vec<String>,
}

/// What the string literal of a name that `pattern` (`*` matching any run of characters)
/// matches contains: each part between `*`s, empty ones left out, with the literal's opening
/// `"` before the first part and its closing `"` after the last (a raw string's too).
fn needles(pattern: &str) -> Vec<String> {
    let parts: Vec<&str> = pattern.split('*').collect();
    let last = parts.len() - 1;
    parts
        .iter()
        .enumerate()
        .filter(|(_, part)| !part.is_empty())
        .map(|(i, part)| {
            let open = if i == 0 { "\"" } else { "" };
            let close = if i == last { "\"" } else { "" };
            format!("{open}{part}{close}")
        })
        .collect()
}

/// `prefix` as [`crate::filter::has_path_prefix`] compares it: no leading or trailing `::`.
fn trimmed(prefix: &str) -> String {
    prefix.trim_start_matches("::").trim_end_matches("::").to_owned()
}

/// Whether the Rust path `path` (without a leading `::`) is `prefix` or under it.
fn is_under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with("::"))
}

impl Prune {
    /// The pruning `filter` allows; `None` when it allows none: without `--include`,
    /// `--include-path` and `--exclude-path` any file may declare a resource that is kept.
    pub(crate) fn new(filter: &Filter) -> Option<Self> {
        if filter.include.is_empty() && filter.include_paths.is_empty() && filter.exclude_paths.is_empty() {
            return None;
        }
        Some(Self {
            include: filter
                .include
                .iter()
                .map(|p| p.group_and_version().into_iter().flat_map(needles).collect())
                .collect(),
            include_paths: filter.include_paths.iter().map(|p| trimmed(p)).collect(),
            exclude_paths: filter.exclude_paths.iter().map(|p| trimmed(p)).collect(),
        })
    }

    /// Whether the file of the module at Rust path `module` (such as `::crds::v1`), whose text
    /// is `text`, must be parsed (see the module docs); `false` only when parsing it cannot
    /// change what is generated.
    pub(crate) fn must_parse(&self, module: &str, text: &str) -> bool {
        let path_fits = self.may_match_path(module.trim_start_matches("::"));
        if path_fits && self.include.is_empty() {
            // Only a scan for declarations could rule the file out, and most files a path
            // filter keeps declare resources: parsing is what it would mostly come to.
            return true;
        }
        if may_declare_file_module(text) || has_word(text, "ListableResource") {
            return true;
        }
        if !self.may_match_gvr(text) {
            return false;
        }
        let derived = has_word(text, "CustomResource") || has_word(text, "Informer");
        let implemented = has_word(text, "impl") && has_word(text, "Resource");
        let escapes_module = implemented && (has_word(text, "super") || has_word(text, "crate"));
        (derived || implemented) && (path_fits || escapes_module)
    }

    /// Whether `text` may declare a group and version an `--include` pattern matches.
    fn may_match_gvr(&self, text: &str) -> bool {
        self.include.is_empty()
            || may_escape_names(text)
            || self
                .include
                .iter()
                .any(|literals| literals.iter().all(|literal| text.contains(literal.as_str())))
    }

    /// Whether a type declared in module `module` (or in an inline module of it) may be kept by
    /// the Rust path filters.
    fn may_match_path(&self, module: &str) -> bool {
        let included = self.include_paths.is_empty()
            || self.include_paths.iter().any(|prefix| {
                is_under(module, prefix)
                    || prefix
                        .strip_prefix(module)
                        .is_some_and(|rest| rest.starts_with("::"))
            });
        included && !self.exclude_paths.iter().any(|prefix| is_under(module, prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::GvrPattern;

    fn prune(include: &[&str], include_paths: &[&str], exclude_paths: &[&str]) -> Prune {
        let filter = Filter {
            include: include
                .iter()
                .map(|p| GvrPattern::parse(p).expect("pattern"))
                .collect(),
            exclude: Vec::new(),
            include_paths: include_paths.iter().map(|p| (*p).to_owned()).collect(),
            exclude_paths: exclude_paths.iter().map(|p| (*p).to_owned()).collect(),
        };
        Prune::new(&filter).expect("a pruning filter")
    }

    const WIDGET: &str = "mod prelude { pub use kube::CustomResource; }\n\
        #[derive(CustomResource)]\n\
        #[kube(group = \"apps.example.com\", version = \"v1\", kind = \"Widget\")]\n\
        pub struct WidgetSpec {}\n";

    #[test]
    fn needles_anchor_the_ends_of_patterns() {
        assert_eq!(needles("apps.example.com"), ["\"apps.example.com\""]);
        assert_eq!(needles("v1*"), ["\"v1"]);
        assert_eq!(needles("*.example.*"), [".example."]);
        assert_eq!(needles("a*b*c"), ["\"a", "b", "c\""]);
        assert!(needles("*").is_empty());
        assert!(needles("").is_empty());
    }

    #[test]
    fn only_path_filters_and_includes_prune() {
        let exclude_only = Filter {
            exclude: vec![GvrPattern::parse("*/*/*").expect("pattern")],
            ..Filter::default()
        };
        assert_eq!(Prune::new(&exclude_only), None);
        assert_eq!(Prune::new(&Filter::default()), None);
    }

    #[test]
    fn groups_and_versions_are_found_in_the_text() {
        let m = "::c::apps_example_com::v1::widgets";
        assert!(prune(&["apps.example.com/v1/*"], &[], &[]).must_parse(m, WIDGET));
        assert!(prune(&["*.example.*/*/widgets"], &[], &[]).must_parse(m, WIDGET));
        assert!(!prune(&["apps.example.com/v2/*"], &[], &[]).must_parse(m, WIDGET));
        assert!(!prune(&["example.com/*/*"], &[], &[]).must_parse(m, WIDGET));
        assert!(!prune(&["*/v1beta1/*"], &[], &[]).must_parse(m, WIDGET));
        assert!(prune(&["*/v1*/*"], &[], &[]).must_parse(m, WIDGET));
        let raw = WIDGET.replace("\"apps.example.com\"", "r#\"apps.example.com\"#");
        assert!(prune(&["apps.example.com/v1/*"], &[], &[]).must_parse(m, &raw));
        assert!(!prune(&["batch.example.com/*/*"], &[], &[]).must_parse(m, WIDGET));
        assert!(prune(&["batch.example.com/*/*", "apps.*/*/*"], &[], &[]).must_parse(m, WIDGET));
        let escaped = WIDGET.replace("apps.example", "apps\\x2eexample");
        assert!(prune(&["apps.example.com/v1/*"], &[], &[]).must_parse(m, &escaped));
    }

    #[test]
    fn files_without_declarations_are_skipped_unless_they_lead_elsewhere() {
        let p = prune(&["apps.example.com/*/*"], &[], &[]);
        assert!(!p.must_parse("::c", "//! apps.example.com v1\npub struct S;\n"));
        assert!(p.must_parse("::c", "pub mod v1;\n"));
        assert!(p.must_parse("::c", "impl ListableResource for X {}\n"));
    }

    #[test]
    fn derived_resources_are_pruned_by_module_path() {
        let m = "::c::apps_example_com::v1::widgets";
        assert!(prune(&[], &["::c::apps_example_com"], &[]).must_parse(m, WIDGET));
        assert!(prune(&[], &["c::apps_example_com::v1::widgets::Widget"], &[]).must_parse(m, WIDGET));
        assert!(prune(&[], &["::c::apps_example_com::v1::widgets::"], &[]).must_parse(m, WIDGET));
        assert!(prune(&[], &[""], &[]).must_parse(m, WIDGET));
        assert!(!prune(&[], &["::c::apps_example_co"], &[]).must_parse(m, WIDGET));
        assert!(!prune(&[], &["::c::batch_example_com"], &[]).must_parse(m, WIDGET));
        assert!(!prune(&[], &[], &["::c::apps_example_com"]).must_parse(m, WIDGET));
        assert!(prune(&[], &[], &["::c::apps_example_com::v1::widgets::Other"]).must_parse(m, WIDGET));
        assert!(prune(&[], &["crate::a"], &[]).must_parse("crate::a::b", WIDGET));
    }

    #[test]
    fn impls_naming_other_modules_are_not_pruned_by_path() {
        let local = "impl Resource for Deployment { const GROUP: &str = \"apps\"; }";
        let elsewhere = "impl Resource for crate::apps::Deployment { const GROUP: &str = \"apps\"; }";
        let p = prune(&["apps/*/*"], &["::c::apps"], &[]);
        assert!(!p.must_parse("::c::other", local));
        assert!(p.must_parse("::c::other", elsewhere));
        assert!(p.must_parse("::c::apps", local));
    }
}
