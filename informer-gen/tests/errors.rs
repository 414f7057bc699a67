//! Bad inputs give errors naming the file, line and column, and what was expected.

use informer_gen::Config;

fn error_of(file: &str) -> String {
    Config::new()
        .input(format!("tests/fixtures/errors/{file}"))
        .out_dir("unused")
        .generate()
        .expect_err("bad input")
        .to_string()
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let message = error_of("syntax.rs");
    assert!(
        message.starts_with("failed to parse tests/fixtures/errors/syntax.rs:4:"),
        "{message}"
    );
}

#[test]
fn missing_kind_names_the_expected_form() {
    let message = error_of("missing_kind.rs");
    assert!(
        message.contains("tests/fixtures/errors/missing_kind.rs:6:12"),
        "{message}"
    );
    assert!(message.contains("missing `kind`"), "{message}");
    assert!(
        message.contains("#[kube(group = \"...\", version = \"...\", kind = \"...\")]"),
        "{message}"
    );
}

#[test]
fn duplicates_name_both_places() {
    let message = error_of("duplicate.rs");
    assert!(
        message.contains("example.com/v1/foos is declared twice"),
        "{message}"
    );
    assert!(message.contains("duplicate.rs:6:12"), "{message}");
    assert!(message.contains("duplicate.rs:12:16"), "{message}");
}

#[test]
fn no_resources_says_where_it_looked() {
    let message = error_of("empty.rs");
    assert!(message.starts_with("failed to find any resource"), "{message}");
    assert!(message.contains("tests/fixtures/errors/empty.rs"), "{message}");
}

#[test]
fn missing_module_files_are_named() {
    let message = error_of("missing_module.rs");
    assert!(
        message.contains("module `nowhere` declared at tests/fixtures/errors/missing_module.rs:3:9"),
        "{message}"
    );
    assert!(message.contains("nowhere.rs"), "{message}");
}

#[test]
fn malformed_attributes_name_the_place() {
    let message = error_of("bad_attr.rs");
    assert!(message.contains("bad_attr.rs:5:16"), "{message}");
}

#[test]
fn bad_patterns_and_missing_inputs() {
    let err = Config::new()
        .input("tests/fixtures/crds")
        .include("example.com/v1")
        .generate()
        .expect_err("bad pattern");
    assert!(err.to_string().contains("example.com/v1"), "{err}");
    let err = Config::new()
        .input("tests/fixtures/none")
        .generate()
        .expect_err("missing");
    assert!(err.to_string().contains("tests/fixtures/none"), "{err}");
    let err = Config::new().generate().expect_err("no inputs");
    assert!(err.to_string().contains("no input"), "{err}");
}

#[test]
fn sources_can_be_given_already_read() {
    let message = Config::new()
        .input_source("virtual.rs", "pub struct S {} impl")
        .input_crate_name("virtual")
        .generate()
        .expect_err("bad source")
        .to_string();
    assert!(message.starts_with("failed to parse virtual.rs:1:"), "{message}");
}
