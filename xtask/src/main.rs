//! `cargo xtask codegen` and `cargo xtask verify-codegen` (see the library docs).

use std::{process::ExitCode, time::Instant};

use std::path::PathBuf;

use xtask::{
    REGENERATE, builtin_schema, builtin_schema_file, k8s_informers, k8s_informers_dir, protobuf_table,
    protobuf_table_file,
};

/// How a generated table is made.
type Generate = fn() -> Result<String, String>;

/// The generated tables of the test server: where each goes and how it is made.
fn tables() -> [(PathBuf, Generate); 2] {
    [
        (builtin_schema_file(), builtin_schema),
        (protobuf_table_file(), protobuf_table),
    ]
}

const USAGE: &str = "usage: cargo xtask <codegen | verify-codegen>\n\
    codegen         regenerate k8s-informers and the test server's tables from k8s-openapi's and k8s-pb's sources\n\
    verify-codegen  fail when either differs from what would be generated";

/// Writes a generated table; whether it changed.
fn write_table(file: &PathBuf, generate: Generate) -> Result<bool, String> {
    let generated = generate()?;
    let current = std::fs::read_to_string(file).unwrap_or_default();
    if current == generated {
        return Ok(false);
    }
    std::fs::write(file, generated).map_err(|e| format!("failed to write {}: {e}", file.display()))?;
    Ok(true)
}

fn codegen() -> ExitCode {
    for (file, generate) in tables() {
        match write_table(&file, generate) {
            Ok(true) => println!("updated {}", file.display()),
            Ok(false) => {}
            Err(err) => {
                eprintln!("xtask codegen: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    let start = Instant::now();
    let dir = k8s_informers_dir();
    match k8s_informers().write(&dir) {
        Ok((generated, changed)) => {
            let elapsed = start.elapsed();
            let lines: usize = generated.files.values().map(|f| f.lines().count()).sum();
            for file in &changed {
                let what = if file.exists() { "updated" } else { "removed" };
                println!("{what} {}", file.display());
            }
            println!(
                "k8s-informers: {} resources from k8s-openapi {} ({} files, {lines} lines) in {elapsed:.2?}",
                generated.resources,
                generated.package.version,
                generated.files.len(),
            );
            for (version, count) in &generated.per_version {
                println!("  Kubernetes {version}: {count} resources");
            }
            println!("  excluded: {}", generated.excluded.join(", "));
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("xtask codegen: {err}");
            ExitCode::FAILURE
        }
    }
}

fn verify() -> ExitCode {
    for (file, generate) in tables() {
        match generate() {
            Ok(generated) if std::fs::read_to_string(&file).is_ok_and(|current| current == generated) => {
                println!("{} is up to date", file.display());
            }
            Ok(_) => {
                eprintln!("{} is stale; regenerate it with `{REGENERATE}`", file.display());
                return ExitCode::FAILURE;
            }
            Err(err) => {
                eprintln!("xtask verify-codegen: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    match k8s_informers().stale_files(&k8s_informers_dir()) {
        Ok(stale) if stale.is_empty() => {
            println!("k8s-informers is up to date");
            ExitCode::SUCCESS
        }
        Ok(stale) => {
            eprintln!(
                "k8s-informers is stale; regenerate it with `{REGENERATE}`. Files that differ, are missing or are no longer generated:"
            );
            for file in stale {
                eprintln!("  {}", file.display());
            }
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("xtask verify-codegen: {err}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("codegen") => codegen(),
        Some("verify-codegen") => verify(),
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
