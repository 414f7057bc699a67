//! The versions a `Cargo.lock` holds for the dependencies of one package.

use semver::Version;
use toml::{Table, Value};

/// The versions of `dependency` that the lock entry of the package `name` (of version `version`,
/// when given) depends on; empty when the lock has no such package. A package may depend on
/// several versions of one dependency (through its dev-dependencies, say).
pub(crate) fn locked_versions(
    lock: &Table,
    name: &str,
    version: Option<&str>,
    dependency: &str,
) -> Vec<Version> {
    let packages: Vec<&Table> = lock
        .get("package")
        .and_then(Value::as_array)
        .map(|packages| packages.iter().filter_map(Value::as_table).collect())
        .unwrap_or_default();
    let field = |package: &Table, key: &str| package.get(key).and_then(Value::as_str).map(str::to_owned);
    // A local package has no `source`; a registry package of the same name and version may be
    // locked beside it.
    let mut entries: Vec<&&Table> = packages
        .iter()
        .filter(|p| field(p, "name").as_deref() == Some(name))
        .filter(|p| version.is_none() || field(p, "version").as_deref() == version)
        .collect();
    entries.sort_by_key(|p| p.contains_key("source"));
    let Some(entry) = entries.first() else {
        return Vec::new();
    };
    let dependencies = entry
        .get("dependencies")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    dependencies
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|line| {
            // "kube", "kube 5.0.0" or "kube 5.0.0 (registry+https://...)"
            let mut words = line.split_whitespace();
            if words.next()? != dependency {
                return None;
            }
            let version = match words.next() {
                Some(version) => version.to_owned(),
                // Without a version, the lock holds one package of that name.
                None => packages
                    .iter()
                    .find(|p| field(p, "name").as_deref() == Some(dependency))
                    .and_then(|p| field(p, "version"))?,
            };
            Version::parse(&version).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"
version = 4

[[package]]
name = "crds"
version = "0.1.0"
dependencies = [
 "k8s-openapi",
 "kube 0.98.0",
 "kube 5.0.0 (registry+https://github.com/rust-lang/crates.io-index)",
 "serde",
]

[[package]]
name = "crds"
version = "0.1.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = [
 "kube 5.0.0 (registry+https://github.com/rust-lang/crates.io-index)",
]

[[package]]
name = "k8s-openapi"
version = "0.24.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "kube"
version = "0.98.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "kube"
version = "5.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;

    #[test]
    fn the_local_entry_names_its_dependencies_versions() {
        let lock: Table = LOCK.parse().expect("TOML");
        let versions = |name: &str, version: Option<&str>, dependency: &str| -> Vec<String> {
            locked_versions(&lock, name, version, dependency)
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        assert_eq!(versions("crds", Some("0.1.0"), "kube"), ["0.98.0", "5.0.0"]);
        assert_eq!(versions("crds", None, "k8s-openapi"), ["0.24.0"]);
        assert!(versions("crds", Some("0.2.0"), "kube").is_empty());
        assert!(versions("other", None, "kube").is_empty());
        assert!(versions("crds", None, "kube-core").is_empty());
    }
}
