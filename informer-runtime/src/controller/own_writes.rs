//! The guard that makes a controller read its own writes: the next reconcile of an object
//! waits until every cache the controller reads has seen what the previous reconcile of that
//! object wrote (see [read your own writes](super#read-your-own-writes)).
//!
//! A worker asks [`OwnWrites::admit`] before each reconcile. A key whose writes a cache has not
//! seen yet is not reconciled: the worker lets it go at once (so it takes other keys), and a
//! small task of the guard waits for the caches (a change of their resource version wakes it),
//! the timeout or the end of the run, then puts the key back on the queue.

use std::{
    sync::{Arc, Mutex, MutexGuard, PoisonError, atomic::Ordering},
    time::Duration,
};

use futures::future::join_all;
use hashbrown::HashMap;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{
    queue::ControllerQueue,
    stats::{Counters, OwnWriteWait},
    write_log::WrittenObject,
};
use crate::{
    informer::processor::ListenerState,
    key::ObjectKey,
    scope::Selection,
    workqueue::{AddOptions, Priority},
};

/// How long the next reconcile of an object waits at most for its own writes, by default.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// How often a wait checks whether the controller's handler has handled the notifications
/// distributed with a write (a handler takes them within about a millisecond).
const HANDLER_POLL: Duration = Duration::from_millis(1);

/// The fewest pending records at which the guard drops those the caches have seen.
const MIN_SWEEP: usize = 64;

/// One informer a controller reads, as the guard sees it: the type of its objects, what it
/// holds of them (its scope) and how far its cache has caught up.
#[derive(Debug, Clone)]
pub(crate) struct CacheProgress {
    group: String,
    kind: String,
    informer: String,
    resource_version: watch::Receiver<String>,
    /// The objects the cache holds (every one of its type when `None`).
    selection: Option<Arc<Selection>>,
    /// The controller's handler on the informer: a write counts as seen once the handler
    /// has also handled its event (and enqueued what it enqueues), not only the cache.
    handler: Option<Arc<ListenerState>>,
}

impl CacheProgress {
    /// The cache of the informer described as `informer`, holding objects of `group` and `kind`,
    /// whose resource version `resource_version` follows.
    pub(crate) fn new(
        group: &str,
        kind: &str,
        informer: &str,
        resource_version: watch::Receiver<String>,
    ) -> Self {
        Self {
            group: group.to_owned(),
            kind: kind.to_owned(),
            informer: informer.to_owned(),
            resource_version,
            selection: None,
            handler: None,
        }
    }

    /// The cache whose events `handler` handles for the controller: a write counts as seen
    /// once the handler is done with every notification distributed with it.
    pub(crate) fn handled_by(mut self, handler: Arc<ListenerState>) -> Self {
        self.handler = Some(handler);
        self
    }

    /// The cache holding only the objects of `selection` (a scoped cache): it sees only writes
    /// of objects it may hold, so only those are waited for.
    pub(crate) fn holding(mut self, selection: Arc<Selection>) -> Self {
        self.selection = Some(selection);
        self
    }

    /// Whether the cache may hold `written`: its type, and for a scoped cache its namespace,
    /// labels and name as written (a write that takes an object out of a label scope is not
    /// waited for).
    fn holds(&self, written: &WrittenObject) -> bool {
        let place = &written.place;
        self.kind == written.kind
            && self.group == written.group()
            && self.selection.as_ref().is_none_or(|selection| {
                selection.may_hold(place.namespace.as_deref(), place.name.as_deref(), &place.labels)
            })
    }

    /// Whether the cache has seen a write at `written`, and the controller's handler has
    /// handled every notification distributed so far (a handler that is still busy counts as
    /// not seen here: [`caught_up`](Self::caught_up) waits for exactly the notifications
    /// distributed with the write).
    fn seen(&self, written: u64) -> Seen {
        let cache = seen(&self.resource_version.borrow(), written);
        match &self.handler {
            Some(handler) if cache == Seen::Yes => {
                if handler.has_finished(handler.distributed.load(Ordering::SeqCst)) {
                    Seen::Yes
                } else {
                    Seen::No
                }
            }
            _ => cache,
        }
    }

    /// Completes once the cache has seen a write at `written` (or its informer is gone) and
    /// the controller's handler has handled the notifications distributed until then: the
    /// event of the write among them, since the informer distributes an event before it
    /// publishes its resource version.
    async fn caught_up(&self, written: u64) {
        let mut resource_version = self.resource_version.clone();
        // An error means the informer is gone: nothing to wait for.
        let _ = resource_version
            .wait_for(|cache| seen(cache, written) != Seen::No)
            .await;
        let Some(handler) = &self.handler else {
            return;
        };
        let distributed = handler.distributed.load(Ordering::SeqCst);
        while !handler.has_finished(distributed) {
            tokio::time::sleep(HANDLER_POLL).await;
        }
    }
}

/// Whether a cache at resource version `cache` has seen a write at `written`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    Yes,
    No,
    /// The cache's resource version is not an integer: the two cannot be compared.
    Unknown,
}

/// Compares a cache's resource version with a written one, as integers (etcd's revisions); a
/// cache that has not listed yet (`""`) has seen nothing.
pub(crate) fn seen(cache: &str, written: u64) -> Seen {
    if cache.is_empty() {
        return Seen::No;
    }
    match parse(cache) {
        Some(cache) if cache >= written => Seen::Yes,
        Some(_) => Seen::No,
        None => Seen::Unknown,
    }
}

/// A resource version as an integer, if it is one.
pub(crate) fn parse(resource_version: &str) -> Option<u64> {
    resource_version.parse().ok()
}

/// What the last reconcile of a key wrote that some cache had not seen.
#[derive(Debug)]
struct Pending {
    /// (index of the cache, resource version written), the newest write per cache.
    versions: Vec<(usize, u64)>,
    state: PendingState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PendingState {
    /// Nothing waits for it yet.
    Recorded,
    /// A task waits for the caches and puts the key back.
    Waiting,
    /// The wait timed out: the next reconcile goes ahead.
    Expired,
}

/// The guard of one run of a controller.
pub(crate) struct OwnWrites {
    controller: String,
    caches: Vec<CacheProgress>,
    timeout: Duration,
    pending: Mutex<Records>,
    counters: Arc<Counters>,
    queue: ControllerQueue,
    stop: CancellationToken,
}

#[derive(Default)]
struct Records {
    by_key: HashMap<ObjectKey, Pending>,
    sweep_at: usize,
}

impl OwnWrites {
    /// A guard over `caches` that puts held-back keys back on `queue`, waiting at most
    /// `timeout` for each, until `stop` fires.
    pub(crate) fn new(
        controller: &str,
        caches: Vec<CacheProgress>,
        timeout: Duration,
        counters: Arc<Counters>,
        queue: ControllerQueue,
        stop: CancellationToken,
    ) -> Self {
        Self {
            controller: controller.to_owned(),
            caches,
            timeout,
            pending: Mutex::new(Records {
                by_key: HashMap::new(),
                sweep_at: MIN_SWEEP,
            }),
            counters,
            queue,
            stop,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Records> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records what the reconcile of `key` wrote: for each cache that may hold a written
    /// object (its type, within its scope), the newest resource version it has not seen. The
    /// key has no record while it is reconciled ([`admit`](Self::admit) let it go only without
    /// one).
    pub(crate) fn record(&self, key: &ObjectKey, writes: Vec<WrittenObject>) {
        if writes.is_empty() {
            return;
        }
        let mut versions: Vec<(usize, u64)> = Vec::new();
        for written in &writes {
            let holding: Vec<usize> = (0..self.caches.len())
                .filter(|&cache| self.caches[cache].holds(written))
                .collect();
            if holding.is_empty() {
                continue;
            }
            let Some(resource_version) = self.comparable(key, written) else {
                continue;
            };
            for cache in holding {
                match versions.iter_mut().find(|(index, _)| *index == cache) {
                    Some((_, newest)) => *newest = (*newest).max(resource_version),
                    None => versions.push((cache, resource_version)),
                }
            }
        }
        let versions = self.behind(&versions);
        let mut records = self.lock();
        if versions.is_empty() {
            records.by_key.remove(key);
            return;
        }
        records.by_key.insert(
            key.clone(),
            Pending {
                versions,
                state: PendingState::Recorded,
            },
        );
        if records.by_key.len() >= records.sweep_at {
            self.sweep(&mut records);
        }
    }

    /// The written resource version as an integer; a write whose version is not one is
    /// counted and not waited for.
    fn comparable(&self, key: &ObjectKey, written: &WrittenObject) -> Option<u64> {
        let parsed = parse(&written.resource_version);
        if parsed.is_none() {
            self.counters.own_write_skipped();
            tracing::debug!(
                controller = %self.controller,
                object = %key,
                kind = %written.kind,
                resource_version = %written.resource_version,
                "a write's resource version is not an integer; the next reconcile does not wait for it"
            );
        }
        parsed
    }

    /// Drops the records whose writes every cache has seen (objects not reconciled since), so
    /// the records grow with the writes caches lag behind, not with every object written.
    fn sweep(&self, records: &mut Records) {
        records.by_key.retain(|_, pending| {
            pending.state == PendingState::Waiting
                || pending
                    .versions
                    .iter()
                    .any(|&(cache, written)| self.caches[cache].seen(written) == Seen::No)
        });
        records.sweep_at = (records.by_key.len() * 2).max(MIN_SWEEP);
    }

    /// The writes of `versions` a cache has not seen; a cache whose resource version cannot be
    /// compared is counted and not waited for.
    fn behind(&self, versions: &[(usize, u64)]) -> Vec<(usize, u64)> {
        versions
            .iter()
            .copied()
            .filter(|&(cache, written)| match self.caches[cache].seen(written) {
                Seen::Yes => false,
                Seen::No => true,
                Seen::Unknown => {
                    self.counters.own_write_skipped();
                    false
                }
            })
            .collect()
    }

    /// Whether the reconcile of `key` may start now. If not, the caller lets the key go: the
    /// guard puts it back on the queue, at `priority`, once the caches have seen the writes of
    /// its previous reconcile, or the timeout passed.
    pub(crate) fn admit(self: &Arc<Self>, key: &ObjectKey, priority: Priority) -> bool {
        let mut records = self.lock();
        let Some(pending) = records.by_key.get_mut(key) else {
            return true;
        };
        let behind = match pending.state {
            PendingState::Waiting => return false,
            PendingState::Expired => Vec::new(),
            PendingState::Recorded => self.behind(&pending.versions),
        };
        if behind.is_empty() {
            records.by_key.remove(key);
            return true;
        }
        pending.state = PendingState::Waiting;
        drop(records);
        self.counters.own_write_waits.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(
            controller = %self.controller,
            object = %key,
            caches = ?self.describe(&behind),
            "holding the reconcile back until the caches have seen the previous reconcile's writes"
        );
        tokio::spawn(Arc::clone(self).wait(key.clone(), priority, behind));
        false
    }

    /// Waits until the caches have seen `behind`, the timeout passes or the run stops; then
    /// puts `key` back (unless the run stopped).
    async fn wait(self: Arc<Self>, key: ObjectKey, priority: Priority, behind: Vec<(usize, u64)>) {
        let started = tokio::time::Instant::now();
        let caught_up = join_all(
            behind
                .iter()
                .map(|&(cache, written)| self.caches[cache].caught_up(written)),
        );
        let outcome = tokio::select! {
            biased;
            () = self.stop.cancelled() => return,
            outcome = tokio::time::timeout(self.timeout, caught_up) => outcome,
        };
        let waited = started.elapsed();
        let caught_up = outcome.is_ok();
        self.counters.own_write_waited(
            if caught_up {
                OwnWriteWait::CaughtUp
            } else {
                OwnWriteWait::TimedOut
            },
            waited,
        );
        let mut records = self.lock();
        if caught_up {
            records.by_key.remove(&key);
            drop(records);
            tracing::debug!(controller = %self.controller, object = %key, ?waited, "the caches have seen the previous reconcile's writes");
        } else {
            if let Some(pending) = records.by_key.get_mut(&key) {
                pending.state = PendingState::Expired;
            }
            drop(records);
            tracing::warn!(
                controller = %self.controller,
                object = %key,
                timeout = ?self.timeout,
                caches = ?self.describe(&behind),
                "the caches have not seen the previous reconcile's writes within the timeout; reconciling on them as they are"
            );
        }
        self.queue
            .add_with_options(key, AddOptions::default().priority(priority));
    }

    /// `informer ≥ resource version` for each write waited for, for logs.
    fn describe(&self, behind: &[(usize, u64)]) -> Vec<String> {
        behind
            .iter()
            .map(|&(cache, written)| {
                let cache = &self.caches[cache];
                format!(
                    "{} at {:?}, waiting for {written}",
                    cache.informer,
                    cache.resource_version.borrow().as_str()
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
