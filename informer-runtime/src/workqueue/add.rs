//! Adding to a queue: [`AddOptions`] (controller-runtime's `AddOpts`: a delay, a rate-limited
//! retry, a priority) and [`Queue`], what every queue of this module is to the handlers that
//! feed it.

use std::{hash::Hash, sync::Arc, time::Duration};

use super::{Priority, PriorityQueue, WorkQueue};

/// How [`PriorityQueue::add_with_options`] adds an item (controller-runtime's `AddOpts`):
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

/// Anything a handler adds items to: [`WorkQueue`], [`PriorityQueue`], and an `Arc` of either (how queues are shared between handlers and
/// workers). [`Enqueue`](crate::informer::enqueue::Enqueue) feeds any of them.
pub trait Queue: Send + Sync + 'static {
    /// What the queue holds.
    type Item;

    /// Adds `item` now (queues deduplicate it if it is already waiting).
    fn add(&self, item: Self::Item);

    /// Adds `item` now at `priority`; a queue without priorities ([`WorkQueue`], a
    /// [FIFO](PriorityQueue::fifo) priority queue) adds it as [`add`](Self::add) does.
    fn add_with_priority(&self, item: Self::Item, priority: Priority) {
        let _ = priority;
        self.add(item);
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> Queue for WorkQueue<T> {
    type Item = T;

    fn add(&self, item: T) {
        WorkQueue::add(self, item);
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> Queue for PriorityQueue<T> {
    type Item = T;

    fn add(&self, item: T) {
        PriorityQueue::add(self, item);
    }

    fn add_with_priority(&self, item: T, priority: Priority) {
        self.add_with_options(item, AddOptions::default().priority(priority));
    }
}

impl<Q: Queue + ?Sized> Queue for Arc<Q> {
    type Item = Q::Item;

    fn add(&self, item: Q::Item) {
        Q::add(self, item);
    }

    fn add_with_priority(&self, item: Q::Item, priority: Priority) {
        Q::add_with_priority(self, item, priority);
    }
}
