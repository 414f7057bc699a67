//! The priority queue controllers use by default (controller-runtime's
//! `pkg/controller/priorityqueue`, its default since v0.23).

use std::{
    cmp::Reverse,
    collections::{BTreeMap, HashMap, VecDeque},
    fmt,
    hash::Hash,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use tokio::{sync::Notify, time::Instant};

use super::{AddOptions, Priority, Queue, QueueMetrics, RateLimiter};
use crate::deadline::saturating_deadline;

/// Every how many hand-outs [`PriorityQueue`] serves the item that became ready first, whatever
/// its priority, by default (see [`PriorityQueue::fair_share`]).
pub const DEFAULT_FAIR_SHARE: u32 = 10;

/// Where a queued item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Ready to be handed out: in its priority's level of `levels`.
    Ready,
    /// Waiting for its time: in `waiting`.
    Waiting(Instant),
    /// Ready, but handed out and not `done` yet: in no index until `done`.
    Parked,
}

#[derive(Debug)]
struct Entry {
    priority: Priority,
    /// The order in which items became ready (unique).
    seq: u64,
    slot: Slot,
    /// When it became ready (only with metrics).
    ready_since: Option<Instant>,
}

struct State<T> {
    entries: HashMap<T, Entry>,
    /// Ready items by priority, highest first; each level in the order its items became
    /// ready (by `seq`). An item raised to another level, or handed out, leaves its old place
    /// behind: a stale place (its entry is no longer ready with that `seq`) is skipped and
    /// dropped when it reaches the front.
    levels: BTreeMap<Reverse<Priority>, VecDeque<(u64, T)>>,
    /// Ready items (the live places of `levels`).
    ready: usize,
    /// Items waiting for their time, earliest first.
    waiting: BTreeMap<(Instant, u64), T>,
    /// Items handed out and not `done` yet, with when they were handed out (with metrics).
    processing: HashMap<T, Option<Instant>>,
    next_seq: u64,
    /// Hand-outs so far, to serve the oldest item every `fair_share`th time.
    handed_out: u64,
    shutting_down: bool,
    /// Whether `shut_down_with_drain` waits for processing items.
    drain: bool,
}

/// A deduplicating, delaying, rate-limiting work queue that hands out the most urgent item
/// first (controller-runtime's priority queue). Each add carries a [`Priority`]:
///
/// - an item is queued once; adding it again keeps the **higher** priority and the
///   **earlier** time it becomes ready (an item raised to a higher priority moves ahead;
///   a lower one never moves it back);
/// - items of equal priority are handed out in the order they became ready (an item added
///   while it was processed, when it was added; an item raised to a higher priority, when it
///   was raised);
/// - an item handed out by [`get`](Self::get) is not handed out again until
///   [`done`](Self::done); adding it meanwhile queues it to be handed out after `done`;
/// - [`add_with_options`](Self::add_with_options) delays an item, by a given delay or the rate
///   limiter's (client-go's rate-limiting queue), and sets its
///   priority ([`AddOptions`]);
/// - after [`shut_down`](Self::shut_down), adds are ignored, delayed items are dropped, and
///   `get` hands out the ready items, then returns `None`.
///
/// **Fairness.** Strict priority order could starve low-priority items for as long as
/// higher ones keep coming. So every [`fair_share`](Self::fair_share)th hand-out (every
/// [`DEFAULT_FAIR_SHARE`]th by default) is the item that has been ready longest, whatever its
/// priority: while live changes keep a controller busy, the objects of its initial list still
/// get at least a tenth of its reconciles. With only one priority queued this is plain FIFO
/// order either way; [`fifo(true)`](Self::fifo) ignores priorities altogether.
///
/// Unlike client-go's delaying queue it needs no task of its own: `get` waits
/// for the next delayed item itself, so it can be created outside a tokio runtime.
///
/// ```
/// use informer_runtime::workqueue::{AddOptions, Priority, PriorityQueue, default_controller_rate_limiter};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue = PriorityQueue::new(default_controller_rate_limiter());
/// queue.add_with_options("default/listed".to_owned(), AddOptions::default().priority(Priority::LOW));
/// queue.add("default/changed".to_owned()); // Priority::NORMAL
/// assert_eq!(queue.get().await, Some(("default/changed".to_owned(), Priority::NORMAL)));
/// assert_eq!(queue.get().await, Some(("default/listed".to_owned(), Priority::LOW)));
/// # }
/// ```
pub struct PriorityQueue<T> {
    state: Mutex<State<T>>,
    /// Wakes `get` callers when an item becomes ready or on shutdown.
    item_added: Notify,
    /// Wakes `shut_down_with_drain` when processing empties or on a plain shutdown.
    drained: Notify,
    limiter: Box<dyn RateLimiter<T>>,
    metrics: Option<Arc<dyn QueueMetrics>>,
    /// Every how many hand-outs the oldest ready item is served (0: never).
    fair_share: u64,
    /// Whether priorities are ignored (every item is queued at `Priority::NORMAL`).
    fifo: bool,
}

impl<T> fmt::Debug for PriorityQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("PriorityQueue")
            .field("ready", &state.ready)
            .field("waiting", &state.waiting.len())
            .field("processing", &state.processing.len())
            .field("shutting_down", &state.shutting_down)
            .field("fair_share", &self.fair_share)
            .field("fifo", &self.fifo)
            .finish_non_exhaustive()
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> PriorityQueue<T> {
    /// An empty queue retrying with `limiter`.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::build(Box::new(limiter), None)
    }

    /// An empty queue retrying with `limiter` and reporting to `metrics` (as
    /// [`WorkQueue::with_metrics`](super::WorkQueue::with_metrics) does).
    pub fn with_metrics(limiter: impl RateLimiter<T> + 'static, metrics: Arc<dyn QueueMetrics>) -> Self {
        Self::build(Box::new(limiter), Some(metrics))
    }

    pub(crate) fn build(limiter: Box<dyn RateLimiter<T>>, metrics: Option<Arc<dyn QueueMetrics>>) -> Self {
        Self {
            state: Mutex::new(State {
                entries: HashMap::new(),
                levels: BTreeMap::new(),
                ready: 0,
                waiting: BTreeMap::new(),
                processing: HashMap::new(),
                next_seq: 0,
                handed_out: 0,
                shutting_down: false,
                drain: false,
            }),
            item_added: Notify::new(),
            drained: Notify::new(),
            limiter,
            metrics,
            fair_share: u64::from(DEFAULT_FAIR_SHARE),
            fifo: false,
        }
    }

    /// Serves the item that has been ready longest at every `every`th hand-out, whatever its
    /// priority ([`DEFAULT_FAIR_SHARE`] by default); `0` hands out in strict priority order,
    /// where a steady stream of urgent items can starve less urgent ones.
    pub fn fair_share(mut self, every: u32) -> Self {
        self.fair_share = u64::from(every);
        self
    }

    /// Whether the queue ignores priorities and hands items out in the order they became ready
    /// (client-go's order; `false` by default). Every item is then queued at
    /// [`Priority::NORMAL`], whatever [`AddOptions::priority`] says.
    pub fn fifo(mut self, fifo: bool) -> Self {
        self.fifo = fifo;
        self
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `item` now at [`Priority::NORMAL`] (see [`add_with_options`](Self::add_with_options)).
    pub fn add(&self, item: T) {
        self.add_with_options(item, AddOptions::default());
    }

    /// Queues `item` as `options` say (controller-runtime's `AddWithOpts`): now or after a
    /// delay ([`AddOptions::after`]), after the rate limiter's delay ([`AddOptions::rate_limited`],
    /// which records a failure of the item, as client-go's `AddRateLimited`), at a priority
    /// ([`AddOptions::priority`]).
    ///
    /// An item already queued keeps the earlier of its two times and the higher of its two
    /// priorities (an item raised to a higher priority moves ahead; a delayed one added again
    /// without a delay becomes ready now). An item being processed is handed out again after
    /// [`done`](Self::done). Ignored after shutdown.
    pub fn add_with_options(&self, item: T, options: AddOptions) {
        let mut delay = options.after.unwrap_or_default();
        if options.rate_limited {
            if let Some(metrics) = &self.metrics {
                metrics.retried();
            }
            delay = delay.max(self.limiter.when(&item));
        }
        let priority = if self.fifo {
            Priority::NORMAL
        } else {
            options.priority.unwrap_or(Priority::NORMAL)
        };
        let ready_at = (!delay.is_zero()).then(|| saturating_deadline(Instant::now(), delay));
        self.insert(item, priority, ready_at);
    }

    /// Forgets `item`'s failures; call it when the item was processed successfully.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How often `item` was retried since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }

    /// When `item` becomes ready, if it is queued with a delay that has not passed yet.
    pub fn ready_at(&self, item: &T) -> Option<Instant> {
        match self.lock().entries.get(item)?.slot {
            Slot::Waiting(at) if at > Instant::now() => Some(at),
            _ => None,
        }
    }

    fn insert(&self, item: T, priority: Priority, ready_at: Option<Instant>) {
        let mut state = self.lock();
        if state.shutting_down {
            return;
        }
        let now = Instant::now();
        let became_ready = match state.entries.remove(&item) {
            None => {
                let entry = Entry {
                    priority,
                    seq: 0,
                    slot: Slot::Parked,
                    ready_since: None,
                };
                self.place(&mut state, item, entry, ready_at, now)
            }
            Some(entry) => self.update(&mut state, item, entry, priority, ready_at, now),
        };
        drop(state);
        if became_ready {
            self.item_added.notify_one();
        }
    }

    /// Raises the priority and advances the time of a queued item; whether it became ready.
    fn update(
        &self,
        state: &mut State<T>,
        item: T,
        mut entry: Entry,
        priority: Priority,
        ready_at: Option<Instant>,
        now: Instant,
    ) -> bool {
        let earlier = match (entry.slot, ready_at) {
            (Slot::Waiting(_), None) => Some(None),
            (Slot::Waiting(at), Some(new)) if new < at => Some(Some(new)),
            _ => None,
        };
        if priority <= entry.priority && earlier.is_none() {
            state.entries.insert(item, entry);
            return false;
        }
        unindex(state, &entry);
        if priority > entry.priority {
            // Last among the items of its new priority, as if added there now.
            entry.priority = priority;
            entry.seq = state.next_seq;
            state.next_seq += 1;
        }
        match earlier {
            Some(ready_at) => self.place(state, item, entry, ready_at, now),
            None => {
                index(state, item, entry);
                false
            }
        }
    }

    /// Puts an entry that is not in any index where `ready_at` says; whether it became ready.
    fn place(
        &self,
        state: &mut State<T>,
        item: T,
        mut entry: Entry,
        ready_at: Option<Instant>,
        now: Instant,
    ) -> bool {
        if let Some(at) = ready_at {
            entry.seq = state.next_seq;
            state.next_seq += 1;
            entry.slot = Slot::Waiting(at);
            index(state, item, entry);
            return false;
        }
        self.make_ready(state, item, entry, now)
    }

    /// Marks an entry as ready now (or parked while its item is processed), in a fresh place
    /// of the order; whether it can be handed out.
    fn make_ready(&self, state: &mut State<T>, item: T, mut entry: Entry, now: Instant) -> bool {
        entry.seq = state.next_seq;
        state.next_seq += 1;
        if state.processing.contains_key(&item) {
            entry.slot = Slot::Parked;
            state.entries.insert(item, entry);
            return false;
        }
        self.queue_ready(state, item, entry, now);
        true
    }

    /// Indexes a ready entry and reports it as added.
    fn queue_ready(&self, state: &mut State<T>, item: T, mut entry: Entry, now: Instant) {
        entry.slot = Slot::Ready;
        if let Some(metrics) = &self.metrics {
            metrics.added();
            entry.ready_since = Some(now);
        }
        index(state, item, entry);
    }

    /// Moves the delayed items whose time has come to the ready ones; whether any became ready.
    fn promote(&self, state: &mut State<T>, now: Instant) -> bool {
        let mut any = false;
        while let Some(entry) = state.waiting.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let item = entry.remove();
            if let Some(entry) = state.entries.remove(&item) {
                any |= self.make_ready(state, item, entry, now);
            }
        }
        any
    }

    /// Takes the next item to hand out: the most urgent one, or at every `fair_share`th
    /// hand-out the one ready longest.
    fn pick(&self, state: &mut State<T>) -> Option<(T, Entry)> {
        if state.ready == 0 {
            return None;
        }
        drop_stale_fronts(state);
        state.handed_out += 1;
        let fair_turn = self.fair_share > 0 && state.handed_out.is_multiple_of(self.fair_share);
        let level = if fair_turn {
            state
                .levels
                .values_mut()
                .min_by_key(|level| level.front().map_or(u64::MAX, |(seq, _)| *seq))
        } else {
            state.levels.values_mut().next()
        }?;
        let (_, item) = level.pop_front()?;
        state.ready -= 1;
        let entry = state.entries.remove(&item)?;
        Some((item, entry))
    }

    /// The number of items ready to be handed out (not counting delayed ones, nor items
    /// waiting for their processing to be done).
    pub fn len(&self) -> usize {
        let mut state = self.lock();
        if !state.shutting_down {
            self.promote(&mut state, Instant::now());
        }
        state.ready
    }

    /// Whether no item is ready.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits for an item and marks it as being processed: the item and the priority it was
    /// queued at (what a controller retries it at); `None` once the queue is shut down and no
    /// item is ready. Call [`done`](Self::done) when finished with it.
    pub async fn get(&self) -> Option<(T, Priority)> {
        loop {
            let notified = self.item_added.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let next_ready = {
                let mut state = self.lock();
                let now = Instant::now();
                if !state.shutting_down {
                    self.promote(&mut state, now);
                }
                if let Some((item, entry)) = self.pick(&mut state) {
                    let taken_at = self.metrics.as_ref().map(|metrics| {
                        metrics.taken(now.duration_since(entry.ready_since.unwrap_or(now)));
                        now
                    });
                    state.processing.insert(item.clone(), taken_at);
                    let more = state.ready > 0;
                    drop(state);
                    if more {
                        // Pass the wake-up on: another getter may take the next item.
                        self.item_added.notify_one();
                    }
                    return Some((item, entry.priority));
                }
                if state.shutting_down {
                    return None;
                }
                state.waiting.first_key_value().map(|(&(at, _), _)| at)
            };
            match next_ready {
                Some(at) => {
                    tokio::select! {
                        () = notified => {}
                        () = tokio::time::sleep_until(at) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Marks `item` as processed; if it was added meanwhile, it becomes ready again. When no
    /// item is being processed any more, a pending
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) returns.
    pub fn done(&self, item: &T) {
        let mut state = self.lock();
        if let Some(taken_at) = state.processing.remove(item)
            && let (Some(metrics), Some(taken_at)) = (&self.metrics, taken_at)
        {
            metrics.done(taken_at.elapsed());
        }
        let parked = state
            .entries
            .get(item)
            .is_some_and(|entry| entry.slot == Slot::Parked);
        if parked && let Some((item, entry)) = state.entries.remove_entry(item) {
            self.queue_ready(&mut state, item, entry, Instant::now());
        }
        let drained = state.processing.is_empty();
        drop(state);
        if parked {
            self.item_added.notify_one();
        }
        if drained {
            self.drained.notify_waiters();
        }
    }

    /// Stops accepting items and drops the delayed ones; `get` hands out what is ready, then
    /// returns `None`. Does not wait for workers, and releases a pending
    /// [`shut_down_with_drain`](Self::shut_down_with_drain).
    pub fn shut_down(&self) {
        let mut state = self.lock();
        self.close(&mut state);
        state.drain = false;
        drop(state);
        self.item_added.notify_waiters();
        self.drained.notify_waiters();
    }

    /// Stops accepting items (as [`shut_down`](Self::shut_down)) and waits until no handed-out
    /// item is being processed, or a plain `shut_down` is called.
    pub async fn shut_down_with_drain(&self) {
        {
            let mut state = self.lock();
            self.close(&mut state);
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

    /// Marks the queue as shutting down and drops its delayed items.
    fn close(&self, state: &mut State<T>) {
        state.shutting_down = true;
        let waiting = std::mem::take(&mut state.waiting);
        for item in waiting.into_values() {
            state.entries.remove(&item);
        }
    }

    /// Whether the queue is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.lock().shutting_down
    }
}

/// Adds an entry to the index its slot names, and to `entries`.
fn index<T: Eq + Hash + Clone>(state: &mut State<T>, item: T, entry: Entry) {
    match entry.slot {
        Slot::Ready => {
            let level = state.levels.entry(Reverse(entry.priority)).or_default();
            let place = (entry.seq, item.clone());
            if level.back().is_none_or(|(last, _)| *last < entry.seq) {
                level.push_back(place);
            } else {
                // An item added while it was processed, ready now that it is done: it keeps
                // the place of its add.
                let at = level.partition_point(|(seq, _)| *seq < entry.seq);
                level.insert(at, place);
            }
            state.ready += 1;
        }
        Slot::Waiting(at) => {
            state.waiting.insert((at, entry.seq), item.clone());
        }
        Slot::Parked => {}
    }
    state.entries.insert(item, entry);
}

/// Removes an entry from the index its slot names (not from `entries`); a ready item's place
/// in its level goes stale.
fn unindex<T: Eq + Hash>(state: &mut State<T>, entry: &Entry) {
    match entry.slot {
        Slot::Ready => state.ready -= 1,
        Slot::Waiting(at) => {
            state.waiting.remove(&(at, entry.seq));
        }
        Slot::Parked => {}
    }
}

/// Drops the stale places at the front of every level, and the levels left empty.
fn drop_stale_fronts<T: Eq + Hash>(state: &mut State<T>) {
    let entries = &state.entries;
    let live = |seq: u64, item: &T| {
        entries
            .get(item)
            .is_some_and(|entry| entry.slot == Slot::Ready && entry.seq == seq)
    };
    state.levels.retain(|_, level| {
        while let Some((seq, item)) = level.front() {
            if live(*seq, item) {
                break;
            }
            level.pop_front();
        }
        !level.is_empty()
    });
}

impl<T: Eq + Hash + Clone + Send + 'static> Queue for PriorityQueue<T> {
    type Item = T;

    fn add(&self, item: T) {
        PriorityQueue::add(self, item);
    }

    fn add_with_priority(&self, item: T, priority: Priority) {
        self.add_with_options(item, AddOptions::default().priority(priority));
    }
}

#[cfg(test)]
mod delay_tests;
#[cfg(test)]
mod tests;
