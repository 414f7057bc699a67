//! The deduplicating work queue (client-go's `workqueue.Type`).

use std::{
    collections::{HashMap, HashSet, VecDeque},
    fmt,
    hash::Hash,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use tokio::{sync::Notify, time::Instant};

use super::{Queue, QueueMetrics};

struct State<T> {
    /// Items waiting to be handed out, in order; each also in `dirty`.
    queue: VecDeque<T>,
    /// Items that need processing (queued, or added again while processed).
    dirty: HashSet<T>,
    /// Items handed out and not yet `done`.
    processing: HashSet<T>,
    shutting_down: bool,
    /// Whether `shut_down_with_drain` waits for processing items.
    drain: bool,
    /// When each queued item was queued (only with metrics).
    queued_at: HashMap<T, Instant>,
    /// When each processing item was handed out (only with metrics).
    taken_at: HashMap<T, Instant>,
}

/// A FIFO of distinct items for workers (client-go's `workqueue.Interface`).
///
/// - adding an item that is already waiting does nothing;
/// - an item handed out by [`get`](Self::get) is not handed out again until
///   [`done`](Self::done); adding it meanwhile queues it once more after `done`;
/// - after [`shut_down`](Self::shut_down), adds are ignored and `get` returns the remaining
///   items, then `None`.
pub struct WorkQueue<T> {
    state: Mutex<State<T>>,
    /// Wakes `get` callers when an item is queued or on shutdown.
    item_added: Notify,
    /// Wakes `shut_down_with_drain` when processing empties or on a plain shutdown.
    drained: Notify,
    metrics: Option<Arc<dyn QueueMetrics>>,
}

impl<T: fmt::Debug> fmt::Debug for WorkQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("WorkQueue")
            .field("queued", &state.queue.len())
            .field("processing", &state.processing.len())
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

impl<T: Eq + Hash + Clone> Default for WorkQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Eq + Hash + Clone> WorkQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::build(None)
    }

    /// An empty queue reporting to `metrics`.
    pub fn with_metrics(metrics: Arc<dyn QueueMetrics>) -> Self {
        Self::build(Some(metrics))
    }

    fn build(metrics: Option<Arc<dyn QueueMetrics>>) -> Self {
        Self {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                dirty: HashSet::new(),
                processing: HashSet::new(),
                shutting_down: false,
                drain: false,
                queued_at: HashMap::new(),
                taken_at: HashMap::new(),
            }),
            item_added: Notify::new(),
            drained: Notify::new(),
            metrics,
        }
    }

    /// Queues `item` at the tail (the caller checked it is dirty and not processing).
    fn push(&self, state: &mut State<T>, item: T) {
        if let Some(metrics) = &self.metrics {
            metrics.added();
            state.queued_at.insert(item.clone(), Instant::now());
        }
        state.queue.push_back(item);
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `item` unless it is already waiting, or is being processed (then it is queued
    /// again when processing is done). Ignored after shutdown.
    pub fn add(&self, item: T) {
        let mut state = self.lock();
        if state.shutting_down || state.dirty.contains(&item) {
            return;
        }
        state.dirty.insert(item.clone());
        if state.processing.contains(&item) {
            return;
        }
        self.push(&mut state, item);
        drop(state);
        self.item_added.notify_one();
    }

    /// The number of items waiting to be handed out (not counting items being processed).
    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Whether no item is waiting.
    pub fn is_empty(&self) -> bool {
        self.lock().queue.is_empty()
    }

    /// Waits for an item and marks it as being processed; `None` once the queue is shut down
    /// and empty. Call [`done`](Self::done) when finished with it.
    pub async fn get(&self) -> Option<T> {
        loop {
            let notified = self.item_added.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.lock();
                if let Some(item) = state.queue.pop_front() {
                    state.dirty.remove(&item);
                    state.processing.insert(item.clone());
                    if let Some(metrics) = &self.metrics {
                        let now = Instant::now();
                        let queued = state.queued_at.remove(&item).unwrap_or(now);
                        metrics.taken(now.duration_since(queued));
                        state.taken_at.insert(item.clone(), now);
                    }
                    let more = !state.queue.is_empty();
                    drop(state);
                    if more {
                        // Pass the wake-up on: another getter may take the next item.
                        self.item_added.notify_one();
                    }
                    return Some(item);
                }
                if state.shutting_down {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Marks `item` as processed; if it was added meanwhile, it is queued again. When no item
    /// is being processed any more, a pending
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) returns, even if `item` was queued
    /// again (as in client-go).
    pub fn done(&self, item: &T) {
        let mut state = self.lock();
        state.processing.remove(item);
        if let Some(metrics) = &self.metrics
            && let Some(taken) = state.taken_at.remove(item)
        {
            metrics.done(taken.elapsed());
        }
        let requeued = state.dirty.contains(item);
        if requeued {
            self.push(&mut state, item.clone());
        }
        let drained = state.processing.is_empty();
        drop(state);
        if requeued {
            self.item_added.notify_one();
        }
        if drained {
            self.drained.notify_waiters();
        }
    }

    /// Stops accepting items; `get` hands out what is queued, then returns `None`. Does not
    /// wait for workers, and releases a pending [`shut_down_with_drain`](Self::shut_down_with_drain).
    pub fn shut_down(&self) {
        let mut state = self.lock();
        state.shutting_down = true;
        state.drain = false;
        drop(state);
        self.item_added.notify_waiters();
        self.drained.notify_waiters();
    }

    /// Stops accepting items and waits until no handed-out item is being processed (or a plain
    /// [`shut_down`](Self::shut_down) is called). Items still queued, including items that
    /// `done` queued again, stay retrievable but are not waited for. A worker that never calls
    /// `done` for an item it got keeps this waiting until a plain `shut_down`.
    pub async fn shut_down_with_drain(&self) {
        {
            let mut state = self.lock();
            state.shutting_down = true;
            state.drain = true;
        }
        self.item_added.notify_waiters();
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            {
                let state = self.lock();
                if !state.drain || state.processing.is_empty() {
                    return;
                }
            }
            drained.await;
        }
    }

    /// Whether the queue is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.lock().shutting_down
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> Queue for WorkQueue<T> {
    type Item = T;

    fn add(&self, item: T) {
        WorkQueue::add(self, item);
    }
}

#[cfg(test)]
mod tests {
    use std::{
        sync::{
            Arc,
            atomic::{AtomicUsize, Ordering},
        },
        time::Duration,
    };

    use super::*;

    // TestBasic, with ShutDown and with ShutDownWithDrain.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn basic_producers_and_consumers() {
        for drain in [false, true] {
            let queue = Arc::new(WorkQueue::<u32>::new());
            let producers: Vec<_> = (0..50u32)
                .map(|p| {
                    let queue = Arc::clone(&queue);
                    tokio::spawn(async move {
                        for _ in 0..50 {
                            queue.add(p);
                            tokio::time::sleep(Duration::from_micros(100)).await;
                        }
                    })
                })
                .collect();
            let processed = Arc::new(AtomicUsize::new(0));
            let consumers: Vec<_> = (0..10)
                .map(|_| {
                    let (queue, processed) = (Arc::clone(&queue), Arc::clone(&processed));
                    tokio::spawn(async move {
                        while let Some(item) = queue.get().await {
                            processed.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_micros(300)).await;
                            queue.done(&item);
                        }
                    })
                })
                .collect();
            for p in producers {
                p.await.expect("producer");
            }
            if drain {
                queue.shut_down_with_drain().await;
            } else {
                queue.shut_down();
            }
            queue.add(999);
            for c in consumers {
                c.await.expect("consumer exits");
            }
            assert_eq!(queue.len(), 0);
            assert!(
                processed.load(Ordering::SeqCst) >= 50,
                "every producer's item was processed"
            );
        }
    }

    // TestAddWhileProcessing
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn add_while_processing() {
        let queue = Arc::new(WorkQueue::<u32>::new());
        for p in 0..50 {
            queue.add(p);
        }
        let consumers: Vec<_> = (0..10)
            .map(|_| {
                let queue = Arc::clone(&queue);
                tokio::spawn(async move {
                    let mut seen = HashSet::new();
                    while let Some(item) = queue.get().await {
                        if seen.insert(item) {
                            queue.add(item);
                        }
                        queue.done(&item);
                    }
                })
            })
            .collect();
        while !queue.is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        queue.shut_down();
        for c in consumers {
            c.await.expect("consumer exits");
        }
        assert_eq!(queue.len(), 0);
    }

    // TestLen
    #[test]
    fn len_counts_distinct_waiting_items() {
        let queue = WorkQueue::new();
        queue.add("foo");
        assert_eq!(queue.len(), 1);
        queue.add("bar");
        assert_eq!(queue.len(), 2);
        queue.add("foo");
        assert_eq!(queue.len(), 2);
    }

    // TestReinsert
    #[tokio::test]
    async fn reinsert_while_processing() {
        let queue = WorkQueue::new();
        queue.add("foo");
        let item = queue.get().await.expect("foo");
        queue.add(item);
        queue.done(&item);
        assert_eq!(queue.get().await, Some("foo"));
        queue.done(&"foo");
        assert_eq!(queue.len(), 0);
    }

    // TestCollapse
    #[tokio::test]
    async fn collapse_duplicate_adds() {
        let queue = WorkQueue::new();
        queue.add("bar");
        queue.add("bar");
        assert_eq!(queue.get().await, Some("bar"));
        queue.done(&"bar");
        assert_eq!(queue.len(), 0);
    }

    // TestCollapseWhileProcessing
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn collapse_while_processing() {
        let queue = Arc::new(WorkQueue::new());
        queue.add("foo");
        assert_eq!(queue.get().await, Some("foo"));
        queue.add("foo");
        queue.add("foo");
        let second = {
            let queue = Arc::clone(&queue);
            tokio::spawn(async move { queue.get().await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !second.is_finished(),
            "foo is not handed out while being processed"
        );
        queue.done(&"foo");
        assert_eq!(second.await.expect("task"), Some("foo"));
        queue.done(&"foo");
        assert_eq!(queue.len(), 0);
    }

    // TestQueueDrainageUsingShutDownWithDrain
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shut_down_with_drain_waits_for_processing_items() {
        let queue = Arc::new(WorkQueue::new());
        queue.add("foo");
        queue.add("bar");
        let (foo, bar) = (queue.get().await.expect("foo"), queue.get().await.expect("bar"));
        let drain = {
            let queue = Arc::clone(&queue);
            tokio::spawn(async move { queue.shut_down_with_drain().await })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(queue.get().await, None, "nothing queued: shutdown");
        assert!(!drain.is_finished());
        queue.done(&foo);
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!drain.is_finished(), "bar is still processed");
        queue.done(&bar);
        tokio::time::timeout(Duration::from_secs(5), drain)
            .await
            .expect("drained")
            .expect("task");
    }

    // TestNoQueueDrainageUsingShutDown
    #[tokio::test]
    async fn shut_down_does_not_wait() {
        let queue = WorkQueue::new();
        queue.add("foo");
        queue.add("bar");
        let _ = (queue.get().await, queue.get().await);
        queue.shut_down();
        assert!(queue.shutting_down());
    }

    // TestForceQueueShutdownUsingShutDown
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shut_down_releases_a_draining_shutdown() {
        let queue = Arc::new(WorkQueue::new());
        queue.add("foo");
        queue.add("bar");
        let _ = (queue.get().await, queue.get().await);
        let drain = {
            let queue = Arc::clone(&queue);
            tokio::spawn(async move { queue.shut_down_with_drain().await })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!drain.is_finished());
        queue.shut_down();
        tokio::time::timeout(Duration::from_secs(5), drain)
            .await
            .expect("released")
            .expect("task");
    }

    // Port of client-go TestQueueDrainageUsingShutDownWithDrainWithDirtyItem (queue_test.go)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn drain_hands_out_items_requeued_by_done() {
        let queue = Arc::new(WorkQueue::new());
        queue.add("foo");
        let foo = queue.get().await.expect("foo");
        queue.add("foo");
        let drain = {
            let queue = Arc::clone(&queue);
            tokio::spawn(async move { queue.shut_down_with_drain().await })
        };
        // Returns once the drain has started: foo is dirty but not queued.
        assert_eq!(queue.get().await, None);
        queue.done(&foo);
        assert_eq!(queue.get().await, Some("foo"), "done queued it again");
        queue.done(&"foo");
        assert_eq!(queue.get().await, None, "now the queue is done");
        tokio::time::timeout(Duration::from_secs(5), drain)
            .await
            .expect("drained")
            .expect("task");
    }

    #[tokio::test(start_paused = true)]
    async fn drain_returns_when_done_requeues_an_item_nobody_takes() {
        let queue = Arc::new(WorkQueue::new());
        queue.add("foo");
        let foo = queue.get().await.expect("foo");
        queue.add("foo");
        let drain = {
            let queue = Arc::clone(&queue);
            tokio::spawn(async move { queue.shut_down_with_drain().await })
        };
        assert_eq!(queue.get().await, None, "the drain has started");
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!drain.is_finished(), "foo is being processed");
        queue.done(&foo);
        tokio::time::timeout(Duration::from_secs(5), drain)
            .await
            .expect("the drain returns although foo went back to the queue")
            .expect("task");
        assert_eq!(queue.len(), 1, "foo stays retrievable");
        assert_eq!(queue.get().await, Some("foo"));
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_getters_return_none_on_shut_down() {
        for drain in [false, true] {
            let queue = Arc::new(WorkQueue::<u32>::new());
            let getters: Vec<_> = (0..3)
                .map(|_| {
                    let queue = Arc::clone(&queue);
                    tokio::spawn(async move { queue.get().await })
                })
                .collect();
            tokio::time::sleep(Duration::from_millis(10)).await;
            if drain {
                queue.shut_down_with_drain().await;
            } else {
                queue.shut_down();
            }
            for getter in getters {
                let got = tokio::time::timeout(Duration::from_secs(5), getter).await;
                assert_eq!(got.expect("get ends").expect("task"), None, "drain: {drain}");
            }
        }
    }
}
