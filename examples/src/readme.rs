//! Every Rust snippet of the README, compiled: `build.rs` turns each ```rust block into a
//! module with the setup it names (`<!-- setup: NAME -->` before the block, `readme/NAME.rs`;
//! `common` when it names none), so a snippet that no longer compiles fails the build of the
//! tests.
#![allow(
    unused,
    dead_code,
    missing_docs,
    unreachable_pub,
    clippy::all,
    clippy::unwrap_used,
    clippy::uninlined_format_args
)]

include!(concat!(env!("OUT_DIR"), "/readme_snippets.rs"));
