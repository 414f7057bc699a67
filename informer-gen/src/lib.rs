//! Generates client-go style typed informers, listers and a shared informer factory, on top of
//! `informer-runtime`, from a crate of Kubernetes API types. It reads the crate's sources (no
//! compilation) and finds resources declared in three ways:
//!
//! - `#[derive(CustomResource)]` with `#[kube(group, version, kind, ...)]`, as written for
//!   kube-derive or produced by kopium: the resource is the root type kube-derive generates;
//! - `#[derive(Informer)]` with `#[informer(group, version, ...)]` (see `informer-derive` for
//!   every key): the resource is the type itself;
//! - k8s-openapi style `impl Resource for X { const GROUP: &str = ...; ... }` blocks.
//!
//! `#[kube(...)]` and `#[informer(...)]` are read by the parser `#[derive(Informer)]` uses, so
//! the two accept the same keys and infer the same plurals. Keys of `#[kube(...)]` that do not
//! name the resource (`status`, `printcolumn`, ...) are kube-derive's and are skipped; any
//! mistake in `#[informer(...)]` (unknown, duplicate or ill-typed key) is an error naming the
//! file, line and column. Group, version, kind, plural and singular are checked as
//! kube-apiserver checks them (see [`informer_templates::attr::validate`]): the group a
//! DNS-1123 subdomain (empty, the core group, only for built-ins, never in `#[kube(...)]`), the
//! version a DNS-1035 label (what CRD versions may be), plural and singular DNS-1123 labels.
//! The mistakes of every item are reported together. `#[informer(crate = "...")]` is checked but is the derive's own: the
//! runtime path of generated code is [`Config::runtime_path`].
//!
//! # What is generated
//!
//! For each resource `Foo` of group `example.com`, version `v1`: a `FooInformer` (the
//! factory's shared informer of `Foo`), a `FooLister` (reads from its cache) and, when
//! namespaced, a `FooNamespaceLister`; `new_foo_informer` / `new_filtered_foo_informer` for
//! informers outside a factory; and one `Informers`, a typed view of the runtime's
//! `SharedInformerFactory` reaching them all by group, version and resource, or by
//! `GroupVersionResource` (views of several generated crates over one factory share its
//! informers):
//!
//! ```text
//! let factory = informer_runtime::SharedInformerFactory::new(client);
//! let informers = my_crds::informers::Informers::new(&factory);
//! let foos = informers.example_com().v1().foos(); // registers the informer with the factory
//! factory.start();
//! factory.wait_for_cache_sync_timeout(std::time::Duration::from_secs(30)).await;
//! let foo: Option<Arc<Foo>> = foos.lister().foos("default").get("my-foo");
//! let any = informers.for_resource(&gvr)?; // a `GenericInformer`, chosen at run time
//! ```
//!
//! # From a build script
//!
//! [`Config`] writes ONE file with inline modules into `OUT_DIR` (`mod x;` declarations do
//! not work in a file brought in by `include!`):
//!
//! ```no_run
//! // build.rs: `fn main` calls
//! informer_gen::Config::new()
//!     .input("../my-crds") // a crate directory: src/lib.rs and Cargo.toml
//!     .include("example.com/*/*")
//!     .compile()
//!     .expect("informers generated");
//! ```
//!
//! ```text
//! // src/lib.rs
//! pub mod informers {
//!     include!(concat!(env!("OUT_DIR"), "/informers.rs"));
//! }
//! ```
//!
//! [`Config::compile`] writes only files whose content changed and prints
//! `cargo:rerun-if-changed` for each input file. The included module's items all carry docs;
//! it should be `pub` (or the including module should allow `unreachable_pub`). Errors
//! ([`Error`]) name the file, line and column ([`Location`]) of what is wrong in the input.
//!
//! # From the command line
//!
//! `informer-gen --input ../my-crds --output src/informers` writes a module directory
//! ([`Layout::Tree`]: `mod.rs`, `<group>/mod.rs`, `<group>/<version>/mod.rs`,
//! `<group>/<version>/<kind>.rs`) to check in; with `--crate-name my-informers` it writes a
//! standalone crate ([`Layout::Crate`]). A generated crate depends on:
//!
//! - the runtime by `--runtime-dependency` ([`Config::runtime_dependency`]), by default the
//!   published `informer-runtime` matching the generator's version (`informer-runtime = "0.1"`);
//!   give a path line for an unpublished one;
//! - each input by `--input-dependency` ([`Config::input_dependency`]), by default its version
//!   (`my-crds = "1.2.3"`) when the input is a crate unpacked by Cargo from a registry (in
//!   `$CARGO_HOME/registry/src/`), else its path relative to the generated crate.
//!
//! `--include`/`--exclude` (`group/version/resource` patterns with `*`) and
//! `--include-path`/`--exclude-path` (Rust path prefixes) choose the resources (see
//! [Filters and pruning](#filters-and-pruning)); `informer-gen --help` lists every option.
//!
//! # Inputs must use the runtime's kube and k8s-openapi
//!
//! Generated code runs on informer-runtime and names the input's types as kube resources and
//! k8s-openapi objects of the runtime's versions: kube 5.x and k8s-openapi 0.29.x (the
//! requirements [`KUBE_REQUIREMENT`] and [`K8S_OPENAPI_REQUIREMENT`]). An input crate built
//! with other versions gives code that does not compile, so each input with a `Cargo.toml` is
//! checked before its sources are read:
//!
//! - its dependencies on `kube`, `kube-core`, `kube-derive` and `k8s-openapi`, in
//!   `[dependencies]` and `[target.'...'.dependencies]`, renamed ones (`package = "kube"`)
//!   included, must allow a version these requirements allow, with Cargo's semantics:
//!   `kube = "5.2"` or `">=0.90"` pass, `"0.98"` and `"~0"` do not. A dependency inherited from
//!   the workspace (`kube.workspace = true`) is read from the workspace root's
//!   `[workspace.dependencies]`;
//! - when the crate (or its workspace) has a `Cargo.lock`, the versions it holds for the
//!   dependencies whose requirements pass must be such versions too.
//!
//! A mismatch fails with [`VersionError::Mismatch`], naming each dependency and the file that
//! declares it, the versions needed and how to fix it: change the input's dependencies, or use
//! the informer-gen release made for the versions the input uses. An input without a
//! `Cargo.toml` (a bare directory or file), or without such dependencies (k8s-openapi's own
//! sources), is not checked. [`Config::allow_version_mismatch`] (`--allow-version-mismatch`)
//! skips the check, for an input whose generated code is built where Cargo resolves other
//! versions than its own lock says.
//!
//! # Filters and pruning
//!
//! [`Config::include`] and [`Config::exclude`] (`--include`, `--exclude`) keep and drop
//! resources by `group/version/resource` pattern, `*` matching any run of characters;
//! [`Config::include_rust_path`] and [`Config::exclude_rust_path`] (`--include-path`,
//! `--exclude-path`) by the Rust path of their type.
//!
//! The filters also spare parsing files that cannot declare a resource they keep: of a crate
//! with a module per group and version and a file per kind (such as kube-custom-resources-rs,
//! thousands of kinds), a run for two resources parses the module files and a handful of kind
//! files. Every file of the module tree is still read; before parsing one, the generator looks
//! at its module path and scans its text:
//!
//! - a file that declares a module in another file (`mod x;`) is parsed, as the files below it
//!   are found through it; so is a file that mentions `ListableResource` (when a crate marks
//!   listable types, unmarked `impl Resource` types are skipped, wherever the marks are);
//! - with `include`, a file is skipped when, for every included pattern, its text lacks the
//!   string literals of the group and the version that pattern matches (`apps.example.com/v1/*`
//!   needs `"apps.example.com"` and `"v1"`), unless it has string escapes (`\x2e`, `\u{2e}`,
//!   `\` ending a line) that could spell them otherwise;
//! - with `include_rust_path` or `exclude_rust_path`, a file is skipped when no type declared in
//!   its module (or in a module inline in it) can be kept by its path, unless it has an
//!   `impl Resource for super::X` or `crate::x::X`, which can name a type of another module;
//! - with `include`, a file that names neither `CustomResource`, `Informer` nor `impl ...
//!   Resource` declares no resource and is skipped; without it, a file that the path filters
//!   leave in is parsed without a scan.
//!
//! `exclude` alone prunes nothing: without `include`, `include_rust_path` or
//! `exclude_rust_path`, every file is parsed. Module and file names are never taken to name
//! groups (a module `apps_example_com` may declare any group): they prune through the path
//! filters only. What is generated is the same as when every file is parsed
//! ([`Config::prune`]`(false)`, `--no-prune`); mistakes in a skipped file, such as a syntax
//! error, go unreported.
//!
//! # Checking checked-in output: `--check`
//!
//! `informer-gen --check` (same options) writes nothing: it lists the files that are missing,
//! differ from what would be generated or are no longer generated, prints the command that
//! regenerates them (the same command line without `--check`) and exits with 1 if there are
//! any, 2 on an error, so CI can fail when generated code is stale. From Rust,
//! [`Config::stale_files`] does the same.
//!
//! # Regenerating
//!
//! The module directory or crate directory of the CLI belongs to the generator: regenerating
//! removes the files of an earlier run that are no longer generated (the informer of a
//! resource removed from the input), and the directories this empties. Generated files are
//! recognised by their first line, `// @generated by informer-gen. DO NOT EDIT.` (`# ...` in a
//! `Cargo.toml`); other files are never removed, and a file without it where a generated file
//! goes is an error rather than overwritten ([`OutputError::NotGenerated`]). A build script's
//! single file touches nothing else in `OUT_DIR`.
//!
//! # Names
//!
//! A group's accessor (and module) depends on that group alone, so adding a crate of other
//! groups never renames existing accessors: the core group is `core()`; Kubernetes groups,
//! those without a dot or ending in `.k8s.io`, keep their first label (`apps()`,
//! `networking()` for `networking.k8s.io`, `gateway()` for `gateway.networking.k8s.io`);
//! every other group is its whole name in snake case (`example.com` → `example_com()`,
//! `networking.istio.io` → `networking_istio_io()`). [`Config::group_accessor`]
//! (`--group-accessor example.com=example`) pins another name. Two groups with the same
//! accessor are an error naming both, never a silent rename.
//!
//! Keywords, versions and plural methods follow the rules documented in
//! [`informer_templates::naming`]; plurals missing from attributes are inferred as kube-derive
//! infers them ([`informer_templates::plural::infer_plural`]).
//!
//! # Built-in resources
//!
//! [`K8sOpenapi`] generates the crate of informers of every built-in resource from
//! k8s-openapi's own sources (how the workspace's `k8s-informers` crate is made).
//! Besides the informers and listers, it generates typed index handles for the indexes
//! controllers usually need, from a table in `src/k8s_openapi/indexes.rs`
//! (`WELL_KNOWN_INDEXES`, one entry per handle: the resource, the handle's name, the index's
//! name and the index function). Each handle is a documented `pub static` in the module of its
//! resource, gated as the resource is: `core::v1::POD_BY_NODE_NAME` indexes pods by
//! `spec.nodeName` under the index name `spec.nodeName`.

mod compat;
mod config;
mod error;
mod filter;
mod k8s_openapi;
mod location;
// The module's items are `pub` for the rest of the crate; none is part of its API.
#[allow(unreachable_pub)]
mod manifest;
mod output;
mod parse;

pub use compat::{
    Error as VersionError, K8S_OPENAPI_REQUIREMENT, KUBE_REQUIREMENT, Mismatch as VersionMismatch,
};
pub use config::Config;
pub use error::Error;
pub use k8s_openapi::{
    Exclusion, Generated as K8sOpenapiOutput, K8sOpenapi, KubeVersion, ManifestStyle,
    Package as K8sOpenapiPackage, version_build_script,
};
pub use location::Location;
pub use manifest::Error as CrateManifestError;
pub use output::{
    Error as OutputError, Layout, is_generated, orphan_files, remove_orphans, stale_files, write_if_changed,
};
pub use parse::Error as ParseError;
