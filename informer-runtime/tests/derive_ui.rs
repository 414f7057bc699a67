//! Compile-fail tests of `#[derive(Informer)]` (the `derive` feature), one minimal file per
//! mistake, sorted by category in `tests/derive_ui/<category>/`. They live here, beside the
//! runtime the derive's output is compiled against, so that informer-derive does not
//! dev-depend on the crate that depends on it.
//!
//! After changing a message, regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p informer-runtime --features derive --test derive_ui` and
//! review the `.stderr` diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    for category in [
        "missing",
        "unknown",
        "type",
        "duplicate",
        "shape",
        "conflict",
        "scope",
        "name",
    ] {
        cases.compile_fail(format!("tests/derive_ui/{category}/*.rs"));
    }
}
