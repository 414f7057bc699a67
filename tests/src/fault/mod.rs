//! A seeded fault suite: random workloads interleaved with faults against informers over
//! HTTP, checking that every cache converges to the server's state and that no handler loses,
//! invents or reorders a change.
//!
//! - [`schedule`]: the seeded generator of steps;
//! - [`recorder`]: handlers that record their notifications, and one that blocks or panics;
//! - [`request_trace`]: a lister-watcher that traces its requests, for failure reports;
//! - [`harness`]: runs a schedule against a fresh test server and informer factories;
//! - [`invariants`]: what must hold after every schedule, and the checks;
//! - [`minimize`]: shrinking a failing schedule;
//! - [`campaign`]: running many seeds and summarizing them;
//! - [`config_maps`]: a seeded ConfigMap workload with server faults, for controller tests;
//! - [`fencing`]: the log and check that no two leaders act at once;
//! - [`tenure`]: the log and check that no two shards act on one object at once.
//!
//! `tests/fault_suite.rs` runs a fast set of seeds with `cargo test`; see [`campaign`] for
//! the environment variables of long campaigns and of reproducing one seed.

pub mod campaign;
pub mod config_maps;
pub mod fencing;
pub mod harness;
pub mod invariants;
pub mod minimize;
pub mod recorder;
pub mod request_trace;
pub mod schedule;
pub mod tenure;
