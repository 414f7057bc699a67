use std::{
    fs,
    path::PathBuf,
    sync::atomic::{AtomicUsize, Ordering},
};

use super::{Error, check, tree::Crate};

/// A crate's `src` directory written to a fresh temporary directory, removed when dropped.
struct TempCrate {
    /// The temporary directory, which holds `src`.
    root: PathBuf,
}

impl TempCrate {
    /// Writes `files` (paths relative to `src`, and their text).
    fn new(files: &[(&str, &str)]) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let unique = format!(
            "xtask-module-cycles-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let root = std::env::temp_dir().join(unique);
        for (path, text) in files {
            let file = root.join("src").join(path);
            fs::create_dir_all(file.parent().expect("a file has a directory")).expect("create the directory");
            fs::write(&file, text).expect("write the file");
        }
        Self { root }
    }

    fn src(&self) -> PathBuf {
        self.root.join("src")
    }

    /// The report, with file paths relative to the temporary directory.
    fn report(&self) -> String {
        let report = check(&[self.src()]).expect("the crate reads");
        let prefix = format!("{}/", self.root.display());
        report.to_string().replace(&prefix, "")
    }

    /// Every edge as `from -> to: names`, by module path.
    fn edges(&self) -> Vec<String> {
        let krate = Crate::load(&self.src()).expect("the crate reads");
        let module = |file: usize| krate.module_name(krate.files[file].module);
        let edges = krate.edges().into_iter();
        edges
            .map(|((from, to), names)| {
                let names: Vec<String> = names.into_iter().collect();
                format!("{} -> {}: {}", module(from), module(to), names.join(", "))
            })
            .collect()
    }
}

impl Drop for TempCrate {
    fn drop(&mut self) {
        // Best effort: a leftover directory in the temporary directory harms nothing.
        let _ = fs::remove_dir_all(&self.root);
    }
}

#[test]
fn a_circle_through_a_pub_use_reexport_is_found() {
    let krate = TempCrate::new(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a/mod.rs", "mod inner;\npub use inner::Thing;\n"),
        (
            "a/inner.rs",
            "pub struct Thing;\npub fn make() -> crate::b::Other { crate::b::Other }\n",
        ),
        (
            "b.rs",
            "use crate::a::Thing;\npub struct Other;\npub fn take(_: Thing) {}\n",
        ),
    ]);
    assert_eq!(
        krate.report(),
        "circle: a::inner <-> b (src/a/inner.rs -> src/b.rs: Other; src/b.rs -> src/a/inner.rs: Thing)\n\
         1 module circles among 4 modules"
    );
}

#[test]
fn glob_and_renamed_reexports_are_followed() {
    let krate = TempCrate::new(&[
        ("lib.rs", "mod a;\nmod b;\npub use a::*;\n"),
        ("a.rs", "mod deep;\npub use deep::Deep as Renamed;\n"),
        (
            "a/deep.rs",
            "pub struct Deep;\nfn back() { let _ = crate::b::B; }\n",
        ),
        (
            "b.rs",
            "pub struct B;\nfn uses() -> crate::Renamed { crate::Renamed }\n",
        ),
    ]);
    assert_eq!(krate.edges(), ["a::deep -> b: B", "b -> a::deep: Deep"]);
}

#[test]
fn a_parent_that_only_declares_and_reexports_its_children_makes_no_circle() {
    let krate = TempCrate::new(&[
        (
            "lib.rs",
            "pub mod index;\npub mod store;\npub use index::*;\npub(crate) use self::store::{Store, helper};\n\
             pub struct Config;\n",
        ),
        (
            "store.rs",
            "pub struct Store(crate::Config);\npub fn helper() {}\n",
        ),
        ("index.rs", "pub struct Index(crate::Config);\n"),
    ]);
    assert_eq!(krate.report(), "0 module circles among 3 modules");
    assert_eq!(
        krate.edges(),
        ["index -> crate: Config", "store -> crate: Config"]
    );
}

#[test]
fn a_parent_whose_code_uses_a_reexported_child_item_makes_a_circle() {
    let krate = TempCrate::new(&[
        (
            "lib.rs",
            "pub mod store;\npub use store::Store;\npub struct Config;\npub fn make() -> Store { todo() }\n",
        ),
        ("store.rs", "pub struct Store(crate::Config);\n"),
    ]);
    assert_eq!(
        krate.report(),
        "circle: crate <-> store (src/lib.rs -> src/store.rs: Store; src/store.rs -> src/lib.rs: Config)\n\
         1 module circles among 2 modules"
    );
}

#[test]
fn super_paths_and_imported_module_names_resolve() {
    let krate = TempCrate::new(&[
        ("lib.rs", "mod a;\n"),
        ("a/mod.rs", "mod b;\nmod c;\n"),
        ("a/b.rs", "use super::c;\npub fn f() { c::g(); }\n"),
        (
            "a/c.rs",
            "pub fn g() {}\npub fn h() { super::super::a::b::f(); }\n",
        ),
    ]);
    assert_eq!(krate.edges(), ["a::b -> a::c: g", "a::c -> a::b: f"]);
    assert!(
        krate.report().starts_with("circle: a::b <-> a::c ("),
        "{}",
        krate.report()
    );
}

#[test]
fn test_code_is_ignored() {
    let b = "pub fn g() {}\n\
             #[cfg(test)]\nmod inline_tests { fn t() { crate::a::f(); } }\n\
             #[cfg(all(test, unix))]\nfn helper() -> crate::a::A { crate::a::f() }\n\
             mod tests;\n\
             pub fn h() {\n    #[cfg(test)]\n    crate::a::f();\n    #[cfg(test)]\n    use crate::a::A;\n}\n";
    let files = [
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "pub struct A;\npub fn f() { crate::b::g(); }\n"),
        ("b.rs", b),
        ("b/tests.rs", "fn t() { crate::a::f(); }\n"),
    ];
    assert_eq!(
        TempCrate::new(&files).report(),
        "0 module circles among 3 modules"
    );

    // Without the markers, each of those makes the circle; a `tests/` folder is no module either.
    let unmarked = b
        .replace("#[cfg(test)]", "")
        .replace("#[cfg(all(test, unix))]", "");
    let tests = ("b/tests/mod.rs", "fn t() { crate::a::f(); }\n");
    let krate = TempCrate::new(&[files[0], files[1], ("b.rs", unmarked.as_str()), tests]);
    assert_eq!(krate.edges(), ["a -> b: g", "b -> a: A, f"]);
    assert!(
        krate.report().ends_with("1 module circles among 3 modules"),
        "{}",
        krate.report()
    );
}

#[test]
fn a_self_import_is_no_edge() {
    let krate = TempCrate::new(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "use crate::a::Thing as Same;\nuse self::Thing as Again;\n\
             pub struct Thing;\npub fn f() -> Same { crate::a::Thing }\nmod inner { fn g() -> super::Thing {} }\n",
        ),
        ("b.rs", "pub fn g() -> crate::a::Thing { crate::a::f() }\n"),
    ]);
    assert_eq!(krate.edges(), ["b -> a: Thing, f"]);
    assert_eq!(krate.report(), "0 module circles among 3 modules");
}

#[test]
fn a_three_module_circle_is_reported_with_its_edges() {
    let krate = TempCrate::new(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
        ("a.rs", "pub struct A;\nfn f(_: crate::b::B) {}\n"),
        ("b.rs", "pub struct B;\nfn f() -> Option<crate::c::C> { None }\n"),
        (
            "c.rs",
            "use crate::{a::A, d::D};\npub struct C;\nfn f(_: A, _: D) {}\n",
        ),
        ("d.rs", "pub struct D;\n"),
    ]);
    assert_eq!(
        krate.report(),
        "circle: a <-> b <-> c (src/a.rs -> src/b.rs: B; src/b.rs -> src/c.rs: C; src/c.rs -> src/a.rs: A)\n\
         1 module circles among 5 modules"
    );
}

#[test]
fn circles_are_sorted() {
    let krate = TempCrate::new(&[
        ("lib.rs", "mod z;\nmod y;\nmod b;\nmod a;\n"),
        ("z.rs", "pub fn z() { crate::y::y() }\n"),
        ("y.rs", "pub fn y() { crate::z::z() }\n"),
        ("b.rs", "pub fn b() { crate::a::a() }\n"),
        ("a.rs", "pub fn a() { crate::b::b() }\n"),
    ]);
    assert_eq!(
        krate.report(),
        "circle: a <-> b (src/a.rs -> src/b.rs: b; src/b.rs -> src/a.rs: a)\n\
         circle: y <-> z (src/y.rs -> src/z.rs: z; src/z.rs -> src/y.rs: y)\n\
         2 module circles among 5 modules"
    );
}

#[test]
fn paths_in_macro_calls_and_path_attributes_count() {
    let krate = TempCrate::new(&[
        ("lib.rs", "#[path = \"codegen.rs\"]\npub mod __codegen;\nmod a;\n"),
        (
            "codegen.rs",
            "pub fn run() { println!(\"{:?}\", crate::a::value()); }\n",
        ),
        (
            "a.rs",
            "pub fn value() -> u8 { 0 }\nmacro_rules! m { () => { $crate::__codegen::run() }; }\n",
        ),
    ]);
    assert_eq!(krate.edges(), ["__codegen -> a: value", "a -> __codegen: run"]);
}

#[test]
fn unknown_names_and_variants_stop_at_the_deepest_module() {
    let krate = TempCrate::new(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a.rs", "pub enum E { V }\n"),
        (
            "b.rs",
            "fn f() { let _ = crate::a::E::V; let _ = crate::a::made_by_a_macro(); }\n",
        ),
        (
            "c.rs",
            "use std::collections::HashMap;\nfn f() -> HashMap<u8, u8> { HashMap::new() }\n",
        ),
    ]);
    assert_eq!(krate.edges(), ["b -> a: E, made_by_a_macro"]);
}

#[test]
fn bad_input_is_an_error() {
    let missing = std::env::temp_dir().join("xtask-module-cycles-no-such-dir");
    assert!(matches!(check(&[missing]), Err(Error::MissingDir(_))));

    let krate = TempCrate::new(&[
        ("lib.rs", "mod a;\n"),
        ("a.rs", "pub fn f() {\n    let = 1;\n}\n"),
    ]);
    let error = check(&[krate.src()]).expect_err("a.rs does not parse");
    let message = error
        .to_string()
        .replace(&format!("{}/", krate.root.display()), "");
    assert!(
        message.starts_with("failed to parse src/a.rs:2:9: expected "),
        "{message}"
    );

    let krate = TempCrate::new(&[("lib.rs", "mod gone;\n")]);
    let error = check(&[krate.src()]).expect_err("gone.rs is missing");
    assert!(
        matches!(error, Error::MissingModule { ref module, .. } if module == "gone"),
        "{error}"
    );
}

#[test]
fn two_top_level_modules_that_import_each_other_through_different_files_are_a_circle() {
    let krate = TempCrate::new(&[
        ("lib.rs", "mod cache;\nmod reflector;\n"),
        (
            "cache/mod.rs",
            "mod store;\nmod undelta;\npub use store::Writer;\n",
        ),
        ("cache/store.rs", "pub struct Writer;\n"),
        (
            "cache/undelta.rs",
            "pub struct Undelta;\nimpl crate::reflector::Sink for Undelta {}\n",
        ),
        (
            "reflector.rs",
            "pub trait Sink {}\npub fn run(_: &crate::cache::Writer) {}\n",
        ),
    ]);
    assert_eq!(
        krate.report(),
        "circle: cache <-> reflector (src/cache/undelta.rs -> src/reflector.rs: Sink; \
         src/reflector.rs -> src/cache/store.rs: Writer)\n\
         1 module circles among 5 modules"
    );
}

#[test]
fn a_circle_of_top_level_files_is_reported_once() {
    let krate = TempCrate::new(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "pub struct A;\npub fn f(_: crate::b::B) {}\n"),
        ("b.rs", "pub struct B;\npub fn g(_: crate::a::A) {}\n"),
    ]);
    assert_eq!(
        krate.report(),
        "circle: a <-> b (src/a.rs -> src/b.rs: B; src/b.rs -> src/a.rs: A)\n\
         1 module circles among 3 modules"
    );
}
