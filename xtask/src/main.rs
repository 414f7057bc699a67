//! `cargo xtask codegen` and `cargo xtask verify-codegen` (see the library docs).

use std::{process::ExitCode, time::Instant};

use xtask::{REGENERATE, builtin_schema, builtin_schema_file, k8s_informers, k8s_informers_dir};

const USAGE: &str = "usage: cargo xtask <codegen | verify-codegen>\n\
    codegen         regenerate k8s-informers and the test server's built-in schema from k8s-openapi's sources\n\
    verify-codegen  fail when either differs from what would be generated";

/// Writes the test server's table of built-in merge strategies; whether it changed.
fn write_builtin_schema() -> Result<bool, String> {
    let generated = builtin_schema()?;
    let file = builtin_schema_file();
    let current = std::fs::read_to_string(&file).unwrap_or_default();
    if current == generated {
        return Ok(false);
    }
    std::fs::write(&file, generated).map_err(|e| format!("failed to write {}: {e}", file.display()))?;
    Ok(true)
}

fn codegen() -> ExitCode {
    match write_builtin_schema() {
        Ok(true) => println!("updated {}", builtin_schema_file().display()),
        Ok(false) => {}
        Err(err) => {
            eprintln!("xtask codegen: {err}");
            return ExitCode::FAILURE;
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
    let file = builtin_schema_file();
    match builtin_schema() {
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
