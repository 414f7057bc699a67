//! The tunables of a sharder, set through its builder methods.

use std::time::Duration;

/// See [`Sharder`](super::Sharder)'s builder methods of the same names.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) virtual_nodes: usize,
    pub(crate) concurrent_moves: usize,
    pub(crate) resync_period: Duration,
    pub(crate) orphan_after: Duration,
}
