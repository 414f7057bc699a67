//! Freeing replaced and deleted objects on the informer's thread.
//!
//! When an object is replaced or deleted, the informer's handlers often hold its last
//! reference, so it would be freed on a handler thread. Objects are allocated where they are
//! decoded, and freeing many small allocations from another thread is slow: the allocator
//! hands them back to the decoding thread's arena under its lock, which the decoding thread
//! needs too. [`Reclaimer`] keeps a reference to each such object until the handlers are done
//! with it, then drops it where the informer runs.
//!
//! The informer does this on a current-thread runtime only: there its decoding and its
//! freeing share one thread. On a multi-thread runtime its task moves between workers, so the
//! frees would cross threads anyway, and are better left to run beside it on handler threads.

use std::{collections::VecDeque, sync::Arc};

use crate::informer::erased_object::ErasedObject;

/// Objects waiting to be freed on the informer's thread.
#[derive(Debug)]
pub(crate) struct Reclaimer<T> {
    held: VecDeque<T>,
    capacity: usize,
}

/// A reference to an object that can tell whether it is the last one.
pub(crate) trait Reclaimable: Clone {
    /// Whether dropping this reference frees the object.
    fn is_last_reference(&self) -> bool;
}

impl<T> Reclaimable for Arc<T> {
    fn is_last_reference(&self) -> bool {
        Arc::strong_count(self) == 1
    }
}

/// What an informer's core keeps to free on its thread: objects the cache let go of, and the
/// pointers its notifications carried (so that neither the objects nor the pointers are freed
/// on a handler thread).
#[derive(Debug, Clone)]
pub(crate) enum Held {
    /// An object the cache replaced or deleted: free once nobody else holds it.
    Object(ErasedObject),
    /// A notification's pointer to an object the cache no longer holds: free, with the object,
    /// once nobody else holds either.
    Replaced(Arc<ErasedObject>),
    /// A notification's pointer to an object the cache holds: free once the handlers let go.
    Delivered(Arc<ErasedObject>),
}

impl Reclaimable for Held {
    fn is_last_reference(&self) -> bool {
        match self {
            Self::Object(object) => object.is_unique(),
            Self::Replaced(pointer) => Arc::strong_count(pointer) == 1 && pointer.is_unique(),
            Self::Delivered(pointer) => Arc::strong_count(pointer) == 1,
        }
    }
}

impl<T: Reclaimable> Reclaimer<T> {
    /// Holds at most `capacity` objects; beyond that the oldest is let go, wherever it is
    /// freed (a slow handler must not make the informer keep objects without bound).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            held: VecDeque::new(),
            capacity,
        }
    }

    /// Keeps a reference to `object` until [`reclaim`](Self::reclaim) finds nobody else holds
    /// it (with a capacity of zero, takes none: nothing is counted on the hot path).
    pub(crate) fn hold(&mut self, object: &T) {
        if self.capacity == 0 {
            return;
        }
        if self.held.len() >= self.capacity {
            self.held.pop_front();
        }
        self.held.push_back(object.clone());
    }

    /// Frees, oldest first, the held objects nobody else references, stopping at the first
    /// one still in use (handlers take notifications in order, so later ones are rarely done).
    pub(crate) fn reclaim(&mut self) {
        while self.held.front().is_some_and(Reclaimable::is_last_reference) {
            self.held.pop_front();
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frees_what_nobody_else_holds_in_order_and_stays_bounded() {
        let mut reclaimer = Reclaimer::new(3);
        let (a, b, c) = (Arc::new("a"), Arc::new("b"), Arc::new("c"));
        reclaimer.hold(&a);
        reclaimer.hold(&b);
        reclaimer.hold(&c);
        reclaimer.reclaim();
        assert_eq!(reclaimer.len(), 3, "everything is still in use");

        drop(a);
        drop(c);
        reclaimer.reclaim();
        assert_eq!(
            reclaimer.len(),
            2,
            "a is freed; b is still used, so c waits behind it"
        );
        assert_eq!(Arc::strong_count(&b), 2);

        drop(b);
        reclaimer.reclaim();
        assert_eq!(reclaimer.len(), 0);

        let kept: Vec<Arc<u32>> = (0..5).map(Arc::new).collect();
        let mut bounded = Reclaimer::new(3);
        for object in &kept {
            bounded.hold(object);
        }
        assert_eq!(bounded.len(), 3);
        assert_eq!(Arc::strong_count(&kept[0]), 1, "the oldest were let go");
        assert_eq!(Arc::strong_count(&kept[4]), 2);

        let mut disabled = Reclaimer::new(0);
        disabled.hold(&kept[0]);
        assert_eq!((disabled.len(), Arc::strong_count(&kept[0])), (0, 1));
    }
}
