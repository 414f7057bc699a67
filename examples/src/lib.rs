//! The reusable parts of the examples, so that tests can run them against the embedded API
//! server.

pub mod configmap_rollout;
pub mod ha_controller;
#[cfg(test)]
mod readme;
pub mod sample_controller;
pub mod sample_informers;
pub mod sharded_controller;
