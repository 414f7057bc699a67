//! Generates client-go style typed informers, listers and a shared informer factory from a
//! crate of Kubernetes API types: custom resources (`#[derive(CustomResource)]` with
//! `#[kube(...)]`, as kopium produces), `#[derive(Informer)]` types, or k8s-openapi style
//! `impl Resource` blocks.
//!
//! The generated code gives `factory.example().v1().foos().lister().foos("ns").get("x")` and
//! `factory.for_resource(&gvr)`, on top of `informer-runtime`.
//!
//! # From a build script
//!
//! A build script writes ONE file with inline modules into `OUT_DIR` (`mod x;` declarations
//! do not work in a file brought in by `include!`):
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
//! `compile` writes only files whose content changed and prints `cargo:rerun-if-changed` for
//! each input file. The included module's items all carry docs; it should be `pub` (or the
//! including module should allow `unreachable_pub`).
//!
//! # From the command line
//!
//! `informer-gen --input ../my-crds --output src/informers` writes a module directory
//! ([`Layout::Tree`]: `mod.rs`, `<group>/mod.rs`, `<group>/<version>/mod.rs`,
//! `<group>/<version>/<kind>.rs`); with `--crate-name my-informers` it writes a standalone crate
//! ([`Layout::Crate`]) depending on the input crate by relative path. `--check` reports stale
//! files without writing.
//!
//! # Names
//!
//! The naming rules (group accessors, collisions, keywords, versions, plural methods) are
//! documented in [`informer_templates::naming`]; plurals missing from attributes are inferred as
//! kube-derive does ([`plural::infer_plural`]).

mod config;
mod error;
pub mod filter;
pub mod k8s_openapi;
mod location;
pub mod manifest;
mod output;
pub mod parse;
pub use informer_templates::plural;

pub use config::Config;
pub use error::Error;
pub use location::Location;
pub use output::{Layout, stale_files, write_if_changed};
