//! `cargo xtask codegen` and `cargo xtask verify-codegen` (see the library docs).

use std::{process::ExitCode, time::Instant};

use xtask::{REGENERATE, k8s_informers, k8s_informers_dir};

const USAGE: &str = "usage: cargo xtask <codegen | verify-codegen>\n\
    codegen         regenerate k8s-informers from k8s-openapi's sources\n\
    verify-codegen  fail when the checked-in k8s-informers differs from what would be generated";

fn codegen() -> ExitCode {
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
