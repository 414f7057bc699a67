//! Ports of client-go's `delaying_queue_test.go` (each names its Go case) on the priority queue
//! in FIFO order, and the saturation of any delay and of any rate limiter's. client-go's
//! `TestRateLimitingQueue` is ported in `tests.rs`.

use std::time::Duration;

use proptest::prelude::*;
use tokio::time::Instant;

use super::*;
use crate::{
    deadline::FAR_FUTURE,
    workqueue::{
        BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter,
        default_controller_rate_limiter,
        strategies::{any_duration, config, paused_runtime},
    },
};

/// A FIFO queue, as client-go's delaying and rate-limiting queues hand items out.
fn fifo() -> PriorityQueue<&'static str> {
    PriorityQueue::new(default_controller_rate_limiter()).fifo(true)
}

fn after(delay: Duration) -> AddOptions {
    AddOptions::default().after(delay)
}

fn retry() -> AddOptions {
    AddOptions::default().rate_limited(true)
}

async fn pass(duration: Duration) {
    tokio::time::sleep(duration).await;
}

async fn next(queue: &PriorityQueue<&'static str>) -> Option<&'static str> {
    queue.get().await.map(|(item, _)| item)
}

// TestSimpleQueue
#[tokio::test(start_paused = true)]
async fn item_is_added_after_its_delay() {
    let queue = fifo();
    queue.add_with_options("foo", after(Duration::from_millis(50)));
    pass(Duration::from_millis(1)).await;
    assert_eq!(queue.len(), 0);
    pass(Duration::from_millis(60)).await;
    assert_eq!(queue.len(), 1);
    assert_eq!(next(&queue).await, Some("foo"));
    queue.done(&"foo");
    pass(Duration::from_secs(10)).await;
    assert_eq!(queue.len(), 0);
    queue.shut_down();
}

// TestDeduping
#[tokio::test(start_paused = true)]
async fn earliest_deadline_wins() {
    let queue = fifo();
    queue.add_with_options("foo", after(Duration::from_millis(50)));
    queue.add_with_options("foo", after(Duration::from_millis(70)));
    pass(Duration::from_millis(60)).await;
    assert_eq!(queue.len(), 1, "the later deadline does not postpone");
    assert_eq!(next(&queue).await, Some("foo"));
    queue.done(&"foo");
    pass(Duration::from_millis(20)).await;
    assert_eq!(queue.len(), 0, "and it is not added twice");

    queue.add_with_options("foo", after(Duration::from_millis(50)));
    queue.add_with_options("foo", after(Duration::from_millis(30)));
    pass(Duration::from_millis(40)).await;
    assert_eq!(queue.len(), 1, "the earlier deadline moves it forward");
    assert_eq!(next(&queue).await, Some("foo"));
    queue.done(&"foo");
    pass(Duration::from_millis(20)).await;
    assert_eq!(queue.len(), 0);
    queue.shut_down();
}

// TestAddTwoFireEarly
#[tokio::test(start_paused = true)]
async fn two_items_fire_in_deadline_order() {
    let queue = fifo();
    queue.add_with_options("foo", after(Duration::from_secs(1)));
    queue.add_with_options("bar", after(Duration::from_millis(50)));
    pass(Duration::from_millis(60)).await;
    assert_eq!(next(&queue).await, Some("bar"));
    queue.done(&"bar");
    queue.add_with_options("baz", after(Duration::from_secs(2)));
    pass(Duration::from_secs(1)).await;
    assert_eq!(next(&queue).await, Some("foo"));
    queue.done(&"foo");
    pass(Duration::from_secs(2)).await;
    assert_eq!(next(&queue).await, Some("baz"));
    queue.shut_down();
}

// TestCopyShifting
#[tokio::test(start_paused = true)]
async fn items_come_out_in_deadline_order() {
    let queue = fifo();
    queue.add_with_options("foo", after(Duration::from_secs(1)));
    queue.add_with_options("bar", after(Duration::from_millis(500)));
    queue.add_with_options("baz", after(Duration::from_millis(250)));
    pass(Duration::from_secs(2)).await;
    assert_eq!(queue.len(), 3);
    for want in ["baz", "bar", "foo"] {
        assert_eq!(next(&queue).await, Some(want));
    }
    queue.shut_down();
}

#[tokio::test(start_paused = true)]
async fn a_fifo_queue_ignores_priorities() {
    let queue = fifo();
    queue.add_with_options("low", AddOptions::default().priority(Priority::LOW));
    queue.add_with_options("high", AddOptions::default().priority(Priority::HIGH));
    assert_eq!(queue.get().await, Some(("low", Priority::NORMAL)));
    assert_eq!(queue.get().await, Some(("high", Priority::NORMAL)));
    queue.shut_down();
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_a_delay_waits_for_the_longer_of_the_two() {
    let queue = PriorityQueue::new(ItemExponentialFailureRateLimiter::new(
        Duration::from_millis(10),
        Duration::from_secs(1),
    ));
    let now = Instant::now();
    queue.add_with_options("one", retry().after(Duration::from_millis(50)));
    assert_eq!(queue.ready_at(&"one"), Some(now + Duration::from_millis(50)));
    queue.add_with_options("two", retry().after(Duration::from_millis(1)));
    assert_eq!(queue.ready_at(&"two"), Some(now + Duration::from_millis(10)));
    queue.shut_down();
}

#[tokio::test(start_paused = true)]
async fn adds_after_shutdown_are_ignored() {
    let queue = fifo();
    queue.shut_down();
    queue.add_with_options("foo", after(Duration::from_millis(1)));
    queue.add("bar");
    pass(Duration::from_millis(5)).await;
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn a_delay_of_duration_max_waits_far_into_the_future() {
    let queue = fifo();
    let now = Instant::now();
    queue.add_with_options("foo", after(Duration::MAX));
    let ready_at = queue.ready_at(&"foo").expect("foo waits");
    assert_eq!(ready_at, now + FAR_FUTURE, "saturates at the far future");
    pass(Duration::from_secs(3600)).await;
    assert_eq!(queue.len(), 0);
    queue.add_with_options("foo", after(Duration::from_millis(10)));
    pass(Duration::from_millis(20)).await;
    assert_eq!(queue.len(), 1, "an earlier deadline still wins");
    queue.shut_down();
}

#[tokio::test(start_paused = true)]
async fn get_returns_none_after_shut_down_while_items_wait() {
    let queue = Arc::new(fifo());
    queue.add_with_options("foo", after(Duration::from_secs(60)));
    let getter = {
        let queue = Arc::clone(&queue);
        tokio::spawn(async move { queue.get().await })
    };
    pass(Duration::from_millis(10)).await;
    assert!(!getter.is_finished(), "waits for foo");
    queue.shut_down();
    let got = tokio::time::timeout(Duration::from_secs(5), getter).await;
    assert_eq!(got.expect("get ends").expect("task"), None);
    pass(Duration::from_secs(120)).await;
    assert_eq!(queue.len(), 0, "foo was dropped at shutdown");
}

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
async fn a_retry_of_duration_max_waits_far_into_the_future() {
    let queue = PriorityQueue::new(Fixed(Duration::MAX));
    let now = Instant::now();
    queue.add_with_options("one", retry());
    let ready_at = queue.ready_at(&"one").expect("one waits");
    assert!(
        ready_at > now + Duration::from_secs(86_400 * 365 * 29),
        "{ready_at:?}"
    );
    pass(Duration::from_secs(3600)).await;
    assert_eq!(queue.len(), 0);
    queue.shut_down();
    assert_eq!(queue.get().await, None);
}

/// How long the properties let the clock run before looking at the queue.
const WAIT: Duration = Duration::from_millis(50);

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_delay_is_accepted(delays in prop::collection::vec(any_duration(), 1..20)) {
        paused_runtime().block_on(async {
            let queue = PriorityQueue::new(default_controller_rate_limiter()).fifo(true);
            let start = Instant::now();
            for (item, delay) in delays.iter().enumerate() {
                queue.add_with_options(item, after(*delay));
            }
            for (item, delay) in delays.iter().enumerate() {
                if let Some(at) = queue.ready_at(&item) {
                    prop_assert_eq!(at, start + (*delay).min(FAR_FUTURE));
                }
            }
            // Tokio rounds deadlines up to the next millisecond: items due just after WAIT
            // may or may not be ready.
            let late = WAIT + Duration::from_millis(2);
            pass(WAIT + Duration::from_millis(1)).await;
            for (item, delay) in delays.iter().enumerate() {
                if *delay <= WAIT || *delay > late {
                    let waits = queue.ready_at(&item).is_some();
                    prop_assert_eq!(waits, *delay > late, "item {} after {:?}", item, delay);
                }
            }
            let due_by = |limit: Duration| delays.iter().filter(|delay| **delay <= limit).count();
            let ready = due_by(WAIT)..=due_by(late);
            prop_assert!(ready.contains(&queue.len()), "{} ready, want {:?}", queue.len(), ready);
            queue.shut_down();
            Ok(())
        })?;
    }

    #[test]
    fn any_limiter_settings_are_accepted(
        base in any_duration(),
        max in any_duration(),
        qps in prop_oneof![Just(f64::MIN_POSITIVE), 1e-300..1e3, any::<f64>()],
        burst in 0..3u32,
        failures in 1..80u32,
    ) {
        paused_runtime().block_on(async {
            let queue = PriorityQueue::new(MaxOfRateLimiter::new(vec![
                Box::new(ItemExponentialFailureRateLimiter::new(base, max)),
                Box::new(BucketRateLimiter::new(qps, burst)),
            ]));
            for _ in 0..failures {
                queue.add_with_options("item", retry());
            }
            prop_assert_eq!(queue.num_requeues(&"item"), failures);
            tokio::time::sleep(Duration::from_millis(10)).await;
            queue.shut_down();
            Ok(())
        })?;
    }
}
