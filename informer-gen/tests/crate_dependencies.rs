//! The dependencies of a generated crate: a registry input by its version, a local input by
//! its relative path, or a line the user chose.

mod common;

use std::{path::Path, process::Command};

use common::{FOO, TempDir};
use informer_gen::{Config, CrateManifestError, Layout};

/// Writes a crate `name` `version` with one resource into `dir`.
fn input_crate(dir: &Path, name: &str, version: &str) {
    std::fs::create_dir_all(dir.join("src")).expect("crate dir");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!("[package]\nname = \"{name}\"\nversion = \"{version}\"\nedition = \"2024\"\n"),
    )
    .expect("manifest");
    std::fs::write(dir.join("src/lib.rs"), FOO).expect("lib.rs");
}

fn manifest_of(input: &Path, out: &Path, lines: &[&str]) -> Result<String, informer_gen::Error> {
    let mut config = Config::new().input(input).out_dir(out).layout(Layout::Crate {
        name: "foo-informers".into(),
    });
    for line in lines {
        config = config.input_dependency(*line);
    }
    Ok(config
        .generate()?
        .remove(Path::new("Cargo.toml"))
        .expect("a manifest"))
}

#[test]
fn a_registry_input_is_required_by_its_version() {
    let temp = TempDir::new("deps", "registry");
    let input = temp
        .0
        .join("other-cargo-home/registry/src/index.crates.io-1949cf8c6b5b557f/reg-crds-1.2.3");
    input_crate(&input, "reg-crds", "1.2.3");
    let manifest = manifest_of(&input, &temp.0.join("out"), &[]).expect("generated");
    assert!(
        manifest.lines().any(|l| l == "reg-crds = \"1.2.3\""),
        "{manifest}"
    );
    assert!(!manifest.contains("path ="), "{manifest}");
}

#[test]
fn a_crate_in_cargo_home_is_required_by_its_version() {
    let temp = TempDir::new("deps", "cargo-home");
    let home = temp.0.join("cargo-home");
    let input = home.join("registry/src/mirror/vendored");
    input_crate(&input, "home-crds", "0.4.0");
    let output = Command::new(env!("CARGO_BIN_EXE_informer-gen"))
        .env("CARGO_HOME", &home)
        .arg("--input")
        .arg(&input)
        .arg("--output")
        .arg(temp.0.join("out"))
        .args(["--crate-name", "home-informers"])
        .output()
        .expect("informer-gen ran");
    assert!(output.status.success(), "{output:?}");
    let manifest = std::fs::read_to_string(temp.0.join("out/Cargo.toml")).expect("manifest");
    assert!(
        manifest.lines().any(|l| l == "home-crds = \"0.4.0\""),
        "{manifest}"
    );
}

#[test]
fn a_local_input_is_required_by_its_relative_path() {
    let temp = TempDir::new("deps", "local");
    let input = temp.0.join("crds");
    input_crate(&input, "local-crds", "0.1.0");
    let manifest = manifest_of(&input, &temp.0.join("gen/out"), &[]).expect("generated");
    assert!(
        manifest
            .lines()
            .any(|l| l == "local-crds = { path = \"../../crds\" }"),
        "{manifest}"
    );
}

#[test]
fn an_input_dependency_line_replaces_the_default() {
    let temp = TempDir::new("deps", "line");
    let input = temp.0.join("crds");
    input_crate(&input, "local-crds", "0.1.0");
    let out = temp.0.join("out");
    let line = "local-crds = { git = \"https://example.com/crds\" }";
    let manifest = manifest_of(&input, &out, &[line]).expect("generated");
    assert!(manifest.lines().any(|l| l == line), "{manifest}");
    assert!(!manifest.contains("path ="), "{manifest}");

    let error = manifest_of(&input, &out, &["other-crds = \"1\""]).expect_err("not an input");
    assert!(
        matches!(
            error,
            informer_gen::Error::CrateManifest(CrateManifestError::UnknownInput { .. })
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("failed to use the input dependency"),
        "{message}"
    );
    assert!(message.contains("the inputs are: local-crds"), "{message}");

    let error = manifest_of(&input, &out, &["local-crds"]).expect_err("not a line");
    assert!(
        error
            .to_string()
            .starts_with("failed to read the input dependency \"local-crds\""),
        "{error}"
    );
}
