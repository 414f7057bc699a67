//! Handlers that record every notification they receive, and one that can be told to block or
//! panic.
//!
//! A recording handler appends each notification to its [`NotificationLog`] before anything
//! else, so the log holds every call the informer made, including calls that then blocked or
//! panicked. A [`HandlerCensus`] counts the handler instances still alive, which is how a run
//! checks that shutdown ended every handler thread.

use std::{
    sync::{
        Arc, Mutex, MutexGuard, Once, PoisonError,
        atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use informer_runtime::{
    cache::MaybeTombstone,
    informer::handler::{Notification, ResourceEventHandler},
};

/// The message of the deliberate panics of a misbehaving handler, and of the transforms and
/// index functions of objects poisoned for them.
pub const DELIBERATE_PANIC: &str = "the fault suite's handler panics on purpose";

/// Keeps the deliberate panics of misbehaving handlers out of the output (a campaign raises
/// thousands); every other panic is reported by the previous hook as before. Idempotent.
pub fn silence_deliberate_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let deliberate = info
                .payload()
                .downcast_ref::<String>()
                .is_some_and(|message| message == DELIBERATE_PANIC);
            if !deliberate {
                previous(info);
            }
        }));
    });
}

/// Every notification one handler received, in order.
pub struct NotificationLog<K> {
    entries: Mutex<Vec<Notification<K>>>,
}

impl<K> Default for NotificationLog<K> {
    fn default() -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
        }
    }
}

impl<K> NotificationLog<K> {
    fn lock(&self) -> MutexGuard<'_, Vec<Notification<K>>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends a notification.
    pub fn push(&self, notification: Notification<K>) {
        self.lock().push(notification);
    }

    /// A copy of the notifications so far.
    pub fn snapshot(&self) -> Vec<Notification<K>> {
        self.lock().clone()
    }

    /// How many notifications were received.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none was received.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// How many deletions arrived as tombstones.
    pub fn tombstones(&self) -> usize {
        self.lock()
            .iter()
            .filter(|n| matches!(n, Notification::Delete(MaybeTombstone::Tombstone(_))))
            .count()
    }
}

/// Switches that make a handler block or panic.
#[derive(Debug, Default)]
pub struct Misbehaviour {
    block_next_millis: AtomicU64,
    panics_left: AtomicU32,
    panicked: AtomicU64,
}

impl Misbehaviour {
    /// Makes the next notification block for `duration` (after it is recorded).
    pub fn block_next(&self, duration: Duration) {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        self.block_next_millis.store(millis, Ordering::SeqCst);
    }

    /// Makes the next `times` live notifications (not initial-list adds) panic after they are
    /// recorded. A panic on an initial-list add would keep the registration from ever syncing,
    /// which the runtime documents; live notifications are what this fault is about.
    pub fn panic_next(&self, times: u32) {
        self.panics_left.fetch_add(times, Ordering::SeqCst);
    }

    /// How many calls panicked on purpose so far.
    pub fn panicked(&self) -> u64 {
        self.panicked.load(Ordering::SeqCst)
    }

    fn act(&self, live: bool) {
        let millis = self.block_next_millis.swap(0, Ordering::SeqCst);
        if millis > 0 {
            std::thread::sleep(Duration::from_millis(millis));
        }
        let armed = live
            && self
                .panics_left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(1))
                .is_ok();
        if armed {
            self.panicked.fetch_add(1, Ordering::SeqCst);
            panic!("{DELIBERATE_PANIC}");
        }
    }
}

/// Counts live handler instances: each handler holds a [`CensusGuard`] and the runtime drops
/// handlers when their threads end.
#[derive(Debug, Default, Clone)]
pub struct HandlerCensus(Arc<AtomicUsize>);

impl HandlerCensus {
    /// A guard counted until it is dropped.
    pub fn guard(&self) -> CensusGuard {
        self.0.fetch_add(1, Ordering::SeqCst);
        CensusGuard(Arc::clone(&self.0))
    }

    /// How many guards are alive.
    pub fn alive(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// One counted handler instance of a [`HandlerCensus`].
#[derive(Debug)]
pub struct CensusGuard(Arc<AtomicUsize>);

impl Drop for CensusGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A handler that records every notification into a shared log, then optionally misbehaves.
pub struct RecordingHandler<K> {
    log: Arc<NotificationLog<K>>,
    misbehaviour: Option<Arc<Misbehaviour>>,
    _alive: CensusGuard,
}

impl<K> RecordingHandler<K> {
    /// A handler appending to `log`, counted by `census`, misbehaving as `misbehaviour` says.
    pub fn new(
        log: Arc<NotificationLog<K>>,
        census: &HandlerCensus,
        misbehaviour: Option<Arc<Misbehaviour>>,
    ) -> Self {
        Self {
            log,
            misbehaviour,
            _alive: census.guard(),
        }
    }

    fn after_recording(&self, live: bool) {
        if let Some(misbehaviour) = &self.misbehaviour {
            misbehaviour.act(live);
        }
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K> for RecordingHandler<K> {
    fn on_add(&self, object: Arc<K>, is_in_initial_list: bool) {
        self.log.push(Notification::Add {
            object,
            is_in_initial_list,
        });
        self.after_recording(!is_in_initial_list);
    }

    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        self.log.push(Notification::Update { old, new });
        self.after_recording(true);
    }

    fn on_delete(&self, object: MaybeTombstone<K>) {
        self.log.push(Notification::Delete(object));
        self.after_recording(true);
    }
}
