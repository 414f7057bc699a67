//! Generates typed informers for the `sample-crds` crate into `OUT_DIR`, as a user's build
//! script would (see `src/sample_informers.rs` and the `informer_gen_build_rs` example). The
//! accessor of `example.com` is pinned to `informers.example()` (by the naming rule it would be
//! `example_com()`).

use std::path::PathBuf;

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    informer_gen::Config::new()
        .input(
            manifest_dir
                .join("..")
                .join("tests")
                .join("fixtures")
                .join("sample-crds"),
        )
        .module_name("sample_informers")
        .group_accessor("example.com", "example")
        .compile()
        .expect("the sample-crds informers are generated");
}
