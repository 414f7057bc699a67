//! The reflector: keeps a store in step with the API server by listing, then watching from the
//! last resource version (client-go's `Reflector`).
//!
//! One `run` loops over [`Reflector::list_and_watch`] with a backoff between rounds:
//! - the first list asks for resource version `"0"` (any cached state), later lists for the
//!   last version seen, and `""` (most recent) after a 410 Expired or a "too large resource
//!   version" answer, which is retried at once;
//! - lists are paged (500 per page unless a version is given and the watch cache can serve
//!   it), and a continuation that expires falls back to one full list; each page goes to the
//!   store as it arrives ([`Relist`]), so an informer's relist holds what the cache holds
//!   plus about a page, where client-go holds the whole new list beside the old cache;
//! - the watch starts from the list's version with bookmarks, with a random server timeout of
//!   5 to 10 minutes; a clean close, a connection reset or a read timeout re-opens it from the
//!   last version without relisting; 429, unreachable servers and watches that close at once
//!   without an event retry the watch after a backoff, but after
//!   [`MAX_CONSECUTIVE_VERY_SHORT_WATCHES`] watches in a row that closed at once the reflector
//!   relists; 410 and other errors end the round, so the next round relists;
//! - optionally the initial list is streamed by the watch itself (`sendInitialEvents`), its
//!   events reaching the store as they arrive like the pages of a list, falling back to a
//!   plain list if the server refuses;
//! - a resync timer asks the store to re-deliver known objects.
//!
//! A relist is handed to the store as it arrives ([`ReflectorStore::begin_relist`]): every
//! page of a list and every initial event of a streaming list is a [`Relist::page`], the end of
//! the list (or the bookmark that ends the initial events) its [`Relist::finish`], which removes
//! what no page listed. A store that applies pages at once (the informer's queue, a plain
//! cache) shows the pages so far beside what it held before until the finish; a list that fails
//! or a stream that breaks before its end finishes nothing, and the next relist that completes
//! leaves exactly its snapshot. The [informer docs](crate::informer#what-listers-and-handlers-see-during-a-relist)
//! say what listers and handlers see meanwhile.

pub mod backoff;
mod retry_window;

use std::{
    fmt,
    panic::AssertUnwindSafe,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use futures::{FutureExt, StreamExt};
use kube::{
    Resource,
    core::{WatchEvent, params::VersionMatch},
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::{
    cache::{ReflectorStore, Relist},
    reflector::backoff::Backoff,
    reflector::retry_window::RetryWindow,
    source::pager::{DEFAULT_PAGE_SIZE, Page, list_pages},
    source::{self, BoxError, INITIAL_EVENTS_END_ANNOTATION, ListOptions, ListerWatcher, WatchStream},
    stats::Counter,
    user_panic::{PanicReporter, UserFunction, UserPanic, panic_message},
};

/// The shortest server-side watch timeout; each watch picks a random one in `[min, 2 min)`.
pub const DEFAULT_MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// A watch that closes within this time without any event is an error.
const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// After this many watches in a row that closed at once without an event, the reflector
/// relists instead of watching from the same resource version again, so a server or proxy that
/// keeps closing watches at a stale version cannot hold the cache stale (client-go relists after
/// the first one).
pub const MAX_CONSECUTIVE_VERY_SHORT_WATCHES: u32 = 3;

/// After this many streams that close before the initial-events bookmark, a streaming list
/// falls back to a plain list instead of retrying forever.
const MAX_STREAMS_WITHOUT_INITIAL_EVENTS_END: u32 = 3;

/// How often a streaming list that waits for its end bookmark logs a warning.
const INITIAL_EVENTS_END_WARNING_INTERVAL: Duration = Duration::from_secs(10);

/// How the first state of the store is obtained.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InitialListStrategy {
    /// A (paged) list, then a watch from its resource version.
    #[default]
    ListWatch,
    /// A watch with `sendInitialEvents=true` that streams the current state, ended by a
    /// bookmark; falls back to [`ListWatch`](Self::ListWatch) if the server refuses it.
    StreamingList,
}

/// Reflector options. The defaults are client-go's.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// How often the store re-delivers known objects; zero for never.
    pub resync_period: Duration,
    /// A fixed page size for lists; `None` follows client-go's rules (500, or unpaginated when
    /// the watch cache can serve the list).
    pub page_size: Option<u32>,
    /// The shortest server-side watch timeout; honoured only above 5 minutes.
    pub min_watch_timeout: Duration,
    /// The backoff between failed rounds and watch retries.
    pub backoff: backoff::Config,
    /// How long watches failing with 500 are re-opened at once instead of relisting; zero
    /// always relists.
    pub max_internal_error_retry_duration: Duration,
    /// How the first state is obtained.
    pub initial_list_strategy: InitialListStrategy,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            resync_period: Duration::ZERO,
            page_size: None,
            min_watch_timeout: DEFAULT_MIN_WATCH_TIMEOUT,
            backoff: backoff::Config::default(),
            max_internal_error_retry_duration: Duration::ZERO,
            initial_list_strategy: InitialListStrategy::ListWatch,
        }
    }
}

/// The result of a list-and-watch round.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure of one list-and-watch round. The reflector recovers from all of them by itself;
/// they are reported to the watch-error handler.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Listing failed.
    #[error("failed to list {resource}: {source}")]
    List {
        /// What was listed.
        resource: String,
        /// The cause.
        #[source]
        source: source::Error,
    },
    /// Opening a watch failed, or an open watch failed.
    #[error("failed to watch {resource}: {source}")]
    Watch {
        /// What was watched.
        resource: String,
        /// The cause.
        #[source]
        source: source::Error,
    },
    /// The server closed a watch at once without any event.
    #[error(
        "failed to watch {resource}: very short watch: the watch lasted less than a second and no items were received"
    )]
    VeryShortWatch {
        /// What was watched.
        resource: String,
    },
    /// A streaming list kept closing before the bookmark that ends its initial events.
    #[error(
        "failed to stream the initial list of {resource}: the watch closed {attempts} times before the \"{INITIAL_EVENTS_END_ANNOTATION}\" bookmark"
    )]
    InitialEventsEndMissing {
        /// What was watched.
        resource: String,
        /// How many streams closed early.
        attempts: u32,
    },
    /// A user function (transform, index function, lister-watcher) panicked; the informer
    /// went on (see [`user_panic`](crate::user_panic) for what became of the change).
    #[error(transparent)]
    Panicked(#[from] UserPanic),
    /// The store's resync failed.
    #[error("failed to resync {resource}: {source}")]
    Resync {
        /// The resource of the store.
        resource: String,
        /// The cause.
        #[source]
        source: BoxError,
    },
}

impl Error {
    /// The lister-watcher error behind this one, if any.
    pub fn api_error(&self) -> Option<&source::Error> {
        match self {
            Self::List { source, .. } | Self::Watch { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Whether the cause is a 410 Expired (routine after compaction).
    pub fn is_expired(&self) -> bool {
        self.api_error().is_some_and(source::Error::is_expired)
    }
}

/// Counters of a reflector's requests, read by [`Reflector::stats`].
#[derive(Debug, Default)]
struct Counters {
    lists: Counter,
    list_errors: Counter,
    watches: Counter,
    watch_errors: Counter,
}

/// What a reflector has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReflectorStats {
    /// Successful lists, including the first (and streamed initial lists).
    pub lists: u64,
    /// Lists after the first: relists after a 410, a failed watch, or a restart.
    pub relists: u64,
    /// Failed list requests.
    pub list_errors: u64,
    /// Watches opened.
    pub watches: u64,
    /// Watches that failed to open or ended with an error.
    pub watch_errors: u64,
    /// The resource version of the last list or event.
    pub last_resource_version: String,
}

/// Called with every error an informer (or a reflector) recovers from, with the informer's
/// description (client-go's `WatchErrorHandler`). One signature everywhere: the factory's,
/// an informer's and a reflector's handlers are all of this type.
pub type WatchErrorHandler = Arc<dyn Fn(&str, &Error) + Send + Sync>;

/// Asked when the resync timer fires; the store resyncs only if it answers `true`.
pub type ShouldResync = Arc<dyn Fn() -> bool + Send + Sync>;

struct State {
    backoff: Backoff,
    /// The last resource version can no longer be served (410 or too large): list with "".
    last_resource_version_unavailable: bool,
    /// A list at "0" came back paginated: the watch cache is off, keep paging.
    paginated_result: bool,
    last_sync_resource_version: String,
    /// The last list or watch error, until the next successful list.
    last_error: Option<String>,
}

/// Lists and watches one resource into a [`ReflectorStore`]. See the [module docs](self).
pub struct Reflector<K> {
    resource: String,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    store: Arc<dyn ReflectorStore<K>>,
    config: Config,
    should_resync: Option<ShouldResync>,
    watch_error_handler: Option<WatchErrorHandler>,
    panics: Arc<PanicReporter>,
    state: Mutex<State>,
    counters: Counters,
}

impl<K> fmt::Debug for Reflector<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("resource", &self.resource)
            .field("config", &self.config)
            .finish()
    }
}

enum WatchEnd {
    Stopped,
    Failed(Error),
}

enum StreamEnd {
    Synced(String),
    /// The server closed the stream.
    Closed,
    /// The connection ended (reset, cut, timed out): never a very short watch.
    ConnectionEnded,
    Failed(source::Error),
}

/// What reading the initial events of a streaming list came to.
struct InitialEvents<'a, K> {
    end: StreamEnd,
    /// Where the events went, as they came.
    relist: Box<dyn Relist<K> + 'a>,
    events: usize,
    started: Instant,
}

impl<K: Resource + Clone + Send + Sync + 'static> Reflector<K> {
    /// A reflector of `resource` (a description used in logs and errors, such as `pods`).
    pub fn new(
        resource: impl Into<String>,
        lister_watcher: Arc<dyn ListerWatcher<K>>,
        store: Arc<dyn ReflectorStore<K>>,
        config: Config,
    ) -> Self {
        let state = State {
            backoff: Backoff::new(config.backoff.clone()),
            last_resource_version_unavailable: false,
            last_error: None,
            paginated_result: false,
            last_sync_resource_version: String::new(),
        };
        let resource = resource.into();
        Self {
            panics: Arc::new(PanicReporter::new(resource.clone())),
            resource,
            lister_watcher,
            store,
            config,
            should_resync: None,
            watch_error_handler: None,
            state: Mutex::new(state),
            counters: Counters::default(),
        }
    }

    /// Asks `should_resync` before each resync.
    #[must_use]
    pub fn should_resync(mut self, should_resync: ShouldResync) -> Self {
        self.should_resync = Some(should_resync);
        self
    }

    /// Reports every recovered error to `handler` instead of logging it.
    #[must_use]
    pub fn watch_error_handler(mut self, handler: WatchErrorHandler) -> Self {
        self.watch_error_handler = Some(handler);
        self
    }

    /// Reports panics of the lister-watcher and the watch-error handler to `panics` (the
    /// informer's reporter) instead of a reporter of its own.
    #[must_use]
    pub(crate) fn panic_reporter(mut self, panics: Arc<PanicReporter>) -> Self {
        self.panics = panics;
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The resource version of the last list or watch event ("" before the first list).
    pub fn last_sync_resource_version(&self) -> String {
        self.lock().last_sync_resource_version.clone()
    }

    /// Counts of lists and watches so far.
    pub fn stats(&self) -> ReflectorStats {
        let lists = self.counters.lists.get();
        ReflectorStats {
            lists,
            relists: lists.saturating_sub(1),
            list_errors: self.counters.list_errors.get(),
            watches: self.counters.watches.get(),
            watch_errors: self.counters.watch_errors.get(),
            last_resource_version: self.last_sync_resource_version(),
        }
    }

    /// The last list or watch error (with the API server's answer), until a list succeeds:
    /// why a reflector that keeps retrying has not synced (a resource that is not served, a
    /// request that is forbidden).
    pub fn last_error(&self) -> Option<String> {
        self.lock().last_error.clone()
    }

    fn set_last_sync_resource_version(&self, resource_version: &str) {
        resource_version.clone_into(&mut self.lock().last_sync_resource_version);
    }

    /// Lists and watches until `cancel` fires, backing off between rounds.
    pub async fn run(&self, cancel: CancellationToken) {
        let span = tracing::info_span!("reflector", resource = %self.resource);
        async {
            tracing::debug!("starting reflector");
            while !cancel.is_cancelled() {
                // A lister-watcher is user code: its panic ends the round, not the reflector.
                match AssertUnwindSafe(self.list_and_watch(&cancel))
                    .catch_unwind()
                    .await
                {
                    Ok(Ok(())) => {}
                    Ok(Err(err)) => self.report(&err),
                    Err(payload) => {
                        let message = panic_message(payload.as_ref());
                        self.panics
                            .report(self.panics.panic(UserFunction::ListerWatcher, None, message));
                    }
                }
                if !self.backoff(&cancel).await {
                    break;
                }
            }
            tracing::debug!("stopped reflector");
        }
        .instrument(span)
        .await;
    }

    fn report(&self, err: &Error) {
        if !matches!(err, Error::Resync { .. } | Error::Panicked(_)) {
            self.lock().last_error = Some(err.to_string());
        }
        match err {
            Error::List { .. } => self.counters.list_errors.bump(),
            Error::Resync { .. } | Error::Panicked(_) => {}
            _ => self.counters.watch_errors.bump(),
        };
        match &self.watch_error_handler {
            Some(handler) => self.panics.call(UserFunction::WatchErrorHandler, None, || {
                handler(&self.resource, err)
            }),
            None if err.is_expired() => tracing::debug!(resource = %self.resource, error = %err, "relisting"),
            None => tracing::warn!(resource = %self.resource, error = %err, "list and watch failed"),
        }
    }

    /// Waits one backoff delay; `false` if cancelled meanwhile.
    async fn backoff(&self, cancel: &CancellationToken) -> bool {
        let delay = self.lock().backoff.next_delay();
        tokio::select! {
            () = cancel.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }

    /// One round: list (or stream the initial list), then watch until the watch fails or
    /// `cancel` fires. Returns `Ok` when stopped, and when a watch failure calls for a relist.
    pub async fn list_and_watch(&self, cancel: &CancellationToken) -> Result<(), Error> {
        let mut stream = None;
        if self.config.initial_list_strategy == InitialListStrategy::StreamingList {
            match self.watch_list(cancel).await {
                Ok(None) => return Ok(()),
                Ok(Some(open)) => stream = Some(open),
                Err(err) => {
                    tracing::debug!(resource = %self.resource, error = %err, "streaming list failed, falling back to list");
                }
            }
        }
        if stream.is_none() && !self.list(cancel).await? {
            return Ok(());
        }
        let resync = self.resync_loop();
        tokio::pin!(resync);
        tokio::select! {
            result = self.watch(stream, cancel) => result,
            err = &mut resync => {
                self.report(&err);
                Ok(())
            }
        }
    }

    fn relist_resource_version(&self) -> String {
        let state = self.lock();
        if state.last_resource_version_unavailable {
            String::new()
        } else if state.last_sync_resource_version.is_empty() {
            "0".to_owned()
        } else {
            state.last_sync_resource_version.clone()
        }
    }

    fn page_size(&self, resource_version: &str) -> Option<u32> {
        if let Some(size) = self.config.page_size {
            return Some(size);
        }
        let paginated_result = self.lock().paginated_result;
        if !paginated_result && !resource_version.is_empty() && resource_version != "0" {
            // The watch cache can serve a list at a given version: do not page it.
            return None;
        }
        Some(DEFAULT_PAGE_SIZE)
    }

    /// Lists into the store page by page (see [`Relist`]); `Ok(false)` if cancelled
    /// first (pages that arrived stay applied, the end of the list is not).
    async fn list(&self, cancel: &CancellationToken) -> Result<bool, Error> {
        let mut resource_version = self.relist_resource_version();
        loop {
            let options = ListOptions {
                resource_version: Some(resource_version.clone()).filter(|rv| !rv.is_empty()),
                ..ListOptions::default()
            };
            let page_size = self.page_size(&resource_version);
            let mut relist = self.store.begin_relist();
            let mut on_page = |page: Page<K>| match page {
                Page::Items(items) => {
                    let prepared = items.into_iter().map(|obj| self.store.prepare(obj)).collect();
                    relist.page(prepared);
                }
                Page::StartOver => relist.start_over(),
            };
            let result = tokio::select! {
                biased;
                () = cancel.cancelled() => return Ok(false),
                result = list_pages(self.lister_watcher.as_ref(), &options, page_size, true, &mut on_page) => result,
            };
            match result {
                Ok(end) => {
                    let list_resource_version = end.metadata.resource_version.clone().unwrap_or_default();
                    {
                        let mut state = self.lock();
                        if resource_version == "0" && end.paginated {
                            state.paginated_result = true;
                        }
                        state.last_resource_version_unavailable = false;
                    }
                    self.counters.lists.bump();
                    self.lock().last_error = None;
                    tracing::debug!(resource = %self.resource, items = end.items, resource_version = %list_resource_version, "listed");
                    relist.finish(&list_resource_version);
                    self.set_last_sync_resource_version(&list_resource_version);
                    return Ok(true);
                }
                Err(err)
                    if (err.is_expired() || err.is_too_large_resource_version())
                        && !resource_version.is_empty() =>
                {
                    self.counters.list_errors.bump();
                    tracing::debug!(resource = %self.resource, error = %err, "listing again at the most recent version");
                    self.lock().last_resource_version_unavailable = true;
                    resource_version.clear();
                }
                Err(source) => {
                    return Err(Error::List {
                        resource: self.resource.clone(),
                        source,
                    });
                }
            }
        }
    }

    fn watch_timeout_seconds(&self) -> u32 {
        let min = self
            .config
            .min_watch_timeout
            .max(DEFAULT_MIN_WATCH_TIMEOUT)
            .as_secs()
            .min(u64::from(u32::MAX));
        u32::try_from(fastrand::u64(min..2 * min)).unwrap_or(u32::MAX)
    }

    async fn resync_loop(&self) -> Error {
        if self.config.resync_period.is_zero() {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(self.config.resync_period).await;
            if self.should_resync.as_ref().is_none_or(|should| should()) {
                tracing::trace!(resource = %self.resource, "resync");
                if let Err(source) = self.store.resync() {
                    return Error::Resync {
                        resource: self.resource.clone(),
                        source,
                    };
                }
            }
        }
    }

    fn watch_error(&self, source: source::Error) -> Error {
        Error::Watch {
            resource: self.resource.clone(),
            source,
        }
    }

    /// Watches from the last resource version, re-opening cleanly closed watches.
    async fn watch(
        &self,
        mut pending: Option<WatchStream<K>>,
        cancel: &CancellationToken,
    ) -> Result<(), Error> {
        let mut retry = RetryWindow::new(
            self.config.max_internal_error_retry_duration,
            Duration::from_secs(60),
        );
        let mut very_short_watches = 0;
        loop {
            if cancel.is_cancelled() {
                return Ok(());
            }
            let stream = match pending.take() {
                Some(stream) => stream,
                None => {
                    let options = ListOptions {
                        resource_version: Some(self.last_sync_resource_version()),
                        allow_watch_bookmarks: true,
                        timeout_seconds: Some(self.watch_timeout_seconds()),
                        ..ListOptions::default()
                    };
                    let result = tokio::select! {
                        biased;
                        () = cancel.cancelled() => return Ok(()),
                        result = self.lister_watcher.watch(&options) => result,
                    };
                    match result {
                        Ok(stream) => {
                            self.counters.watches.bump();
                            tracing::debug!(resource_version = ?options.resource_version, timeout = ?options.timeout_seconds, "watching");
                            stream
                        }
                        Err(err)
                            if err.is_connection_refused()
                                || err.is_too_many_requests()
                                || err.is_probable_eof() =>
                        {
                            self.report(&self.watch_error(err));
                            if !self.backoff(cancel).await {
                                return Ok(());
                            }
                            continue;
                        }
                        Err(err) => return Err(self.watch_error(err)),
                    }
                }
            };
            let err = match self.handle_watch(stream, cancel).await {
                Ok(()) => {
                    very_short_watches = 0;
                    continue;
                }
                Err(WatchEnd::Stopped) => return Ok(()),
                Err(WatchEnd::Failed(err)) => err,
            };
            let internal = err.api_error().is_some_and(source::Error::is_internal_error);
            if internal {
                retry.record();
            }
            self.report(&err);
            if matches!(err, Error::VeryShortWatch { .. }) {
                very_short_watches += 1;
                if very_short_watches >= MAX_CONSECUTIVE_VERY_SHORT_WATCHES {
                    tracing::info!(resource = %self.resource, watches = very_short_watches, "relisting: watches keep closing at once without an event");
                    return Ok(());
                }
            }
            // The last resource version is still good after a 429 or a watch that closed at
            // once (client-go relists after the latter; a few in a row relist above): back off
            // and watch again.
            let rewatch = matches!(err, Error::VeryShortWatch { .. })
                || err.api_error().is_some_and(source::Error::is_too_many_requests);
            if rewatch {
                if !self.backoff(cancel).await {
                    return Ok(());
                }
                continue;
            }
            if internal && retry.should_retry() {
                continue;
            }
            return Ok(());
        }
    }

    /// Applies one watch's events to the store until it ends.
    async fn handle_watch(
        &self,
        mut stream: WatchStream<K>,
        cancel: &CancellationToken,
    ) -> Result<(), WatchEnd> {
        let started = Instant::now();
        let mut events = 0usize;
        loop {
            let item = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(WatchEnd::Stopped),
                item = stream.next() => item,
            };
            let event = match item {
                None if events == 0 && started.elapsed() < VERY_SHORT_WATCH => {
                    return Err(WatchEnd::Failed(Error::VeryShortWatch {
                        resource: self.resource.clone(),
                    }));
                }
                None => return Ok(()),
                // A lister-watcher may report its connection's end as an error: a close too.
                Some(Err(err)) if err.is_probable_eof() => {
                    tracing::debug!(error = %err, "the watch connection ended");
                    return Ok(());
                }
                Some(Err(err)) => return Err(WatchEnd::Failed(self.watch_error(err))),
                Some(Ok(event)) => event,
            };
            // the object's version is read where the queue shares it, not copied out of it
            let (object, bookmark) = match event {
                WatchEvent::Added(obj) => {
                    let obj = self.store.prepare(obj);
                    self.store.add(Arc::clone(&obj));
                    (Some(obj), None)
                }
                WatchEvent::Modified(obj) => {
                    let obj = self.store.prepare(obj);
                    self.store.update(Arc::clone(&obj));
                    (Some(obj), None)
                }
                WatchEvent::Deleted(obj) => {
                    let obj = self.store.prepare(obj);
                    self.store.delete(Arc::clone(&obj));
                    (Some(obj), None)
                }
                WatchEvent::Bookmark(bookmark) => (None, Some(bookmark.metadata.resource_version)),
                WatchEvent::Error(status) => {
                    return Err(WatchEnd::Failed(self.watch_error(source::Error::Api(status))));
                }
            };
            events += 1;
            let resource_version = match (&object, &bookmark) {
                (Some(object), _) => object.meta().resource_version.as_deref().unwrap_or_default(),
                (None, Some(version)) => version.as_str(),
                (None, None) => "",
            };
            self.set_last_sync_resource_version(resource_version);
            self.store.update_resource_version(resource_version);
        }
    }

    /// Streams the initial list through a watch; returns the still open watch once the
    /// initial-events bookmark arrived, `None` if cancelled.
    async fn watch_list(&self, cancel: &CancellationToken) -> Result<Option<WatchStream<K>>, Error> {
        let mut closed_early = 0;
        loop {
            if cancel.is_cancelled() {
                return Ok(None);
            }
            let result = tokio::select! {
                biased;
                () = cancel.cancelled() => return Ok(None),
                result = self.lister_watcher.watch(&self.watch_list_options()) => result,
            };
            let mut stream = match result {
                Ok(stream) => {
                    self.counters.watches.bump();
                    stream
                }
                Err(err) => {
                    if !self.retry_watch_list(err, cancel).await? {
                        return Ok(None);
                    }
                    continue;
                }
            };
            let Some(initial) = self.read_initial_events(&mut stream, cancel).await else {
                return Ok(None);
            };
            match initial.end {
                StreamEnd::Synced(resource_version) => {
                    self.finish_initial_events(initial.relist, initial.events, &resource_version);
                    return Ok(Some(stream));
                }
                StreamEnd::Closed if initial.events == 0 && initial.started.elapsed() < VERY_SHORT_WATCH => {
                    return Err(Error::VeryShortWatch {
                        resource: self.resource.clone(),
                    });
                }
                StreamEnd::Closed | StreamEnd::ConnectionEnded => {
                    closed_early += 1;
                    if closed_early >= MAX_STREAMS_WITHOUT_INITIAL_EVENTS_END {
                        return Err(Error::InitialEventsEndMissing {
                            resource: self.resource.clone(),
                            attempts: closed_early,
                        });
                    }
                }
                StreamEnd::Failed(err) => {
                    if !self.retry_watch_list(err, cancel).await? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// The options of a streaming list: initial events from the last synced version (or the
    /// newest when it is unavailable), then the watch.
    fn watch_list_options(&self) -> ListOptions {
        let resource_version = {
            let state = self.lock();
            if state.last_resource_version_unavailable {
                String::new()
            } else {
                state.last_sync_resource_version.clone()
            }
        };
        ListOptions {
            resource_version: Some(resource_version).filter(|rv| !rv.is_empty()),
            resource_version_match: Some(VersionMatch::NotOlderThan),
            allow_watch_bookmarks: true,
            send_initial_events: true,
            timeout_seconds: Some(self.watch_timeout_seconds()),
            ..ListOptions::default()
        }
    }

    /// Reads a streaming list's initial events until the bookmark that ends them, the end of
    /// the stream or an error, warning now and then while it waits; `None` if cancelled. The
    /// events go to the store as they arrive, as the pages of a list do (see [`Relist`]).
    async fn read_initial_events(
        &self,
        stream: &mut WatchStream<K>,
        cancel: &CancellationToken,
    ) -> Option<InitialEvents<'_, K>> {
        let started = Instant::now();
        let mut relist = self.store.begin_relist();
        let (mut events, mut last_event) = (0, None);
        let mut warning = tokio::time::interval_at(
            started + INITIAL_EVENTS_END_WARNING_INTERVAL,
            INITIAL_EVENTS_END_WARNING_INTERVAL,
        );
        let end = loop {
            let item = tokio::select! {
                biased;
                () = cancel.cancelled() => return None,
                item = stream.next() => item,
                _ = warning.tick() => {
                    self.warn_awaiting_initial_events_end(started, last_event);
                    continue;
                }
            };
            match item {
                None => break StreamEnd::Closed,
                Some(Err(err)) if err.is_probable_eof() => {
                    tracing::debug!(resource = %self.resource, error = %err, "the streaming list's connection ended");
                    break StreamEnd::ConnectionEnded;
                }
                Some(Err(err)) => break StreamEnd::Failed(err),
                Some(Ok(event)) => {
                    events += 1;
                    last_event = Some(Instant::now());
                    if let Some(end) = self.initial_event(event, relist.as_mut()) {
                        break end;
                    }
                }
            }
        };
        Some(InitialEvents {
            end,
            relist,
            events,
            started,
        })
    }

    /// Hands one initial event to `relist`; the end of the initial events if it is one.
    fn initial_event(&self, event: WatchEvent<K>, relist: &mut dyn Relist<K>) -> Option<StreamEnd> {
        match event {
            WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                relist.page(vec![self.store.prepare(obj)]);
                None
            }
            WatchEvent::Deleted(obj) => {
                relist.delete(self.store.prepare(obj));
                None
            }
            WatchEvent::Bookmark(bookmark) => {
                let ends = bookmark
                    .metadata
                    .annotations
                    .get(INITIAL_EVENTS_END_ANNOTATION)
                    .is_some_and(|v| v == "true");
                ends.then_some(StreamEnd::Synced(bookmark.metadata.resource_version))
            }
            WatchEvent::Error(status) => Some(StreamEnd::Failed(source::Error::Api(status))),
        }
    }

    fn warn_awaiting_initial_events_end(&self, started: Instant, last_event: Option<Instant>) {
        match last_event {
            None => {
                tracing::warn!(resource = %self.resource, waited = ?started.elapsed(), "awaiting the bookmark that ends the initial events, no events received yet")
            }
            Some(at) => {
                tracing::warn!(resource = %self.resource, last_event_ago = ?at.elapsed(), "awaiting the bookmark that ends the initial events")
            }
        }
    }

    /// Ends a streamed initial list of `events` events, synced at `resource_version`.
    fn finish_initial_events(&self, relist: Box<dyn Relist<K> + '_>, events: usize, resource_version: &str) {
        self.counters.lists.bump();
        self.lock().last_resource_version_unavailable = false;
        tracing::debug!(resource = %self.resource, events, resource_version = %resource_version, "streamed the initial list");
        relist.finish(resource_version);
        self.set_last_sync_resource_version(resource_version);
    }

    /// Decides how a failed streaming list goes on: `Ok(true)` to retry, `Ok(false)` when
    /// cancelled during the backoff, `Err` to fall back to a plain list.
    async fn retry_watch_list(&self, err: source::Error, cancel: &CancellationToken) -> Result<bool, Error> {
        if err.is_connection_refused() || err.is_too_many_requests() {
            self.report(&self.watch_error(err));
            return Ok(self.backoff(cancel).await);
        }
        if err.is_expired() || err.is_too_large_resource_version() {
            self.lock().last_resource_version_unavailable = true;
            return Ok(true);
        }
        Err(self.watch_error(err))
    }
}

#[cfg(test)]
mod tests;
