//! Rate limiters: how long to wait before retrying an item (client-go's
//! `default_rate_limiters.go`).

use std::{
    collections::HashMap,
    fmt,
    hash::Hash,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use tokio::time::Instant;

/// Decides how long an item waits before it is retried.
///
/// A delay may be anything up to [`Duration::MAX`]; the queues accept every delay (see
/// [`AddOptions::after`]), so limiters saturate instead of panicking.
///
/// [`AddOptions::after`]: super::AddOptions::after
pub trait RateLimiter<T>: Send + Sync {
    /// The delay before `item` is retried; records one more failure of it.
    fn when(&self, item: &T) -> Duration;
    /// Forgets `item`'s failures (after it was processed successfully).
    fn forget(&self, item: &T);
    /// How many failures of `item` were recorded.
    fn num_requeues(&self, item: &T) -> u32;
}

impl<T> RateLimiter<T> for Box<dyn RateLimiter<T>> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }

    fn forget(&self, item: &T) {
        (**self).forget(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

impl<T> RateLimiter<T> for Arc<dyn RateLimiter<T>> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }

    fn forget(&self, item: &T) {
        (**self).forget(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `base × 2^failures`, capped at `max` (client-go's `ItemExponentialFailureRateLimiter`).
///
/// Any durations are accepted: the product is computed exactly in nanoseconds and saturates
/// at `max` when it would exceed `max` or [`Duration::MAX`] (so `max = Duration::MAX` is a
/// valid "no cap"). Delays never decrease as failures accumulate.
pub struct ItemExponentialFailureRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<T, u32>>,
}

impl<T> fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("base", &self.base)
            .field("max", &self.max)
            .finish()
    }
}

impl<T> ItemExponentialFailureRateLimiter<T> {
    /// Doubles from `base` up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            failures: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Eq + Hash + Clone + Send> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let mut failures = lock(&self.failures);
        let count = failures.entry(item.clone()).or_insert(0);
        let exponent = *count;
        *count = count.saturating_add(1);
        doubled(self.base, exponent).map_or(self.max, |delay| delay.min(self.max))
    }

    fn forget(&self, item: &T) {
        lock(&self.failures).remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        lock(&self.failures).get(item).copied().unwrap_or(0)
    }
}

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// `base × 2^exponent`, or `None` when it is larger than [`Duration::MAX`].
fn doubled(base: Duration, exponent: u32) -> Option<Duration> {
    if base.is_zero() {
        return Some(Duration::ZERO);
    }
    let nanos = base.as_nanos().checked_mul(1u128.checked_shl(exponent)?)?;
    let secs = u64::try_from(nanos / NANOS_PER_SEC).ok()?;
    let subsec = u32::try_from(nanos % NANOS_PER_SEC).ok()?;
    Some(Duration::new(secs, subsec))
}

/// `fast` for the first `max_fast_attempts` failures of an item, then `slow`
/// (client-go's `ItemFastSlowRateLimiter`). Both delays are returned as given, so no delay
/// exceeds the larger of them, however large (even [`Duration::MAX`]); the failure count
/// saturates instead of overflowing.
pub struct ItemFastSlowRateLimiter<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
    failures: Mutex<HashMap<T, u32>>,
}

impl<T> fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("fast", &self.fast)
            .field("slow", &self.slow)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .finish()
    }
}

impl<T> ItemFastSlowRateLimiter<T> {
    /// `fast` for `max_fast_attempts` failures, then `slow`.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        Self {
            fast,
            slow,
            max_fast_attempts,
            failures: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Eq + Hash + Clone + Send> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let mut failures = lock(&self.failures);
        let count = failures.entry(item.clone()).or_insert(0);
        *count = count.saturating_add(1);
        if *count <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        lock(&self.failures).remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        lock(&self.failures).get(item).copied().unwrap_or(0)
    }
}

struct Bucket {
    tokens: f64,
    last: Instant,
}

/// One token bucket shared by all items: `qps` tokens per second, at most `burst` saved up;
/// each retry takes a token and waits until it is available (client-go's
/// `BucketRateLimiter`). The wait has no cap: many retries at once wait in line.
///
/// A `qps` that is zero, negative or NaN means no pacing (only the burst is counted, and
/// every retry goes at once). A tiny `qps` can ask for waits longer than any [`Duration`]:
/// they saturate at [`Duration::MAX`], which [`AddOptions::after`] accepts.
///
/// [`AddOptions::after`]: super::AddOptions::after
pub struct BucketRateLimiter {
    qps: f64,
    burst: f64,
    bucket: Mutex<Bucket>,
}

impl fmt::Debug for BucketRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BucketRateLimiter")
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .finish()
    }
}

impl BucketRateLimiter {
    /// A full bucket of `burst` tokens refilled at `qps` per second.
    pub fn new(qps: f64, burst: u32) -> Self {
        let burst = f64::from(burst);
        Self {
            qps,
            burst,
            bucket: Mutex::new(Bucket {
                tokens: burst,
                last: Instant::now(),
            }),
        }
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        let now = Instant::now();
        let mut bucket = lock(&self.bucket);
        let refill = now.duration_since(bucket.last).as_secs_f64() * self.qps;
        bucket.tokens = (bucket.tokens + refill).min(self.burst);
        bucket.last = now;
        bucket.tokens -= 1.0;
        if bucket.tokens >= 0.0 || self.qps.is_nan() || self.qps <= 0.0 {
            return Duration::ZERO;
        }
        Duration::try_from_secs_f64(-bucket.tokens / self.qps).unwrap_or(Duration::MAX)
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

/// The largest delay of several limiters, each of which records the failure
/// (client-go's `MaxOfRateLimiter`). No arithmetic is done on the delays, so huge delays
/// (up to [`Duration::MAX`]) pass through unchanged; with no limiters the delay is zero.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

impl<T> MaxOfRateLimiter<T> {
    /// The maximum of `limiters`.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        Self { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|l| l.when(item))
            .max()
            .unwrap_or(Duration::ZERO)
    }

    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters
            .iter()
            .map(|l| l.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// Caps another limiter's delays at `max` (client-go's `WithMaxWaitRateLimiter`). Any `max`
/// is accepted; [`Duration::MAX`] caps nothing.
pub struct WithMaxWaitRateLimiter<T> {
    limiter: Box<dyn RateLimiter<T>>,
    max: Duration,
}

impl<T> fmt::Debug for WithMaxWaitRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithMaxWaitRateLimiter")
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// `limiter`, never waiting longer than `max`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>, max: Duration) -> Self {
        Self { limiter, max }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max)
    }

    fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }
}

/// client-go's `DefaultItemBasedRateLimiter`: exponential from 1 ms to 1000 s.
pub fn default_item_based_rate_limiter<T: Eq + Hash + Clone + Send + 'static>()
-> ItemExponentialFailureRateLimiter<T> {
    ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1000))
}

/// client-go's `DefaultControllerRateLimiter`: the larger of an exponential per-item backoff
/// (5 ms to 1000 s) and a token bucket shared by all items (10 per second, burst 100).
pub fn default_controller_rate_limiter<T: Eq + Hash + Clone + Send + 'static>() -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    // TestItemExponentialFailureRateLimiter
    #[test]
    fn exponential_per_item() {
        let limiter = ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1));
        for want in [1, 2, 4, 8, 16] {
            assert_eq!(limiter.when(&"one"), ms(want));
        }
        assert_eq!(limiter.num_requeues(&"one"), 5);
        assert_eq!(limiter.when(&"two"), ms(1));
        assert_eq!(limiter.when(&"two"), ms(2));
        assert_eq!(limiter.num_requeues(&"two"), 2);
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), ms(1));
    }

    // TestItemExponentialFailureRateLimiterOverFlow
    #[test]
    fn exponential_does_not_overflow() {
        let limiter = ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1000));
        for _ in 0..5 {
            limiter.when(&"one");
        }
        assert_eq!(limiter.when(&"one"), ms(32));
        for _ in 0..1000 {
            limiter.when(&"overflow1");
        }
        assert_eq!(limiter.when(&"overflow1"), Duration::from_secs(1000));

        let limiter =
            ItemExponentialFailureRateLimiter::new(Duration::from_secs(60), Duration::from_secs(1000 * 3600));
        for _ in 0..2 {
            limiter.when(&"two");
        }
        assert_eq!(limiter.when(&"two"), Duration::from_secs(4 * 60));
        for _ in 0..1000 {
            limiter.when(&"overflow2");
        }
        assert_eq!(limiter.when(&"overflow2"), Duration::from_secs(1000 * 3600));
    }

    // TestItemFastSlowRateLimiter
    #[test]
    fn fast_then_slow() {
        let limiter = ItemFastSlowRateLimiter::new(ms(5), Duration::from_secs(10), 3);
        for want in [
            ms(5),
            ms(5),
            ms(5),
            Duration::from_secs(10),
            Duration::from_secs(10),
        ] {
            assert_eq!(limiter.when(&"one"), want);
        }
        assert_eq!(limiter.num_requeues(&"one"), 5);
        assert_eq!((limiter.when(&"two"), limiter.when(&"two")), (ms(5), ms(5)));
        assert_eq!(limiter.num_requeues(&"two"), 2);
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), ms(5));
    }

    // TestMaxOfRateLimiter
    #[test]
    fn max_of_calls_every_limiter() {
        let limiter: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![
            Box::new(ItemFastSlowRateLimiter::new(ms(5), Duration::from_secs(3), 3)),
            Box::new(ItemExponentialFailureRateLimiter::new(
                ms(1),
                Duration::from_secs(1),
            )),
        ]);
        for want in [
            ms(5),
            ms(5),
            ms(5),
            Duration::from_secs(3),
            Duration::from_secs(3),
        ] {
            assert_eq!(limiter.when(&"one"), want);
        }
        assert_eq!(limiter.num_requeues(&"one"), 5);
        assert_eq!((limiter.when(&"two"), limiter.when(&"two")), (ms(5), ms(5)));
        assert_eq!(limiter.num_requeues(&"two"), 2);
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), ms(5));
    }

    /// 5 ms for the first 100 calls, 1000 s afterwards.
    struct Steps(Mutex<u32>);

    impl RateLimiter<&'static str> for Steps {
        fn when(&self, _: &&'static str) -> Duration {
            let mut calls = lock(&self.0);
            *calls += 1;
            if *calls <= 100 {
                ms(5)
            } else {
                Duration::from_secs(1000)
            }
        }
        fn forget(&self, _: &&'static str) {}
        fn num_requeues(&self, _: &&'static str) -> u32 {
            0
        }
    }

    // TestWithMaxWaitRateLimiter
    #[test]
    fn max_wait_caps_delays() {
        let limiter = WithMaxWaitRateLimiter::new(Box::new(Steps(Mutex::new(0))), Duration::from_secs(500));
        for _ in 0..100 {
            assert_eq!(limiter.when(&"one"), ms(5));
        }
        for _ in 0..100 {
            assert_eq!(limiter.when(&"one"), Duration::from_secs(500));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_allows_a_burst_then_paces_every_item() {
        let limiter = BucketRateLimiter::new(10.0, 100);
        for n in 0..100 {
            assert_eq!(
                RateLimiter::<u32>::when(&limiter, &n),
                Duration::ZERO,
                "burst of 100"
            );
        }
        assert_eq!(
            RateLimiter::<u32>::when(&limiter, &100),
            ms(100),
            "then one every 100 ms"
        );
        assert_eq!(RateLimiter::<u32>::when(&limiter, &101), ms(200));
        // One second refills 10 tokens; two were owed: 8 retries go at once, the 9th waits.
        tokio::time::advance(Duration::from_secs(1)).await;
        for n in 102..110 {
            assert_eq!(RateLimiter::<u32>::when(&limiter, &n), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<u32>::when(&limiter, &110), ms(100));
    }

    #[tokio::test(start_paused = true)]
    async fn default_controller_limiter_is_max_of_exponential_and_bucket() {
        let limiter = default_controller_rate_limiter::<u32>();
        assert_eq!(limiter.when(&1), ms(5));
        assert_eq!(limiter.when(&1), ms(10));
        assert_eq!(limiter.num_requeues(&1), 2);
        for n in 2..100 {
            limiter.when(&n);
        }
        assert_eq!(
            limiter.when(&500),
            ms(100),
            "the shared bucket is empty after 100 retries"
        );
    }

    #[test]
    fn exponential_with_an_unbounded_max_saturates() {
        let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::MAX);
        for exponent in 0..64 {
            assert_eq!(limiter.when(&"one"), Duration::from_secs(1 << exponent));
        }
        assert_eq!(
            limiter.when(&"one"),
            Duration::MAX,
            "2^64 s is past Duration::MAX"
        );
        assert_eq!(limiter.when(&"one"), Duration::MAX);

        let limiter = ItemExponentialFailureRateLimiter::new(Duration::MAX, Duration::MAX);
        assert_eq!(limiter.when(&"two"), Duration::MAX);
        assert_eq!(limiter.when(&"two"), Duration::MAX);
    }

    #[test]
    fn exponential_with_a_zero_base_stays_zero() {
        let limiter = ItemExponentialFailureRateLimiter::new(Duration::ZERO, Duration::from_secs(1));
        for _ in 0..300 {
            assert_eq!(limiter.when(&"one"), Duration::ZERO);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_with_a_tiny_qps_saturates() {
        let limiter = BucketRateLimiter::new(1e-300, 1);
        assert_eq!(
            RateLimiter::<u32>::when(&limiter, &1),
            Duration::ZERO,
            "the burst"
        );
        assert_eq!(RateLimiter::<u32>::when(&limiter, &2), Duration::MAX);
        let limiter = BucketRateLimiter::new(f64::MIN_POSITIVE, 0);
        assert_eq!(RateLimiter::<u32>::when(&limiter, &1), Duration::MAX);
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_without_a_usable_qps_does_not_pace() {
        for qps in [f64::NAN, 0.0, -1.0, f64::NEG_INFINITY] {
            let limiter = BucketRateLimiter::new(qps, 0);
            for n in 0..3 {
                assert_eq!(
                    RateLimiter::<u32>::when(&limiter, &n),
                    Duration::ZERO,
                    "qps {qps}"
                );
            }
        }
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;
        use crate::workqueue::strategies::{any_duration, config};

        fn any_qps() -> impl Strategy<Value = f64> {
            prop_oneof![
                Just(0.0),
                Just(f64::NAN),
                Just(f64::INFINITY),
                Just(f64::MIN_POSITIVE),
                1e-300..1e-3,
                0.001..1e6,
                any::<f64>(),
            ]
        }

        proptest! {
            #![proptest_config(config())]

            #[test]
            fn exponential_is_capped_and_never_decreases(
                base in any_duration(),
                max in any_duration(),
                failures in 0..300u32,
            ) {
                let limiter = ItemExponentialFailureRateLimiter::new(base, max);
                let mut previous: Option<Duration> = None;
                for _ in 0..failures {
                    let delay = limiter.when(&"item");
                    prop_assert!(delay <= max, "{delay:?} > max {max:?}");
                    match previous {
                        None => prop_assert_eq!(delay, base.min(max)),
                        Some(previous) => {
                            prop_assert!(delay >= previous, "{delay:?} < {previous:?}");
                            if delay < max {
                                prop_assert_eq!(Some(delay), previous.checked_mul(2), "doubles below max");
                            }
                        }
                    }
                    previous = Some(delay);
                }
                prop_assert_eq!(limiter.num_requeues(&"item"), failures);
            }

            #[test]
            fn fast_slow_returns_its_delays_as_given(
                fast in any_duration(),
                slow in any_duration(),
                fast_attempts in 0..10u32,
                failures in 0..30u32,
            ) {
                let limiter = ItemFastSlowRateLimiter::new(fast, slow, fast_attempts);
                for failure in 1..=failures {
                    let want = if failure <= fast_attempts { fast } else { slow };
                    prop_assert_eq!(limiter.when(&"item"), want);
                }
            }

            #[test]
            fn max_of_and_max_wait_combine_their_parts(
                base in any_duration(),
                max in any_duration(),
                fast in any_duration(),
                slow in any_duration(),
                cap in any_duration(),
                failures in 0..100u32,
            ) {
                let exponential = ItemExponentialFailureRateLimiter::new(base, max);
                let fast_slow = ItemFastSlowRateLimiter::new(fast, slow, 3);
                let combined = WithMaxWaitRateLimiter::new(
                    Box::new(MaxOfRateLimiter::new(vec![
                        Box::new(ItemExponentialFailureRateLimiter::new(base, max)),
                        Box::new(ItemFastSlowRateLimiter::new(fast, slow, 3)),
                    ])),
                    cap,
                );
                for _ in 0..failures {
                    let delay = combined.when(&"item");
                    let want = exponential.when(&"item").max(fast_slow.when(&"item")).min(cap);
                    prop_assert_eq!(delay, want);
                    prop_assert!(delay <= cap && delay <= max.max(fast).max(slow));
                }
                prop_assert_eq!(combined.num_requeues(&"item"), failures);
            }

            #[test]
            fn bucket_never_panics_and_paces_after_its_burst(
                qps in any_qps(),
                burst in prop_oneof![0..5u32, Just(u32::MAX)],
                calls in 0..300u32,
            ) {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .start_paused(true)
                    .build()
                    .expect("runtime");
                // The clock is paused and never advanced: no token is refilled.
                let _clock = runtime.enter();
                let limiter = BucketRateLimiter::new(qps, burst);
                let mut previous = Duration::ZERO;
                for call in 0..calls {
                    let delay = RateLimiter::<u32>::when(&limiter, &call);
                    if call < burst || qps.is_nan() || qps <= 0.0 {
                        prop_assert_eq!(delay, Duration::ZERO);
                    }
                    prop_assert!(delay >= previous, "{delay:?} < {previous:?}: waits queue up");
                    previous = delay;
                }
            }
        }
    }
}
