//! What the tests that write input crates share: a temporary directory and a one-resource
//! input.

use std::path::PathBuf;

/// One namespaced custom resource, `example.com/v1` `Foo`.
pub(crate) const FOO: &str = "#[derive(CustomResource)]\n\
    #[kube(group = \"example.com\", version = \"v1\", kind = \"Foo\", namespaced)]\n\
    pub struct FooSpec {}\n";

/// A fresh directory under the system's temporary directory, removed when dropped.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    /// `informer-gen-<test>-<name>-<pid>`, emptied.
    pub(crate) fn new(test: &str, name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("informer-gen-{test}-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir created");
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
