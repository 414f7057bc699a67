//! Compile-fail tests of `#[derive(Informer)]`, one minimal file per mistake, sorted by
//! category in `tests/ui/<category>/`.
//!
//! After changing a message, regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p informer-derive --test ui` and review the `.stderr` diff.

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
        cases.compile_fail(format!("tests/ui/{category}/*.rs"));
    }
}
