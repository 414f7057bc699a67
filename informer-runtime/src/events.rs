//! Recording Kubernetes Events without blocking reconciles: a queue, a per-object spam filter
//! and retries in front of kube's `events.k8s.io/v1` publisher.
//!
//! Events are what `kubectl describe` shows under an object: "Scaled up to 3 replicas",
//! "Failed to pull image". kube's [`kube::runtime::events::Recorder`] publishes them and folds
//! repeats of one event (same type, action, reason, regarding and related object, reporter)
//! into the first Event's `series` (a count and the time it was last seen) instead of creating
//! a new Event each time. Its `publish` is an HTTP round trip, though, and nothing stops a
//! reconcile loop that fails every few milliseconds from flooding the API server.
//!
//! [`EventRecorder`] adds what client-go's event broadcaster and correlator give Go
//! controllers:
//!
//! - **Never blocks.** [`EventRecorder::record`] puts the event on a bounded queue and returns;
//!   one background task publishes queued events in order. When the queue is full (the API
//!   server is slow or down), the event is dropped, counted in
//!   [`EventRecorderStats::dropped_queue_full`] and logged as a warning.
//! - **Spam filter.** Each object (by API version, kind, namespace, name and uid), and each
//!   pair of an object and a related object, has a token bucket: a burst of 25 events, then
//!   one more per 5 minutes (client-go's `EventSourceObjectSpamFilter`). Events beyond it are
//!   dropped, counted in [`EventRecorderStats::dropped_spam`] and logged at debug level.
//! - **Retries.** A publish failing with a transient error (429, a 5xx, a connection error or a
//!   timeout) is retried with exponential backoff; a permanent one (any other 4xx, such as 403
//!   or 404 for a missing namespace) is not. Every failure is logged, and every event given
//!   up on is counted in [`EventRecorderStats::failed`]. (A `kube::Client` built with its default retry
//!   policy also retries 429, 503 and 504 answers itself, before the recorder sees them.)
//! - **Flush.** [`EventRecorder::flush`] waits, up to a deadline, until every queued event is
//!   published or given up on, e.g. before a controller exits.
//!
//! The recorder is cheap to clone; clones share the queue, the filter and the statistics. The
//! background task ends once the last clone is dropped and the queue is drained.
//!
//! # One event per target object
//!
//! Repeats fold by type, reason, action, object and related object, not by note: a replicator
//! that records "copied to namespace a" and then "copied to namespace b" on its source object
//! with [`record`](EventRecorder::record) gets one Event, with the first note and a count of
//! 2. To keep one Event per target, record with [`record_about`](EventRecorder::record_about)
//! (or [`record_about_reference`](EventRecorder::record_about_reference)): the target becomes
//! the Event's `related` object and part of what repeats fold by, so each target has its own
//! Event and its own count, and its own spam-filter bucket (a fan-out to many targets is not
//! cut at the 26th). To show the event on the target instead (`kubectl describe` of the
//! copy), swap the two: `record_about(&copy, &source, event)`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//!
//! use informer_runtime::events::{EventRecorder, EventType, NewEvent, Reporter};
//! use k8s_openapi::api::{core::v1::{ConfigMap, Namespace}, events::v1::Event};
//! use kube::Api;
//! # let server = informer_testserver::TestServer::start().await?;
//! # let client = server.client()?;
//! # let mut source = ConfigMap::default();
//! # source.metadata.name = Some("settings".into());
//! # source.metadata.namespace = Some("default".into());
//! # let source = server.create_typed(&source)?;
//! let recorder = EventRecorder::new(client.clone(), Reporter::from("replicator"))?;
//! for target in ["team-a", "team-b", "team-a"] {
//!     let mut namespace = Namespace::default();
//!     namespace.metadata.name = Some(target.into());
//!     recorder.record_about(&source, &namespace, NewEvent {
//!         type_: EventType::Normal,
//!         reason: "Copied".into(),
//!         note: Some(format!("copied to namespace {target}")),
//!         action: "Replicate".into(),
//!         secondary: None,
//!     });
//! }
//! recorder.flush(Duration::from_secs(5)).await?;
//! let events = Api::<Event>::namespaced(client, "default").list(&Default::default()).await?;
//! assert_eq!(events.items.len(), 2, "one per target; team-a's has a count of 2");
//! # Ok(())
//! # }
//! ```
//!
//! Events of namespaced objects are created in the object's namespace, those of cluster-scoped
//! objects in `default`. The controller needs `create` and `patch` on `events` in the API group
//! `events.k8s.io`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//!
//! use informer_runtime::events::{EventRecorder, EventType, NewEvent, Reporter};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! # let server = informer_testserver::TestServer::start().await?;
//! # let client = server.client()?;
//! # let mut settings = ConfigMap::default();
//! # settings.metadata.name = Some("settings".into());
//! # settings.metadata.namespace = Some("default".into());
//! # let settings = server.create_typed(&settings)?;
//!
//! let reporter = Reporter {
//!     controller: "settings-controller".into(),
//!     instance: std::env::var("POD_NAME").ok(),
//! };
//! // Inside a tokio runtime: the recorder starts its publishing task there.
//! let recorder = EventRecorder::new(client, reporter)?;
//!
//! // In a reconcile: returns at once, whatever the API server is doing.
//! recorder.record(
//!     &settings,
//!     NewEvent {
//!         type_: EventType::Normal,
//!         reason: "Synced".into(),
//!         note: Some("settings applied".into()),
//!         action: "Reconcile".into(),
//!         secondary: None,
//!     },
//! );
//!
//! // Before exiting: publish what is queued.
//! recorder.flush(Duration::from_secs(5)).await?;
//! assert_eq!(recorder.stats().published, 1);
//! # Ok(())
//! # }
//! ```

use std::{
    collections::HashMap,
    fmt,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use backon::{BackoffBuilder, ExponentialBuilder};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::{Client, Resource, runtime::events::Recorder};
use tokio::{
    sync::{Notify, mpsc},
    time::Instant,
};

/// What [`EventRecorder::record`] takes: the type, reason, note and action of one Event, and
/// optionally a second object it relates to (kube's `events::Event`, named for what it is here
/// so that it does not clash with k8s-openapi's `Event` objects or the finalizer's events).
pub use kube::runtime::events::Event as NewEvent;
pub use kube::runtime::events::{EventType, Reporter};

use crate::deadline::saturating_deadline;

/// How long a published event is remembered for folding repeats into its series (kube's
/// publisher keeps its own copy for the same time).
const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);

/// Buckets tracked by the spam filter before refilled ones are forgotten.
const SPAM_FILTER_TRACKED: usize = 4096;

/// Failures of the event recorder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// [`EventRecorder::new`] or [`EventRecorder::with_config`] was called outside a tokio
    /// runtime, so there is nowhere to run the publishing task.
    #[error("failed to start the event recorder: not called from inside a tokio runtime")]
    NoRuntime,
    /// [`EventRecorder::flush`] reached its deadline with events still queued or in flight.
    #[error("failed to flush the event recorder: {pending} events still pending at the deadline")]
    FlushTimeout {
        /// Events not yet published or given up on.
        pending: u64,
    },
    /// The publishing task is gone (its runtime shut down) with events still pending.
    #[error("failed to flush the event recorder: its publishing task stopped with {pending} events pending")]
    Stopped {
        /// Events that will never be published.
        pending: u64,
    },
}

/// A `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Options of an [`EventRecorder`].
///
/// The defaults are client-go's: a queue of 1000 events and a spam filter of 25 events per
/// object, refilled by one every 5 minutes; transient failures are retried 3 times, the first
/// retry after 500 ms, doubling up to 10 s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    queue_capacity: usize,
    spam_burst: u32,
    spam_refill_interval: Duration,
    retries: usize,
    retry_delay: Duration,
    max_retry_delay: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            queue_capacity: 1000,
            spam_burst: 25,
            spam_refill_interval: Duration::from_secs(5 * 60),
            retries: 3,
            retry_delay: Duration::from_millis(500),
            max_retry_delay: Duration::from_secs(10),
        }
    }
}

impl Config {
    /// How many events wait for publishing before new ones are dropped (at least 1).
    pub fn queue_capacity(mut self, capacity: usize) -> Self {
        self.queue_capacity = capacity.max(1);
        self
    }

    /// How many events one object may record at once before the spam filter drops them (at
    /// least 1).
    pub fn spam_burst(mut self, burst: u32) -> Self {
        self.spam_burst = burst.max(1);
        self
    }

    /// How long an object's bucket takes to regain one event; zero turns the spam filter off.
    pub fn spam_refill_interval(mut self, interval: Duration) -> Self {
        self.spam_refill_interval = interval;
        self
    }

    /// How many times a publish failing with a transient error is retried (0: never).
    pub fn retries(mut self, retries: usize) -> Self {
        self.retries = retries;
        self
    }

    /// The delay before the first retry, doubling for each further one up to `max`.
    pub fn retry_delay(mut self, first: Duration, max: Duration) -> Self {
        self.retry_delay = first.min(max);
        self.max_retry_delay = max;
        self
    }
}

crate::stats::counters! {
    /// Counts of an [`EventRecorder`] (and its clones) since it was built.
    ///
    /// Every recorded event ends in exactly one of `dropped_spam`, `dropped_queue_full`,
    /// `dropped_stopped` or `queued`; every queued one, once handled, in `published` or `failed`.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct EventRecorderStats;
    /// The live counters behind [`EventRecorderStats`].
    struct Counters {
        /// Calls to [`EventRecorder::record`], [`EventRecorder::record_for`],
        /// [`EventRecorder::record_about`] and [`EventRecorder::record_about_reference`].
        recorded,
        /// Events accepted onto the queue.
        queued,
        /// Events the API server accepted.
        published,
        /// Of `published`, those that updated the series of an earlier Event (a patch) rather than
        /// creating one.
        series_updates,
        /// Events dropped because the queue was full.
        dropped_queue_full,
        /// Events dropped by the per-object spam filter.
        dropped_spam,
        /// Events dropped because the publishing task had stopped (its runtime shut down).
        dropped_stopped,
        /// Queued events given up on: a permanent error, or a transient one that outlasted the
        /// retries.
        failed,
        /// Publish attempts repeated after a transient error.
        retries,
    }
}

/// What the recorder's clones and its task share.
#[derive(Debug)]
struct Shared {
    counters: Counters,
    spam_filter: Mutex<SpamFilter>,
    /// Events queued or being published.
    pending: AtomicU64,
    /// Signalled whenever `pending` drops, and when the task ends.
    progress: Notify,
    /// Set when the publishing task ends.
    stopped: AtomicBool,
}

/// One event waiting to be published.
struct Queued {
    event: NewEvent,
    reference: ObjectReference,
}

/// Records Kubernetes Events for objects without blocking the caller. See the
/// [module documentation](self).
#[derive(Clone)]
pub struct EventRecorder {
    queue: mpsc::Sender<Queued>,
    shared: Arc<Shared>,
}

impl fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventRecorder")
            .field("stats", &self.stats())
            .field("pending", &self.pending())
            .finish_non_exhaustive()
    }
}

impl EventRecorder {
    /// A recorder with the default [`Config`], publishing through `client` as `reporter`.
    ///
    /// # Errors
    ///
    /// [`Error::NoRuntime`] when not called from inside a tokio runtime.
    pub fn new(client: Client, reporter: Reporter) -> Result<Self> {
        Self::with_config(client, reporter, Config::default())
    }

    /// A recorder with `config`, publishing through `client` as `reporter`. Spawns the
    /// publishing task on the current tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::NoRuntime`] when not called from inside a tokio runtime.
    pub fn with_config(client: Client, reporter: Reporter, config: Config) -> Result<Self> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
        let (queue, receiver) = mpsc::channel(config.queue_capacity);
        let shared = Arc::new(Shared {
            counters: Counters::default(),
            spam_filter: Mutex::new(SpamFilter::new(config.spam_burst, config.spam_refill_interval)),
            pending: AtomicU64::new(0),
            progress: Notify::new(),
            stopped: AtomicBool::new(false),
        });
        let publisher = Publisher {
            recorder: Recorder::new(client, reporter.clone()),
            reporter,
            shared: Arc::clone(&shared),
            config,
            published: HashMap::new(),
        };
        runtime.spawn(publisher.run(receiver));
        Ok(Self { queue, shared })
    }

    /// Records `event` about `object`; returns at once. The event is dropped (and counted)
    /// when the object's spam-filter bucket is empty or the queue is full.
    pub fn record<K>(&self, object: &K, event: NewEvent)
    where
        K: Resource<DynamicType = ()>,
    {
        self.record_for(object.object_ref(&()), event);
    }

    /// Records `event` about `object` and its `related` object (the target of what the event
    /// reports, such as the namespace a replicator copied `object` to), as one Event per
    /// related object: repeats fold into that Event's series, events about other related
    /// objects make Events of their own (see the
    /// [module documentation](self#one-event-per-target-object)). `related` replaces
    /// `event.secondary`. Returns at once; the event is dropped (and counted) when the spam
    /// filter's bucket of `object` and `related` is empty or the queue is full.
    pub fn record_about<K, R>(&self, object: &K, related: &R, event: NewEvent)
    where
        K: Resource<DynamicType = ()>,
        R: Resource<DynamicType = ()>,
    {
        self.record_about_reference(object.object_ref(&()), related.object_ref(&()), event);
    }

    /// [`record_about`](Self::record_about) with references: records `event` about the object
    /// `reference` points to, as one Event per `related` object.
    pub fn record_about_reference(
        &self,
        reference: ObjectReference,
        related: ObjectReference,
        event: NewEvent,
    ) {
        self.record_for(
            reference,
            NewEvent {
                secondary: Some(related),
                ..event
            },
        );
    }

    /// Records `event` about the object `reference` points to; returns at once. The event is
    /// dropped (and counted) when the spam-filter bucket of the object (and of
    /// `event.secondary`, if set) is empty or the queue is full.
    pub fn record_for(&self, reference: ObjectReference, event: NewEvent) {
        let counters = &self.shared.counters;
        counters.recorded.bump();
        let allowed = self
            .shared
            .spam_filter
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .allow(&reference, event.secondary.as_ref(), Instant::now());
        if !allowed {
            counters.dropped_spam.bump();
            tracing::debug!(
                kind = reference.kind.as_deref().unwrap_or_default(),
                namespace = reference.namespace.as_deref().unwrap_or_default(),
                name = reference.name.as_deref().unwrap_or_default(),
                reason = %event.reason,
                "dropping an event: the object recorded too many events recently"
            );
            return;
        }
        self.shared.pending.fetch_add(1, Ordering::SeqCst);
        match self.queue.try_send(Queued { event, reference }) {
            Ok(()) => counters.queued.bump(),
            Err(err) => {
                self.shared.settle();
                let (full, queued) = match err {
                    mpsc::error::TrySendError::Full(queued) => (true, queued),
                    mpsc::error::TrySendError::Closed(queued) => (false, queued),
                };
                let reference = &queued.reference;
                if full {
                    counters.dropped_queue_full.bump();
                    tracing::warn!(
                        kind = reference.kind.as_deref().unwrap_or_default(),
                        namespace = reference.namespace.as_deref().unwrap_or_default(),
                        name = reference.name.as_deref().unwrap_or_default(),
                        reason = %queued.event.reason,
                        "dropping an event: the event queue is full"
                    );
                } else {
                    counters.dropped_stopped.bump();
                    tracing::warn!(
                        kind = reference.kind.as_deref().unwrap_or_default(),
                        namespace = reference.namespace.as_deref().unwrap_or_default(),
                        name = reference.name.as_deref().unwrap_or_default(),
                        reason = %queued.event.reason,
                        "dropping an event: the event publishing task has stopped"
                    );
                }
            }
        }
    }

    /// The counts so far, shared by all clones.
    pub fn stats(&self) -> EventRecorderStats {
        self.shared.counters.snapshot()
    }

    /// Events queued or being published right now.
    pub fn pending(&self) -> u64 {
        self.shared.pending.load(Ordering::SeqCst)
    }

    /// Waits until every event queued so far (and any recorded meanwhile) is published or
    /// given up on, for at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`Error::FlushTimeout`] when events are still pending at the deadline;
    /// [`Error::Stopped`] when the publishing task ended (its runtime shut down) with events
    /// pending.
    pub async fn flush(&self, timeout: Duration) -> Result<()> {
        let deadline = saturating_deadline(Instant::now(), timeout);
        loop {
            let progress = self.shared.progress.notified();
            tokio::pin!(progress);
            progress.as_mut().enable();
            let pending = self.pending();
            if pending == 0 {
                return Ok(());
            }
            if self.shared.stopped.load(Ordering::SeqCst) {
                return Err(Error::Stopped { pending });
            }
            if tokio::time::timeout_at(deadline, progress).await.is_err() {
                let pending = self.pending();
                return if pending == 0 {
                    Ok(())
                } else {
                    Err(Error::FlushTimeout { pending })
                };
            }
        }
    }
}

impl Shared {
    fn settle(&self) {
        self.pending.fetch_sub(1, Ordering::SeqCst);
        self.progress.notify_waiters();
    }
}

/// The background task: publishes queued events one at a time.
struct Publisher {
    recorder: Recorder,
    reporter: Reporter,
    shared: Arc<Shared>,
    config: Config,
    /// When each event identity was last published, to tell series updates from new Events.
    published: HashMap<SeriesKey, Instant>,
}

/// The fields kube's publisher folds repeats by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SeriesKey {
    type_: EventType,
    action: String,
    reason: String,
    regarding: ReferenceIdentity,
    related: Option<ReferenceIdentity>,
}

/// An object's identity in an [`ObjectReference`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ReferenceIdentity {
    api_version: Option<String>,
    kind: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    uid: Option<String>,
}

impl From<&ObjectReference> for ReferenceIdentity {
    fn from(reference: &ObjectReference) -> Self {
        Self {
            api_version: reference.api_version.clone(),
            kind: reference.kind.clone(),
            namespace: reference.namespace.clone(),
            name: reference.name.clone(),
            uid: reference.uid.clone(),
        }
    }
}

/// Shutdown bookkeeping: marks the task stopped and wakes flushers, also when the task is
/// dropped mid-publish because its runtime shut down.
struct StopGuard(Arc<Shared>);

impl Drop for StopGuard {
    fn drop(&mut self) {
        self.0.stopped.store(true, Ordering::SeqCst);
        self.0.progress.notify_waiters();
    }
}

impl Publisher {
    async fn run(mut self, mut receiver: mpsc::Receiver<Queued>) {
        let _stop = StopGuard(Arc::clone(&self.shared));
        while let Some(queued) = receiver.recv().await {
            self.publish(queued).await;
            self.shared.settle();
        }
        tracing::debug!(
            controller = %self.reporter.controller,
            "event recorder dropped; publishing task ends"
        );
    }

    async fn publish(&mut self, Queued { event, reference }: Queued) {
        let counters = &self.shared.counters;
        let key = SeriesKey {
            type_: event.type_,
            action: event.action.clone(),
            reason: event.reason.clone(),
            regarding: ReferenceIdentity::from(&reference),
            related: event.secondary.as_ref().map(ReferenceIdentity::from),
        };
        let now = Instant::now();
        self.published
            .retain(|_, last| now.saturating_duration_since(*last) < SERIES_WINDOW);
        let series_update = self.published.contains_key(&key);

        let mut delays = ExponentialBuilder::new()
            .with_min_delay(self.config.retry_delay)
            .with_max_delay(self.config.max_retry_delay)
            .with_jitter()
            .with_max_times(self.config.retries)
            .build();
        loop {
            let err = match self.recorder.publish(&event, &reference).await {
                Ok(()) => {
                    counters.published.bump();
                    if series_update {
                        counters.series_updates.bump();
                    }
                    self.published.insert(key, Instant::now());
                    return;
                }
                Err(err) => err,
            };
            let transient = is_transient(&err);
            match delays.next() {
                Some(delay) if transient => {
                    counters.retries.bump();
                    tracing::info!(
                        error = %err,
                        reason = %event.reason,
                        name = reference.name.as_deref().unwrap_or_default(),
                        retry_in = ?delay,
                        "failed to publish an event; retrying"
                    );
                    tokio::time::sleep(delay).await;
                }
                _ => {
                    counters.failed.bump();
                    tracing::warn!(
                        error = %err,
                        transient,
                        reason = %event.reason,
                        kind = reference.kind.as_deref().unwrap_or_default(),
                        namespace = reference.namespace.as_deref().unwrap_or_default(),
                        name = reference.name.as_deref().unwrap_or_default(),
                        "failed to publish an event; dropping it"
                    );
                    return;
                }
            }
        }
    }
}

/// Whether a publish failure may go away by itself: throttling, server errors, and failures
/// to reach the server or to get its answer in time.
fn is_transient(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(status) => status.code == 429 || (500..=599).contains(&status.code),
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// client-go's `EventSourceObjectSpamFilter`: a token bucket per object, and per pair of an
/// object and a related object.
#[derive(Debug)]
struct SpamFilter {
    burst: f64,
    refill_interval: Duration,
    buckets: HashMap<(ReferenceIdentity, Option<ReferenceIdentity>), Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl SpamFilter {
    fn new(burst: u32, refill_interval: Duration) -> Self {
        Self {
            burst: f64::from(burst),
            refill_interval,
            buckets: HashMap::new(),
        }
    }

    /// Takes a token of the bucket of `reference` (and `related`); false when it is empty.
    fn allow(
        &mut self,
        reference: &ObjectReference,
        related: Option<&ObjectReference>,
        now: Instant,
    ) -> bool {
        if self.refill_interval.is_zero() {
            return true;
        }
        let (burst, interval) = (self.burst, self.refill_interval);
        let key = (
            ReferenceIdentity::from(reference),
            related.map(ReferenceIdentity::from),
        );
        let tokens = self
            .buckets
            .get(&key)
            .map_or(burst, |bucket| bucket.tokens_at(now, burst, interval));
        let allowed = tokens >= 1.0;
        let tokens = if allowed { tokens - 1.0 } else { tokens };
        self.buckets.insert(key, Bucket { tokens, updated: now });
        if self.buckets.len() > SPAM_FILTER_TRACKED {
            // A refilled bucket behaves like a new one: forgetting it changes nothing.
            self.buckets
                .retain(|_, bucket| bucket.tokens_at(now, burst, interval) < burst);
        }
        allowed
    }
}

impl Bucket {
    /// The tokens at `now`, refilled by one per `interval` (non-zero) up to `burst`.
    fn tokens_at(&self, now: Instant, burst: f64, interval: Duration) -> f64 {
        let elapsed = now.saturating_duration_since(self.updated);
        let gained = elapsed.as_secs_f64() / interval.as_secs_f64();
        (self.tokens + gained).min(burst)
    }
}

#[cfg(test)]
mod tests;
