//! [`Queue`]: what every queue of this module is to the handlers that feed it.

use std::sync::Arc;

use super::Priority;

/// Anything a handler adds items to: [`WorkQueue`](super::WorkQueue), [`PriorityQueue`](super::PriorityQueue), and an `Arc` of either (how queues are shared between handlers and
/// workers). [`Enqueue`](crate::informer::enqueue::Enqueue) feeds any of them.
pub trait Queue: Send + Sync + 'static {
    /// What the queue holds.
    type Item;

    /// Adds `item` now (queues deduplicate it if it is already waiting).
    fn add(&self, item: Self::Item);

    /// Adds `item` now at `priority`; a queue without priorities ([`WorkQueue`](super::WorkQueue), a
    /// [FIFO](super::PriorityQueue::fifo) priority queue) adds it as [`add`](Self::add) does.
    fn add_with_priority(&self, item: Self::Item, priority: Priority) {
        let _ = priority;
        self.add(item);
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
