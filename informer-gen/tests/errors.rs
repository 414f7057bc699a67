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

#[test]
fn informer_attribute_mistakes_are_all_reported_with_their_places() {
    let message = error_of("informer_keys.rs");
    assert!(
        message.starts_with("failed to read the resource attributes (3 mistakes):"),
        "{message}"
    );
    assert!(
        message.contains("informer_keys.rs:5:45: expected a string literal for `version`"),
        "{message}"
    );
    assert!(
        message.contains("informer_keys.rs:5:48: unknown key `namepsaced` in `#[informer(...)]`, did you mean `namespaced`?"),
        "{message}"
    );
    assert!(
        message.contains("informer_keys.rs:5:72: duplicate `kind` in `#[informer(...)]`"),
        "{message}"
    );
}

#[test]
fn unknown_informer_keys_are_errors_but_unknown_kube_keys_are_not() {
    let message = error_of("unknown_informer_key.rs");
    assert!(
        message.starts_with("failed to read the resource attributes at tests/fixtures/errors/unknown_informer_key.rs:6:12: unknown key `colour` in `#[informer(...)]`; expected one of"),
        "{message}"
    );
}

#[test]
fn singular_and_crate_are_understood() {
    let source = r#"
        #[derive(Informer)]
        #[informer(group = "example.com", version = "v1", kind = "Mouse", singular = "mice", crate = "::rt")]
        pub struct Mouse {}

        #[derive(CustomResource, Informer)]
        #[kube(group = "example.com", version = "v1", kind = "Goose", singular = "geese", namespaced)]
        #[informer(singular = "geese", namespaced)]
        pub struct GooseSpec {}
    "#;
    let files = Config::new()
        .input_source("zoo.rs", source)
        .input_crate_name("zoo")
        .generate()
        .expect("generated");
    let code = files.values().next().expect("one file");
    assert!(code.contains("fn mices("), "{code}");
    assert!(code.contains("fn geeses("), "{code}");
    assert!(code.contains("::zoo::Goose"), "{code}");
    // `crate` is the derive's runtime path; the generator's is `Config::runtime_path`.
    assert!(code.contains("::informer_runtime::__codegen"), "{code}");
    assert!(!code.contains("::rt::"), "{code}");
}

#[test]
fn kube_type_names_that_are_not_identifiers_are_errors() {
    let message = Config::new()
        .input_source(
            "virtual.rs",
            "#[derive(CustomResource)]\n#[kube(group = \"g\", version = \"v1\", kind = \"Foo\", root = \"Foo-Bar\")]\npub struct FooSpec {}\n",
        )
        .input_crate_name("virtual")
        .generate()
        .expect_err("bad root")
        .to_string();
    assert!(
        message.contains("virtual.rs:2:58: `root = \"Foo-Bar\"` in `#[kube(...)]` is not a type name"),
        "{message}"
    );
}

#[test]
fn type_paths_that_do_not_parse_are_errors_not_dropped() {
    let message = Config::new()
        .input_source(
            "virtual.rs",
            "#[derive(Informer)]\n#[informer(group = \"g\", version = \"v1\")]\npub struct Foo {}\n",
        )
        .input_crate_name("virtual")
        .generate()
        .expect_err("`virtual` is a keyword")
        .to_string();
    assert!(
        message.starts_with(
            "failed to form the Rust path `::virtual::Foo` of the resource declared at virtual.rs:3:12"
        ),
        "{message}"
    );
}
