//! What can be wrong with an input's kube and k8s-openapi versions.

use std::{fmt, path::PathBuf};

use super::targets::{CHECKED, allowed_versions};

/// One dependency, or one locked version, of an input crate that generated code cannot be built
/// with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The `Cargo.toml` or `Cargo.lock` that says it.
    pub file: PathBuf,
    /// The package: `kube`, `kube-core`, `kube-derive` or `k8s-openapi`.
    pub package: String,
    /// What the file says: the dependency as written, such as `` `kube = "0.98"` in
    /// [dependencies] ``, or the locked versions, such as `0.99.0`.
    pub found: String,
    /// Whether `found` is what the lock holds (else a requirement).
    pub locked: bool,
    /// The requirement generated code has of the package, such as `5.0`
    /// ([`KUBE_REQUIREMENT`](crate::KUBE_REQUIREMENT)).
    pub needed: &'static str,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (file, package) = (self.file.display(), &self.package);
        let allowed = allowed_versions(self.needed);
        if self.locked {
            write!(
                f,
                "{file}: {package} {} is locked, not a {package} {allowed}",
                self.found
            )
        } else {
            write!(f, "{file}: {} allows no {package} {allowed}", self.found)
        }
    }
}

/// The message of [`Error::Mismatch`].
fn mismatch_message(package: &str, mismatches: &[Mismatch]) -> String {
    let needs: Vec<String> = CHECKED
        .iter()
        .filter(|(name, _)| *name == "kube" || *name == "k8s-openapi")
        .map(|(name, requirement)| format!("{name} {}", allowed_versions(requirement)))
        .collect();
    let mut out = format!(
        "failed to generate informers for `{package}`: it is built with other versions of kube or k8s-openapi than the generated code, which needs {} (informer-runtime {}'s), so the generated code would not compile against it:",
        needs.join(" and "),
        crate::manifest::runtime_version_requirement(),
    );
    for mismatch in mismatches {
        out.push_str(&format!("\n  {mismatch}"));
    }
    let mut changes: Vec<String> = Vec::new();
    for mismatch in mismatches.iter().filter(|m| !m.locked) {
        let change = format!("{} = \"{}\"", mismatch.package, mismatch.needed);
        if !changes.contains(&change) {
            changes.push(change);
        }
    }
    let mut fixes = Vec::new();
    if !changes.is_empty() {
        fixes.push(format!(
            "change its dependencies to {} (or use a release of it that has them)",
            changes.join(", ")
        ));
    }
    let updates: Vec<&str> = mismatches
        .iter()
        .filter(|m| m.locked)
        .map(|m| m.package.as_str())
        .collect();
    if !updates.is_empty() {
        fixes.push(format!(
            "update the locked versions (`cargo update -p {}`)",
            updates.join(" -p ")
        ));
    }
    out.push_str(&format!(
        "\n{}, or generate with an informer-gen release made for the versions the input uses; to generate anyway (when the generated code is built in a workspace that resolves other versions), pass `--allow-version-mismatch` (`Config::allow_version_mismatch(true)` in a build script)",
        fixes.join(" and ")
    ));
    out
}

/// An input crate built with other kube or k8s-openapi versions than generated code, or whose
/// `Cargo.toml` or `Cargo.lock` cannot be read to tell.
///
/// `Debug` prints the message `Display` prints.
#[derive(thiserror::Error)]
pub enum Error {
    /// The input's requirements on kube, kube-core, kube-derive or k8s-openapi, or the versions
    /// its lock holds, allow none of the versions generated code needs.
    #[error("{}", mismatch_message(.package, .mismatches))]
    Mismatch {
        /// The input's package name.
        package: String,
        /// Each dependency or locked version that does not fit.
        mismatches: Vec<Mismatch>,
    },
    /// An input's `Cargo.toml` or `Cargo.lock`, or its workspace's, could not be read or is not
    /// TOML.
    #[error(
        "failed to read {path} to check the input's kube and k8s-openapi versions: {message}; fix the file, or skip the check with `--allow-version-mismatch` (`Config::allow_version_mismatch(true)`)"
    )]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A dependency's version requirement does not parse.
    #[error(
        "failed to read the version requirement of {written} in {path}: {message}; write a Cargo version requirement such as \"{example}\", or skip the check with `--allow-version-mismatch` (`Config::allow_version_mismatch(true)`)"
    )]
    Requirement {
        /// The manifest.
        path: PathBuf,
        /// The dependency as written.
        written: String,
        /// Why it does not parse.
        message: String,
        /// A requirement that fits.
        example: &'static str,
    },
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
