//! The kube and k8s-openapi versions of an input are checked against those generated code needs,
//! which are the workspace's (informer-runtime's).

mod common;

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use common::{FOO, TempDir};
use informer_gen::{Config, K8S_OPENAPI_REQUIREMENT, KUBE_REQUIREMENT, VersionError, VersionMismatch};

/// Writes `files` (path relative to `dir`, content) and returns `dir`.
fn write(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dir");
        std::fs::write(&path, text).expect("written");
    }
    dir.to_path_buf()
}

/// A crate `crds` in `dir` whose `[dependencies]` are `dependencies`.
fn crds(dir: &Path, dependencies: &str) -> PathBuf {
    write(
        dir,
        &[
            (
                "Cargo.toml",
                &format!(
                    "[package]\nname = \"crds\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n{dependencies}\n"
                ),
            ),
            ("src/lib.rs", FOO),
        ],
    )
}

fn generate(input: &Path) -> Result<(), informer_gen::Error> {
    Config::new().input(input).out_dir("unused").generate().map(drop)
}

fn mismatches(input: &Path) -> Vec<VersionMismatch> {
    match generate(input) {
        Err(informer_gen::Error::Version(VersionError::Mismatch { mismatches, .. })) => mismatches,
        other => panic!("expected a version mismatch, got {other:?}"),
    }
}

#[test]
fn the_requirements_are_the_workspace_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .expect("the workspace manifest")
        .parse()
        .expect("TOML");
    let dependencies = &manifest["workspace"]["dependencies"];
    assert_eq!(dependencies["kube"]["version"].as_str(), Some(KUBE_REQUIREMENT));
    assert_eq!(
        dependencies["k8s-openapi"]["version"].as_str(),
        Some(K8S_OPENAPI_REQUIREMENT)
    );
    // The docs name the versions the requirements allow.
    let major = KUBE_REQUIREMENT.split('.').next().expect("a major version");
    let (_, minor) = K8S_OPENAPI_REQUIREMENT.split_once('.').expect("0.minor");
    let allowed = [format!("kube {major}.x"), format!("k8s-openapi 0.{minor}.x")];
    for doc in ["README.md", "src/lib.rs"] {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(doc))
            .expect("the docs")
            .replace("\n//! ", " ");
        for versions in &allowed {
            assert!(text.contains(versions.as_str()), "{doc} names {versions}");
        }
    }
    // The runtime takes both from the workspace.
    let runtime: toml::Table = std::fs::read_to_string(root.join("informer-runtime/Cargo.toml"))
        .expect("the runtime's manifest")
        .parse()
        .expect("TOML");
    for package in ["kube", "k8s-openapi"] {
        assert_eq!(
            runtime["dependencies"][package]["workspace"].as_bool(),
            Some(true),
            "{package}"
        );
    }
    // The versions locked meet them: kube-core and kube-derive are released with kube's.
    let lock: toml::Table = std::fs::read_to_string(root.join("Cargo.lock"))
        .expect("the workspace lock")
        .parse()
        .expect("TOML");
    let packages = lock["package"].as_array().expect("packages");
    for (package, requirement) in [
        ("kube", KUBE_REQUIREMENT),
        ("kube-core", KUBE_REQUIREMENT),
        ("kube-derive", KUBE_REQUIREMENT),
        ("k8s-openapi", K8S_OPENAPI_REQUIREMENT),
    ] {
        let requirement = semver::VersionReq::parse(requirement).expect("a requirement");
        let locked: Vec<&str> = packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(package))
            .filter_map(|p| p["version"].as_str())
            .collect();
        assert!(!locked.is_empty(), "{package} is locked");
        for version in locked {
            let version = semver::Version::parse(version).expect("a version");
            assert!(
                requirement.matches(&version),
                "{package} {version} against {requirement}"
            );
        }
    }
}

#[test]
fn matching_and_compatible_requirements_pass() {
    let temp = TempDir::new("versions", "matching");
    for dependencies in [
        "kube = { version = \"5.0\", features = [\"derive\"] }\nk8s-openapi = \"0.29\"",
        "kube = \"5.3\"\nkube-derive = \"5\"\nk8s-openapi = { version = \"0.29.1\", features = [\"latest\"] }",
        "kube = \">=0.90\"\nkube-core = \"*\"\nk8s-openapi = \"~0.29\"",
        "serde = \"1\"",
    ] {
        let input = crds(&temp.0, dependencies);
        generate(&input).unwrap_or_else(|e| panic!("{dependencies}: {e}"));
    }
}

#[test]
fn mismatching_requirements_are_errors_naming_each() {
    let temp = TempDir::new("versions", "mismatching");
    let input = crds(
        &temp.0,
        "kube = { version = \"0.98\", features = [\"derive\"] }\nk8s-openapi = \"0.24\"\nschemars = \"0.8\"",
    );
    let manifest = input.join("Cargo.toml");
    let manifest = manifest.display();
    let error = generate(&input).expect_err("a mismatch").to_string();
    assert_eq!(
        error,
        format!(
            "failed to generate informers for `crds`: it is built with other versions of kube or k8s-openapi than the generated code, which needs kube 5.x and k8s-openapi 0.29.x (informer-runtime 0.1's), so the generated code would not compile against it:
  {manifest}: `k8s-openapi = \"0.24\"` in [dependencies] allows no k8s-openapi 0.29.x
  {manifest}: `kube = {{ version = \"0.98\", ... }}` in [dependencies] allows no kube 5.x
change its dependencies to k8s-openapi = \"0.29\", kube = \"5.0\" (or use a release of it that has them), or generate with an informer-gen release made for the versions the input uses; to generate anyway (when the generated code is built in a workspace that resolves other versions), pass `--allow-version-mismatch` (`Config::allow_version_mismatch(true)` in a build script)"
        )
    );
    Config::new()
        .input(&input)
        .allow_version_mismatch(true)
        .generate()
        .expect("the check is skipped");

    // kube-custom-resources-rs asks for `~0`.
    let input = crds(&temp.0, "kube = { version = \"~0\", features = [\"derive\"] }");
    let found = mismatches(&input);
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].package.as_str(), found[0].needed, found[0].locked),
        ("kube", KUBE_REQUIREMENT, false)
    );
}

#[test]
fn the_command_line_refuses_a_mismatch_unless_allowed() {
    let temp = TempDir::new("versions", "cli");
    let input = crds(&temp.0.join("crds"), "kube = \"0.98\"");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_informer-gen"))
            .arg("--input")
            .arg(&input)
            .arg("--output")
            .arg(temp.0.join("out"))
            .args(extra)
            .output()
            .expect("informer-gen ran")
    };
    let refused = run(&[]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.starts_with("informer-gen: failed to generate informers for `crds`: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("`kube = \"0.98\"` in [dependencies] allows no kube 5.x"),
        "{stderr}"
    );
    assert!(!temp.0.join("out").exists(), "nothing is written");
    let allowed = run(&["--allow-version-mismatch"]);
    assert!(allowed.status.success(), "{allowed:?}");
}

#[test]
fn workspace_dependencies_are_read_from_the_workspace_root() {
    let temp = TempDir::new("versions", "workspace");
    let root = write(
        &temp.0,
        &[(
            "Cargo.toml",
            "[workspace]\nmembers = [\"crds\"]\n\n[workspace.package]\nversion = \"0.3.0\"\n\n[workspace.dependencies]\nkube = { version = \"0.98\", default-features = false }\nk8s-openapi = { version = \"0.29\", default-features = false }\n",
        )],
    );
    let input = crds(
        &root.join("crds"),
        "kube = { workspace = true, features = [\"derive\"] }\nk8s-openapi.workspace = true",
    );
    let found = mismatches(&input);
    assert_eq!(
        found,
        [VersionMismatch {
            file: root.join("Cargo.toml"),
            package: "kube".to_owned(),
            found: "`kube.workspace = true` in [dependencies], `kube = { version = \"0.98\", ... }` in [workspace.dependencies]".to_owned(),
            locked: false,
            needed: KUBE_REQUIREMENT,
        }]
    );

    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"crds\"]\n\n[workspace.dependencies]\nkube = \"5.0\"\nk8s-openapi = \"0.29\"\n",
    )
    .expect("written");
    generate(&input).expect("the workspace's versions fit");
}

#[test]
fn renamed_dependencies_are_checked_by_their_package() {
    let temp = TempDir::new("versions", "renamed");
    let input = crds(
        &temp.0,
        "kube-rs = { package = \"kube\", version = \"0.98\" }\n[target.'cfg(unix)'.dependencies]\nopenapi = { package = \"k8s-openapi\", version = \"0.24\" }",
    );
    let found: Vec<(String, String)> = mismatches(&input)
        .into_iter()
        .map(|m| (m.package, m.found))
        .collect();
    assert_eq!(
        found,
        [
            (
                "kube".to_owned(),
                "`kube-rs = { package = \"kube\", version = \"0.98\", ... }` in [dependencies]".to_owned()
            ),
            (
                "k8s-openapi".to_owned(),
                "`openapi = { package = \"k8s-openapi\", version = \"0.24\", ... }` in [target.'cfg(unix)'.dependencies]".to_owned()
            ),
        ]
    );
}

#[test]
fn locked_versions_are_checked_when_the_requirement_fits() {
    let temp = TempDir::new("versions", "lock");
    let input = crds(&temp.0, "kube = \">=0.90\"\nk8s-openapi = \"0.29\"");
    let lock = |kube: &str| {
        format!(
            "version = 4\n\n[[package]]\nname = \"crds\"\nversion = \"0.1.0\"\ndependencies = [\n \"k8s-openapi\",\n \"kube\",\n]\n\n[[package]]\nname = \"k8s-openapi\"\nversion = \"0.29.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"kube\"\nversion = \"{kube}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        )
    };
    std::fs::write(input.join("Cargo.lock"), lock("0.99.0")).expect("written");
    let found = mismatches(&input);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].file, input.join("Cargo.lock"));
    let message = generate(&input).expect_err("a mismatch").to_string();
    assert!(
        message.contains(&format!(
            "{}: kube 0.99.0 is locked, not a kube 5.x",
            input.join("Cargo.lock").display()
        )),
        "{message}"
    );
    assert!(
        message.contains("update the locked versions (`cargo update -p kube`)"),
        "{message}"
    );
    std::fs::write(input.join("Cargo.lock"), lock("5.0.1")).expect("written");
    generate(&input).expect("the locked version fits");
}

#[test]
fn inputs_without_a_manifest_or_kube_are_not_checked() {
    let temp = TempDir::new("versions", "bare");
    let bare = write(&temp.0.join("bare"), &[("src/lib.rs", FOO)]);
    generate(&bare).expect("no manifest, nothing to check");
    // k8s-openapi's own sources: no dependency on kube or k8s-openapi.
    let openapi = write(
        &temp.0.join("k8s-openapi-0.24.0"),
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"k8s-openapi\"\nversion = \"0.24.0\"\n\n[dependencies.serde]\nversion = \"1\"\n",
            ),
            (
                "src/lib.rs",
                "pub struct Pod {}\n\
                 impl crate::Resource for Pod {\n\
                     const GROUP: &'static str = \"\";\n\
                     const KIND: &'static str = \"Pod\";\n\
                     const VERSION: &'static str = \"v1\";\n\
                     const URL_PATH_SEGMENT: &'static str = \"pods\";\n\
                     type Scope = crate::NamespaceResourceScope;\n\
                 }\n",
            ),
        ],
    );
    generate(&openapi).expect("nothing to check");
}

#[test]
fn unreadable_manifests_and_requirements_are_errors() {
    let temp = TempDir::new("versions", "unreadable");
    let input = crds(&temp.0, "kube = \"five\"");
    let message = generate(&input).expect_err("a bad requirement").to_string();
    assert!(
        message.starts_with(&format!(
            "failed to read the version requirement of `kube = \"five\"` in [dependencies] in {}: ",
            input.join("Cargo.toml").display()
        )),
        "{message}"
    );
    assert!(
        message.ends_with("; write a Cargo version requirement such as \"5.0\", or skip the check with `--allow-version-mismatch` (`Config::allow_version_mismatch(true)`)"),
        "{message}"
    );
    std::fs::write(
        input.join("Cargo.toml"),
        "[package]\nname = \"crds\"\n\n[dependencies]\nkube = \"5.0\n",
    )
    .expect("written");
    let message = generate(&input).expect_err("not TOML").to_string();
    assert!(
        message.starts_with(&format!(
            "failed to read {} to check the input's kube and k8s-openapi versions: line 5: ",
            input.join("Cargo.toml").display()
        )),
        "{message}"
    );
}
