//! A lister-watcher that keeps a trace of its requests, for failure reports.
//!
//! [`TracedListerWatcher`] passes every call through to the real [`KubeListerWatcher`] and
//! records when each list and watch was sent, how it was answered and how each watch stream
//! ended. When a run does not converge, the trace tells what the reflector did last, and
//! whether a request is still waiting for its answer.

use std::{
    collections::{BTreeMap, VecDeque},
    fmt::Debug,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::Instant,
};

use futures::{FutureExt, StreamExt, future::BoxFuture};
use informer_runtime::{
    source::KubeListerWatcher,
    source::{Error, ListOptions, ListerWatcher, WatchStream},
};
use kube::{
    Resource,
    core::{ObjectList, WatchEvent},
};
use serde::de::DeserializeOwned;

/// How many finished requests and stream ends a trace keeps.
const KEPT_ENTRIES: usize = 12;

/// The requests of one lister-watcher: the last ones finished, and those still waiting.
pub struct RequestTrace {
    started: Instant,
    next_id: AtomicU64,
    finished: Mutex<VecDeque<String>>,
    outstanding: Mutex<BTreeMap<u64, (String, Instant)>>,
}

impl Default for RequestTrace {
    fn default() -> Self {
        Self {
            started: Instant::now(),
            next_id: AtomicU64::new(0),
            finished: Mutex::new(VecDeque::new()),
            outstanding: Mutex::new(BTreeMap::new()),
        }
    }
}

impl RequestTrace {
    fn lock_finished(&self) -> MutexGuard<'_, VecDeque<String>> {
        self.finished.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_outstanding(&self) -> MutexGuard<'_, BTreeMap<u64, (String, Instant)>> {
        self.outstanding.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, entry: String) {
        let mut finished = self.lock_finished();
        finished.push_back(format!("{:.3} s {entry}", self.started.elapsed().as_secs_f64()));
        while finished.len() > KEPT_ENTRIES {
            finished.pop_front();
        }
    }

    fn begin(&self, request: String) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        self.lock_outstanding().insert(id, (request, Instant::now()));
        id
    }

    fn end(&self, id: u64, outcome: &str) {
        if let Some((request, sent)) = self.lock_outstanding().remove(&id) {
            self.record(format!(
                "{request}: {outcome} after {:.3} s",
                sent.elapsed().as_secs_f64()
            ));
        }
    }

    /// The requests still waiting for an answer, then the last entries, oldest first.
    pub fn summary(&self) -> String {
        let outstanding: Vec<String> = self
            .lock_outstanding()
            .values()
            .map(|(request, sent)| format!("{request} sent {:.3} s ago", sent.elapsed().as_secs_f64()))
            .collect();
        let finished: Vec<String> = self.lock_finished().iter().cloned().collect();
        format!(
            "waiting for an answer: [{}], last: [{}]",
            outstanding.join(", "),
            finished.join(", ")
        )
    }
}

/// A [`KubeListerWatcher`] whose requests are traced.
pub struct TracedListerWatcher<K> {
    inner: KubeListerWatcher<K>,
    trace: Arc<RequestTrace>,
}

impl<K> TracedListerWatcher<K> {
    /// Traces the requests of `inner` into `trace`.
    pub fn new(inner: KubeListerWatcher<K>, trace: Arc<RequestTrace>) -> Self {
        Self { inner, trace }
    }
}

fn describe_request(verb: &str, options: &ListOptions) -> String {
    let version = options.resource_version.as_deref().unwrap_or("none");
    let initial = if options.send_initial_events {
        " with initial events"
    } else {
        ""
    };
    format!("{verb} at rv {version}{initial}")
}

impl<K> ListerWatcher<K> for TracedListerWatcher<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Send + Sync,
{
    fn list(&self, options: &ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, Error>> {
        let id = self.trace.begin(describe_request("list", options));
        let listed = self.inner.list(options);
        async move {
            let result = listed.await;
            let outcome = match &result {
                Ok(list) => format!(
                    "{} objects at rv {}",
                    list.items.len(),
                    list.metadata.resource_version.as_deref().unwrap_or("none")
                ),
                Err(err) => format!("failed: {err}"),
            };
            self.trace.end(id, &outcome);
            result
        }
        .boxed()
    }

    fn watch(&self, options: &ListOptions) -> BoxFuture<'_, Result<WatchStream<K>, Error>> {
        let request = describe_request("watch", options);
        let id = self.trace.begin(request.clone());
        let opened = self.inner.watch(options);
        async move {
            let result = opened.await;
            match &result {
                Ok(_) => self.trace.end(id, "open"),
                Err(err) => self.trace.end(id, &format!("failed: {err}")),
            }
            let trace = Arc::clone(&self.trace);
            result.map(|stream| traced_stream(stream, trace, request))
        }
        .boxed()
    }
}

/// Passes `stream` on, recording how many events it carried, its last version and how it
/// ended.
fn traced_stream<K: Resource + Send + 'static>(
    stream: WatchStream<K>,
    trace: Arc<RequestTrace>,
    request: String,
) -> WatchStream<K> {
    let state = (stream, trace, request, 0u64, String::from("none"));
    futures::stream::unfold(state, |(mut stream, trace, request, events, last)| async move {
        match stream.next().await {
            Some(item) => {
                let last = match &item {
                    Ok(WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o)) => {
                        o.meta().resource_version.clone().unwrap_or(last)
                    }
                    Ok(WatchEvent::Bookmark(bookmark)) => bookmark.metadata.resource_version.clone(),
                    Ok(WatchEvent::Error(status)) => {
                        trace.record(format!(
                            "{request}: error event {} {}",
                            status.code, status.reason
                        ));
                        last
                    }
                    Err(err) => {
                        trace.record(format!("{request}: failed after {events} events: {err}"));
                        last
                    }
                };
                Some((item, (stream, trace, request, events + 1, last)))
            }
            None => {
                trace.record(format!(
                    "{request}: ended after {events} events, last at rv {last}"
                ));
                None
            }
        }
    })
    .boxed()
}
