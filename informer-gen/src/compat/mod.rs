//! Checking that an input crate is built with the kube and k8s-openapi versions generated code
//! needs: generated informers name the input's types as `kube::Resource`s and k8s-openapi
//! objects of the runtime's versions, so an input built with other versions does not compile
//! with them.

mod declared;
mod error;
mod lock;
mod requirement;
mod targets;

use std::path::{Path, PathBuf};

use semver::VersionReq;
use toml::{Table, Value};

use declared::{Manifest, declarations, workspace_root};
pub use error::{Error, Mismatch};
use targets::CHECKED;
pub use targets::{K8S_OPENAPI_REQUIREMENT, KUBE_REQUIREMENT};

/// Checks the crate in `dir`, package `package`: each of its dependencies (in `Cargo.toml`,
/// inherited ones in its workspace's) on kube, kube-core, kube-derive or k8s-openapi must allow
/// a version generated code needs ([`requirement::meets`]), and so must the versions its
/// `Cargo.lock` (or its workspace's) holds, when there is one. Nothing is checked without a
/// `Cargo.toml`. Returns the files read.
pub(crate) fn check(dir: &Path, package: &str) -> Result<Vec<PathBuf>, Error> {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut read = Vec::new();
    let Some(manifest) = read_manifest(&dir.join("Cargo.toml"))? else {
        return Ok(read);
    };
    read.push(manifest.path.clone());
    let root = workspace_root(&dir, &manifest, read_manifest)?;
    read.extend(
        root.as_ref()
            .map(|r| r.path.clone())
            .filter(|p| *p != manifest.path),
    );
    let names: Vec<&str> = CHECKED.iter().map(|(name, _)| *name).collect();
    let mut mismatches = Vec::new();
    let mut fitting = Vec::new();
    for declaration in declarations(&manifest, root.as_ref(), &names) {
        let needed = needed(&declaration.package);
        let Some(text) = &declaration.requirement else {
            fitting.push(declaration.package);
            continue;
        };
        let required = VersionReq::parse(text).map_err(|e| Error::Requirement {
            path: declaration.file.clone(),
            written: declaration.written.clone(),
            message: e.to_string(),
            example: needed,
        })?;
        if requirement::meets(&required, &target(needed)) {
            fitting.push(declaration.package);
        } else {
            mismatches.push(Mismatch {
                file: declaration.file,
                package: declaration.package,
                found: declaration.written,
                locked: false,
                needed,
            });
        }
    }
    // The lock is checked for the dependencies whose requirements fit (a mismatched
    // requirement is the one to change).
    let lock_dirs = [Some(dir.as_path()), root.as_ref().and_then(|r| r.path.parent())];
    let lock_path = lock_dirs
        .into_iter()
        .flatten()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.is_file());
    if let Some(lock_path) = lock_path.filter(|_| !fitting.is_empty()) {
        let lock = parse(&lock_path, &read_text(&lock_path)?)?;
        read.push(lock_path.clone());
        let version = package_version(&manifest, root.as_ref());
        fitting.sort();
        fitting.dedup();
        for dependency in fitting {
            let needed = needed(&dependency);
            let versions = lock::locked_versions(&lock, package, version.as_deref(), &dependency);
            if !versions.is_empty()
                && !versions
                    .iter()
                    .any(|v| requirement::locked_meets(v, &target(needed)))
            {
                let found: Vec<String> = versions.iter().map(ToString::to_string).collect();
                mismatches.push(Mismatch {
                    file: lock_path.clone(),
                    package: dependency,
                    found: found.join(" and "),
                    locked: true,
                    needed,
                });
            }
        }
    }
    if mismatches.is_empty() {
        Ok(read)
    } else {
        Err(Error::Mismatch {
            package: package.to_owned(),
            mismatches,
        })
    }
}

/// The requirement generated code has of the checked `package`.
fn needed(package: &str) -> &'static str {
    CHECKED
        .iter()
        .find(|(name, _)| *name == package)
        .map_or(KUBE_REQUIREMENT, |(_, requirement)| requirement)
}

/// `requirement`, one of [`CHECKED`]'s, parsed.
fn target(requirement: &str) -> VersionReq {
    // The requirements are constants, tested to parse.
    VersionReq::parse(requirement).unwrap_or(VersionReq::STAR)
}

/// The `[package] version` of `manifest`, or its workspace's when inherited.
fn package_version(manifest: &Manifest, root: Option<&Manifest>) -> Option<String> {
    let version = manifest.table.get("package")?.get("version")?;
    match version {
        Value::String(version) => Some(version.clone()),
        _ => root?
            .table
            .get("workspace")?
            .get("package")?
            .get("version")?
            .as_str()
            .map(str::to_owned),
    }
}

/// The text of `path`.
fn read_text(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| Error::Manifest {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// `text`, the content of `path`, as TOML.
fn parse(path: &Path, text: &str) -> Result<Table, Error> {
    text.parse().map_err(|e: toml::de::Error| {
        let line = e
            .span()
            .and_then(|span| text.get(..span.start))
            .map(|before| before.matches('\n').count() + 1);
        Error::Manifest {
            path: path.to_path_buf(),
            message: match line {
                Some(line) => format!("line {line}: {}", e.message().trim_end()),
                None => e.message().trim_end().to_owned(),
            },
        }
    })
}

/// The manifest at `path`, `None` when there is none.
fn read_manifest(path: &Path) -> Result<Option<Manifest>, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::Manifest {
                path: path.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    Ok(Some(Manifest {
        table: parse(path, &text)?,
        path: path.to_path_buf(),
    }))
}
