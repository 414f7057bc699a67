//! Work queues for controllers (client-go's `util/workqueue`): handlers put keys on a queue,
//! workers take them off, process them through listers, and retry failures with rate limits.
//!
//! - [`WorkQueue`]: a deduplicating FIFO; an item is never processed by two workers at once,
//!   and an item added while processed is processed once more afterwards.
//! - [`PriorityQueue`]: a work queue that also delays items (the earliest deadline wins) and
//!   retries them after a delay a [`RateLimiter`] chooses (client-go's delaying and
//!   rate-limiting queues), each add with its [`AddOptions`] (a delay, a rate-limited retry, a
//!   [`Priority`]); it hands out the most urgent item first, with a fair share for the least
//!   urgent, or in FIFO order ([`PriorityQueue::fifo`]). The queue every controller runs on.
//! - [`Queue`]: what handlers add to, implemented by both.
//!
//! ```
//! use informer_runtime::workqueue::{AddOptions, PriorityQueue, default_controller_rate_limiter};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // client-go's rate-limiting queue: first in, first out
//! let queue = PriorityQueue::new(default_controller_rate_limiter()).fifo(true);
//! queue.add("default/web".to_owned());
//! while let Some((key, _priority)) = queue.get().await {
//!     let ok = !key.is_empty(); // reconcile `key` here
//!     if ok {
//!         queue.forget(&key);
//!     } else {
//!         queue.add_with_options(key.clone(), AddOptions::default().rate_limited(true));
//!     }
//!     queue.done(&key);
//!     queue.shut_down(); // a real worker loops until the controller stops
//! }
//! # }
//! ```

mod add;
mod add_options;
mod metrics;
mod priority;
mod priority_queue;
mod queue;
mod rate_limiter;

pub use add::Queue;
pub use add_options::AddOptions;
pub use metrics::QueueMetrics;
pub use priority::Priority;
pub use priority_queue::{DEFAULT_FAIR_SHARE, PriorityQueue};
pub use queue::WorkQueue;
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter, MaxOfRateLimiter,
    RateLimiter, WithMaxWaitRateLimiter, default_controller_rate_limiter, default_item_based_rate_limiter,
};

/// Proptest strategies and a paused runtime shared by the work queue and backoff tests.
#[cfg(test)]
pub(crate) mod strategies {
    use std::time::Duration;

    use proptest::{prelude::*, test_runner::Config};

    /// The default configuration, without regression files in the source tree.
    pub(crate) fn config() -> Config {
        Config {
            failure_persistence: None,
            ..Config::default()
        }
    }

    /// A current-thread runtime with paused time, for tests that build one per case.
    pub(crate) fn paused_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("runtime")
    }

    /// Any duration, weighted towards the edges: zero, tiny, near and at [`Duration::MAX`].
    pub(crate) fn any_duration() -> impl Strategy<Value = Duration> {
        prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::MAX),
            (0..=1_000u64, 0..1_000_000_000u32)
                .prop_map(|(back, nanos)| Duration::new(u64::MAX - back, nanos)),
            (0..10_000_000_000u64).prop_map(Duration::from_nanos),
            (any::<u64>(), 0..1_000_000_000u32).prop_map(|(secs, nanos)| Duration::new(secs, nanos)),
        ]
    }
}
