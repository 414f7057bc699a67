//! The controller's work queue: a [`PriorityQueue`] by default, or the plain FIFO
//! [`RateLimitingQueue`] ([`Controller::priority_queue(false)`](super::Controller::priority_queue)).

use std::{fmt, sync::Arc, time::Duration};

use crate::{
    informer::enqueue::Queue,
    key::ObjectKey,
    workqueue::{Priority, PriorityQueue, QueueMetrics, RateLimiter, RateLimitingQueue},
};

/// One of the two queues a controller can run on, with one interface.
pub(crate) enum KeyQueue {
    /// Most urgent first, with a fair share for the least urgent.
    Priority(Box<PriorityQueue<ObjectKey>>),
    /// First in, first out; priorities are ignored.
    Fifo(RateLimitingQueue<ObjectKey>),
}

impl fmt::Debug for KeyQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Priority(queue) => queue.fmt(f),
            Self::Fifo(queue) => queue.fmt(f),
        }
    }
}

impl KeyQueue {
    /// A new queue of the chosen kind. Must be called within a tokio runtime (the FIFO
    /// queue's timer task).
    pub(crate) fn new(
        priority: bool,
        limiter: Arc<dyn RateLimiter<ObjectKey>>,
        metrics: Option<Arc<dyn QueueMetrics>>,
    ) -> Self {
        match (priority, metrics) {
            (true, metrics) => Self::Priority(Box::new(PriorityQueue::build(Box::new(limiter), metrics))),
            (false, Some(metrics)) => Self::Fifo(RateLimitingQueue::with_metrics(limiter, metrics)),
            (false, None) => Self::Fifo(RateLimitingQueue::new(limiter)),
        }
    }

    /// Queues `key` at `priority`.
    pub(crate) fn add(&self, key: ObjectKey, priority: Priority) {
        match self {
            Self::Priority(queue) => queue.add_with_priority(key, priority),
            Self::Fifo(queue) => queue.add(key),
        }
    }

    /// Queues `key` at `priority` after `delay`.
    pub(crate) fn add_after(&self, key: ObjectKey, delay: Duration, priority: Priority) {
        match self {
            Self::Priority(queue) => queue.add_after_with_priority(key, delay, priority),
            Self::Fifo(queue) => queue.add_after(key, delay),
        }
    }

    /// Queues `key` at `priority` after the rate limiter's delay.
    pub(crate) fn add_rate_limited(&self, key: ObjectKey, priority: Priority) {
        match self {
            Self::Priority(queue) => queue.add_rate_limited_with_priority(key, priority),
            Self::Fifo(queue) => queue.add_rate_limited(key),
        }
    }

    /// The next key and its priority (always [`Priority::NORMAL`] on the FIFO queue); `None`
    /// once shut down.
    pub(crate) async fn get(&self) -> Option<(ObjectKey, Priority)> {
        match self {
            Self::Priority(queue) => queue.get_with_priority().await,
            Self::Fifo(queue) => queue.get().await.map(|key| (key, Priority::NORMAL)),
        }
    }

    /// Marks `key` as processed.
    pub(crate) fn done(&self, key: &ObjectKey) {
        match self {
            Self::Priority(queue) => queue.done(key),
            Self::Fifo(queue) => queue.done(key),
        }
    }

    /// Forgets `key`'s failures.
    pub(crate) fn forget(&self, key: &ObjectKey) {
        match self {
            Self::Priority(queue) => queue.forget(key),
            Self::Fifo(queue) => queue.forget(key),
        }
    }

    /// Keys ready to be handed out.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Priority(queue) => queue.len(),
            Self::Fifo(queue) => queue.len(),
        }
    }

    /// Stops the queue.
    pub(crate) fn shut_down(&self) {
        match self {
            Self::Priority(queue) => queue.shut_down(),
            Self::Fifo(queue) => queue.shut_down(),
        }
    }
}

impl Queue for KeyQueue {
    type Item = ObjectKey;

    fn add(&self, item: ObjectKey) {
        Self::add(self, item, Priority::NORMAL);
    }

    fn add_with_priority(&self, item: ObjectKey, priority: Priority) {
        Self::add(self, item, priority);
    }
}

#[cfg(test)]
mod tests;
