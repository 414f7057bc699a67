//! Generates the informers of the `sample-crds` fixture crate into `OUT_DIR`, as a user's
//! build script would.

use std::path::PathBuf;

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    informer_gen::Config::new()
        .input(manifest_dir.join("fixtures").join("sample-crds"))
        .module_name("sample_informers")
        .compile()
        .expect("the sample-crds informers are generated");
}
