//! [`AddOptions`]: how an item is added to a [`PriorityQueue`](super::PriorityQueue)
//! (controller-runtime's `AddOpts`): after a delay, as a rate-limited retry, at a priority.

use std::time::Duration;

use super::Priority;

/// How [`PriorityQueue::add_with_options`](super::PriorityQueue::add_with_options) adds an item (controller-runtime's `AddOpts`):
/// after a delay, after the rate limiter's delay, at a priority. The default adds it now at
/// [`Priority::NORMAL`].
///
/// ```
/// use std::time::Duration;
/// use informer_runtime::workqueue::{AddOptions, Priority, PriorityQueue, default_controller_rate_limiter};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue = PriorityQueue::new(default_controller_rate_limiter());
/// queue.add_with_options("default/listed".to_owned(), AddOptions::default().priority(Priority::LOW));
/// queue.add_with_options("default/later".to_owned(), AddOptions::default().after(Duration::from_secs(60)));
/// queue.add("default/changed".to_owned()); // now, at Priority::NORMAL
/// assert_eq!(queue.get().await, Some(("default/changed".to_owned(), Priority::NORMAL)));
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddOptions {
    /// Add the item once this delay has passed (`None`: now).
    pub after: Option<Duration>,
    /// Add the item after the delay the queue's rate limiter chooses.
    pub rate_limited: bool,
    /// The item's priority (`None`: [`Priority::NORMAL`]).
    pub priority: Option<Priority>,
}

impl AddOptions {
    /// Adds the item once `delay` has passed (delays longer than about 30 years saturate
    /// there). With [`rate_limited`](Self::rate_limited), the longer of the two delays wins.
    #[must_use]
    pub fn after(mut self, delay: Duration) -> Self {
        self.after = Some(delay);
        self
    }

    /// Adds the item after the delay the queue's rate limiter chooses for it, and records a
    /// failure of it (client-go's `AddRateLimited`): a retry.
    #[must_use]
    pub fn rate_limited(mut self, rate_limited: bool) -> Self {
        self.rate_limited = rate_limited;
        self
    }

    /// Adds the item at `priority` ([`Priority::NORMAL`] by default).
    #[must_use]
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = Some(priority);
        self
    }
}
