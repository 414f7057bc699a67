//! The controller's work queue: a [`PriorityQueue`] of object keys, in FIFO order with
//! [`Controller::priorities(false)`](super::Controller::priorities).

use std::sync::Arc;

use crate::{
    key::ObjectKey,
    workqueue::{PriorityQueue, QueueMetrics, RateLimiter},
};

/// The queue of one run of a controller.
pub(crate) type ControllerQueue = Arc<PriorityQueue<ObjectKey>>;

/// A new queue retrying with `limiter`, most urgent key first (or in FIFO order without
/// `priorities`).
pub(crate) fn new(
    priorities: bool,
    limiter: Arc<dyn RateLimiter<ObjectKey>>,
    metrics: Option<Arc<dyn QueueMetrics>>,
) -> ControllerQueue {
    Arc::new(PriorityQueue::build(Box::new(limiter), metrics).fifo(!priorities))
}

#[cfg(test)]
mod tests;
