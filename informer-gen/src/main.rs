//! `informer-gen`: typed informers, listers and a factory from crates of Kubernetes API types.

use std::{path::PathBuf, process::ExitCode};

use clap::Parser;
use informer_gen::{Config, Layout};

/// Generates client-go style typed informers, listers and a shared informer factory from
/// crates of Kubernetes API types.
///
/// Resources are found in `#[derive(CustomResource)]` structs with `#[kube(group, version,
/// kind, plural, singular, namespaced, root)]`, `#[derive(Informer)]` types with
/// `#[informer(...)]`, and k8s-openapi style `impl Resource` blocks (`const GROUP`, `VERSION`,
/// `KIND`, `URL_PATH_SEGMENT`, `type Scope`). Without `--crate-name` the output is a module directory
/// (`mod.rs`, `<group>/mod.rs`, `<group>/<version>/mod.rs`, `<group>/<version>/<kind>.rs`);
/// build scripts should use the library's `Config`, which writes one file for `include!`.
#[derive(Debug, Parser)]
#[command(name = "informer-gen", version)]
struct Args {
    /// An input: a crate directory (with src/lib.rs and Cargo.toml) or a .rs crate root file.
    #[arg(long, required = true, value_name = "PATH")]
    input: Vec<PathBuf>,
    /// The output directory (the module directory, or the crate directory with --crate-name).
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// Write a standalone crate with this package name (Cargo.toml and src/), depending on the
    /// input crates by relative path; `#[cfg(feature = "x")]` gates in the input become
    /// features `x = ["<input>/x"]`.
    #[arg(long, value_name = "NAME")]
    crate_name: Option<String>,
    /// The Rust path of the runtime crate in generated code.
    #[arg(long, value_name = "PATH", default_value = "::informer_runtime")]
    runtime_path: String,
    /// The runtime dependency line of a generated crate's Cargo.toml (default: the published
    /// informer-runtime matching this generator, such as `informer-runtime = "0.1"`).
    #[arg(long, value_name = "LINE")]
    runtime_dependency: Option<String>,
    /// The crate name input types are reached through (default: the input's package name with
    /// `-` as `_`; `crate` for `crate::…` paths).
    #[arg(long, value_name = "NAME")]
    input_crate_name: Option<String>,
    /// Keep only resources matching a group/version/resource pattern; `*` matches any run of
    /// characters; `core` is the core group (example.com/*/*, */v1/foos). Repeatable.
    #[arg(long, value_name = "PATTERN")]
    include: Vec<String>,
    /// Drop resources matching a group/version/resource pattern. Repeatable.
    #[arg(long, value_name = "PATTERN")]
    exclude: Vec<String>,
    /// Keep only resources whose Rust path starts with this prefix (::my_crds::v1). Repeatable.
    #[arg(long, value_name = "PREFIX")]
    include_path: Vec<String>,
    /// Drop resources whose Rust path starts with this prefix. Repeatable.
    #[arg(long, value_name = "PREFIX")]
    exclude_path: Vec<String>,
    /// Pin the accessor (and module) of a group, instead of the naming rule (`example.com` is
    /// `example_com()` unless pinned): `<group>=<name>`, such as `example.com=example`; `core`
    /// is the core group. The name must be a snake-case Rust identifier no other group has.
    /// Repeatable.
    #[arg(long, value_name = "GROUP=NAME", value_parser = parse_group_accessor)]
    group_accessor: Vec<(String, String)>,
    /// Write nothing; list the files that are missing or out of date and exit with 1 if any.
    #[arg(long)]
    check: bool,
}

/// `<group>=<name>` of `--group-accessor`.
fn parse_group_accessor(value: &str) -> Result<(String, String), String> {
    match value.rsplit_once('=') {
        Some((group, name)) if !name.is_empty() => Ok((group.to_owned(), name.to_owned())),
        _ => Err(format!(
            "failed to parse the group accessor \"{value}\": expected <group>=<name>, such as example.com=example"
        )),
    }
}

fn config(args: &Args) -> Config {
    let mut config = Config::new()
        .out_dir(&args.output)
        .runtime_path(&args.runtime_path)
        .layout(match &args.crate_name {
            Some(name) => Layout::Crate { name: name.clone() },
            None => Layout::Tree,
        });
    for input in &args.input {
        config = config.input(input);
    }
    if let Some(line) = &args.runtime_dependency {
        config = config.runtime_dependency(line);
    }
    if let Some(name) = &args.input_crate_name {
        config = config.input_crate_name(name);
    }
    for p in &args.include {
        config = config.include(p);
    }
    for p in &args.exclude {
        config = config.exclude(p);
    }
    for p in &args.include_path {
        config = config.include_rust_path(p);
    }
    for p in &args.exclude_path {
        config = config.exclude_rust_path(p);
    }
    for (group, name) in &args.group_accessor {
        config = config.group_accessor(group, name);
    }
    config
}

fn main() -> ExitCode {
    let args = Args::parse();
    let config = config(&args);
    if args.check {
        return match config.stale_files() {
            Ok(stale) if stale.is_empty() => ExitCode::SUCCESS,
            Ok(stale) => {
                eprintln!("informer-gen: {} generated file(s) are out of date:", stale.len());
                for file in stale {
                    eprintln!("  {}", file.display());
                }
                ExitCode::FAILURE
            }
            Err(err) => {
                eprintln!("informer-gen: {err}");
                ExitCode::from(2)
            }
        };
    }
    match config.write() {
        Ok(written) => {
            for file in written {
                println!("wrote {}", file.display());
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("informer-gen: {err}");
            ExitCode::from(2)
        }
    }
}
