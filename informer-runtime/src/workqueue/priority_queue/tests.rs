//! Ports of controller-runtime's `priorityqueue_test.go` (each names its Go case), and the
//! fairness this queue adds.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use super::*;
use crate::workqueue::{ItemExponentialFailureRateLimiter, default_controller_rate_limiter};

fn queue() -> PriorityQueue<&'static str> {
    PriorityQueue::new(default_controller_rate_limiter())
}

fn strict() -> PriorityQueue<String> {
    PriorityQueue::new(default_controller_rate_limiter()).fair_share(0)
}

const fn p(value: i32) -> Priority {
    Priority::new(value)
}

#[derive(Default)]
struct Recorded(Mutex<Vec<String>>);

impl Recorded {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().expect("lock"))
    }
}

impl QueueMetrics for Recorded {
    fn added(&self) {
        self.0.lock().expect("lock").push("added".into());
    }
    fn taken(&self, waited: Duration) {
        self.0
            .lock()
            .expect("lock")
            .push(format!("taken after {}ms", waited.as_millis()));
    }
    fn done(&self, worked: Duration) {
        self.0
            .lock()
            .expect("lock")
            .push(format!("done after {}ms", worked.as_millis()));
    }
    fn retried(&self) {
        self.0.lock().expect("lock").push("retried".into());
    }
}

// "returns an item"
#[tokio::test]
async fn returns_an_item() {
    let queue = queue();
    queue.add("foo");
    assert_eq!(queue.get().await, Some(("foo", Priority::NORMAL)));
}

// "returns items in order"
#[tokio::test]
async fn returns_items_in_order() {
    let queue = queue();
    queue.add("foo");
    queue.add("bar");
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("foo"));
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("bar"));
}

// "doesn't return an item that is currently locked"
#[tokio::test]
async fn does_not_return_an_item_that_is_currently_locked() {
    let queue = queue();
    queue.add("foo");
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("foo"));
    queue.add("foo");
    queue.add("bar");
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("bar"));
    assert_eq!(queue.len(), 0, "foo waits for its processing to be done");
}

// "returns an item as soon as its unlocked"
#[tokio::test]
async fn returns_an_item_as_soon_as_it_is_unlocked() {
    let queue = queue();
    queue.add("foo");
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("foo"));
    queue.add("foo");
    queue.add("bar");
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("bar"));
    queue.add("baz");
    queue.done(&"foo");
    // foo was added again before baz: it keeps that place
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("foo"));
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("baz"));
}

// "de-duplicates items"
#[tokio::test]
async fn de_duplicates_items() {
    let queue = queue();
    queue.add("foo");
    queue.add("foo");
    assert_eq!(queue.len(), 1);
}

// "enqueues a locked item"
#[tokio::test]
async fn enqueues_a_locked_item() {
    let queue = queue();
    queue.add("foo");
    assert_eq!(queue.get().await, Some(("foo", Priority::NORMAL)));
    queue.add("foo");
    queue.done(&"foo");
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some(("foo", Priority::NORMAL)));
}

// "retains the highest priority"
#[tokio::test]
async fn retains_the_highest_priority() {
    let queue = queue();
    queue.add_with_options("foo", AddOptions::default().priority(p(1)));
    queue.add_with_options("foo", AddOptions::default().priority(p(2)));
    assert_eq!(queue.get().await, Some(("foo", p(2))));
    assert_eq!(queue.len(), 0);
}

// "will not decrease the priority"
#[tokio::test]
async fn will_not_decrease_the_priority() {
    let queue = queue();
    queue.add_with_options("foo", AddOptions::default().priority(p(2)));
    queue.add_with_options("foo", AddOptions::default().priority(p(1)));
    assert_eq!(queue.get().await, Some(("foo", p(2))));
    assert_eq!(queue.len(), 0);
}

// "gets pushed to the front if the priority increases"
#[tokio::test]
async fn gets_pushed_to_the_front_if_the_priority_increases() {
    let queue = queue();
    queue.add("foo");
    queue.add("bar");
    queue.add("baz");
    queue.add_with_options("baz", AddOptions::default().priority(p(1)));
    assert_eq!(queue.get().await, Some(("baz", p(1))));
    assert_eq!(queue.len(), 2);
}

// "retains the lowest after duration"
#[tokio::test(start_paused = true)]
async fn retains_the_lowest_after_duration() {
    let queue = queue();
    queue.add_with_options("foo", AddOptions::default().after(Duration::ZERO));
    queue.add_with_options("foo", AddOptions::default().after(Duration::from_secs(3600)));
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("foo"));
    assert_eq!(queue.len(), 0);
}

// "doesn't include non-ready items in Len()"
#[tokio::test(start_paused = true)]
async fn does_not_include_non_ready_items_in_len() {
    let queue = queue();
    queue.add_with_options("foo", AddOptions::default().after(Duration::from_secs(60)));
    queue.add("baz");
    queue.add_with_options("bar", AddOptions::default().after(Duration::from_secs(60)));
    queue.add("bal");
    assert_eq!(queue.len(), 2);
    tokio::time::sleep(Duration::from_secs(61)).await;
    assert_eq!(queue.len(), 4, "the delayed items became ready");
}

// "Get from priority queue might get stuck when the priority queue is shut down"
// (controller-runtime#3239). Here, as for `WorkQueue`, the ready items are still handed out
// after shutdown, then `None`; the item added after shutdown is ignored.
#[tokio::test(start_paused = true)]
async fn get_after_shut_down_does_not_get_stuck() {
    let queue = queue();
    queue.add("baz");
    queue.shut_down();
    queue.add_with_options("foo", AddOptions::default().after(Duration::from_secs(1)));
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("baz"));
    assert_eq!(queue.get().await.map(|(item, _)| item), None);
    assert_eq!(queue.get().await.map(|(item, _)| item), None);
}

// "returns many items"
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn returns_many_items() {
    let queue = Arc::new(PriorityQueue::new(default_controller_rate_limiter()));
    for round in 0..5 {
        for i in 0..1000u32 {
            let roll = fastrand::i32(0..100);
            if roll < 10 {
                queue.add_with_options(
                    i,
                    AddOptions::default().after(Duration::from_millis(u64::from(roll.unsigned_abs()))),
                );
            } else {
                queue.add_with_options(i, AddOptions::default().priority(p(roll)));
            }
        }
        let consumers: Vec<_> = (0..20)
            .map(|_| {
                let queue = Arc::clone(&queue);
                tokio::spawn(async move {
                    for _ in 0..50 {
                        let item = queue.get().await.map(|(item, _)| item).expect("an item");
                        queue.done(&item);
                    }
                })
            })
            .collect();
        for consumer in consumers {
            tokio::time::timeout(Duration::from_secs(10), consumer)
                .await
                .unwrap_or_else(|_| panic!("round {round}: consumers got every item"))
                .expect("consumer");
        }
    }
    queue.shut_down();
}

// "follows FIFO order in the new priority queue when item priority changes"
#[tokio::test]
async fn follows_fifo_order_in_the_new_priority_when_an_item_priority_changes() {
    let queue = queue();
    queue.add_with_options("foo", AddOptions::default().priority(p(0)));
    queue.add_with_options("bar", AddOptions::default().priority(p(1)));
    queue.add_with_options("foo", AddOptions::default().priority(p(1)));
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.get().await, Some(("bar", p(1))));
    assert_eq!(queue.get().await, Some(("foo", p(1))));
    assert_eq!(queue.len(), 0);
}

// TestHighPriorityItemsAreReturnedBeforeLowPriorityItemMultipleTimes, in strict priority
// order (fair share off), with items ready at once and after a delay.
#[tokio::test(start_paused = true)]
async fn high_priority_items_are_returned_before_low_priority_items() {
    let priorities = [
        ("high", 10),
        ("upperMiddle", 5),
        ("middle", 0),
        ("lowMiddle", -5),
        ("low", -10),
    ];
    for after in [Duration::ZERO, Duration::from_secs(1)] {
        let queue = strict();
        for i in 0..1000 {
            for (name, priority) in priorities {
                queue.add_with_options(
                    format!("{name}-{i}"),
                    AddOptions::default().after(after).priority(p(priority)),
                );
            }
        }
        tokio::time::sleep(after).await;
        for (name, priority) in priorities {
            for i in 0..1000 {
                let expected = (format!("{name}-{i}"), p(priority));
                assert_eq!(queue.get().await, Some(expected), "after {after:?}");
            }
        }
        assert!(queue.is_empty());
    }
}

// TestFuzzPriorityQueue's invariants: with concurrent producers and consumers, an item is
// never handed out twice at once, and it is handed out with the highest priority it was
// added at since it was last handed out. As in the Go test, adds and gets take one lock
// around the queue call and the bookkeeping, so the two are seen together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_producers_and_consumers_keep_the_invariants() {
    let queue = Arc::new(PriorityQueue::new(default_controller_rate_limiter()));
    let expected: Arc<tokio::sync::Mutex<HashMap<u8, Priority>>> = Arc::default();
    let handed_out: Arc<Mutex<HashSet<u8>>> = Arc::default();
    let producers: Vec<_> = (0..4)
        .map(|_| {
            let (queue, expected) = (Arc::clone(&queue), Arc::clone(&expected));
            tokio::spawn(async move {
                for _ in 0..2000 {
                    let (item, priority) = (fastrand::u8(0..64), p(fastrand::i32(-3..3)));
                    let mut expected = expected.lock().await;
                    queue.add_with_options(item, AddOptions::default().priority(priority));
                    let entry = expected.entry(item).or_insert(priority);
                    *entry = (*entry).max(priority);
                    drop(expected);
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    let consumers: Vec<_> = (0..8)
        .map(|_| {
            let (queue, expected, handed_out) =
                (Arc::clone(&queue), Arc::clone(&expected), Arc::clone(&handed_out));
            tokio::spawn(async move {
                let mut handled = 0_usize;
                loop {
                    let got = {
                        let mut expected = expected.lock().await;
                        if expected.is_empty() {
                            None
                        } else {
                            let (item, priority) = queue.get().await.expect("an item");
                            assert_eq!(expected.remove(&item), Some(priority), "item {item}");
                            Some(item)
                        }
                    };
                    let Some(item) = got else {
                        if queue.shutting_down() {
                            return handled;
                        }
                        tokio::task::yield_now().await;
                        continue;
                    };
                    assert!(
                        handed_out.lock().expect("lock").insert(item),
                        "{item} handed out twice"
                    );
                    tokio::task::yield_now().await;
                    handed_out.lock().expect("lock").remove(&item);
                    queue.done(&item);
                    handled += 1;
                }
            })
        })
        .collect();
    for producer in producers {
        producer.await.expect("producer");
    }
    loop {
        if expected.lock().await.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    queue.shut_down();
    let mut handled = 0;
    for consumer in consumers {
        handled += consumer.await.expect("consumer");
    }
    assert!(handled >= 64, "the consumers handled {handled} items");
}

#[tokio::test]
async fn a_lower_priority_add_of_a_processing_item_keeps_the_higher_one_for_its_next_round() {
    let queue = queue();
    queue.add_with_options("foo", AddOptions::default().priority(p(1)));
    assert_eq!(queue.get().await, Some(("foo", p(1))));
    queue.add_with_options("foo", AddOptions::default().priority(p(3)));
    queue.add_with_options("foo", AddOptions::default().priority(p(2)));
    queue.done(&"foo");
    assert_eq!(queue.get().await, Some(("foo", p(3))));
}

#[tokio::test]
async fn every_nth_hand_out_serves_the_item_ready_longest() {
    let queue = PriorityQueue::new(default_controller_rate_limiter()).fair_share(3);
    for i in 0..10 {
        queue.add_with_options(
            format!("listed-{i}"),
            AddOptions::default().priority(Priority::LOW),
        );
    }
    let mut order = Vec::new();
    // A steady stream of live changes: one more arrives before every get.
    for i in 0..9 {
        queue.add(format!("live-{i}"));
        let item = queue.get().await.map(|(item, _)| item).expect("an item");
        queue.done(&item);
        order.push(item);
    }
    assert_eq!(
        order,
        [
            "live-0", "live-1", "listed-0", "live-2", "live-3", "listed-1", "live-4", "live-5", "listed-2"
        ],
        "listed items get every third turn"
    );
}

#[tokio::test]
async fn without_a_fair_share_a_stream_of_urgent_items_starves_the_others() {
    let queue = PriorityQueue::new(default_controller_rate_limiter()).fair_share(0);
    queue.add_with_options("listed", AddOptions::default().priority(Priority::LOW));
    for i in 0..20 {
        queue.add(format!("live-{i}").leak() as &str);
        let item = queue.get().await.map(|(item, _)| item).expect("an item");
        assert_ne!(item, "listed");
        queue.done(&item);
    }
    assert_eq!(queue.get().await.map(|(item, _)| item), Some("listed"));
}

#[tokio::test(start_paused = true)]
async fn a_delayed_item_wakes_a_waiting_get_at_its_time() {
    let queue = Arc::new(queue());
    queue.add_with_options("later", AddOptions::default().after(Duration::from_secs(5)));
    let start = Instant::now();
    let getter = {
        let queue = Arc::clone(&queue);
        tokio::spawn(async move { queue.get().await.map(|(item, _)| item) })
    };
    assert_eq!(getter.await.expect("task"), Some("later"));
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert_eq!(queue.ready_at(&"later"), None);
}

#[tokio::test(start_paused = true)]
async fn an_earlier_add_moves_a_delayed_item_forward_and_a_later_one_does_not() {
    let queue = queue();
    let now = Instant::now();
    queue.add_with_options("foo", AddOptions::default().after(Duration::from_secs(50)));
    queue.add_with_options("foo", AddOptions::default().after(Duration::from_secs(70)));
    assert_eq!(queue.ready_at(&"foo"), Some(now + Duration::from_secs(50)));
    queue.add_with_options("foo", AddOptions::default().after(Duration::from_secs(30)));
    assert_eq!(queue.ready_at(&"foo"), Some(now + Duration::from_secs(30)));
    queue.add_with_options("foo", AddOptions::default().priority(Priority::HIGH));
    assert_eq!(
        queue.ready_at(&"foo"),
        None,
        "an add without delay makes it ready"
    );
    assert_eq!(queue.get().await, Some(("foo", Priority::HIGH)));
}

// TestRateLimitingQueue, on the priority queue.
#[tokio::test(start_paused = true)]
async fn retries_wait_for_the_limiters_delay_and_keep_their_priority() {
    let queue = PriorityQueue::new(ItemExponentialFailureRateLimiter::new(
        Duration::from_millis(1),
        Duration::from_secs(1),
    ));
    let ms = Duration::from_millis;
    let now = Instant::now();
    queue.add_with_options(
        "one",
        AddOptions::default().rate_limited(true).priority(Priority::LOW),
    );
    assert_eq!(queue.ready_at(&"one"), Some(now + ms(1)));
    queue.add_with_options(
        "one",
        AddOptions::default().rate_limited(true).priority(Priority::LOW),
    );
    assert_eq!(
        queue.ready_at(&"one"),
        Some(now + ms(1)),
        "a later deadline never postpones"
    );
    assert_eq!(queue.num_requeues(&"one"), 2);
    queue.forget(&"one");
    assert_eq!(queue.num_requeues(&"one"), 0);
    assert_eq!(queue.get().await, Some(("one", Priority::LOW)));
    queue.done(&"one");
}

#[tokio::test(start_paused = true)]
async fn metrics_see_adds_waits_work_and_retries() {
    let metrics = Arc::new(Recorded::default());
    let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_millis(10), Duration::from_secs(1));
    let queue = PriorityQueue::with_metrics(limiter, Arc::clone(&metrics) as Arc<dyn QueueMetrics>);
    queue.add("a");
    queue.add_with_options("a", AddOptions::default().priority(Priority::HIGH));
    tokio::time::sleep(Duration::from_millis(5)).await;
    let item = queue.get().await.map(|(item, _)| item).expect("a");
    tokio::time::sleep(Duration::from_millis(7)).await;
    queue.add_with_options(item, AddOptions::default().rate_limited(true));
    queue.done(&item);
    let again = queue.get().await.map(|(item, _)| item).expect("retried a");
    queue.done(&again);
    assert_eq!(
        metrics.take(),
        [
            "added",
            "taken after 5ms",
            "retried",
            "done after 7ms",
            "added",
            "taken after 0ms",
            "done after 0ms"
        ]
    );
}

// TestQueueDrainageUsingShutDownWithDrain, on the priority queue.
#[tokio::test(start_paused = true)]
async fn shut_down_with_drain_waits_for_processing_items_and_drops_delayed_ones() {
    let queue = Arc::new(queue());
    queue.add("foo");
    queue.add_with_options("later", AddOptions::default().after(Duration::from_secs(1)));
    let foo = queue.get().await.map(|(item, _)| item).expect("foo");
    let drain = {
        let queue = Arc::clone(&queue);
        tokio::spawn(async move { queue.shut_down_with_drain().await })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(!drain.is_finished(), "foo is still processed");
    queue.done(&foo);
    tokio::time::timeout(Duration::from_secs(5), drain)
        .await
        .expect("drained")
        .expect("task");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        queue.get().await.map(|(item, _)| item),
        None,
        "the delayed item was dropped"
    );
}
