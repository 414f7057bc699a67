//! The shared processor: fans an informer's notifications out to its handlers, each through an
//! unbounded buffer of its own (client-go's `sharedProcessor` and `processorListener`).
//!
//! A handler's notifications are delivered in order on a dedicated thread, so a slow or
//! blocked handler never holds up the informer, the watch or other handlers; its backlog grows
//! instead, and is observable through its registration. Stream consumers read their buffer
//! directly.
//!
//! Notifications are handed over in batches. [`Processor::distribute`] queues them and
//! [`Processor::flush`] sends what is queued, which the informer does when its queue of
//! changes runs empty. A handler thread that handled notifications waits one
//! [`BATCH_WINDOW`] before it looks for more, and only goes to sleep on its buffer once a
//! window passed with nothing new: during a burst of changes it takes what arrived in each
//! window at once, and the informer never pays a wake-up per change and handler (which costs
//! more CPU than decoding the change). A change reaches a handler at most one window late,
//! and only during a burst; after a quiet window it is handled at once.
//!
//! Measured with `informer-bench` (2 cores, 100 000 pod updates, 3 counting handlers, the
//! caller's multi-thread runtime): waking the handlers for every change, 16.4k events/s and
//! 90 µs of CPU per event; with a 1 ms window, see the README's table (a 5 ms window
//! measured the same).

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use tokio::{
    sync::{mpsc, oneshot},
    time::Instant,
};

use crate::{
    deadline::saturating_deadline,
    informer::handler::{Notification, ResourceEventHandler},
    user_panic::panic_message,
};

/// The state of one registration, shared by its handle, the processor and its thread.
#[derive(Debug)]
pub(crate) struct ListenerState {
    pub(crate) id: u64,
    /// Notifications buffered and not yet taken by the handler.
    pub(crate) backlog: AtomicUsize,
    /// Initial-list adds sent and not yet handled.
    pub(crate) pending_initial: AtomicUsize,
    /// Notifications handled without panicking.
    pub(crate) handled: AtomicU64,
    /// Calls that panicked.
    pub(crate) panics: AtomicU64,
    /// Set on removal: undelivered notifications are dropped.
    pub(crate) removed: AtomicBool,
    /// Notifications distributed to the listener so far.
    pub(crate) distributed: AtomicU64,
    /// Notifications dropped unsent (the listener's receiver was gone).
    pub(crate) dropped: AtomicU64,
}

impl ListenerState {
    /// Accounts for one notification taken out of the buffer.
    pub(crate) fn taken(&self) {
        self.backlog.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether the listener is done with every notification distributed before
    /// `distributed` was read (it handles them in order: handled, panicked or dropped), or was
    /// removed.
    pub(crate) fn has_finished(&self, distributed: u64) -> bool {
        let finished = self.handled.load(Ordering::SeqCst)
            + self.panics.load(Ordering::SeqCst)
            + self.dropped.load(Ordering::SeqCst);
        finished >= distributed || self.removed.load(Ordering::SeqCst)
    }
}

/// Where a listener's notifications go.
pub(crate) enum Sink<K> {
    /// A handler run on its own thread.
    Handler(Box<dyn ResourceEventHandler<K>>),
    /// A channel read by a stream.
    Stream(mpsc::UnboundedSender<Notification<K>>),
}

struct Listener<K> {
    state: Arc<ListenerState>,
    sender: mpsc::UnboundedSender<Notification<K>>,
    /// Notifications distributed and not yet sent (counted in the backlog already).
    unsent: Vec<Notification<K>>,
    /// The period the handler asked for (kept to recompute `resync_period`).
    requested_resync: Duration,
    /// The effective period; zero for none.
    resync_period: Duration,
    next_resync: Instant,
    /// Whether resync notifications currently reach this listener.
    syncing: bool,
    /// Completes when the handler thread exits (none for streams).
    finished: Option<oneshot::Receiver<()>>,
}

fn is_initial_add<K>(notification: &Notification<K>) -> bool {
    matches!(
        notification,
        Notification::Add {
            is_in_initial_list: true,
            ..
        }
    )
}

impl<K> Listener<K> {
    /// Counts `notification` in the backlog (and among the pending initial adds) and queues
    /// it until the next [`flush`](Self::flush).
    fn enqueue(&mut self, notification: Notification<K>) {
        if is_initial_add(&notification) {
            self.state.pending_initial.fetch_add(1, Ordering::SeqCst);
        }
        self.state.backlog.fetch_add(1, Ordering::SeqCst);
        self.state.distributed.fetch_add(1, Ordering::SeqCst);
        self.unsent.push(notification);
    }

    /// Sends every queued notification, in order.
    fn flush(&mut self) {
        for notification in self.unsent.drain(..) {
            let initial = is_initial_add(&notification);
            if self.sender.send(notification).is_err() {
                // the receiver is gone: nothing will take it
                self.state.backlog.fetch_sub(1, Ordering::SeqCst);
                self.state.dropped.fetch_add(1, Ordering::SeqCst);
                if initial {
                    self.state.pending_initial.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    }
}

struct Inner<K> {
    listeners: Vec<Listener<K>>,
    /// How often the informer checks whether a listener is due for a resync; zero for never.
    resync_check_period: Duration,
    next_id: u64,
}

/// The handlers of one informer.
pub(crate) struct Processor<K> {
    inner: Mutex<Inner<K>>,
    description: String,
}

/// How long a handler thread that handled notifications gathers more before it handles them.
pub(crate) const BATCH_WINDOW: Duration = Duration::from_millis(1);

/// A handler call that takes longer than this while more than [`SLOW_HANDLER_BACKLOG`]
/// notifications wait is logged (as client-go does).
const SLOW_HANDLER_CALL: Duration = Duration::from_millis(100);
const SLOW_HANDLER_BACKLOG: usize = 1024;

/// client-go's `minimumResyncPeriod`.
const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// The effective resync period of a listener (client-go's `determineResyncPeriod`).
fn effective_resync(requested: Duration, check: Duration) -> Duration {
    if requested.is_zero() || check.is_zero() {
        Duration::ZERO
    } else {
        requested.max(check)
    }
}

impl<K: Send + Sync + 'static> Processor<K> {
    pub(crate) fn new(description: String, resync_check_period: Duration) -> Self {
        Self {
            inner: Mutex::new(Inner {
                listeners: Vec::new(),
                resync_check_period,
                next_id: 0,
            }),
            description,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<K>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn resync_check_period(&self) -> Duration {
        self.lock().resync_check_period
    }

    /// The effective resync period of listener `id`.
    #[cfg(test)]
    pub(crate) fn listener_resync_period(&self, id: u64) -> Option<Duration> {
        self.lock()
            .listeners
            .iter()
            .find(|l| l.state.id == id)
            .map(|l| l.resync_period)
    }

    /// Registers a listener asking for `requested` resyncs and sends it `replay` as
    /// initial-list adds before any later notification.
    pub(crate) fn add_listener(
        &self,
        sink: Sink<K>,
        requested: Duration,
        informer_started: bool,
        replay: Vec<Arc<K>>,
    ) -> Arc<ListenerState> {
        let mut inner = self.lock();
        let mut period = requested;
        if !period.is_zero() {
            if period < MINIMUM_RESYNC_PERIOD {
                tracing::warn!(informer = %self.description, requested = ?period, "resync period too small, using 1s");
                period = MINIMUM_RESYNC_PERIOD;
            }
            if period < inner.resync_check_period {
                if informer_started {
                    tracing::warn!(
                        informer = %self.description,
                        requested = ?period,
                        check = ?inner.resync_check_period,
                        "the informer already runs: the resync period cannot go below its check period"
                    );
                    period = inner.resync_check_period;
                } else {
                    inner.resync_check_period = period;
                    let check = period;
                    for listener in &mut inner.listeners {
                        listener.resync_period = effective_resync(listener.requested_resync, check);
                    }
                }
            }
        }
        let resync_period = effective_resync(period, inner.resync_check_period);
        let id = inner.next_id;
        inner.next_id += 1;
        let state = Arc::new(ListenerState {
            id,
            backlog: AtomicUsize::new(0),
            pending_initial: AtomicUsize::new(0),
            handled: AtomicU64::new(0),
            distributed: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            panics: AtomicU64::new(0),
            removed: AtomicBool::new(false),
        });
        let (sender, finished) = match sink {
            Sink::Stream(sender) => (sender, None),
            Sink::Handler(handler) => {
                let (sender, receiver) = mpsc::unbounded_channel();
                let (done, finished) = oneshot::channel();
                let thread_state = Arc::clone(&state);
                let description = self.description.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("informer-handler-{id}"))
                    .spawn(move || run_handler(receiver, handler, &thread_state, &description, done));
                if let Err(err) = spawned {
                    tracing::error!(informer = %self.description, error = %err, "failed to spawn a handler thread");
                }
                (sender, Some(finished))
            }
        };
        let mut listener = Listener {
            state: Arc::clone(&state),
            sender,
            unsent: Vec::new(),
            requested_resync: period,
            resync_period,
            next_resync: saturating_deadline(Instant::now(), resync_period),
            syncing: true,
            finished,
        };
        for object in replay {
            listener.enqueue(Notification::Add {
                object,
                is_in_initial_list: true,
            });
        }
        listener.flush();
        inner.listeners.push(listener);
        state
    }

    /// Queues `notification` for every listener, or, for a resync, for those due for one; it
    /// is sent by the next [`flush`](Self::flush).
    pub(crate) fn distribute(&self, notification: &Notification<K>, is_sync: bool) {
        let mut inner = self.lock();
        for listener in inner.listeners.iter_mut().filter(|l| !is_sync || l.syncing) {
            listener.enqueue(notification.clone());
        }
    }

    /// Sends every queued notification to its listener.
    pub(crate) fn flush(&self) {
        let mut inner = self.lock();
        for listener in &mut inner.listeners {
            listener.flush();
        }
    }

    /// Marks the listeners due for a resync; whether any is (client-go's `shouldResync`).
    pub(crate) fn should_resync(&self) -> bool {
        let now = Instant::now();
        let mut inner = self.lock();
        let mut any = false;
        for listener in &mut inner.listeners {
            let due = !listener.resync_period.is_zero() && now >= listener.next_resync;
            listener.syncing = due;
            if due {
                listener.next_resync = saturating_deadline(now, listener.resync_period);
                any = true;
            }
        }
        any
    }

    /// Removes listener `id`: its undelivered notifications are dropped. Unknown ids are a
    /// no-op; returns whether it was registered.
    pub(crate) fn remove(&self, id: u64) -> bool {
        let mut inner = self.lock();
        let Some(index) = inner.listeners.iter().position(|l| l.state.id == id) else {
            return false;
        };
        let listener = inner.listeners.remove(index);
        listener.state.removed.store(true, Ordering::SeqCst);
        true
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().listeners.len()
    }

    /// The state of every registered listener.
    pub(crate) fn listener_states(&self) -> Vec<Arc<ListenerState>> {
        self.lock()
            .listeners
            .iter()
            .map(|l| Arc::clone(&l.state))
            .collect()
    }

    /// Closes every listener, dropping undelivered notifications, and waits for their threads
    /// to finish their current call.
    pub(crate) async fn stop(&self) {
        for done in self.close() {
            // An error only means the thread is already gone.
            let _ = done.await;
        }
    }

    /// Closes every listener, dropping undelivered notifications: each thread finishes its
    /// current call and exits. Returns what tells when each thread finished.
    pub(crate) fn close(&self) -> Vec<oneshot::Receiver<()>> {
        let mut inner = self.lock();
        // Like client-go, undelivered notifications are dropped: a handler finishes its
        // current call and exits.
        inner
            .listeners
            .drain(..)
            .filter_map(|l| {
                l.state.removed.store(true, Ordering::SeqCst);
                l.finished
            })
            .collect()
    }
}

fn run_handler<K: 'static>(
    mut receiver: mpsc::UnboundedReceiver<Notification<K>>,
    handler: Box<dyn ResourceEventHandler<K>>,
    state: &ListenerState,
    description: &str,
    done: oneshot::Sender<()>,
) {
    let _span = tracing::debug_span!("event_handler", informer = %description, handler = state.id).entered();
    'sleep: while let Some(first) = receiver.blocking_recv() {
        let mut next = Some(first);
        loop {
            while let Some(notification) = next.take().or_else(|| receiver.try_recv().ok()) {
                state.taken();
                if state.removed.load(Ordering::SeqCst) {
                    break 'sleep;
                }
                deliver(notification, handler.as_ref(), state, description);
            }
            // Whatever comes within a window joins one batch, taken without a wake-up.
            std::thread::sleep(BATCH_WINDOW);
            match receiver.try_recv() {
                Ok(notification) => next = Some(notification),
                Err(mpsc::error::TryRecvError::Empty) => continue 'sleep,
                Err(mpsc::error::TryRecvError::Disconnected) => break 'sleep,
            }
        }
    }
    // Release the handler (and what it owns) before telling `stop` this thread is done.
    drop(handler);
    let _ = done.send(());
}

/// Calls the handler with one notification, catching and logging a panic.
fn deliver<K: 'static>(
    notification: Notification<K>,
    handler: &dyn ResourceEventHandler<K>,
    state: &ListenerState,
    description: &str,
) {
    let initial_add = is_initial_add(&notification);
    let started = std::time::Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| match notification {
        Notification::Add {
            object,
            is_in_initial_list,
        } => handler.on_add(object, is_in_initial_list),
        Notification::Update { old, new } => handler.on_update(old, new),
        Notification::Delete(object) => handler.on_delete(object),
    }));
    let took = started.elapsed();
    let backlog = state.backlog.load(Ordering::SeqCst);
    if took > SLOW_HANDLER_CALL && backlog > SLOW_HANDLER_BACKLOG {
        tracing::warn!(?took, backlog, "slow event handler: notifications are piling up");
    }
    match outcome {
        Ok(()) => {
            state.handled.fetch_add(1, Ordering::SeqCst);
            if initial_add {
                state.pending_initial.fetch_sub(1, Ordering::SeqCst);
            }
        }
        Err(panic) => {
            state.panics.fetch_add(1, Ordering::SeqCst);
            let message = panic_message(panic.as_ref());
            tracing::error!(informer = %description, handler = state.id, panic = %message, "event handler panicked");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Port of client-go TestResyncCheckPeriod (shared_informer_test.go).
    #[test]
    fn resync_check_period_arithmetic() {
        let p = Processor::<i32>::new("test".into(), Duration::from_secs(12 * 3600));
        let stream = || Sink::Stream(mpsc::unbounded_channel().0);
        let a = p.add_listener(stream(), Duration::ZERO, false, vec![]);
        assert_eq!(p.resync_check_period(), Duration::from_secs(12 * 3600));
        assert_eq!(p.listener_resync_period(a.id), Some(Duration::ZERO));

        let b = p.add_listener(stream(), Duration::from_secs(60), false, vec![]);
        assert_eq!(p.resync_check_period(), Duration::from_secs(60));
        assert_eq!(p.listener_resync_period(b.id), Some(Duration::from_secs(60)));

        let c = p.add_listener(stream(), Duration::from_secs(55), false, vec![]);
        assert_eq!(p.resync_check_period(), Duration::from_secs(55));
        assert_eq!(p.listener_resync_period(b.id), Some(Duration::from_secs(60)));
        assert_eq!(p.listener_resync_period(c.id), Some(Duration::from_secs(55)));

        let d = p.add_listener(stream(), Duration::from_secs(5), false, vec![]);
        assert_eq!(p.resync_check_period(), Duration::from_secs(5));
        assert_eq!(p.listener_resync_period(a.id), Some(Duration::ZERO));
        assert_eq!(p.listener_resync_period(b.id), Some(Duration::from_secs(60)));
        assert_eq!(p.listener_resync_period(c.id), Some(Duration::from_secs(55)));
        assert_eq!(p.listener_resync_period(d.id), Some(Duration::from_secs(5)));
    }

    #[test]
    fn informer_without_resync_never_resyncs() {
        let p = Processor::<i32>::new("test".into(), Duration::ZERO);
        let b = p.add_listener(
            Sink::Stream(mpsc::unbounded_channel().0),
            Duration::from_secs(60),
            false,
            vec![],
        );
        assert_eq!(p.resync_check_period(), Duration::ZERO);
        assert_eq!(p.listener_resync_period(b.id), Some(Duration::ZERO));
    }

    #[test]
    fn started_informer_raises_small_periods_to_the_check_period() {
        let p = Processor::<i32>::new("test".into(), Duration::from_secs(60));
        let l = p.add_listener(
            Sink::Stream(mpsc::unbounded_channel().0),
            Duration::from_millis(10),
            true,
            vec![],
        );
        assert_eq!(p.resync_check_period(), Duration::from_secs(60));
        assert_eq!(p.listener_resync_period(l.id), Some(Duration::from_secs(60)));
    }

    /// Records when each added value was handled.
    #[derive(Default)]
    struct HandledAt(Mutex<Vec<(i32, std::time::Instant)>>);

    impl ResourceEventHandler<i32> for Arc<HandledAt> {
        fn on_add(&self, object: Arc<i32>, _: bool) {
            self.0
                .lock()
                .expect("not poisoned")
                .push((*object, std::time::Instant::now()));
        }
    }

    impl HandledAt {
        fn wait_for(&self, count: usize) -> Vec<(i32, std::time::Instant)> {
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            loop {
                let handled = self.0.lock().expect("not poisoned").clone();
                if handled.len() >= count {
                    return handled;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "timed out waiting for {count} calls"
                );
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    fn add(p: &Processor<i32>, value: i32) {
        p.distribute(
            &Notification::Add {
                object: Arc::new(value),
                is_in_initial_list: false,
            },
            false,
        );
    }

    #[tokio::test]
    async fn notifications_arriving_while_a_handler_gathers_wait_for_the_window_and_come_together() {
        let p = Processor::<i32>::new("test".into(), Duration::ZERO);
        let handled = Arc::new(HandledAt::default());
        let state = p.add_listener(
            Sink::Handler(Box::new(Arc::clone(&handled))),
            Duration::ZERO,
            false,
            vec![],
        );
        add(&p, 1);
        p.flush();
        let first = handled.wait_for(1)[0].1;
        // The thread now gathers for a window: these are sent one by one, as an informer
        // would after each change of a burst, and handled together once it has passed.
        for value in 2..=5 {
            add(&p, value);
            p.flush();
        }
        let calls = handled.wait_for(5);
        assert_eq!(calls.iter().map(|(v, _)| *v).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        for (value, at) in &calls[1..] {
            assert!(
                at.duration_since(first) >= BATCH_WINDOW,
                "{value} was handled {:?} after the first, within the window",
                at.duration_since(first)
            );
        }
        assert_eq!(state.handled.load(Ordering::SeqCst), 5);
        assert_eq!(state.backlog.load(Ordering::SeqCst), 0);
        p.stop().await;
    }
}
