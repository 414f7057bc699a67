//! [`Priority`]: how urgent a queued item is.

use std::fmt;

/// How urgent an item of a [`PriorityQueue`](super::PriorityQueue) is: higher is handed out
/// first (controller-runtime's `Priority` option of `AddWithOpts`).
///
/// Controllers queue the objects of an initial list and of resyncs at [`LOW`](Self::LOW),
/// live changes at [`NORMAL`](Self::NORMAL), so a change made while a controller works
/// through thousands of listed objects is reconciled next instead of after all of them. Any
/// other value can be given with [`Priority::new`]; adding an item that is already queued
/// only ever raises its priority.
///
/// ```
/// use informer_runtime::workqueue::Priority;
///
/// assert!(Priority::NORMAL > Priority::LOW);
/// assert!(Priority::new(5) > Priority::NORMAL);
/// assert_eq!(Priority::default(), Priority::NORMAL);
/// assert_eq!(Priority::LOW.value(), -100);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(i32);

impl Priority {
    /// Objects of an initial list and of resyncs: work that is not waiting for anyone
    /// (controller-runtime's `handler.LowPriority`, -100).
    pub const LOW: Self = Self(-100);
    /// Live changes, and what [`PriorityQueue::add`](super::PriorityQueue::add) uses (0).
    pub const NORMAL: Self = Self(0);
    /// More urgent than live changes (100), for explicit requests that should jump the queue.
    pub const HIGH: Self = Self(100);

    /// A priority of `value`; higher is handed out first.
    pub const fn new(value: i32) -> Self {
        Self(value)
    }

    /// The priority's value.
    pub const fn value(self) -> i32 {
        self.0
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::LOW => f.write_str("low"),
            Self::NORMAL => f.write_str("normal"),
            Self::HIGH => f.write_str("high"),
            Self(value) => write!(f, "{value}"),
        }
    }
}
