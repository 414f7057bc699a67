//! Counters that many threads bump and a caller reads as a snapshot: one [`Counter`] type,
//! and [`counters!`], which declares a public snapshot type and the live counters behind it
//! from one list of fields. Every `…Stats` type of the crate that is a set of counts is made
//! this way.

use std::sync::atomic::{AtomicU64, Ordering};

/// A count that only grows (or is set, for a gauge), bumped from any thread without a lock.
/// Reads are exact for one counter; a snapshot of several is not atomic as a whole.
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds one.
    pub(crate) fn bump(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Sets the value (for a gauge, such as the members of a ring).
    pub(crate) fn set(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed);
    }

    /// The value now.
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Declares a snapshot type of counts and the live counters behind it:
///
/// ```ignore
/// counters! {
///     /// What a thing has done so far.
///     #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
///     pub struct ThingStats;
///     /// The live counters behind [`ThingStats`].
///     pub(crate) struct Counters {
///         /// Things done.
///         done,
///     }
/// }
/// ```
///
/// gives `pub struct ThingStats { pub done: u64 }`, `struct Counters { done: Counter }` and
/// `Counters::snapshot(&self) -> ThingStats`.
macro_rules! counters {
    (
        $(#[$snapshot_meta:meta])*
        pub struct $snapshot:ident;
        $(#[$counters_meta:meta])*
        $vis:vis struct $counters:ident {
            $( $(#[$field_meta:meta])* $field:ident ),* $(,)?
        }
    ) => {
        $(#[$snapshot_meta])*
        pub struct $snapshot {
            $( $(#[$field_meta])* pub $field: u64, )*
        }

        $(#[$counters_meta])*
        #[derive(Debug, Default)]
        $vis struct $counters {
            $( pub(crate) $field: $crate::stats::Counter, )*
        }

        impl $counters {
            /// The counts now.
            $vis fn snapshot(&self) -> $snapshot {
                $snapshot { $( $field: self.$field.get(), )* }
            }
        }
    };
}

pub(crate) use counters;

#[cfg(test)]
#[allow(unreachable_pub)]
mod tests {
    counters! {
        /// Counts of a test.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct TestStats;
        /// The live counters behind [`TestStats`].
        pub(crate) struct TestCounters {
            /// One.
            first,
            /// Two.
            second,
        }
    }

    #[test]
    fn a_snapshot_reads_every_counter() {
        let counters = TestCounters::default();
        counters.first.bump();
        counters.first.bump();
        counters.second.set(7);
        assert_eq!(counters.snapshot(), TestStats { first: 2, second: 7 });
    }

    #[test]
    fn counters_are_bumped_from_many_threads() {
        let counters = TestCounters::default();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| (0..1000).for_each(|_| counters.first.bump()));
            }
        });
        assert_eq!(counters.snapshot().first, 4000);
    }
}
