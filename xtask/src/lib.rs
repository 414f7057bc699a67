//! Workspace tasks: `cargo xtask codegen` regenerates the checked-in `k8s-informers` crate
//! and the embedded API server's table of built-in merge strategies from k8s-openapi's
//! sources; `cargo xtask verify-codegen` fails when either is stale.

pub mod builtin_schema;

use std::path::{Path, PathBuf};

use informer_gen::{K8sOpenapi, ManifestStyle};

/// The command that regenerates `k8s-informers`.
pub const REGENERATE: &str = "cargo xtask codegen";

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The directory of the `k8s-informers` crate.
pub fn k8s_informers_dir() -> PathBuf {
    workspace_root().join("k8s-informers")
}

/// How `k8s-informers` is generated: from the workspace's k8s-openapi 0.29, as a workspace
/// member.
pub fn k8s_informers() -> K8sOpenapi {
    K8sOpenapi::new()
        .manifest_path(workspace_root().join("Cargo.toml"))
        .version_prefix("0.29.")
        .crate_name("k8s-informers")
        .manifest_style(ManifestStyle::Workspace)
        .regenerate_command(format!(
            "`{REGENERATE}` (check with `cargo xtask verify-codegen`)"
        ))
}

/// Where the table of built-in merge strategies goes.
pub fn builtin_schema_file() -> PathBuf {
    workspace_root().join("informer-testserver/src/builtin_schema/table.rs")
}

/// The table of built-in merge strategies, generated from the workspace's k8s-openapi.
pub fn builtin_schema() -> Result<String, String> {
    let package = k8s_informers().package().map_err(|e| e.to_string())?;
    builtin_schema::generate(&package.dir, &package.version).map_err(|e| e.to_string())
}
