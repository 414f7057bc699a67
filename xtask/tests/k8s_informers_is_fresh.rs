//! The checked-in `k8s-informers` crate is what informer-gen generates from k8s-openapi now.

#[test]
fn checked_in_k8s_informers_matches_the_generator() {
    let stale = xtask::k8s_informers()
        .stale_files(&xtask::k8s_informers_dir())
        .unwrap_or_else(|err| panic!("failed to regenerate k8s-informers in memory: {err}"));
    assert!(
        stale.is_empty(),
        "k8s-informers is stale: run `{}` and commit the result. Files that differ from the generator's output:\n{}",
        xtask::REGENERATE,
        stale
            .iter()
            .map(|f| format!("  {}", f.display()))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
