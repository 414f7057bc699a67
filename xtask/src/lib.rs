//! Workspace tasks: `cargo xtask codegen` regenerates the checked-in `k8s-informers` crate
//! from k8s-openapi's sources; `cargo xtask verify-codegen` fails when it is stale.

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
