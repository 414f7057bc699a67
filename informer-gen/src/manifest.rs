//! Cargo manifests: the input crate's package name, and the manifest of a generated crate.

use std::path::{Component, Path, PathBuf};

use informer_templates::Resource;
use syn::{Meta, Token, punctuated::Punctuated};

/// The `[package] name` of the manifest `text` (a line-based reading that handles the usual
/// `name = "..."` form).
pub fn package_name(text: &str) -> Option<String> {
    package_field(text, "name")
}

/// The `[package] version` of the manifest `text`, read like [`package_name`].
pub fn package_version(text: &str) -> Option<String> {
    package_field(text, "version")
}

fn package_field(text: &str, key: &str) -> Option<String> {
    let mut in_package = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if !in_package {
            continue;
        }
        if let Some(value) = line.strip_prefix(key).map(str::trim_start)
            && let Some(value) = value.strip_prefix('=')
        {
            let value = value.trim();
            let value = value.split('#').next().unwrap_or(value).trim();
            return value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_owned);
        }
    }
    None
}

/// The Cargo features named in `feature = "..."` predicates of the resources' `cfg`s, sorted.
pub fn cfg_features(resources: &[&Resource]) -> Vec<String> {
    let mut features = std::collections::BTreeSet::new();
    for resource in resources {
        for cfg in &resource.cfgs {
            collect_features(cfg, &mut features);
        }
    }
    features.into_iter().collect()
}

fn collect_features(meta: &Meta, out: &mut std::collections::BTreeSet<String>) {
    match meta {
        Meta::NameValue(nv) if nv.path.is_ident("feature") => {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                out.insert(s.value());
            }
        }
        Meta::List(list) => {
            if let Ok(nested) = list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
                for m in &nested {
                    collect_features(m, out);
                }
            }
        }
        _ => {}
    }
}

/// `to` relative to `from` (both absolute), lexically.
pub fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<Component<'_>> = from.components().collect();
    let to: Vec<Component<'_>> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c.as_os_str());
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// The runtime's version requirement that generated code of this informer-gen version needs:
/// the generator's own version up to its first non-zero part, so `0.1.4` gives `0.1` and `1.2.0`
/// gives `1` (informer-gen and informer-runtime are released with the same version).
pub fn runtime_version_requirement() -> String {
    caret_requirement(env!("CARGO_PKG_VERSION"))
}

/// The default runtime dependency line of a generated crate's `Cargo.toml`: the published
/// runtime, such as `informer-runtime = "0.1"` ([`runtime_version_requirement`]). A path
/// dependency (as the tests of a workspace want) replaces it through
/// [`Config::runtime_dependency`](crate::Config::runtime_dependency).
pub fn default_runtime_dependency() -> String {
    format!("informer-runtime = \"{}\"", runtime_version_requirement())
}

/// The shortest requirement Cargo reads as compatible with `version`: its parts up to the
/// first non-zero one (`0.0.3` stays whole; pre-release and build suffixes are dropped).
pub fn caret_requirement(version: &str) -> String {
    let core = version.split(['-', '+']).next().unwrap_or(version);
    let parts: Vec<&str> = core.split('.').collect();
    let keep = parts
        .iter()
        .position(|part| *part != "0")
        .map_or(parts.len(), |first_non_zero| first_non_zero + 1);
    parts[..keep.min(parts.len())].join(".")
}

/// What can go wrong choosing a generated crate's dependencies.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input dependency line is not `name = ...`.
    #[error(
        "failed to read the input dependency \"{line}\": expected a Cargo.toml dependency line such as `my-crds = \"1.2\"` or `my-crds = {{ path = \"../my-crds\" }}`"
    )]
    DependencyLine {
        /// The line.
        line: String,
    },
    /// An input dependency line names a package that is not an input.
    #[error(
        "failed to use the input dependency \"{line}\": `{package}` is not the package of an input (the inputs are: {inputs}); name the input's package before `=`"
    )]
    UnknownInput {
        /// The line.
        line: String,
        /// The package it names.
        package: String,
        /// The inputs' packages, comma-separated.
        inputs: String,
    },
}

/// The package a dependency line such as `my-crds = "1"` or `my-crds.path = "x"` is for.
pub fn dependency_package(line: &str) -> Option<String> {
    let (key, value) = line.split_once('=')?;
    let key = key.trim();
    let key = key.split('.').next().unwrap_or(key).trim().trim_matches('"');
    let valid = !key.is_empty()
        && !value.trim().is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    valid.then(|| key.to_owned())
}

/// Where Cargo keeps its files: `$CARGO_HOME`, else `.cargo` in the home directory.
fn cargo_home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("CARGO_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(home));
    }
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".cargo"))
}

/// The version of the package `name` whose (absolute) directory is `dir` when `dir` is a
/// crate unpacked by Cargo from a registry: inside `$CARGO_HOME/registry/src/`, or a directory
/// `<name>-<version>` in `registry/src/<index>/` of another Cargo home.
pub fn registry_version(name: &str, dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    let version = package_version(&text)?;
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let in_cargo_home = cargo_home()
        .map(|home| {
            std::fs::canonicalize(&home)
                .unwrap_or(home)
                .join("registry")
                .join("src")
        })
        .is_some_and(|sources| dir.starts_with(sources));
    let unpacked = dir
        .file_name()
        .is_some_and(|n| n.to_string_lossy() == format!("{name}-{version}"))
        && dir
            .ancestors()
            .nth(2)
            .is_some_and(|sources| sources.ends_with(Path::new("registry").join("src")));
    (in_cargo_home || unpacked).then_some(version)
}

/// The dependency line of the input package `name` in directory `dir` (absolute) for a
/// generated crate in `out_dir` (absolute): `name = "<version>"` when `dir` is a registry crate
/// ([`registry_version`]), else `name = { path = "<dir relative to out_dir>" }`.
pub fn input_dependency(name: &str, dir: &Path, out_dir: &Path) -> String {
    match registry_version(name, dir) {
        Some(version) => format!("{name} = \"{version}\""),
        None => {
            let path = relative_path(out_dir, dir)
                .display()
                .to_string()
                .replace('\\', "/");
            format!("{name} = {{ path = \"{path}\" }}")
        }
    }
}

/// One input crate a generated crate depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The package name.
    pub package: String,
    /// Its line in `[dependencies]`.
    pub line: String,
}

/// The `Cargo.toml` of a generated crate named `name`: its features enable the same-named
/// features of every input crate.
pub fn crate_manifest(
    name: &str,
    dependencies: &[Dependency],
    runtime_dependency: &str,
    features: &[String],
) -> String {
    let mut out = String::new();
    out.push_str("# @generated by informer-gen. DO NOT EDIT.\n");
    out.push_str("[package]\n");
    out.push_str(&format!("name = \"{name}\"\n"));
    out.push_str("description = \"Typed informers, listers and a shared informer factory (generated by informer-gen)\"\n");
    out.push_str("version = \"0.1.0\"\nedition = \"2024\"\npublish = false\n");
    if !features.is_empty() {
        out.push_str("\n[features]\n");
        for feature in features {
            let enables: Vec<String> = dependencies
                .iter()
                .map(|d| format!("\"{}/{feature}\"", d.package))
                .collect();
            out.push_str(&format!("{feature} = [{}]\n", enables.join(", ")));
        }
    }
    out.push_str("\n[dependencies]\n");
    out.push_str(runtime_dependency.trim());
    out.push('\n');
    for dependency in dependencies {
        out.push_str(dependency.line.trim());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        let text =
            "[workspace]\nname = \"no\"\n[package]\nversion = \"1\"\nname = \"sample-crds\" # the name\n";
        assert_eq!(package_name(text).as_deref(), Some("sample-crds"));
        assert_eq!(package_name("[package]\nversion = \"1\"\n"), None);
    }

    #[test]
    fn runtime_requirements_follow_the_generator_version() {
        assert_eq!(caret_requirement("0.1.0"), "0.1");
        assert_eq!(caret_requirement("0.12.3"), "0.12");
        assert_eq!(caret_requirement("1.2.0"), "1");
        assert_eq!(caret_requirement("2.0.0-rc.1"), "2");
        assert_eq!(caret_requirement("0.0.3"), "0.0.3");
        assert_eq!(caret_requirement("0.0.0"), "0.0.0");
        let version = env!("CARGO_PKG_VERSION");
        assert!(version.starts_with(&runtime_version_requirement()));
        assert_eq!(
            default_runtime_dependency(),
            format!("informer-runtime = \"{}\"", runtime_version_requirement())
        );
    }

    #[test]
    fn generated_crates_depend_on_the_published_runtime_by_default() {
        let root = std::env::temp_dir().join(format!("informer-gen-manifest-{}", std::process::id()));
        let files = crate::Config::new()
            .input_source(
                root.join("crds.rs"),
                "#[derive(CustomResource)]\n\
                 #[kube(group = \"example.com\", version = \"v1\", kind = \"Foo\", namespaced)]\n\
                 pub struct FooSpec {}\n",
            )
            .input_crate_name("crds")
            .out_dir(root.join("out"))
            .layout(crate::Layout::Crate {
                name: "foo-informers".into(),
            })
            .generate()
            .expect("generated");
        let manifest = &files[&PathBuf::from("Cargo.toml")];
        assert!(
            manifest.lines().any(|line| line == default_runtime_dependency()),
            "{manifest}"
        );
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("/a/b/out"), Path::new("/a/crds")),
            PathBuf::from("../../crds")
        );
        assert_eq!(
            relative_path(Path::new("/a"), Path::new("/a")),
            PathBuf::from(".")
        );
    }

    #[test]
    fn features_come_from_cfgs() {
        let r = Resource::new(
            "g",
            "v1",
            "K",
            "ks",
            informer_templates::Scope::Cluster,
            syn::parse_quote!(::c::K),
        )
        .with_cfgs(vec![
            syn::parse_quote!(all(unix, feature = "b")),
            syn::parse_quote!(feature = "a"),
        ]);
        assert_eq!(cfg_features(&[&r]), ["a", "b"]);
    }
}
