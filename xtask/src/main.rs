//! `cargo xtask codegen`, `cargo xtask verify-codegen`, `cargo xtask module-cycles` and `cargo xtask crate-cycles` (see the
//! library docs).

use std::{ffi::OsStr, process::ExitCode, time::Instant};

use std::path::PathBuf;

use xtask::{
    REGENERATE, builtin_schema, builtin_schema_file, k8s_informers, k8s_informers_dir, k8s_protobuf,
    k8s_protobuf_dir, key_order_table, key_order_table_file, protobuf_table, protobuf_table_file,
    stale_k8s_protobuf_files,
};

/// How a generated table is made.
type Generate = fn() -> Result<String, String>;

/// The generated tables of the test server: where each goes and how it is made.
fn tables() -> [(PathBuf, Generate); 3] {
    [
        (builtin_schema_file(), builtin_schema),
        (protobuf_table_file(), protobuf_table),
        (key_order_table_file(), key_order_table),
    ]
}

const USAGE: &str = "usage: cargo xtask <codegen | verify-codegen | module-cycles <crate-src-dir>... | crate-cycles | go-fields <label> <go-module-dir>...>\n\
    codegen         regenerate k8s-informers and the test server's tables from k8s-openapi's and k8s-pb's sources\n\
    verify-codegen  fail when either differs from what would be generated\n\
    module-cycles   report the import circles between the modules of crates (given by their src directories); exit 1 if any\n\
    crate-cycles    report the dependency circles between the workspace's crates, dev-dependencies included; exit 1 if any\n\
    go-fields       write xtask/data/go_fields.tsv from checkouts of k8s.io/api, apimachinery, apiextensions-apiserver and kube-aggregator (label: their versions)";

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

/// Writes the generated files of `k8s-protobuf` that changed and removes those no longer
/// generated.
fn write_k8s_protobuf() -> Result<(), String> {
    let start = Instant::now();
    let generated = k8s_protobuf()?;
    let dir = k8s_protobuf_dir();
    for path in stale_k8s_protobuf_files(&generated.files) {
        let relative = path
            .strip_prefix(&dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        match generated.files.get(&relative) {
            Some(text) => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("failed to create {}: {e}", parent.display()))?;
                }
                std::fs::write(&path, text)
                    .map_err(|e| format!("failed to write {}: {e}", path.display()))?;
                println!("updated {}", path.display());
            }
            None => {
                std::fs::remove_file(&path)
                    .map_err(|e| format!("failed to remove {}: {e}", path.display()))?;
                println!("removed {}", path.display());
            }
        }
    }
    let lines: usize = generated.files.values().map(|f| f.lines().count()).sum();
    println!(
        "k8s-protobuf: {} message decoders, {} kind decoders ({} files, {lines} lines) in {:.2?}",
        generated.decoders,
        generated.kinds,
        generated.files.len(),
        start.elapsed()
    );
    println!(
        "  {} fields of the table are in no version of their k8s-openapi type",
        generated.unmatched_fields.len()
    );
    Ok(())
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
    if let Err(err) = write_k8s_protobuf() {
        eprintln!("xtask codegen: {err}");
        return ExitCode::FAILURE;
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
    match k8s_protobuf().map(|generated| stale_k8s_protobuf_files(&generated.files)) {
        Ok(stale) if stale.is_empty() => println!("k8s-protobuf is up to date"),
        Ok(stale) => {
            eprintln!(
                "k8s-protobuf is stale; regenerate it with `{REGENERATE}`. Files that differ, are missing or are no longer generated:"
            );
            for file in stale {
                eprintln!("  {}", file.display());
            }
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

/// Prints the dependency circles between the workspace's crates.
fn crate_cycles() -> ExitCode {
    match xtask::crate_cycles::workspace_graph() {
        Ok(graph) => {
            println!("{graph}");
            if graph.circles().is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(err) => {
            eprintln!("xtask crate-cycles: {err}");
            ExitCode::from(2)
        }
    }
}

/// Prints the import circles of the crates whose source directories are `dirs`.
fn module_cycles(dirs: &[PathBuf]) -> ExitCode {
    if dirs.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    match xtask::module_cycles::check(dirs) {
        Ok(report) => {
            println!("{report}");
            if report.circles.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(err) => {
            eprintln!("xtask module-cycles: {err}");
            ExitCode::from(2)
        }
    }
}

/// Writes the Go field table from Go module checkouts.
fn go_fields(label: Option<String>, dirs: &[PathBuf]) -> ExitCode {
    let (Some(label), false) = (label, dirs.is_empty()) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let file = xtask::go_fields_file();
    let written = xtask::go_fields::read_modules(dirs)
        .map_err(|e| e.to_string())
        .and_then(|fields| {
            std::fs::write(&file, xtask::go_fields::render(&fields, &label))
                .map_err(|e| format!("failed to write {}: {e}", file.display()))
                .map(|()| fields.len())
        });
    match written {
        Ok(count) => {
            println!("wrote {} ({count} fields)", file.display());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("xtask go-fields: {err}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    match args.next().as_deref().and_then(OsStr::to_str) {
        Some("codegen") => codegen(),
        Some("verify-codegen") => verify(),
        Some("module-cycles") => module_cycles(&args.map(PathBuf::from).collect::<Vec<_>>()),
        Some("crate-cycles") => crate_cycles(),
        Some("go-fields") => {
            let label = args.next().map(|l| l.to_string_lossy().into_owned());
            go_fields(label, &args.map(PathBuf::from).collect::<Vec<_>>())
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
