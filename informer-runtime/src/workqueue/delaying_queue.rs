//! A work queue that adds items after a delay (client-go's `DelayingInterface`).

use std::{
    cmp::Reverse,
    collections::{BinaryHeap, HashMap},
    fmt,
    hash::Hash,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use tokio::{sync::Notify, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{QueueMetrics, WorkQueue};
use crate::deadline::saturating_deadline;

struct Waiting<T> {
    /// Deadlines in order, with a sequence number naming the entry.
    heap: BinaryHeap<Reverse<(Instant, u64)>>,
    /// The current entry of each waiting item; heap entries of older sequence numbers are stale.
    entries: HashMap<T, (Instant, u64)>,
    /// The item of each live sequence number.
    items: HashMap<u64, T>,
    next_seq: u64,
}

impl<T: Eq + Hash + Clone> Waiting<T> {
    /// Removes and returns the items whose deadline has come; returns the next deadline.
    fn take_ready(&mut self, now: Instant) -> (Vec<T>, Option<Instant>) {
        let mut ready = Vec::new();
        while let Some(&Reverse((at, seq))) = self.heap.peek() {
            if at > now {
                return (ready, Some(at));
            }
            self.heap.pop();
            if let Some(item) = self.items.remove(&seq) {
                self.entries.remove(&item);
                ready.push(item);
            }
        }
        (ready, None)
    }
}

/// A [`WorkQueue`] whose items can be added after a delay. Adding an item that already waits
/// only ever moves its deadline earlier.
///
/// Must be created within a tokio runtime: a task of that runtime moves items whose time has
/// come. If that task stops without a shutdown (the runtime shuts down, or the task panics),
/// the queue shuts down (see [`WorkQueue::shut_down`]), so that `get` returns the items already
/// queued and then `None` instead of waiting for delayed items nothing would ever add.
pub struct DelayingQueue<T> {
    queue: Arc<WorkQueue<T>>,
    waiting: Arc<Mutex<Waiting<T>>>,
    wake: Arc<Notify>,
    stop: CancellationToken,
}

impl<T: fmt::Debug> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> Default for DelayingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

fn lock<T>(waiting: &Mutex<Waiting<T>>) -> MutexGuard<'_, Waiting<T>> {
    waiting.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<T: Eq + Hash + Clone + Send + 'static> DelayingQueue<T> {
    /// An empty queue, with its timer task.
    pub fn new() -> Self {
        Self::with_queue(WorkQueue::new())
    }

    /// An empty queue reporting to `metrics`, with its timer task.
    pub fn with_metrics(metrics: Arc<dyn QueueMetrics>) -> Self {
        Self::with_queue(WorkQueue::with_metrics(metrics))
    }

    fn with_queue(queue: WorkQueue<T>) -> Self {
        let queue = Arc::new(queue);
        let waiting = Arc::new(Mutex::new(Waiting {
            heap: BinaryHeap::new(),
            entries: HashMap::new(),
            items: HashMap::new(),
            next_seq: 0,
        }));
        let wake = Arc::new(Notify::new());
        let stop = CancellationToken::new();
        let on_exit = ShutDownOnExit {
            queue: Arc::clone(&queue),
            stop: stop.clone(),
        };
        tokio::spawn(move_ready_items(on_exit, Arc::clone(&waiting), Arc::clone(&wake)));
        Self {
            queue,
            waiting,
            wake,
            stop,
        }
    }

    /// Adds `item` once `delay` has passed (at once for a zero delay); ignored after shutdown.
    ///
    /// Any delay is accepted: delays longer than about 30 years (up to [`Duration::MAX`])
    /// saturate at 30 years from now, which for a controller is never.
    pub fn add_after(&self, item: T, delay: Duration) {
        if self.queue.shutting_down() {
            return;
        }
        if delay.is_zero() {
            self.queue.add(item);
            return;
        }
        let ready_at = saturating_deadline(Instant::now(), delay);
        let mut waiting = lock(&self.waiting);
        if let Some(&(existing, _)) = waiting.entries.get(&item)
            && existing <= ready_at
        {
            return;
        }
        let seq = waiting.next_seq;
        waiting.next_seq += 1;
        if let Some((_, old_seq)) = waiting.entries.insert(item.clone(), (ready_at, seq)) {
            waiting.items.remove(&old_seq);
        }
        waiting.items.insert(seq, item);
        waiting.heap.push(Reverse((ready_at, seq)));
        drop(waiting);
        self.wake.notify_one();
    }

    /// When `item` will be added, if it waits.
    pub fn ready_at(&self, item: &T) -> Option<Instant> {
        lock(&self.waiting).entries.get(item).map(|(at, _)| *at)
    }

    /// See [`WorkQueue::add`].
    pub fn add(&self, item: T) {
        self.queue.add(item);
    }

    /// See [`WorkQueue::get`].
    pub async fn get(&self) -> Option<T> {
        self.queue.get().await
    }

    /// See [`WorkQueue::done`].
    pub fn done(&self, item: &T) {
        self.queue.done(item);
    }

    /// See [`WorkQueue::len`]; items still waiting for their delay are not counted.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no item is ready.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Shuts the queue down (see [`WorkQueue::shut_down`]) and stops the timer task.
    pub fn shut_down(&self) {
        self.stop.cancel();
        self.queue.shut_down();
    }

    /// Shuts down and waits for processed items (see [`WorkQueue::shut_down_with_drain`]).
    pub async fn shut_down_with_drain(&self) {
        self.stop.cancel();
        self.queue.shut_down_with_drain().await;
    }

    /// Whether the queue is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }
}

impl<T> Drop for DelayingQueue<T> {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Owned by the timer task: shuts the queue down when the task ends without being stopped
/// (its runtime shut down, or it panicked), so that no `get` waits for it forever.
struct ShutDownOnExit<T: Eq + Hash + Clone> {
    queue: Arc<WorkQueue<T>>,
    stop: CancellationToken,
}

impl<T: Eq + Hash + Clone> Drop for ShutDownOnExit<T> {
    fn drop(&mut self) {
        if !self.stop.is_cancelled() {
            self.queue.shut_down();
        }
    }
}

/// The timer task. `on_exit` is an argument so that it is dropped even if the task never runs.
async fn move_ready_items<T: Eq + Hash + Clone>(
    on_exit: ShutDownOnExit<T>,
    waiting: Arc<Mutex<Waiting<T>>>,
    wake: Arc<Notify>,
) {
    let ShutDownOnExit { queue, stop } = &on_exit;
    loop {
        let (ready, next) = lock(&waiting).take_ready(Instant::now());
        for item in ready {
            queue.add(item);
        }
        let sleep = async {
            match next {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = stop.cancelled() => return,
            () = wake.notified() => {}
            () = sleep => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::FAR_FUTURE;
    use crate::workqueue::strategies::paused_runtime;

    async fn pass(duration: Duration) {
        tokio::time::sleep(duration).await;
    }

    // TestSimpleQueue
    #[tokio::test(start_paused = true)]
    async fn item_is_added_after_its_delay() {
        let queue = DelayingQueue::new();
        queue.add_after("foo", Duration::from_millis(50));
        pass(Duration::from_millis(1)).await;
        assert_eq!(queue.len(), 0);
        pass(Duration::from_millis(60)).await;
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("foo"));
        queue.done(&"foo");
        pass(Duration::from_secs(10)).await;
        assert_eq!(queue.len(), 0);
        queue.shut_down();
    }

    // TestDeduping
    #[tokio::test(start_paused = true)]
    async fn earliest_deadline_wins() {
        let queue = DelayingQueue::new();
        queue.add_after("foo", Duration::from_millis(50));
        queue.add_after("foo", Duration::from_millis(70));
        pass(Duration::from_millis(60)).await;
        assert_eq!(queue.len(), 1, "the later deadline does not postpone");
        assert_eq!(queue.get().await, Some("foo"));
        queue.done(&"foo");
        pass(Duration::from_millis(20)).await;
        assert_eq!(queue.len(), 0, "and it is not added twice");

        queue.add_after("foo", Duration::from_millis(50));
        queue.add_after("foo", Duration::from_millis(30));
        pass(Duration::from_millis(40)).await;
        assert_eq!(queue.len(), 1, "the earlier deadline moves it forward");
        assert_eq!(queue.get().await, Some("foo"));
        queue.done(&"foo");
        pass(Duration::from_millis(20)).await;
        assert_eq!(queue.len(), 0);
        queue.shut_down();
    }

    // TestAddTwoFireEarly
    #[tokio::test(start_paused = true)]
    async fn two_items_fire_in_deadline_order() {
        let queue = DelayingQueue::new();
        queue.add_after("foo", Duration::from_secs(1));
        queue.add_after("bar", Duration::from_millis(50));
        pass(Duration::from_millis(60)).await;
        assert_eq!(queue.get().await, Some("bar"));
        queue.done(&"bar");
        queue.add_after("baz", Duration::from_secs(2));
        pass(Duration::from_secs(1)).await;
        assert_eq!(queue.get().await, Some("foo"));
        queue.done(&"foo");
        pass(Duration::from_secs(2)).await;
        assert_eq!(queue.get().await, Some("baz"));
        queue.shut_down();
    }

    // TestCopyShifting
    #[tokio::test(start_paused = true)]
    async fn items_come_out_in_deadline_order() {
        let queue = DelayingQueue::new();
        queue.add_after("foo", Duration::from_secs(1));
        queue.add_after("bar", Duration::from_millis(500));
        queue.add_after("baz", Duration::from_millis(250));
        pass(Duration::from_secs(2)).await;
        assert_eq!(queue.len(), 3);
        for want in ["baz", "bar", "foo"] {
            assert_eq!(queue.get().await, Some(want));
        }
        queue.shut_down();
    }

    #[tokio::test(start_paused = true)]
    async fn adds_after_shutdown_are_ignored() {
        let queue = DelayingQueue::new();
        queue.shut_down();
        queue.add_after("foo", Duration::from_millis(1));
        queue.add_after("bar", Duration::ZERO);
        pass(Duration::from_millis(5)).await;
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn add_after_duration_max_waits_far_into_the_future() {
        let queue = DelayingQueue::new();
        let now = Instant::now();
        queue.add_after("foo", Duration::MAX);
        let ready_at = queue.ready_at(&"foo").expect("foo waits");
        assert_eq!(ready_at, now + FAR_FUTURE, "saturates at the far future");
        pass(Duration::from_secs(3600)).await;
        assert_eq!(queue.len(), 0);
        queue.add_after("foo", Duration::from_millis(10));
        pass(Duration::from_millis(20)).await;
        assert_eq!(queue.len(), 1, "an earlier deadline still wins");
        queue.shut_down();
    }

    #[tokio::test(start_paused = true)]
    async fn get_returns_none_after_shut_down_while_items_wait() {
        let queue = Arc::new(DelayingQueue::new());
        queue.add_after("foo", Duration::from_secs(60));
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
        assert_eq!(queue.len(), 0, "the timer task stopped: foo is never added");
    }

    #[test]
    fn get_returns_none_once_the_timer_task_is_gone() {
        let first = paused_runtime();
        let queue = first.block_on(async {
            let queue = DelayingQueue::new();
            queue.add("ready");
            queue
        });
        drop(first);
        paused_runtime().block_on(async {
            assert!(queue.shutting_down(), "the timer task stopped with its runtime");
            queue.add_after("later", Duration::from_millis(10));
            let limit = Duration::from_secs(5);
            let first = tokio::time::timeout(limit, queue.get()).await;
            assert_eq!(
                first.expect("get ends"),
                Some("ready"),
                "queued items stay retrievable"
            );
            let second = tokio::time::timeout(limit, queue.get()).await;
            assert_eq!(second.expect("get ends"), None);
        });
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;
        use crate::workqueue::strategies::{any_duration, config};

        /// How long the properties let the clock run before looking at the queue.
        const WAIT: Duration = Duration::from_millis(50);

        proptest! {
            #![proptest_config(config())]

            #[test]
            fn add_after_accepts_any_delay(delays in prop::collection::vec(any_duration(), 1..20)) {
                paused_runtime().block_on(async {
                    let queue = DelayingQueue::new();
                    let start = Instant::now();
                    for (item, delay) in delays.iter().enumerate() {
                        queue.add_after(item, *delay);
                    }
                    for (item, delay) in delays.iter().enumerate() {
                        if let Some(at) = queue.ready_at(&item) {
                            prop_assert_eq!(at, start + (*delay).min(FAR_FUTURE));
                        }
                    }
                    // Tokio rounds deadlines up to the next millisecond: items due just after
                    // WAIT may or may not be ready.
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
                    prop_assert!(!queue.shutting_down(), "the timer task is still running");
                    queue.shut_down();
                    Ok(())
                })?;
            }
        }
    }
}
