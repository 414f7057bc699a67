//! What can go wrong generating informers.

use std::{fmt, path::PathBuf};

use crate::Location;

/// A failure to generate or write informers.
///
/// `Debug` prints the message `Display` prints (such as `file:line:col: what is wrong`), so
/// `.expect(...)` in a build script reads as well as the CLI.
#[derive(thiserror::Error)]
pub enum Error {
    /// An input source could not be read or understood.
    #[error(transparent)]
    Parse(#[from] crate::parse::Error),
    /// Two declarations of the same resource.
    #[error(
        "failed to generate informers: {gvr} is declared twice, by `{first_path}` at {first} and by `{second_path}` at {second}; generate one of them by excluding the other, such as with `--exclude-path {second_path}` (`Config::exclude_rust_path(\"{second_path}\")` in a build script)"
    )]
    Duplicate {
        /// `group/version/plural`.
        gvr: String,
        /// The attribute (or `impl Resource` block) of the first declaration.
        first: Box<Location>,
        /// The Rust path of the first declaration's type.
        first_path: String,
        /// The attribute (or `impl Resource` block) of the second declaration.
        second: Box<Location>,
        /// The Rust path of the second declaration's type.
        second_path: String,
    },
    /// The inputs declare no resource (after filtering).
    #[error(
        "failed to find any resource (`#[derive(CustomResource)]` with `#[kube(...)]`, `#[derive(Informer)]` with `#[informer(...)]`, or `impl Resource` with `const GROUP`...){filters} in {read}{hint}"
    )]
    NoResources {
        /// ` matching the filters (...)`, naming them, when filters dropped every resource.
        filters: String,
        /// How many files were read and the first few.
        read: String,
        /// What to change.
        hint: String,
    },
    /// No input was given.
    #[error("failed to generate informers: no input crate or file was given")]
    NoInputs,
    /// An input crate without `src/lib.rs`, or a missing input.
    #[error("failed to find input {path}: expected a crate directory with src/lib.rs or a .rs file")]
    InputNotFound {
        /// The input.
        path: PathBuf,
    },
    /// The package name could not be read from an input's `Cargo.toml`.
    #[error("failed to read the package name from {path}: expected `[package]` with `name = \"...\"`")]
    Manifest {
        /// The manifest.
        path: PathBuf,
    },
    /// A filter pattern is not `group/version/resource`.
    #[error(
        "failed to parse the pattern \"{pattern}\": expected group/version/resource, such as example.com/*/* or */v1/foos"
    )]
    Pattern {
        /// The pattern.
        pattern: String,
    },
    /// A well-known index is declared for a resource that is not generated.
    #[error(
        "failed to generate the index handle {handle}: the resource {resource} is not generated (not found in k8s-openapi, or excluded)"
    )]
    IndexResource {
        /// The handle's name.
        handle: String,
        /// The resource's `group/version/plural`.
        resource: String,
    },
    /// A well-known index's function is not a closure.
    #[error("failed to parse the function of the index handle {handle} as a closure: {message}")]
    IndexFunction {
        /// The handle's name.
        handle: String,
        /// syn's message.
        message: String,
    },
    /// A path option is not a Rust path.
    #[error("failed to parse the {what} \"{path}\" as a Rust path: {message}")]
    RustPath {
        /// Which option.
        what: &'static str,
        /// The value.
        path: String,
        /// syn's message.
        message: String,
    },
    /// No output directory: neither configured nor `OUT_DIR`.
    #[error(
        "failed to find the output directory: call `Config::out_dir` or run from a build script (OUT_DIR)"
    )]
    NoOutDir,
    /// The current directory could not be found to make paths absolute.
    #[error("failed to make {path} absolute: {source}")]
    Absolute {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("failed to write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file in the output directory that was not generated is in the way, or an old
    /// generated file could not be removed.
    #[error(transparent)]
    Output(#[from] crate::output::Error),
    /// An input is built with other kube or k8s-openapi versions than generated code needs, or
    /// its manifest cannot be read to tell.
    #[error(transparent)]
    Version(#[from] crate::compat::Error),
    /// A dependency line of a generated crate's input is wrong.
    #[error(transparent)]
    CrateManifest(#[from] crate::manifest::Error),
    /// `cargo metadata` failed or printed something else than expected.
    #[error("failed to run `cargo metadata --format-version 1`: {message}")]
    CargoMetadata {
        /// What went wrong.
        message: String,
    },
    /// The workspace has no k8s-openapi package, or several matching the version prefix.
    #[error(
        "failed to find exactly one k8s-openapi package with a version starting with \"{prefix}\" in `cargo metadata` (found: [{found}])"
    )]
    K8sOpenapiNotFound {
        /// The versions found, comma-separated.
        found: String,
        /// The version prefix asked for.
        prefix: String,
    },
    /// A k8s-openapi source directory without `v1_NN` version modules.
    #[error("failed to find any Kubernetes version module (v1_NN) in {dir}")]
    NoKubeVersions {
        /// The directory.
        dir: PathBuf,
    },
    /// Naming or formatting the generated code failed.
    #[error(transparent)]
    Templates(#[from] informer_templates::Error),
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
