//! A delaying queue that retries items after a rate limiter's delay (client-go's
//! `RateLimitingInterface`).

use std::{fmt, hash::Hash, ops::Deref, sync::Arc};

use super::{DelayingQueue, QueueMetrics, RateLimiter};

/// A [`DelayingQueue`] with a [`RateLimiter`] for retries. It dereferences to the delaying
/// queue for `add`, `get`, `done`, `add_after` and shutdown.
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    limiter: Box<dyn RateLimiter<T>>,
    metrics: Option<Arc<dyn QueueMetrics>>,
}

impl<T: fmt::Debug> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> RateLimitingQueue<T> {
    /// A queue retrying with `limiter`. Must be created within a tokio runtime.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self {
            queue: DelayingQueue::new(),
            limiter: Box::new(limiter),
            metrics: None,
        }
    }

    /// A queue retrying with `limiter` and reporting to `metrics`.
    pub fn with_metrics(limiter: impl RateLimiter<T> + 'static, metrics: Arc<dyn QueueMetrics>) -> Self {
        Self {
            queue: DelayingQueue::with_metrics(Arc::clone(&metrics)),
            limiter: Box::new(limiter),
            metrics: Some(metrics),
        }
    }

    /// Adds `item` after the delay the limiter chooses (and records a failure of it). Any delay
    /// is accepted: huge ones (up to [`Duration::MAX`](std::time::Duration::MAX)) saturate as
    /// in [`DelayingQueue::add_after`].
    pub fn add_rate_limited(&self, item: T) {
        if let Some(metrics) = &self.metrics {
            metrics.retried();
        }
        let delay = self.limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Forgets `item`'s failures; call it when the item was processed successfully. It does not
    /// remove the item from the queue.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How often `item` was retried since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }
}

impl<T> Deref for RateLimitingQueue<T> {
    type Target = DelayingQueue<T>;

    fn deref(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::Instant;

    use super::*;
    use crate::workqueue::ItemExponentialFailureRateLimiter;

    // TestRateLimitingQueue
    #[tokio::test(start_paused = true)]
    async fn retries_wait_for_the_limiters_delay() {
        let queue = RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(1),
            Duration::from_secs(1),
        ));
        let ms = Duration::from_millis;
        let now = Instant::now();
        queue.add_rate_limited("one");
        assert_eq!(queue.ready_at(&"one"), Some(now + ms(1)));
        queue.add_rate_limited("one");
        assert_eq!(
            queue.ready_at(&"one"),
            Some(now + ms(1)),
            "a later deadline never postpones"
        );
        assert_eq!(queue.num_requeues(&"one"), 2);

        queue.add_rate_limited("two");
        assert_eq!(queue.ready_at(&"two"), Some(now + ms(1)));
        tokio::time::sleep(ms(5)).await;
        assert_eq!(queue.len(), 2);
        queue.add_rate_limited("two");
        let later = Instant::now();
        assert_eq!(queue.ready_at(&"two"), Some(later + ms(2)));

        queue.forget(&"one");
        assert_eq!(queue.num_requeues(&"one"), 0);
        assert_eq!(queue.get().await, Some("one"));
        queue.done(&"one");
        queue.add_rate_limited("one");
        assert_eq!(queue.ready_at(&"one"), Some(later + ms(1)));
        queue.shut_down();
    }
}

#[cfg(test)]
mod saturation_tests {
    use std::time::Duration;

    use proptest::prelude::*;
    use tokio::time::Instant;

    use super::*;
    use crate::workqueue::{
        BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter,
        strategies::{any_duration, config, paused_runtime},
    };

    /// Always the same delay.
    struct Fixed(Duration);

    impl RateLimiter<&'static str> for Fixed {
        fn when(&self, _: &&'static str) -> Duration {
            self.0
        }
        fn forget(&self, _: &&'static str) {}
        fn num_requeues(&self, _: &&'static str) -> u32 {
            0
        }
    }

    #[tokio::test(start_paused = true)]
    async fn add_rate_limited_with_duration_max_waits_far_into_the_future() {
        let queue = RateLimitingQueue::new(Fixed(Duration::MAX));
        let now = Instant::now();
        queue.add_rate_limited("one");
        let ready_at = queue.ready_at(&"one").expect("one waits");
        assert!(
            ready_at > now + Duration::from_secs(86_400 * 365 * 29),
            "{ready_at:?}"
        );
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert_eq!(queue.len(), 0);
        assert!(!queue.shutting_down(), "the timer task is still running");
        queue.shut_down();
        assert_eq!(queue.get().await, None);
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn add_rate_limited_accepts_any_limiter_settings(
            base in any_duration(),
            max in any_duration(),
            qps in prop_oneof![Just(f64::MIN_POSITIVE), 1e-300..1e3, any::<f64>()],
            burst in 0..3u32,
            failures in 1..80u32,
        ) {
            paused_runtime().block_on(async {
                let queue = RateLimitingQueue::new(MaxOfRateLimiter::new(vec![
                    Box::new(ItemExponentialFailureRateLimiter::new(base, max)),
                    Box::new(BucketRateLimiter::new(qps, burst)),
                ]));
                for _ in 0..failures {
                    queue.add_rate_limited("item");
                }
                prop_assert_eq!(queue.num_requeues(&"item"), failures);
                tokio::time::sleep(Duration::from_millis(10)).await;
                prop_assert!(!queue.shutting_down(), "the timer task is still running");
                queue.shut_down();
                Ok(())
            })?;
        }
    }
}

#[cfg(test)]
mod metrics_tests {
    use std::{
        sync::{Arc, Mutex},
        time::Duration,
    };

    use super::*;
    use crate::workqueue::ItemExponentialFailureRateLimiter;

    #[derive(Default)]
    struct Recorded(Mutex<Vec<String>>);

    impl QueueMetrics for Recorded {
        fn added(&self) {
            self.0.lock().expect("lock").push("added".into());
        }
        fn taken(&self, waited: Duration) {
            self.0
                .lock()
                .expect("lock")
                .push(format!("taken after {}ms", waited.as_millis()));
        }
        fn done(&self, worked: Duration) {
            self.0
                .lock()
                .expect("lock")
                .push(format!("done after {}ms", worked.as_millis()));
        }
        fn retried(&self) {
            self.0.lock().expect("lock").push("retried".into());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn queue_reports_adds_latency_work_and_retries() {
        let metrics = Arc::new(Recorded::default());
        let limiter =
            ItemExponentialFailureRateLimiter::new(Duration::from_millis(10), Duration::from_secs(1));
        let queue = RateLimitingQueue::with_metrics(limiter, Arc::clone(&metrics) as Arc<dyn QueueMetrics>);
        queue.add("a");
        queue.add("a");
        tokio::time::sleep(Duration::from_millis(5)).await;
        let item = queue.get().await.expect("a");
        tokio::time::sleep(Duration::from_millis(7)).await;
        queue.add_rate_limited(item);
        queue.done(&item);
        tokio::time::sleep(Duration::from_millis(20)).await;
        let again = queue.get().await.expect("retried a");
        queue.done(&again);
        queue.shut_down();
        assert_eq!(
            *metrics.0.lock().expect("lock"),
            [
                "added",
                "taken after 5ms",
                "retried",
                "done after 7ms",
                "added",
                "taken after 10ms",
                "done after 0ms"
            ]
        );
    }
}
