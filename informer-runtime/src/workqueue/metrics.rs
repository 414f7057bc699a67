//! What a work queue reports for metrics (client-go's `MetricsProvider`).

use std::time::Duration;

/// Receives a work queue's events. Queues without one keep no timestamps.
pub trait QueueMetrics: Send + Sync {
    /// An item was queued (the queue is one deeper).
    fn added(&self) {}
    /// An item was handed to a worker after `waited` in the queue (one shallower).
    fn taken(&self, waited: Duration) {
        let _ = waited;
    }
    /// A worker finished an item after `worked`.
    fn done(&self, worked: Duration) {
        let _ = worked;
    }
    /// An item was put back with a rate-limited delay.
    fn retried(&self) {}
}
