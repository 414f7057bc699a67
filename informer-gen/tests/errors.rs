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
fn duplicates_name_both_attributes_and_the_way_out() {
    assert_eq!(
        error_of("duplicate.rs"),
        "failed to generate informers: example.com/v1/foos is declared twice, by `::informer_gen::Foo` at tests/fixtures/errors/duplicate.rs:5:1 and by `::informer_gen::again::Foo` at tests/fixtures/errors/duplicate.rs:11:5; generate one of them by excluding the other, such as with `--exclude-path ::informer_gen::again::Foo` (`Config::exclude_rust_path(\"::informer_gen::again::Foo\")` in a build script)"
    );
    // The way out works.
    let files = Config::new()
        .input("tests/fixtures/errors/duplicate.rs")
        .exclude_rust_path("::informer_gen::again::Foo")
        .generate()
        .expect("one declaration left");
    assert_eq!(files.len(), 1);
}

#[test]
fn no_resources_says_where_it_looked() {
    let message = error_of("empty.rs");
    assert!(message.starts_with("failed to find any resource"), "{message}");
    assert!(
        message.ends_with(" in 1 file read (tests/fixtures/errors/empty.rs); declare resources in the input or give another input"),
        "{message}"
    );
}

#[test]
fn no_resources_after_filtering_is_summarised_with_the_filters() {
    let message = Config::new()
        .input("tests/fixtures/crds")
        .include("nothing.example.com/*/*")
        .exclude_rust_path("::sample_crds::v2")
        .generate()
        .expect_err("everything filtered out")
        .to_string();
    assert!(
        message.ends_with(
            " matching the filters (include `nothing.example.com/*/*`, exclude-path `::sample_crds::v2`) in 4 files read (tests/fixtures/crds/src/lib.rs, tests/fixtures/crds/src/apps/mod.rs, tests/fixtures/crds/src/apps/v1/inner.rs and 1 more; 1 of them not parsed, since the filters keep nothing they could declare): the 7 resources found were all filtered out; change or remove the filters"
        ),
        "{message}"
    );
}

#[test]
fn debug_prints_the_message() {
    let err = Config::new()
        .input("tests/fixtures/errors/empty_names.rs")
        .generate()
        .expect_err("bad names");
    assert_eq!(format!("{err:?}"), err.to_string());
    assert!(
        format!("{err:?}").starts_with("failed to read the resource attributes (3 mistakes):\n  tests/fixtures/errors/empty_names.rs:4:16: "),
        "{err:?}"
    );
}

#[test]
fn kinds_and_roots_that_are_not_type_names_are_all_reported() {
    assert_eq!(
        error_of("invalid_kinds.rs"),
        "failed to read the resource attributes (4 mistakes):
  tests/fixtures/errors/invalid_kinds.rs:5:54: `kind = \"my-kind\"` in `#[kube(...)]` is not a type name; write a Rust identifier, such as `Foo`
  tests/fixtures/errors/invalid_kinds.rs:10:54: `kind = \"\"` in `#[kube(...)]` is not a type name; write a Rust identifier, such as `Foo`
  tests/fixtures/errors/invalid_kinds.rs:15:71: `root = \"a b\"` in `#[kube(...)]` is not a type name; write a Rust identifier, such as `Foo`
  tests/fixtures/errors/invalid_kinds.rs:20:58: `kind = \"my-kind\"` in `#[informer(...)]` is not a kind: it contains '-'; write an ASCII letter followed by ASCII letters and digits, such as `Foo`"
    );
}

#[test]
fn empty_names_are_refused() {
    assert_eq!(
        error_of("empty_names.rs"),
        "failed to read the resource attributes (3 mistakes):
  tests/fixtures/errors/empty_names.rs:4:16: `group = \"\"` in `#[kube(...)]` is the core group, which only built-in resources are in; give the custom resource a group of its own, such as `example.com`
  tests/fixtures/errors/empty_names.rs:4:30: `version = \"\"` in `#[kube(...)]` is not an API version: it is empty; write a DNS-1035 label (a lowercase letter, then lowercase letters, digits and `-`, at most 63 characters), such as `v1` or `v1beta1`
  tests/fixtures/errors/empty_names.rs:4:57: `plural = \"\"` in `#[kube(...)]` is not a resource name: it is empty; write a DNS-1123 label (lowercase letters, digits and `-`, at most 63 characters), such as `foos`"
    );
}

#[test]
fn names_kube_apiserver_refuses_are_reported_in_both_forms() {
    assert_eq!(
        error_of("invalid_names.rs"),
        "failed to read the resource attributes (7 mistakes):
  tests/fixtures/errors/invalid_names.rs:4:16: `group = \"Example.com\"` in `#[kube(...)]` is not an API group: it contains 'E'; write a DNS-1123 subdomain (lowercase letters, digits, `-` and `.`, at most 253 characters), such as `example.com`
  tests/fixtures/errors/invalid_names.rs:4:41: `version = \"1beta1\"` in `#[kube(...)]` is not an API version: it starts with '1'; write a DNS-1035 label (a lowercase letter, then lowercase letters, digits and `-`, at most 63 characters), such as `v1` or `v1beta1`
  tests/fixtures/errors/invalid_names.rs:4:74: `plural = \"Foos\"` in `#[kube(...)]` is not a resource name: it contains 'F'; write a DNS-1123 label (lowercase letters, digits and `-`, at most 63 characters), such as `foos`
  tests/fixtures/errors/invalid_names.rs:4:93: `singular = \"foo_\"` in `#[kube(...)]` is not a resource name: it contains '_'; write a DNS-1123 label (lowercase letters, digits and `-`, at most 63 characters), such as `foos`
  tests/fixtures/errors/invalid_names.rs:8:20: `group = \"example..com\"` in `#[informer(...)]` is not an API group: a dot-separated part is empty or longer than 63 characters; write a DNS-1123 subdomain (lowercase letters, digits, `-` and `.`, at most 253 characters), such as `example.com`
  tests/fixtures/errors/invalid_names.rs:8:46: `version = \"v1-\"` in `#[informer(...)]` is not an API version: it ends with '-'; write a DNS-1035 label (a lowercase letter, then lowercase letters, digits and `-`, at most 63 characters), such as `v1` or `v1beta1`
  tests/fixtures/errors/invalid_names.rs:8:62: `plural = \"bars.\"` in `#[informer(...)]` is not a resource name: it contains '.'; write a DNS-1123 label (lowercase letters, digits and `-`, at most 63 characters), such as `foos`"
    );
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
