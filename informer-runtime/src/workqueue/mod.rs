//! Work queues for controllers (client-go's `util/workqueue`): handlers put keys on a queue,
//! workers take them off, process them through listers, and retry failures with rate limits.
//!
//! - [`WorkQueue`]: a deduplicating FIFO; an item is never processed by two workers at once,
//!   and an item added while processed is processed once more afterwards.
//! - [`DelayingQueue`]: adds items after a delay (the earliest deadline wins).
//! - [`RateLimitingQueue`]: adds items after a delay chosen by a [`RateLimiter`].
//!
//! ```
//! use informer_runtime::workqueue::{RateLimitingQueue, default_controller_rate_limiter};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let queue = RateLimitingQueue::new(default_controller_rate_limiter());
//! queue.add("default/web".to_owned());
//! while let Some(key) = queue.get().await {
//!     let ok = !key.is_empty(); // reconcile `key` here
//!     if ok {
//!         queue.forget(&key);
//!     } else {
//!         queue.add_rate_limited(key.clone());
//!     }
//!     queue.done(&key);
//!     queue.shut_down(); // a real worker loops until the controller stops
//! }
//! # }
//! ```

mod delaying_queue;
mod metrics;
mod queue;
mod rate_limiter;
mod rate_limiting_queue;

pub use delaying_queue::DelayingQueue;
pub use metrics::QueueMetrics;
pub use queue::WorkQueue;
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter, MaxOfRateLimiter,
    RateLimiter, WithMaxWaitRateLimiter, default_controller_rate_limiter, default_item_based_rate_limiter,
};
pub use rate_limiting_queue::RateLimitingQueue;
