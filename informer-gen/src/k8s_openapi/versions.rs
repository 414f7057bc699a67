//! Reading the resources of every Kubernetes version module of k8s-openapi (`src/v1_33`,
//! `src/v1_34`, …) and which versions each resource exists in.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use informer_templates::Resource;

use crate::{Error, Location, parse};

/// A Kubernetes minor version k8s-openapi has a module for, such as 1.37 (`src/v1_37`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    /// The major version (1).
    pub major: u32,
    /// The minor version.
    pub minor: u32,
}

impl KubeVersion {
    /// The cfg generated code is gated on: `k8s_1_37`.
    pub fn cfg(self) -> String {
        format!("k8s_{}_{}", self.major, self.minor)
    }

    fn parse_dir(name: &str) -> Option<Self> {
        let (major, minor) = name.strip_prefix('v')?.split_once('_')?;
        Some(Self {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }
}

impl std::fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A listable resource and the versions it exists in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VersionedResource {
    /// The resource, without `cfg`s; its Rust path is the public one
    /// (`::k8s_openapi::api::apps::v1::Deployment`).
    pub(crate) resource: Resource,
    /// The versions that have it, sorted.
    pub(crate) versions: Vec<KubeVersion>,
    /// Where the newest version declares it.
    pub(crate) location: Location,
}

/// Every listable resource with `ObjectMeta` in the version modules under `src`, merged by
/// group, version, plural and Rust path; the versions found; and the files read.
pub(crate) fn read_versions(src: &Path) -> Result<(Vec<KubeVersion>, Vec<VersionedResource>), Error> {
    let entries = std::fs::read_dir(src).map_err(|source| parse::Error::Read {
        path: src.to_path_buf(),
        source,
    })?;
    let mut versions: Vec<(KubeVersion, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            Some((
                KubeVersion::parse_dir(&e.file_name().to_string_lossy())?,
                e.path(),
            ))
        })
        .collect();
    versions.sort();
    if versions.is_empty() {
        return Err(Error::NoKubeVersions {
            dir: src.to_path_buf(),
        });
    }
    let mut merged: BTreeMap<(String, String, String, String), VersionedResource> = BTreeMap::new();
    for (version, dir) in &versions {
        for found in read_version(dir)? {
            let path = quote::ToTokens::to_token_stream(&found.resource.rust_path)
                .to_string()
                .replace(' ', "");
            let r = &found.resource;
            let key = (r.group.clone(), r.version.clone(), r.plural.clone(), path);
            let entry = merged.entry(key).or_insert_with(|| VersionedResource {
                resource: found.resource.clone(),
                versions: Vec::new(),
                location: found.location.clone(),
            });
            entry.versions.push(*version);
            entry.location = found.location;
        }
    }
    Ok((
        versions.into_iter().map(|(v, _)| v).collect(),
        merged.into_values().collect(),
    ))
}

/// The listable resources with `ObjectMeta` of one version module: each `.rs` file that
/// mentions `ListableResource` is read as the module its directory names
/// (`api/apps/v1/deployment.rs` holds `::k8s_openapi::api::apps::v1::Deployment`, re-exported
/// there from its private file module).
fn read_version(dir: &Path) -> Result<Vec<parse::Found>, Error> {
    let mut files = Vec::new();
    collect_rs_files(dir, &mut files)?;
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|source| parse::Error::Read {
            path: file.clone(),
            source,
        })?;
        if !text.contains("ListableResource") {
            continue;
        }
        let module = module_path(dir, &file);
        let parsed = parse::parse_crate(&file, Some(text), &module, None)?;
        found.extend(parsed.found.into_iter().filter(|f| {
            let path = quote::ToTokens::to_token_stream(&f.resource.rust_path)
                .to_string()
                .replace(' ', "");
            parsed.object_meta.contains(&path)
        }));
    }
    Ok(found)
}

/// `::k8s_openapi::api::apps::v1` for `<dir>/api/apps/v1/deployment.rs`.
fn module_path(dir: &Path, file: &Path) -> String {
    let mut path = String::from("::k8s_openapi");
    if let Some(parent) = file.strip_prefix(dir).ok().and_then(Path::parent) {
        for component in parent.components() {
            path.push_str("::");
            path.push_str(&component.as_os_str().to_string_lossy());
        }
    }
    path
}

fn collect_rs_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| parse::Error::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            collect_rs_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_directories_and_module_paths() {
        assert_eq!(
            KubeVersion::parse_dir("v1_37"),
            Some(KubeVersion { major: 1, minor: 37 })
        );
        assert_eq!(KubeVersion::parse_dir("api"), None);
        assert_eq!(KubeVersion { major: 1, minor: 37 }.cfg(), "k8s_1_37");
        assert_eq!(
            module_path(
                Path::new("/s/v1_37"),
                Path::new("/s/v1_37/api/apps/v1/deployment.rs")
            ),
            "::k8s_openapi::api::apps::v1"
        );
    }
}
