//! Watches: the initial events (synthetic ADDED, replay from a resourceVersion, or the `Expired`
//! error), live events filtered per watcher, bookmarks and timeouts, as a stream of JSON lines.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::time::{Instant, Interval, MissedTickBehavior, Sleep};

use crate::registry::ResourceType;
use crate::selector::ObjectFilter;
use crate::status::ApiError;
use crate::storage::options::{ListOptions, ResourceVersion};
use crate::storage::state::{State, with_type};
use crate::storage::store::{Event, EventType, WatchMessage, metadata_mut};

/// The line sent by the malformed-line fault.
pub(crate) const MALFORMED_LINE: &str = "this is not JSON {\n";

/// Reads the current revision of the store.
pub(crate) type CurrentRevision = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Reads how long live events are held back now, if they are (the watch-lag fault).
pub(crate) type WatchLag = Arc<dyn Fn() -> Option<Duration> + Send + Sync>;

/// One open watch: pending lines, then live events until closed, timed out or dropped.
pub(crate) struct WatchStream {
    pending: VecDeque<Bytes>,
    /// Live lines held back by the watch-lag fault, with when each is due; sent after
    /// `pending`, in order.
    lagging: VecDeque<(Instant, Bytes)>,
    lag: Option<WatchLag>,
    rx: Option<UnboundedReceiver<WatchMessage>>,
    filter: ObjectFilter,
    rt: ResourceType,
    last_rv: u64,
    bookmarks: Option<Interval>,
    deadline: Option<Pin<Box<Sleep>>>,
    current: CurrentRevision,
}

fn line(kind: &str, object: &Value) -> Bytes {
    Bytes::from(crate::key_order::event_line(kind, object))
}

/// An event line with its object replaced by `reshape(type, object)`; `ERROR` events (a
/// `Status`) and lines that are not events pass unchanged.
pub(crate) fn reshape_event(line: Bytes, reshape: impl FnOnce(&str, Value) -> Value) -> Bytes {
    let Ok(mut event) = serde_json::from_slice::<Value>(&line) else {
        return line;
    };
    let kind = event["type"].as_str().unwrap_or_default().to_owned();
    if kind == "ERROR" || event.get("object").is_none() {
        return line;
    }
    let object = event["object"].take();
    self::line(&kind, &reshape(&kind, object))
}

fn bookmark(rt: &ResourceType, rv: u64, initial_events_end: bool) -> Bytes {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    line(
        "BOOKMARK",
        &json!({"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": metadata}),
    )
}

/// What one watcher sees of a write, after its filter: an object leaving the selector becomes
/// DELETED (the previous object at the new revision), one entering becomes ADDED.
fn transform(event: &Event, filter: &ObjectFilter) -> Option<(EventType, Value)> {
    let now = filter.matches(&event.object);
    let before = event.prev.as_ref().is_some_and(|p| filter.matches(p));
    match event.kind {
        EventType::Added => now.then(|| (EventType::Added, event.object.clone())),
        EventType::Deleted => now.then(|| (EventType::Deleted, event.object.clone())),
        EventType::Modified => match (before, now) {
            (true, true) => Some((EventType::Modified, event.object.clone())),
            (false, true) => Some((EventType::Added, event.object.clone())),
            (true, false) => {
                let mut old = event.prev.clone().unwrap_or_default();
                metadata_mut(&mut old).insert("resourceVersion".into(), json!(event.rv.to_string()));
                Some((EventType::Deleted, old))
            }
            (false, false) => None,
        },
    }
}

impl WatchStream {
    /// Opens a watch on `rt` as `options` ask, registering it with the store.
    pub(crate) fn start(
        state: &mut State,
        rt: &ResourceType,
        options: &ListOptions,
        bookmark_interval: Duration,
        current: CurrentRevision,
    ) -> Result<Self, ApiError> {
        let store_rv = state.store.resource_version();
        let implicit_initial = matches!(
            options.resource_version,
            ResourceVersion::Latest | ResourceVersion::Any
        );
        let send_initial = options.send_initial_events.unwrap_or(implicit_initial);
        let mut stream = Self {
            pending: VecDeque::new(),
            lagging: VecDeque::new(),
            lag: None,
            rx: None,
            filter: options.filter.clone(),
            rt: rt.clone(),
            last_rv: store_rv,
            bookmarks: None,
            deadline: options.timeout.map(|t| Box::pin(tokio::time::sleep(t))),
            current,
        };
        if send_initial {
            for object in state.store.snapshot(rt, None)?.into_values() {
                if stream.filter.matches(&object) {
                    stream.pending.push_back(line("ADDED", &with_type(object, rt)));
                }
            }
            if options.send_initial_events == Some(true) {
                stream.pending.push_back(bookmark(rt, store_rv, true));
            }
            let (_, rx) = state.store.watch(rt, None)?;
            stream.rx = Some(rx);
        } else {
            let since = match options.resource_version {
                ResourceVersion::At(rv) => rv,
                _ => store_rv,
            };
            match state.store.watch(rt, Some(since)) {
                Ok((replay, rx)) => {
                    for event in replay {
                        stream.push_event(&event);
                    }
                    stream.last_rv = since.max(store_rv);
                    stream.rx = Some(rx);
                }
                Err(e) if e.code == 410 => stream.pending.push_back(line("ERROR", &e.to_status())),
                Err(e) => return Err(e),
            }
        }
        if options.allow_bookmarks && stream.rx.is_some() {
            let mut interval =
                tokio::time::interval_at(Instant::now() + bookmark_interval, bookmark_interval);
            interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
            stream.bookmarks = Some(interval);
        }
        Ok(stream)
    }

    /// Holds each live line back by what `lag` says when it is queued (see
    /// [`TestServer::set_watch_lag`](crate::TestServer::set_watch_lag)).
    pub(crate) fn with_lag(mut self, lag: WatchLag) -> Self {
        self.lag = Some(lag);
        self
    }

    fn push_event(&mut self, event: &Event) {
        if let Some(line) = self.event_line(event) {
            self.pending.push_back(line);
        }
    }

    fn event_line(&mut self, event: &Event) -> Option<Bytes> {
        self.last_rv = self.last_rv.max(event.rv);
        transform(event, &self.filter).map(|(kind, object)| line(kind.as_str(), &with_type(object, &self.rt)))
    }

    fn push_message(&mut self, message: WatchMessage) {
        let line = match message {
            WatchMessage::Event(event) => self.event_line(&event),
            WatchMessage::Malformed => Some(Bytes::from_static(MALFORMED_LINE.as_bytes())),
        };
        if let Some(line) = line {
            self.push_live(line);
        }
    }

    /// Queues a live line: to be sent at once, or once its lag has passed (and after every
    /// line held back before it).
    fn push_live(&mut self, line: Bytes) {
        let lag = self.lag.as_ref().and_then(|lag| lag());
        if lag.is_none() && self.lagging.is_empty() {
            self.pending.push_back(line);
            return;
        }
        let due = Instant::now() + lag.unwrap_or_default();
        let due = self.lagging.back().map_or(due, |(last, _)| due.max(*last));
        self.lagging.push_back((due, line));
    }

    /// The next line to send, or `None` when the watch is over.
    pub(crate) async fn next_line(&mut self) -> Option<Bytes> {
        loop {
            if let Some(line) = self.pending.pop_front() {
                return Some(line);
            }
            let due = self.lagging.front().map(|(due, _)| *due);
            if due.is_some_and(|due| due <= Instant::now()) {
                return self.lagging.pop_front().map(|(_, line)| line);
            }
            let rx = self.rx.as_mut()?;
            let bookmarks = &mut self.bookmarks;
            let deadline = &mut self.deadline;
            tokio::select! {
                () = async {
                    match due {
                        Some(due) => tokio::time::sleep_until(due).await,
                        None => std::future::pending().await,
                    }
                } => {}
                message = rx.recv() => match message {
                    Some(message) => self.push_message(message),
                    None => self.rx = None,
                },
                _ = async {
                    match bookmarks {
                        Some(interval) => interval.tick().await,
                        None => std::future::pending().await,
                    }
                } => self.push_bookmark(),
                _ = async {
                    match deadline {
                        Some(sleep) => sleep.await,
                        None => std::future::pending().await,
                    }
                } => {
                    self.rx = None;
                    self.pending.clear();
                    self.lagging.clear();
                    return None;
                }
            }
        }
    }

    /// A bookmark at a revision every event up to which has been sent.
    fn push_bookmark(&mut self) {
        // Events are queued under the store lock before the revision moves on, so after reading
        // the revision and draining the queue, every event up to it is queued before the
        // bookmark (in `pending`, or held back in `lagging`).
        let rv = (self.current)();
        loop {
            let Some(rx) = self.rx.as_mut() else { return };
            match rx.try_recv() {
                Ok(message) => self.push_message(message),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.rx = None;
                    return;
                }
            }
        }
        self.last_rv = self.last_rv.max(rv);
        let bookmark = bookmark(&self.rt, self.last_rv, false);
        self.push_live(bookmark);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::registry::{Registry, builtin_types};
    use crate::selector::parse_label_selector;

    fn pods() -> ResourceType {
        ResourceType::new("", "v1", "Pod", "pods", true)
    }

    fn opts(pairs: &[(&str, &str)]) -> ListOptions {
        let q: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ListOptions::parse(&q, None).expect("valid options")
    }

    fn parse(line: &Bytes) -> Value {
        serde_json::from_slice(line).expect("json line")
    }

    fn fixed(rv: u64) -> CurrentRevision {
        Arc::new(move || rv)
    }

    #[test]
    fn selector_transitions() {
        let filter = ObjectFilter {
            labels: parse_label_selector("app=web").expect("valid"),
            ..ObjectFilter::default()
        };
        let with = json!({"metadata": {"name": "p", "labels": {"app": "web"}}});
        let without = json!({"metadata": {"name": "p"}});
        let event = |prev: &Value, object: &Value| Event {
            rv: 9,
            key: pods().storage_key(),
            kind: EventType::Modified,
            object: object.clone(),
            prev: Some(prev.clone()),
        };
        let (kind, object) = transform(&event(&with, &without), &filter).expect("deleted");
        assert_eq!(kind, EventType::Deleted);
        assert_eq!(object["metadata"]["labels"]["app"], "web");
        assert_eq!(object["metadata"]["resourceVersion"], "9");
        assert_eq!(
            transform(&event(&without, &with), &filter).map(|e| e.0),
            Some(EventType::Added)
        );
        assert_eq!(
            transform(&event(&with, &with), &filter).map(|e| e.0),
            Some(EventType::Modified)
        );
        assert!(transform(&event(&without, &without), &filter).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn initial_events_replay_and_bookmarks() {
        let mut state = State::new(Registry::with_types(builtin_types()), 100);
        crate::admission::namespace_lifecycle::create_test_namespace(&mut state, "ns");
        state
            .write()
            .create(&pods(), Some("ns"), json!({"metadata": {"name": "a"}}))
            .expect("created");
        state
            .write()
            .create(&pods(), Some("ns"), json!({"metadata": {"name": "b"}}))
            .expect("created");

        let mut w = WatchStream::start(
            &mut state,
            &pods(),
            &opts(&[("watch", "1")]),
            Duration::from_secs(1),
            fixed(2),
        )
        .expect("watch");
        assert_eq!(parse(&w.next_line().await.expect("a"))["type"], "ADDED");
        assert_eq!(
            parse(&w.next_line().await.expect("b"))["object"]["metadata"]["name"],
            "b"
        );

        let o = opts(&[
            ("watch", "1"),
            ("resourceVersion", "3"),
            ("allowWatchBookmarks", "true"),
        ]);
        let mut replay =
            WatchStream::start(&mut state, &pods(), &o, Duration::from_secs(1), fixed(2)).expect("watch");
        let first = parse(&replay.next_line().await.expect("replayed"));
        assert_eq!(first["object"]["metadata"]["resourceVersion"], "4");
        let bm = parse(&replay.next_line().await.expect("bookmark"));
        assert_eq!(bm["type"], "BOOKMARK");
        assert_eq!(
            bm["object"],
            json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "4"}})
        );

        let o = opts(&[
            ("watch", "1"),
            ("sendInitialEvents", "true"),
            ("resourceVersionMatch", "NotOlderThan"),
            ("allowWatchBookmarks", "true"),
        ]);
        let mut list_watch =
            WatchStream::start(&mut state, &pods(), &o, Duration::from_secs(60), fixed(2)).expect("watch");
        list_watch.next_line().await.expect("a");
        list_watch.next_line().await.expect("b");
        let end = parse(&list_watch.next_line().await.expect("end bookmark"));
        assert_eq!(
            end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
            "true"
        );
        assert_eq!(end["object"]["metadata"]["resourceVersion"], "4");
        state
            .write()
            .create(&pods(), Some("ns"), json!({"metadata": {"name": "c"}}))
            .expect("created");
        assert_eq!(
            parse(&list_watch.next_line().await.expect("live"))["object"]["metadata"]["name"],
            "c"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn lagging_events_come_late_in_order_and_bookmarks_wait_behind_them() {
        let mut state = State::new(Registry::with_types(builtin_types()), 100);
        crate::admission::namespace_lifecycle::create_test_namespace(&mut state, "ns");
        state
            .write()
            .create(&pods(), Some("ns"), json!({"metadata": {"name": "a"}}))
            .expect("created");
        let lag = Arc::new(std::sync::Mutex::new(Some(Duration::from_secs(1))));
        let reads = Arc::clone(&lag);
        let o = opts(&[("watch", "1"), ("allowWatchBookmarks", "true")]);
        let mut w = WatchStream::start(&mut state, &pods(), &o, Duration::from_millis(1500), fixed(3))
            .expect("watch")
            .with_lag(Arc::new(move || *reads.lock().expect("lag")));
        let initial = parse(&w.next_line().await.expect("initial"));
        assert_eq!(
            initial["object"]["metadata"]["name"], "a",
            "initial events come at once"
        );

        state
            .write()
            .create(&pods(), Some("ns"), json!({"metadata": {"name": "b"}}))
            .expect("created");
        let started = Instant::now();
        let b = parse(&w.next_line().await.expect("b"));
        assert_eq!(b["object"]["metadata"]["name"], "b");
        assert_eq!(started.elapsed(), Duration::from_secs(1), "held back by the lag");

        state
            .write()
            .create(&pods(), Some("ns"), json!({"metadata": {"name": "c"}}))
            .expect("created");
        let c = parse(&w.next_line().await.expect("c"));
        assert_eq!(c["object"]["metadata"]["name"], "c");
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        let bookmark = parse(&w.next_line().await.expect("bookmark"));
        assert_eq!(bookmark["type"], "BOOKMARK");
        assert_eq!(bookmark["object"]["metadata"]["resourceVersion"], "5");
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(2500),
            "the bookmark of 1.5 s was held back too, behind c"
        );

        *lag.lock().expect("lag") = None;
        state
            .write()
            .create(&pods(), Some("ns"), json!({"metadata": {"name": "d"}}))
            .expect("created");
        let d = parse(&w.next_line().await.expect("d"));
        assert_eq!(d["object"]["metadata"]["name"], "d");
        assert_eq!(started.elapsed(), Duration::from_millis(2500), "no lag any more");
    }

    #[tokio::test(start_paused = true)]
    async fn expired_and_timeout() {
        let mut state = State::new(Registry::with_types(builtin_types()), 1);
        crate::admission::namespace_lifecycle::create_test_namespace(&mut state, "ns");
        for name in ["a", "b", "c"] {
            state
                .write()
                .create(&pods(), Some("ns"), json!({"metadata": {"name": name}}))
                .expect("created");
        }
        let o = opts(&[("watch", "1"), ("resourceVersion", "1")]);
        let mut w =
            WatchStream::start(&mut state, &pods(), &o, Duration::from_secs(1), fixed(3)).expect("watch");
        let err = parse(&w.next_line().await.expect("error"));
        assert_eq!(err["type"], "ERROR");
        assert_eq!(err["object"]["code"], 410);
        assert_eq!(err["object"]["reason"], "Expired");
        assert_eq!(err["object"]["message"], "too old resource version: 1 (5)");
        assert!(w.next_line().await.is_none());

        let o = opts(&[("watch", "1"), ("resourceVersion", "5"), ("timeoutSeconds", "2")]);
        let mut w =
            WatchStream::start(&mut state, &pods(), &o, Duration::from_secs(1), fixed(3)).expect("watch");
        assert!(w.next_line().await.is_none());
    }
}
