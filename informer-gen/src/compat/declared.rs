//! The dependencies a crate's `Cargo.toml` declares on the checked packages: in
//! `[dependencies]` and `[target.'...'.dependencies]`, renamed (`package = "kube"`) or not,
//! inherited from the workspace (`kube.workspace = true`) or not.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

/// A parsed manifest and where it is.
pub(crate) struct Manifest {
    /// The `Cargo.toml`.
    pub(crate) path: PathBuf,
    /// Its tables.
    pub(crate) table: Table,
}

/// One dependency on a checked package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Declaration {
    /// The package depended on (`kube`), whatever the key.
    pub(crate) package: String,
    /// How the dependency reads, such as `` `kube = "0.98"` in [dependencies] `` or
    /// `` `kube.workspace = true` in [dependencies], `kube = "0.98"` in [workspace.dependencies] ``.
    pub(crate) written: String,
    /// Its version requirement; `None` for a path or git dependency without one.
    pub(crate) requirement: Option<String>,
    /// The manifest the requirement is in (the workspace root's for an inherited one).
    pub(crate) file: PathBuf,
}

/// The dependencies of `manifest` on one of `packages`, in its normal dependency tables. An
/// inherited one (`workspace = true`) is looked up in `workspace`'s `[workspace.dependencies]`,
/// and skipped when there is no workspace (Cargo refuses such a manifest anyway).
pub(crate) fn declarations(
    manifest: &Manifest,
    workspace: Option<&Manifest>,
    packages: &[&str],
) -> Vec<Declaration> {
    let mut tables: Vec<(String, &Table)> = Vec::new();
    if let Some(table) = manifest.table.get("dependencies").and_then(Value::as_table) {
        tables.push(("[dependencies]".to_owned(), table));
    }
    if let Some(targets) = manifest.table.get("target").and_then(Value::as_table) {
        let mut targets: Vec<(&String, &Value)> = targets.iter().collect();
        targets.sort_by_key(|(target, _)| target.as_str());
        for (target, table) in targets {
            if let Some(table) = table.get("dependencies").and_then(Value::as_table) {
                tables.push((format!("[target.'{target}'.dependencies]"), table));
            }
        }
    }
    let inherited = workspace.and_then(|root| {
        let table = root.table.get("workspace")?.get("dependencies")?.as_table()?;
        Some((root, table))
    });
    let mut found = Vec::new();
    for (section, table) in tables {
        // In key order, whatever the order of the map.
        let mut entries: Vec<(&String, &Value)> = table.iter().collect();
        entries.sort_by_key(|(key, _)| key.as_str());
        for (key, value) in entries {
            let written = format!("`{}` in {section}", written(key, value));
            let declaration = if is_inherited(value) {
                let Some((root, value)) = inherited.and_then(|(root, table)| Some((root, table.get(key)?)))
                else {
                    continue;
                };
                Declaration {
                    package: package(key, value),
                    written: format!(
                        "{written}, `{}` in [workspace.dependencies]",
                        self::written(key, value)
                    ),
                    requirement: requirement(value),
                    file: root.path.clone(),
                }
            } else {
                Declaration {
                    package: package(key, value),
                    written,
                    requirement: requirement(value),
                    file: manifest.path.clone(),
                }
            };
            if packages.contains(&declaration.package.as_str()) {
                found.push(declaration);
            }
        }
    }
    found
}

/// Whether a dependency is `{ workspace = true, ... }`.
fn is_inherited(value: &Value) -> bool {
    value.get("workspace").and_then(Value::as_bool) == Some(true)
}

/// The package a dependency `key = value` is on: its `package`, else its key.
fn package(key: &str, value: &Value) -> String {
    value
        .get("package")
        .and_then(Value::as_str)
        .unwrap_or(key)
        .to_owned()
}

/// The version requirement of a dependency: `"5.0"` or `{ version = "5.0" }`.
fn requirement(value: &Value) -> Option<String> {
    match value {
        Value::String(requirement) => Some(requirement.clone()),
        _ => value.get("version").and_then(Value::as_str).map(str::to_owned),
    }
}

/// The dependency as written, shortened to what matters: `kube = "0.98"`,
/// `kube-rs = { package = "kube", version = "0.98" }`, `kube.workspace = true`.
fn written(key: &str, value: &Value) -> String {
    if is_inherited(value) {
        return format!("{key}.workspace = true");
    }
    let version = requirement(value).map(|r| format!("\"{r}\""));
    match (value.get("package").and_then(Value::as_str), version) {
        (None, Some(version)) if value.is_str() => format!("{key} = {version}"),
        (None, Some(version)) => format!("{key} = {{ version = {version}, ... }}"),
        (Some(package), Some(version)) => {
            format!("{key} = {{ package = \"{package}\", version = {version}, ... }}")
        }
        (Some(package), None) => format!("{key} = {{ package = \"{package}\", ... }}"),
        (None, None) => format!("{key} = {{ ... }}"),
    }
}

/// The root manifest of the workspace `manifest` (in directory `dir`) belongs to: the one its
/// `package.workspace` names, else the nearest `Cargo.toml` with a `[workspace]` table in `dir`
/// or above it. `read` parses a manifest, `None` when there is none.
pub(crate) fn workspace_root<E>(
    dir: &Path,
    manifest: &Manifest,
    mut read: impl FnMut(&Path) -> Result<Option<Manifest>, E>,
) -> Result<Option<Manifest>, E> {
    if manifest.table.contains_key("workspace") {
        return Ok(Some(Manifest {
            path: manifest.path.clone(),
            table: manifest.table.clone(),
        }));
    }
    if let Some(root) = manifest
        .table
        .get("package")
        .and_then(|p| p.get("workspace"))
        .and_then(Value::as_str)
    {
        return read(&dir.join(root).join("Cargo.toml"));
    }
    for ancestor in dir.ancestors().skip(1) {
        let path = ancestor.join("Cargo.toml");
        // Only a manifest that may have a `[workspace]` table is parsed.
        let may_be_root = std::fs::read_to_string(&path).is_ok_and(|text| text.contains("workspace"));
        if may_be_root
            && let Some(root) = read(&path)?
            && root.table.contains_key("workspace")
        {
            return Ok(Some(root));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(path: &str, text: &str) -> Manifest {
        Manifest {
            path: PathBuf::from(path),
            table: text.parse().expect("TOML"),
        }
    }

    const CHECKED: &[&str] = &["kube", "k8s-openapi"];

    #[test]
    fn plain_tables_and_renamed_dependencies() {
        let crds = manifest(
            "crds/Cargo.toml",
            r#"
            [package]
            name = "crds"

            [dependencies]
            kube = { version = "0.98", features = ["derive"] }
            serde = "1"
            openapi = { package = "k8s-openapi", version = "0.24" }

            [target.'cfg(unix)'.dependencies.kube]
            version = "~0"

            [dev-dependencies]
            k8s-openapi = "0.1"
            "#,
        );
        let found = declarations(&crds, None, CHECKED);
        let read: Vec<(&str, Option<&str>, &str)> = found
            .iter()
            .map(|d| (d.package.as_str(), d.requirement.as_deref(), d.written.as_str()))
            .collect();
        assert_eq!(
            read,
            [
                (
                    "kube",
                    Some("0.98"),
                    "`kube = { version = \"0.98\", ... }` in [dependencies]"
                ),
                (
                    "k8s-openapi",
                    Some("0.24"),
                    "`openapi = { package = \"k8s-openapi\", version = \"0.24\", ... }` in [dependencies]"
                ),
                (
                    "kube",
                    Some("~0"),
                    "`kube = { version = \"~0\", ... }` in [target.'cfg(unix)'.dependencies]"
                ),
            ]
        );
        assert!(found.iter().all(|d| d.file == Path::new("crds/Cargo.toml")));
    }

    #[test]
    fn inherited_dependencies_are_read_from_the_workspace() {
        let member = manifest(
            "ws/crds/Cargo.toml",
            "[package]\nname = \"crds\"\n[dependencies]\nkube.workspace = true\nk8s-openapi = { workspace = true, features = [\"latest\"] }\nschemars.workspace = true\n",
        );
        let root = manifest(
            "ws/Cargo.toml",
            "[workspace]\nmembers = [\"crds\"]\n[workspace.dependencies]\nkube = \"0.98\"\nk8s-openapi = { version = \"0.29\", default-features = false }\n",
        );
        let found = declarations(&member, Some(&root), CHECKED);
        let packages: Vec<&str> = found.iter().map(|d| d.package.as_str()).collect();
        assert_eq!(packages, ["k8s-openapi", "kube"], "in key order");
        assert_eq!(found[0].requirement.as_deref(), Some("0.29"));
        assert_eq!(found[1].requirement.as_deref(), Some("0.98"));
        assert_eq!(found[1].file, Path::new("ws/Cargo.toml"));
        assert_eq!(
            found[1].written,
            "`kube.workspace = true` in [dependencies], `kube = \"0.98\"` in [workspace.dependencies]"
        );
        assert!(declarations(&member, None, CHECKED).is_empty(), "no workspace");
    }

    #[test]
    fn renamed_workspace_dependencies_and_path_dependencies() {
        let member = manifest(
            "ws/crds/Cargo.toml",
            "[dependencies]\nkube-rs.workspace = true\nk8s-openapi = { path = \"../k8s-openapi\" }\n",
        );
        let root = manifest(
            "ws/Cargo.toml",
            "[workspace.dependencies]\nkube-rs = { package = \"kube\", version = \"5.1\" }\n",
        );
        let found = declarations(&member, Some(&root), CHECKED);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].package, "k8s-openapi");
        assert_eq!(found[0].requirement, None);
        assert_eq!(found[1].package, "kube");
        assert_eq!(found[1].requirement.as_deref(), Some("5.1"));
    }
}
