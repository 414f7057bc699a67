//! Workspace tasks: `cargo xtask codegen` regenerates the checked-in `k8s-informers` crate,
//! and the embedded API server's tables of built-in merge strategies (from k8s-openapi's
//! sources), protobuf messages and JSON key order (from k8s-pb's); `cargo xtask verify-codegen` fails when any
//! is stale; `cargo xtask module-cycles <crate-src-dir>...` reports the import circles between
//! the modules of crates ([`module_cycles`]).

pub mod builtin_schema;
pub mod crate_cycles;
pub mod go_fields;
pub mod key_order_table;
pub mod module_cycles;
pub mod openapi_versions;
pub mod protobuf_decoders;
pub mod protobuf_table;

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
    workspace_root().join("informer-testserver/src/admission/builtin_schema/table.rs")
}

/// The table of built-in merge strategies, generated from the workspace's k8s-openapi.
pub fn builtin_schema() -> Result<String, String> {
    let package = k8s_informers().package().map_err(|e| e.to_string())?;
    builtin_schema::generate(&package.dir, &package.version).map_err(|e| e.to_string())
}

/// Where the table of protobuf messages goes.
pub fn protobuf_table_file() -> PathBuf {
    workspace_root().join("apimachinery/src/protobuf/table.rs")
}

/// Where the Go field table goes (`cargo xtask go-fields`), read by the protobuf table.
pub fn go_fields_file() -> PathBuf {
    workspace_root().join("xtask/data/go_fields.tsv")
}

/// The directory and version of the `k8s-pb` package in the workspace's dependency graph.
fn k8s_pb_package() -> Result<(PathBuf, String), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(workspace_root().join("Cargo.toml"))
        .output()
        .map_err(|e| format!("failed to run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "failed to run cargo metadata: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    // `"name":"k8s-pb","version":"0.9.0", ... "manifest_path":"..."` of the package entry (a
    // dependency entry names the package too, followed by its source, not its version)
    let start = text
        .find("\"name\":\"k8s-pb\",\"version\":")
        .ok_or("failed to find k8s-pb in cargo metadata: xtask's Cargo.toml declares it")?;
    let entry = &text[start..];
    let field = |name: &str| {
        let key = format!("\"{name}\":\"");
        let at = entry.find(&key)? + key.len();
        entry[at..].split('"').next().map(str::to_owned)
    };
    let version = field("version").ok_or("failed to read k8s-pb's version")?;
    let manifest = field("manifest_path").ok_or("failed to read k8s-pb's manifest path")?;
    let dir = Path::new(&manifest)
        .parent()
        .map(Path::to_path_buf)
        .ok_or("failed to find k8s-pb's directory")?;
    Ok((dir, version))
}

/// What the protobuf tables are made from: k8s-openapi's package and types, k8s-pb's sources
/// and version, and the Go field table.
struct TableSources {
    package: informer_gen::K8sOpenapiPackage,
    openapi: builtin_schema::OpenapiTypes,
    pb_dir: PathBuf,
    pb_version: String,
    go: Vec<go_fields::GoField>,
}

impl TableSources {
    fn read() -> Result<Self, String> {
        let package = k8s_informers().package().map_err(|e| e.to_string())?;
        let openapi = builtin_schema::openapi_types(&package.dir).map_err(|e| e.to_string())?;
        let (pb_dir, pb_version) = k8s_pb_package()?;
        let file = go_fields_file();
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("failed to read {}: {e}", file.display()))?;
        let go = go_fields::parse(&text).map_err(|e| e.to_string())?;
        Ok(Self {
            package,
            openapi,
            pb_dir,
            pb_version,
            go,
        })
    }

    /// Every message of k8s-pb with the Go types' JSON names and presence.
    fn messages(
        &self,
    ) -> Result<std::collections::BTreeMap<String, Vec<protobuf_table::ProtoField>>, String> {
        protobuf_table::read_messages(&self.pb_dir, &self.openapi, &self.go).map_err(|e| e.to_string())
    }
}

/// The table of protobuf messages, generated from k8s-pb with the JSON names and presence of
/// the Go field table (k8s-openapi's names where it lacks a field).
pub fn protobuf_table() -> Result<String, String> {
    let sources = TableSources::read()?;
    protobuf_table::generate(
        &sources.pb_dir,
        &sources.pb_version,
        &sources.openapi,
        &sources.go,
    )
    .map_err(|e| e.to_string())
}

/// Where the table of the built-in types' JSON key order goes.
pub fn key_order_table_file() -> PathBuf {
    workspace_root().join("informer-testserver/src/key_order/table.rs")
}

/// The table of the built-in types' JSON key order, generated from k8s-pb's declaration order
/// with the JSON names of the Go field table.
pub fn key_order_table() -> Result<String, String> {
    let sources = TableSources::read()?;
    key_order_table::generate(&sources.messages()?, &sources.openapi, &sources.pb_version)
        .map_err(|e| e.to_string())
}

/// The directory of the `k8s-protobuf` crate.
pub fn k8s_protobuf_dir() -> PathBuf {
    workspace_root().join("k8s-protobuf")
}

/// The generated files of `k8s-protobuf` (its decoders, manifest and build script), from the
/// table's messages and every version of k8s-openapi's structs.
pub fn k8s_protobuf() -> Result<protobuf_decoders::Generated, String> {
    let sources = TableSources::read()?;
    let versions = openapi_versions::Versions::read(&sources.package.dir).map_err(|e| e.to_string())?;
    protobuf_decoders::generate(&sources.messages()?, &versions, &sources.package.version)
}

/// The generated files of `k8s-protobuf` that differ from `generated`, are missing, or are
/// generated no longer (under `src/generated/`).
pub fn stale_k8s_protobuf_files(generated: &protobuf_decoders::Files) -> Vec<PathBuf> {
    let dir = k8s_protobuf_dir();
    let mut stale: Vec<PathBuf> = generated
        .iter()
        .filter(|(path, text)| std::fs::read_to_string(dir.join(path)).ok().as_deref() != Some(text.as_str()))
        .map(|(path, _)| dir.join(path))
        .collect();
    if let Ok(entries) = std::fs::read_dir(dir.join("src/generated")) {
        for entry in entries.flatten() {
            let name = format!("src/generated/{}", entry.file_name().to_string_lossy());
            if !generated.contains_key(&name) {
                stale.push(entry.path());
            }
        }
    }
    stale.sort();
    stale
}
