//! A delaying queue that retries items after a rate limiter's delay (client-go's
//! `RateLimitingInterface`).

use std::{fmt, hash::Hash, ops::Deref};

use super::{DelayingQueue, RateLimiter};

/// A [`DelayingQueue`] with a [`RateLimiter`] for retries. It dereferences to the delaying
/// queue for `add`, `get`, `done`, `add_after` and shutdown.
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    limiter: Box<dyn RateLimiter<T>>,
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
        }
    }

    /// Adds `item` after the delay the limiter chooses (and records a failure of it).
    pub fn add_rate_limited(&self, item: T) {
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
