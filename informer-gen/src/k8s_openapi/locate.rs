//! Finding the k8s-openapi source tree through `cargo metadata`.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::Error;

/// The k8s-openapi package of a Cargo workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// Its version, such as `0.29.0`.
    pub version: String,
    /// The directory of its `Cargo.toml` (its sources are under `src/`).
    pub dir: PathBuf,
}

/// The `k8s-openapi` package in the dependency graph of the workspace of `manifest_path` (the
/// current directory's when `None`), as `cargo metadata --format-version 1` reports it; when
/// several versions are in the graph, the one whose version starts with `version_prefix`.
pub(crate) fn locate(manifest_path: Option<&Path>, version_prefix: Option<&str>) -> Result<Package, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["metadata", "--format-version", "1"]);
    if let Some(path) = manifest_path {
        command.arg("--manifest-path").arg(path);
    }
    let failed = |message: String| Error::CargoMetadata { message };
    let output = command.output().map_err(|e| failed(e.to_string()))?;
    if !output.status.success() {
        return Err(failed(String::from_utf8_lossy(&output.stderr).trim().to_owned()));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| failed(e.to_string()))?;
    let packages = metadata
        .get("packages")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| failed("the output has no `packages` array".to_owned()))?;
    let mut found: Vec<Package> = packages
        .iter()
        .filter(|p| p.get("name").and_then(serde_json::Value::as_str) == Some("k8s-openapi"))
        .filter_map(|p| {
            let version = p.get("version")?.as_str()?.to_owned();
            let manifest = PathBuf::from(p.get("manifest_path")?.as_str()?);
            Some(Package {
                version,
                dir: manifest.parent()?.to_path_buf(),
            })
        })
        .filter(|p| version_prefix.is_none_or(|prefix| p.version.starts_with(prefix)))
        .collect();
    found.sort_by(|a, b| a.version.cmp(&b.version));
    found.dedup();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(Error::K8sOpenapiNotFound {
            found: found
                .iter()
                .map(|p| p.version.clone())
                .collect::<Vec<_>>()
                .join(", "),
            prefix: version_prefix.unwrap_or("").to_owned(),
        }),
    }
}
