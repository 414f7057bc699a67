//! Ports of client-go's `tools/cache/reflector_test.go` and `reflector_watchlist_test.go`.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicUsize, Ordering},
};

use crate::cache::delta_fifo;

use crate::reflector::backoff;

use futures::{
    FutureExt, StreamExt,
    channel::mpsc,
    future::{BoxFuture, ready},
    stream,
};
use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::ListMeta};
use kube::{
    api::ObjectMeta,
    core::{
        ObjectList, Status, TypeMeta,
        response::{StatusCause, StatusDetails},
    },
};

use super::*;
use crate::cache::delta_fifo::{DeltaFifo, ProcessError};
use crate::cache::{Store, Writer};
use crate::key::ObjectKey;

fn pod(name: &str, rv: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            resource_version: Some(rv.into()).filter(|rv: &String| !rv.is_empty()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    }
}

fn pods(names: impl IntoIterator<Item = usize>, rv: &str) -> Vec<Pod> {
    names.into_iter().map(|i| pod(&format!("pod-{i}"), rv)).collect()
}

fn list_of(rv: &str, items: Vec<Pod>, continue_token: Option<&str>) -> ObjectList<Pod> {
    ObjectList {
        types: TypeMeta::default(),
        metadata: ListMeta {
            resource_version: Some(rv.into()),
            continue_: continue_token.map(str::to_owned),
            ..ListMeta::default()
        },
        items,
    }
}

fn bookmark(rv: &str, initial_events_end: bool) -> WatchEvent<Pod> {
    crate::testing::bookmark(rv, initial_events_end)
}

fn status_event(code: u16, reason: &str) -> WatchEvent<Pod> {
    WatchEvent::Error(Box::new(Status::failure("injected", reason).with_code(code)))
}

/// A stream of `events` that then stays open.
fn open_stream(events: Vec<WatchEvent<Pod>>) -> WatchStream<Pod> {
    stream::iter(events.into_iter().map(Ok))
        .chain(stream::pending())
        .boxed()
}

/// A stream of `events` that then closes.
fn closing_stream(events: Vec<WatchEvent<Pod>>) -> WatchStream<Pod> {
    stream::iter(events.into_iter().map(Ok)).boxed()
}

type ListFn = Box<
    dyn Fn(usize, &ListOptions) -> BoxFuture<'static, Result<ObjectList<Pod>, source::Error>> + Send + Sync,
>;
type WatchFn = Box<
    dyn Fn(usize, &ListOptions) -> BoxFuture<'static, Result<WatchStream<Pod>, source::Error>> + Send + Sync,
>;

/// A lister-watcher driven by closures that receive the call number, recording every request.
struct ScriptedLw {
    list: ListFn,
    watch: WatchFn,
    lists: Mutex<Vec<ListOptions>>,
    watches: Mutex<Vec<ListOptions>>,
}

impl ScriptedLw {
    fn new(
        list: impl Fn(usize, &ListOptions) -> Result<ObjectList<Pod>, source::Error> + Send + Sync + 'static,
        watch: impl Fn(usize, &ListOptions) -> Result<WatchStream<Pod>, source::Error> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Self::new_async(
            move |n, o| ready(list(n, o)).boxed(),
            move |n, o| ready(watch(n, o)).boxed(),
        )
    }

    fn new_async(
        list: impl Fn(usize, &ListOptions) -> BoxFuture<'static, Result<ObjectList<Pod>, source::Error>>
        + Send
        + Sync
        + 'static,
        watch: impl Fn(usize, &ListOptions) -> BoxFuture<'static, Result<WatchStream<Pod>, source::Error>>
        + Send
        + Sync
        + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            list: Box::new(list),
            watch: Box::new(watch),
            lists: Mutex::new(Vec::new()),
            watches: Mutex::new(Vec::new()),
        })
    }

    fn lists(&self) -> Vec<ListOptions> {
        self.lists.lock().expect("lock").clone()
    }

    fn watches(&self) -> Vec<ListOptions> {
        self.watches.lock().expect("lock").clone()
    }

    fn list_versions(&self) -> Vec<String> {
        self.lists()
            .iter()
            .map(|o| o.resource_version.clone().unwrap_or_default())
            .collect()
    }
}

impl ListerWatcher<Pod> for ScriptedLw {
    fn list(&self, options: &ListOptions) -> BoxFuture<'_, Result<ObjectList<Pod>, source::Error>> {
        let n = {
            let mut lists = self.lists.lock().expect("lock");
            lists.push(options.clone());
            lists.len() - 1
        };
        (self.list)(n, options)
    }

    fn watch(&self, options: &ListOptions) -> BoxFuture<'_, Result<WatchStream<Pod>, source::Error>> {
        let n = {
            let mut watches = self.watches.lock().expect("lock");
            watches.push(options.clone());
            watches.len() - 1
        };
        (self.watch)(n, options)
    }
}

fn fifo() -> Arc<DeltaFifo<Pod>> {
    Arc::new(DeltaFifo::new(delta_fifo::Config::default()))
}

fn reflector(lw: Arc<ScriptedLw>, store: Arc<dyn ReflectorStore<Pod>>, config: Config) -> Reflector<Pod> {
    Reflector::new("pods", lw, store, config)
}

fn no_jitter() -> Config {
    Config {
        backoff: backoff::Config {
            jitter: false,
            ..backoff::Config::default()
        },
        ..Config::default()
    }
}

fn store_names(store: &Store<Pod>) -> Vec<String> {
    let mut names: Vec<String> = store.list_keys().iter().map(ObjectKey::to_string).collect();
    names.sort();
    names
}

/// Collects the errors passed to the watch-error handler.
fn error_log() -> (Arc<Mutex<Vec<String>>>, WatchErrorHandler) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    (
        log,
        Arc::new(move |_: &str, err: &Error| sink.lock().expect("lock").push(err.to_string())),
    )
}

// TestCloseWatchChannelOnError
#[tokio::test(start_paused = true)]
async fn watch_is_closed_on_error_event() {
    let (tx, rx) = mpsc::unbounded::<Result<WatchEvent<Pod>, source::Error>>();
    let rx = Mutex::new(Some(rx));
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        move |_, _| Ok(rx.lock().expect("lock").take().expect("one watch").boxed()),
    );
    let r = reflector(lw, fifo(), Config::default());
    tx.unbounded_send(Ok(status_event(500, "InternalError")))
        .expect("open");
    r.list_and_watch(&CancellationToken::new())
        .await
        .expect("a watch error ends the round without error");
    assert!(tx.is_closed(), "the reflector must stop the watch");
}

// TestRunUntil
#[tokio::test(start_paused = true)]
async fn run_returns_and_closes_the_watch_when_cancelled() {
    let (tx, rx) = mpsc::unbounded::<Result<WatchEvent<Pod>, source::Error>>();
    let rx = Mutex::new(Some(rx));
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        move |_, _| Ok(rx.lock().expect("lock").take().expect("one watch").boxed()),
    );
    let store = fifo();
    let r = Arc::new(reflector(lw, store.clone(), Config::default()));
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (r, cancel) = (Arc::clone(&r), cancel.clone());
        async move { r.run(cancel).await }
    });
    tx.unbounded_send(Ok(WatchEvent::Added(pod("bar", "2"))))
        .expect("open");
    while store.get_by_key(&ObjectKey::new("", "bar")).is_none() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    cancel.cancel();
    task.await.expect("run returns");
    assert!(tx.is_closed(), "the watch must be stopped");
}

/// A store that counts resyncs and records resource versions, failing resync number `fail_at`.
#[derive(Default)]
struct RecordingStore {
    resyncs: AtomicUsize,
    fail_resync_at: Option<usize>,
    resource_versions: Mutex<Vec<String>>,
}

impl ReflectorStore<Pod> for RecordingStore {
    fn add(&self, _: Arc<Pod>) {}
    fn update(&self, _: Arc<Pod>) {}
    fn delete(&self, _: Arc<Pod>) {}
    fn replace(&self, _: Vec<Arc<Pod>>, _: &str) {}
    fn resync(&self) -> Result<(), BoxError> {
        let n = self.resyncs.fetch_add(1, Ordering::SeqCst) + 1;
        if self.fail_resync_at == Some(n) {
            Err("resync failed".into())
        } else {
            Ok(())
        }
    }
    fn update_resource_version(&self, rv: &str) {
        self.resource_versions.lock().expect("lock").push(rv.to_owned());
    }
}

// TestReflectorResyncChan
#[tokio::test(start_paused = true)]
async fn resync_timer_fires_promptly() {
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        |_, _| Ok(open_stream(vec![])),
    );
    let store = Arc::new(RecordingStore::default());
    let config = Config {
        resync_period: Duration::from_millis(1),
        ..Config::default()
    };
    let r = reflector(lw, store.clone(), config);
    let cancel = CancellationToken::new();
    let _ = tokio::time::timeout(Duration::from_millis(5), r.list_and_watch(&cancel)).await;
    assert!(
        store.resyncs.load(Ordering::SeqCst) >= 4,
        "resync every millisecond"
    );
}

// TestReflectorWatchStoppedBefore
#[tokio::test(start_paused = true)]
async fn cancelled_before_start_calls_neither_list_nor_watch() {
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        |_, _| Ok(open_stream(vec![])),
    );
    let r = reflector(Arc::clone(&lw), fifo(), Config::default());
    let cancel = CancellationToken::new();
    cancel.cancel();
    r.list_and_watch(&cancel).await.expect("stopping is not an error");
    assert!(lw.lists().is_empty() && lw.watches().is_empty());
}

// TestReflectorWatchStoppedAfter
#[tokio::test(start_paused = true)]
async fn cancelled_during_watch_returns_and_stops_the_watch() {
    let (tx, rx) = mpsc::unbounded::<Result<WatchEvent<Pod>, source::Error>>();
    let rx = Mutex::new(Some(rx));
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        move |_, _| Ok(rx.lock().expect("lock").take().expect("one watch").boxed()),
    );
    let r = reflector(Arc::clone(&lw), fifo(), Config::default());
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        stopper.cancel();
    });
    r.list_and_watch(&cancel).await.expect("stopping is not an error");
    assert_eq!(lw.watches().len(), 1);
    assert!(tx.is_closed());
}

// TestReflectorHandleWatchResultChanClosedBefore / ...After: a watch closed within a second
// without an event is reported as a very short watch. Unlike client-go, which relists, the
// reflector backs off and watches again from the same version, which is still good.
#[tokio::test(start_paused = true)]
async fn empty_watch_closed_within_a_second_is_a_very_short_watch_and_rewatched() {
    for close_after in [Duration::ZERO, Duration::from_millis(10)] {
        let lw = ScriptedLw::new(
            |_, _| Ok(list_of("1", vec![], None)),
            move |n, _| {
                if n >= 2 {
                    return Ok(stream::pending().boxed());
                }
                Ok(stream::once(tokio::time::sleep(close_after))
                    .filter_map(|()| ready(None))
                    .boxed())
            },
        );
        let (log, handler) = error_log();
        let r = reflector(Arc::clone(&lw), fifo(), Config::default()).watch_error_handler(handler);
        let cancel = CancellationToken::new();
        let stopper = cancel.clone();
        let watching = Arc::clone(&lw);
        tokio::spawn(async move {
            while watching.watches().len() < 3 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            stopper.cancel();
        });
        r.list_and_watch(&cancel).await.expect("stopping is not an error");
        let log = log.lock().expect("lock").clone();
        assert_eq!(log.len(), 2, "{log:?}");
        assert!(log.iter().all(|e| e.contains("very short watch")), "{log:?}");
        assert_eq!(lw.lists().len(), 1, "no relist");
        let versions: Vec<_> = lw.watches().iter().map(|w| w.resource_version.clone()).collect();
        assert_eq!(versions, vec![Some("1".to_owned()); 3]);
    }
}

/// A watch that closes at once, after a short while (paused time), without any event.
fn closes_at_once() -> WatchStream<Pod> {
    stream::once(tokio::time::sleep(Duration::from_millis(10)))
        .filter_map(|()| ready(None))
        .boxed()
}

/// Runs the reflector until `done` holds for the lister-watcher, then stops it.
async fn run_until(
    r: &Reflector<Pod>,
    lw: &Arc<ScriptedLw>,
    done: impl Fn(&ScriptedLw) -> bool + Send + 'static,
) {
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let watching = Arc::clone(lw);
    tokio::spawn(async move {
        while !done(&watching) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stopper.cancel();
    });
    tokio::time::timeout(Duration::from_secs(600), r.run(cancel))
        .await
        .expect("the reflector stops once the script is done");
}

/// A server (or a proxy in front of it) that keeps closing watches at once at a version cannot
/// hold the cache at that version: after `MAX_CONSECUTIVE_VERY_SHORT_WATCHES` such watches in a
/// row the reflector relists, and watches from the new list's version.
#[tokio::test(start_paused = true)]
async fn watches_that_keep_closing_at_once_end_in_a_relist() {
    let limit = MAX_CONSECUTIVE_VERY_SHORT_WATCHES as usize;
    let lw = ScriptedLw::new(
        |n, _| {
            Ok(list_of(
                &(n + 1).to_string(),
                vec![pod("p", &(n + 1).to_string())],
                None,
            ))
        },
        move |n, _| {
            if n < limit {
                Ok(closes_at_once())
            } else {
                Ok(stream::pending().boxed())
            }
        },
    );
    let (log, handler) = error_log();
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), no_jitter()).watch_error_handler(handler);
    run_until(&r, &lw, move |lw| lw.watches().len() > limit).await;
    assert_eq!(lw.list_versions(), ["0", "1"], "relisted at the last version");
    let watched: Vec<_> = lw
        .watches()
        .iter()
        .map(|w| w.resource_version.clone().unwrap_or_default())
        .collect();
    let mut expected = vec!["1".to_owned(); limit];
    expected.push("2".to_owned());
    assert_eq!(watched, expected, "the next watch starts from the new list");
    let log = log.lock().expect("lock").clone();
    assert_eq!(log.len(), limit, "{log:?}");
    assert!(log.iter().all(|e| e.contains("very short watch")), "{log:?}");
    assert_eq!(store_versions(&store), ["p@2"], "the relist refreshed the cache");
}

/// Connection resets are not watches the server closed: any number of them in a row, even at
/// once and without an event, re-watch from the last version and never relist.
#[tokio::test(start_paused = true)]
async fn connection_resets_never_count_as_very_short_watches() {
    let resets = 3 * MAX_CONSECUTIVE_VERY_SHORT_WATCHES as usize;
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        move |n, _| {
            if n < resets {
                let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
                Ok(stream::iter([Err(source::Error::Transport(Box::new(reset)))]).boxed())
            } else {
                Ok(stream::pending().boxed())
            }
        },
    );
    let (log, handler) = error_log();
    let r = reflector(Arc::clone(&lw), fifo(), no_jitter()).watch_error_handler(handler);
    run_until(&r, &lw, move |lw| lw.watches().len() > resets).await;
    assert_eq!(lw.lists().len(), 1, "no relist after {resets} resets");
    assert!(
        log.lock().expect("lock").is_empty(),
        "a reset is no error to report"
    );
}

/// Only watches in a row count: a watch that delivers an event starts the count again.
#[tokio::test(start_paused = true)]
async fn a_watch_with_events_resets_the_count_of_very_short_watches() {
    let limit = MAX_CONSECUTIVE_VERY_SHORT_WATCHES as usize;
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        move |n, _| {
            Ok(match n {
                n if n == limit - 1 => closing_stream(vec![WatchEvent::Added(pod("p", "2"))]),
                n if n < 2 * limit - 1 => closes_at_once(),
                _ => stream::pending().boxed(),
            })
        },
    );
    let r = reflector(Arc::clone(&lw), fifo(), no_jitter());
    run_until(&r, &lw, move |lw| lw.watches().len() >= 2 * limit).await;
    assert_eq!(
        lw.lists().len(),
        1,
        "never {limit} very short watches in a row: no relist"
    );
    assert_eq!(r.last_sync_resource_version(), "2");
}

// TestReflectorWatchHandler
#[tokio::test(start_paused = true)]
async fn watch_events_update_the_store_and_the_resource_version() {
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![pod("foo", "1"), pod("bar", "1")], None)),
        |_, _| {
            Ok(open_stream(vec![
                WatchEvent::Deleted(pod("foo", "50")),
                WatchEvent::Modified(pod("bar", "55")),
                WatchEvent::Added(pod("baz", "32")),
            ]))
        },
    );
    let r = reflector(lw, Arc::new(writer), Config::default());
    let cancel = CancellationToken::new();
    let _ = tokio::time::timeout(Duration::from_millis(10), r.list_and_watch(&cancel)).await;
    assert_eq!(store_names(&store), ["bar", "baz"]);
    let rv = |name: &str| {
        store
            .get_by_key(&ObjectKey::new("", name))
            .and_then(|p| p.metadata.resource_version.clone())
    };
    assert_eq!(rv("bar").as_deref(), Some("55"));
    assert_eq!(rv("baz").as_deref(), Some("32"));
    assert_eq!(
        r.last_sync_resource_version(),
        "32",
        "the last event's version, even if lower"
    );
}

fn expected_pops(events: &[(&str, &str)]) -> Vec<String> {
    events.iter().map(|(n, rv)| format!("{n}@{rv}")).collect()
}

async fn pop_newest(f: &DeltaFifo<Pod>, count: usize) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..count {
        let d: Deltas = f
            .pop(|_, _| Ok::<(), ProcessError<()>>(()))
            .await
            .expect("queued");
        let o = d
            .newest()
            .and_then(|d| d.object.object().cloned())
            .expect("object");
        out.push(format!(
            "{}@{}",
            o.metadata.name.as_deref().unwrap_or(""),
            o.metadata.resource_version.as_deref().unwrap_or("")
        ));
    }
    out
}

type Deltas = crate::cache::delta_fifo::Deltas<Pod>;

// TestReflectorListAndWatch (both the streaming and the list+watch variant)
#[tokio::test(start_paused = true)]
async fn list_and_watch_requests_and_results() {
    for strategy in [InitialListStrategy::StreamingList, InitialListStrategy::ListWatch] {
        let streaming = strategy == InitialListStrategy::StreamingList;
        let lw = ScriptedLw::new(
            |_, _| Ok(list_of("1", vec![pod("foo", "1")], None)),
            move |_, _| {
                let mut events = Vec::new();
                if streaming {
                    events.push(WatchEvent::Added(pod("foo", "1")));
                    events.push(bookmark("1", true));
                }
                events.extend([
                    WatchEvent::Modified(pod("foo", "2")),
                    WatchEvent::Added(pod("bar", "3")),
                    WatchEvent::Added(pod("baz", "4")),
                    WatchEvent::Added(pod("qux", "5")),
                    WatchEvent::Added(pod("zoo", "6")),
                ]);
                Ok(open_stream(events))
            },
        );
        let f = fifo();
        let config = Config {
            initial_list_strategy: strategy,
            ..Config::default()
        };
        let r = reflector(Arc::clone(&lw), f.clone(), config);
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            r.list_and_watch(&CancellationToken::new()),
        )
        .await;

        let mut watches = lw.watches();
        assert_eq!(watches.len(), 1, "{strategy:?}: one watch");
        let timeout = watches[0].timeout_seconds.take();
        assert!(timeout.is_some_and(|t| (300..600).contains(&t)), "{timeout:?}");
        if streaming {
            assert!(lw.lists().is_empty(), "a streaming list makes no list request");
            assert_eq!(
                watches[0],
                ListOptions {
                    resource_version_match: Some(VersionMatch::NotOlderThan),
                    allow_watch_bookmarks: true,
                    send_initial_events: true,
                    ..ListOptions::default()
                }
            );
        } else {
            assert_eq!(
                lw.lists(),
                [ListOptions {
                    resource_version: Some("0".into()),
                    limit: Some(500),
                    ..ListOptions::default()
                }]
            );
            assert_eq!(
                watches[0],
                ListOptions {
                    resource_version: Some("1".into()),
                    allow_watch_bookmarks: true,
                    ..ListOptions::default()
                }
            );
        }
        assert_eq!(
            pop_newest(&f, 5).await,
            expected_pops(&[
                ("foo", "2"),
                ("bar", "3"),
                ("baz", "4"),
                ("qux", "5"),
                ("zoo", "6")
            ]),
            "{strategy:?}"
        );
    }
}

// TestReflectorListAndWatchWithErrors: one store across six rounds; after each round it holds
// the round's list plus its watch events, and list or watch errors are returned.
#[tokio::test(start_paused = true)]
async fn list_and_watch_with_errors() {
    type Items = Vec<(&'static str, &'static str)>;
    struct Round {
        list: Result<(&'static str, Items), &'static str>,
        events: Vec<WatchEvent<Pod>>,
        watch_error: Option<&'static str>,
        after: Vec<&'static str>,
    }
    let rounds = vec![
        Round {
            list: Ok(("1", vec![])),
            events: vec![
                WatchEvent::Added(pod("foo", "2")),
                WatchEvent::Added(pod("bar", "3")),
            ],
            watch_error: None,
            after: vec!["bar", "foo"],
        },
        Round {
            list: Ok(("3", vec![("foo", "2"), ("bar", "3")])),
            events: vec![
                WatchEvent::Deleted(pod("foo", "4")),
                WatchEvent::Added(pod("qux", "5")),
            ],
            watch_error: None,
            after: vec!["bar", "qux"],
        },
        Round {
            list: Err("a list error"),
            events: vec![],
            watch_error: None,
            after: vec!["bar", "qux"],
        },
        Round {
            list: Ok(("5", vec![("bar", "3"), ("qux", "5")])),
            events: vec![],
            watch_error: Some("a watch error"),
            after: vec!["bar", "qux"],
        },
        Round {
            list: Ok(("5", vec![("bar", "3"), ("qux", "5")])),
            events: vec![WatchEvent::Added(pod("baz", "6"))],
            watch_error: None,
            after: vec!["bar", "baz", "qux"],
        },
        Round {
            list: Ok(("6", vec![("bar", "3"), ("qux", "5"), ("baz", "6")])),
            events: vec![],
            watch_error: None,
            after: vec!["bar", "baz", "qux"],
        },
    ];
    let writer = Arc::new(Writer::<Pod>::default());
    let store = writer.store();
    for (i, round) in rounds.into_iter().enumerate() {
        let list = round.list.clone();
        let events = round.events.clone();
        let watch_error = round.watch_error;
        let lw = ScriptedLw::new(
            move |_, _| match &list {
                Ok((rv, items)) => Ok(list_of(
                    rv,
                    items.iter().map(|(n, rv)| pod(n, rv)).collect(),
                    None,
                )),
                Err(msg) => Err(source::Error::status(500, "InternalError", *msg)),
            },
            move |_, _| match watch_error {
                Some(msg) => Err(source::Error::status(403, "Forbidden", msg)),
                None => Ok(open_stream(events.clone())),
            },
        );
        let r = reflector(
            lw,
            Arc::clone(&writer) as Arc<dyn ReflectorStore<Pod>>,
            Config::default(),
        );
        let result = tokio::time::timeout(
            Duration::from_millis(10),
            r.list_and_watch(&CancellationToken::new()),
        )
        .await;
        assert_eq!(store_names(&store), round.after, "round {i}");
        if let Some(msg) = round.list.err().or(watch_error) {
            let err = result
                .expect("the round ends")
                .expect_err("the error is returned");
            assert!(err.to_string().contains(msg), "round {i}: {err}");
        }
    }
}

// TestReflectorListAndWatchInitConnBackoff
#[tokio::test(start_paused = true)]
async fn connection_refused_watches_back_off_without_relisting() {
    for (failures, min, max) in [(5usize, 31u64, 62u64), (40, 1763, 3526)] {
        let lw = ScriptedLw::new(
            |_, _| Ok(list_of("1", vec![], None)),
            move |n, _| {
                if n < failures {
                    Err(source::Error::Connect("connection refused".into()))
                } else {
                    Ok(open_stream(vec![]))
                }
            },
        );
        let config = Config {
            backoff: backoff::Config {
                initial: Duration::from_millis(1),
                max: Duration::from_millis(50),
                factor: 2.0,
                jitter: true,
                reset_after: Duration::from_millis(100),
                jitter_seed: Some(7),
            },
            ..Config::default()
        };
        let r = reflector(Arc::clone(&lw), fifo(), config);
        let started = Instant::now();
        let cancel = CancellationToken::new();
        let run = r.list_and_watch(&cancel);
        tokio::pin!(run);
        while lw.watches().len() <= failures {
            tokio::select! {
                _ = &mut run => panic!("the round must not end"),
                () = tokio::time::sleep(Duration::from_millis(1)) => {}
            }
        }
        let elapsed = started.elapsed().as_millis() as u64;
        assert!(
            (min..=max).contains(&elapsed),
            "{failures} failures: backed off {elapsed} ms, want [{min}, {max}]"
        );
        assert_eq!(lw.lists().len(), 1, "no relist");
    }
}

// TestBackoffOnTooManyRequests
#[tokio::test(start_paused = true)]
async fn too_many_requests_backs_off_and_rewatches() {
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        |n, _| match n {
            0 => Err(source::Error::status(429, "TooManyRequests", "slow down")),
            1 => Ok(closing_stream(vec![status_event(429, "TooManyRequests")])),
            // ends the round (an empty watch closing at once would be watched again)
            _ => Ok(closing_stream(vec![status_event(410, "Expired")])),
        },
    );
    let r = reflector(Arc::clone(&lw), fifo(), no_jitter());
    let started = Instant::now();
    r.list_and_watch(&CancellationToken::new())
        .await
        .expect("the round ends without error");
    // Delays are computed in f32 and timers round up to the millisecond.
    let elapsed = started.elapsed().as_millis();
    assert!(
        (2400..=2402).contains(&elapsed),
        "exactly two backoffs (800 + 1600 ms), took {elapsed} ms"
    );
    assert_eq!(lw.watches().len(), 3);
}

// TestNoRelistOnTooManyRequests
#[tokio::test(start_paused = true)]
async fn too_many_requests_never_relists() {
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        |n, _| {
            if n < 4 {
                Err(source::Error::status(429, "TooManyRequests", "slow down"))
            } else {
                Ok(closing_stream(vec![status_event(410, "Expired")]))
            }
        },
    );
    let r = reflector(Arc::clone(&lw), fifo(), no_jitter());
    r.list_and_watch(&CancellationToken::new())
        .await
        .expect("the round ends without error");
    assert_eq!((lw.lists().len(), lw.watches().len()), (1, 5));
}

// TestRetryInternalError
#[tokio::test(start_paused = true)]
async fn internal_errors_are_retried_within_the_window() {
    for (max_retry, jump_at, want_watches) in [(0u64, None, 1usize), (30, None, 32), (30, Some(10usize), 41)]
    {
        let lw = ScriptedLw::new_async(
            |_, _| ready(Ok(list_of("1", vec![], None))).boxed(),
            move |n, _| {
                let advance = if Some(n + 1) == jump_at {
                    Duration::from_secs(61)
                } else {
                    Duration::from_secs(1)
                };
                async move {
                    tokio::time::sleep(advance).await;
                    Ok(closing_stream(vec![status_event(500, "InternalError")]))
                }
                .boxed()
            },
        );
        let config = Config {
            max_internal_error_retry_duration: Duration::from_secs(max_retry),
            ..Config::default()
        };
        let r = reflector(Arc::clone(&lw), fifo(), config);
        r.list_and_watch(&CancellationToken::new())
            .await
            .expect("the round ends without error");
        assert_eq!(
            lw.watches().len(),
            want_watches,
            "max {max_retry}s, jump at {jump_at:?}"
        );
    }
}

// TestReflectorResync
#[tokio::test(start_paused = true)]
async fn failing_resync_ends_the_round_without_error() {
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("1", vec![], None)),
        |_, _| Ok(open_stream(vec![])),
    );
    let store = Arc::new(RecordingStore {
        fail_resync_at: Some(2),
        ..RecordingStore::default()
    });
    let config = Config {
        resync_period: Duration::from_millis(1),
        ..Config::default()
    };
    let r = reflector(lw, store.clone(), config);
    r.list_and_watch(&CancellationToken::new())
        .await
        .expect("resync errors are not returned");
    assert_eq!(store.resyncs.load(Ordering::SeqCst), 2);
}

/// A list that serves pods 0..10 in pages keyed by continue tokens "", "C1", "C2".
fn paged_list(page: usize, options: &ListOptions) -> Result<ObjectList<Pod>, source::Error> {
    let token = options.continue_token.as_deref().unwrap_or("");
    let (range, next) = match (token, page) {
        ("", 4) => (0..4, Some("C1")),
        ("C1", 4) => (4..8, Some("C2")),
        ("C2", 4) => (8..10, None),
        ("", 500) => (0..4, Some("C1")),
        ("C1", 500) => (4..8, Some("C2")),
        ("C2", 500) => (8..10, None),
        _ => {
            return Err(source::Error::status(
                400,
                "BadRequest",
                format!("unexpected {options:?}"),
            ));
        }
    };
    Ok(list_of("10", pods(range, "10"), next))
}

// TestReflectorWatchListPageSize
#[tokio::test(start_paused = true)]
async fn fixed_page_size_is_used_for_every_page() {
    let lw = ScriptedLw::new(|_, o| paged_list(4, o), |_, _| Ok(closing_stream(vec![])));
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let config = Config {
        page_size: Some(4),
        ..Config::default()
    };
    let r = reflector(Arc::clone(&lw), Arc::new(writer), config);
    r.set_last_sync_resource_version("10");
    let _ = tokio::time::timeout(
        Duration::from_millis(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert!(lw.lists().iter().all(|o| o.limit == Some(4)), "{:?}", lw.lists());
    assert_eq!(lw.lists().len(), 3);
    assert_eq!(store.len(), 10);
}

/// An informer's transform runs on each page as it arrives: by the time a page is asked for,
/// every earlier page was transformed (what the transform drops is freed page by page).
#[tokio::test(start_paused = true)]
async fn list_pages_are_transformed_as_they_arrive() {
    let transformed = Arc::new(AtomicUsize::new(0));
    let seen_at_request = Arc::new(Mutex::new(Vec::new()));
    let lw = {
        let (transformed, seen_at_request) = (Arc::clone(&transformed), Arc::clone(&seen_at_request));
        ScriptedLw::new(
            move |_, o| {
                seen_at_request
                    .lock()
                    .expect("lock")
                    .push(transformed.load(Ordering::SeqCst));
                paged_list(4, o)
            },
            |_, _| Ok(closing_stream(vec![])),
        )
    };
    let counter = Arc::clone(&transformed);
    let fifo = Arc::new(DeltaFifo::new(delta_fifo::Config {
        transform: Some(Arc::new(move |pod: &mut Pod| {
            counter.fetch_add(1, Ordering::SeqCst);
            pod.metadata.labels = Some([("transformed".to_owned(), "yes".to_owned())].into());
        })),
        ..delta_fifo::Config::default()
    }));
    let config = Config {
        page_size: Some(4),
        ..Config::default()
    };
    let r = reflector(
        Arc::clone(&lw),
        Arc::clone(&fifo) as Arc<dyn ReflectorStore<Pod>>,
        config,
    );
    r.set_last_sync_resource_version("10");
    let _ = tokio::time::timeout(
        Duration::from_millis(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert_eq!(*seen_at_request.lock().expect("lock"), [0, 4, 8]);
    assert_eq!(
        transformed.load(Ordering::SeqCst),
        10,
        "each object is transformed once"
    );
    let listed = fifo.list();
    assert_eq!(listed.len(), 10);
    assert!(listed.iter().all(|pod| {
        pod.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("transformed"))
    }));
}

// TestReflectorNotPaginatingNotConsistentReads
#[tokio::test(start_paused = true)]
async fn list_at_a_version_is_not_paginated() {
    let lw = ScriptedLw::new(
        |_, o| {
            assert_eq!((o.resource_version.as_deref(), o.limit), (Some("10"), None));
            Ok(list_of("10", pods(0..10, "10"), None))
        },
        |_, _| Ok(closing_stream(vec![])),
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), Config::default());
    r.set_last_sync_resource_version("10");
    let _ = tokio::time::timeout(
        Duration::from_millis(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert_eq!(lw.lists().len(), 1);
    assert_eq!(store.len(), 10);
}

// TestReflectorPaginatingNonConsistentReadsIfWatchCacheDisabled
#[tokio::test(start_paused = true)]
async fn paginated_list_at_zero_keeps_paginating() {
    let lw = ScriptedLw::new(
        |_, o| {
            assert_eq!(o.limit, Some(500), "{o:?}");
            paged_list(500, o)
        },
        |_, _| Ok(closing_stream(vec![])),
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), Config::default());
    for round in 1..=2 {
        let _ = tokio::time::timeout(
            Duration::from_millis(10),
            r.list_and_watch(&CancellationToken::new()),
        )
        .await;
        assert_eq!(store.len(), 10, "round {round}");
    }
    assert_eq!(
        lw.list_versions(),
        ["0", "", "", "10", "", ""],
        "pages after the first carry no version"
    );
}

// TestReflectorResyncWithResourceVersion
#[tokio::test(start_paused = true)]
async fn relist_asks_for_the_last_version() {
    let lw = ScriptedLw::new(
        |n, _| {
            Ok(if n == 0 {
                list_of("10", pods(0..4, "10"), None)
            } else {
                list_of("11", pods(0..8, "11"), None)
            })
        },
        |_, _| Ok(closing_stream(vec![])),
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), Config::default());
    let mut sizes = Vec::new();
    for _ in 0..2 {
        let _ = tokio::time::timeout(
            Duration::from_millis(10),
            r.list_and_watch(&CancellationToken::new()),
        )
        .await;
        sizes.push(store.len());
    }
    assert_eq!(lw.list_versions(), ["0", "10"]);
    assert_eq!(sizes, [4, 8]);
}

// TestReflectorExpiredExactResourceVersion
#[tokio::test(start_paused = true)]
async fn expired_relist_retries_at_most_recent_at_once() {
    let lw = ScriptedLw::new(
        |n, _| match n {
            0 => Ok(list_of("10", pods(0..4, "10"), None)),
            1 => Err(source::Error::status(410, "Expired", "too old resource version")),
            _ => Ok(list_of("11", pods(0..8, "11"), None)),
        },
        |_, _| Ok(closing_stream(vec![])),
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), Config::default());
    for _ in 0..2 {
        let _ = tokio::time::timeout(
            Duration::from_millis(10),
            r.list_and_watch(&CancellationToken::new()),
        )
        .await;
    }
    assert_eq!(lw.list_versions(), ["0", "10", ""]);
    assert_eq!(store.len(), 8);
}

// TestReflectorFullListIfExpired
#[tokio::test(start_paused = true)]
async fn expired_continuation_falls_back_to_a_full_list() {
    let lw = ScriptedLw::new(
        |n, o| match n {
            0 => Ok(list_of("10", pods(0..4, "10"), None)),
            1 => Ok(list_of("10", pods(0..4, "10"), Some("C1"))),
            2 => Err(source::Error::status(410, "Expired", "continue token expired")),
            _ => {
                assert_eq!(o.limit, None, "the full list is not paginated");
                Ok(list_of("11", pods(0..8, "11"), None))
            }
        },
        |_, _| Ok(closing_stream(vec![])),
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    two_paged_rounds(Arc::clone(&lw), writer, 4).await;
    assert_eq!(lw.list_versions(), ["0", "10", "", "10"]);
    assert_eq!(store.len(), 8);
}

/// The store's content as `name@resourceVersion`, sorted.
fn store_versions(store: &Store<Pod>) -> Vec<String> {
    let mut versions: Vec<String> = store
        .list()
        .iter()
        .map(|p| {
            let rv = p.metadata.resource_version.as_deref().unwrap_or_default();
            format!("{}@{rv}", p.metadata.name.as_deref().unwrap_or_default())
        })
        .collect();
    versions.sort();
    versions
}

/// A reflector into `writer` with lists paged by `page_size`, after two rounds against a
/// closing watch: one list each (the watch backs off past the timeout).
async fn two_paged_rounds(lw: Arc<ScriptedLw>, writer: Writer<Pod>, page_size: u32) -> Reflector<Pod> {
    let config = Config {
        page_size: Some(page_size),
        ..Config::default()
    };
    let r = reflector(lw, Arc::new(writer), config);
    for _ in 0..2 {
        let _ = tokio::time::timeout(
            Duration::from_millis(10),
            r.list_and_watch(&CancellationToken::new()),
        )
        .await;
    }
    r
}

/// A relist reaches the store page by page: when a page is asked for, every earlier page is
/// already stored, replacing the older objects (a relist holds about one page more than the
/// store, not a second copy of it); what no page listed is removed at the end only.
#[tokio::test(start_paused = true)]
async fn relist_pages_reach_the_store_as_they_arrive() {
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let seen_at_request = Arc::new(Mutex::new(Vec::new()));
    let lw = {
        let (store, seen_at_request) = (store.clone(), Arc::clone(&seen_at_request));
        ScriptedLw::new(
            move |n, o| {
                seen_at_request.lock().expect("lock").push(store_versions(&store));
                match n {
                    0 => Ok(list_of("5", vec![pod("pod-0", "5"), pod("gone", "5")], None)),
                    _ => paged_list(4, o),
                }
            },
            |_, _| Ok(closing_stream(vec![])),
        )
    };
    two_paged_rounds(Arc::clone(&lw), writer, 4).await;
    let seen = seen_at_request.lock().expect("lock").clone();
    assert_eq!(seen.len(), 4, "one list, then a relist of three pages");
    assert_eq!(seen[1], ["gone@5", "pod-0@5"], "before the relist");
    assert_eq!(
        seen[2],
        ["gone@5", "pod-0@10", "pod-1@10", "pod-2@10", "pod-3@10"],
        "the first page is stored before the second is asked for; gone stays until the end"
    );
    assert_eq!(seen[3].len(), 9, "{:?}", seen[3]);
    let names = store_names(&store);
    assert_eq!(names.len(), 10);
    assert!(!names.contains(&"gone".to_owned()), "gone is removed at the end");
}

/// When an expired continuation makes the relist start over with one full list, keys that only
/// the abandoned pages listed are removed too.
#[tokio::test(start_paused = true)]
async fn a_relist_that_starts_over_removes_what_only_the_abandoned_pages_listed() {
    let lw = ScriptedLw::new(
        |n, _| match n {
            0 => Ok(list_of("5", pods(0..2, "5"), None)),
            1 => Ok(list_of("10", pods(0..4, "10"), Some("C1"))),
            2 => Err(source::Error::status(410, "Expired", "continue token expired")),
            _ => Ok(list_of("11", pods(0..1, "11"), None)),
        },
        |_, _| Ok(closing_stream(vec![])),
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = two_paged_rounds(Arc::clone(&lw), writer, 4).await;
    assert_eq!(lw.lists().len(), 4);
    assert_eq!(store_versions(&store), ["pod-0@11"]);
    assert_eq!(r.last_sync_resource_version(), "11");
}

/// A relist that fails after some pages keeps what they stored (each object is newer than the
/// one it replaced) and removes nothing: what vanished goes with the next complete list.
#[tokio::test(start_paused = true)]
async fn a_relist_that_fails_midway_keeps_its_pages_and_removes_nothing() {
    let lw = ScriptedLw::new(
        |n, _| match n {
            0 => Ok(list_of("5", pods(0..3, "5"), None)),
            1 => Ok(list_of("10", pods(0..1, "10"), Some("C1"))),
            _ => Err(source::Error::status(500, "InternalError", "etcd is down")),
        },
        |_, _| Ok(closing_stream(vec![])),
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = two_paged_rounds(Arc::clone(&lw), writer, 1).await;
    assert_eq!(store_versions(&store), ["pod-0@10", "pod-1@5", "pod-2@5"]);
    assert_eq!(
        r.last_sync_resource_version(),
        "5",
        "the failed list set no version"
    );
}

// TestReflectorFullListIfTooLarge
#[tokio::test(start_paused = true)]
async fn too_large_resource_version_relists_at_most_recent() {
    fn too_large(form: usize) -> source::Error {
        let (message, cause_reason, cause_message) = match form {
            0 => ("", "ResourceVersionTooLarge", ""),
            1 => ("", "", "Too large resource version"),
            _ => ("Timeout: Too large resource version: 40, current: 30", "", ""),
        };
        let mut status = Status::failure(message, "Timeout").with_code(504);
        status.details = Some(StatusDetails {
            causes: vec![StatusCause {
                reason: cause_reason.into(),
                message: cause_message.into(),
                field: String::new(),
            }],
            ..details()
        });
        source::Error::Api(Box::new(status))
    }
    let lw = ScriptedLw::new(
        |n, _| match n {
            0 => Ok(list_of("20", vec![], None)),
            1 => Err(too_large(0)),
            2 => Ok(list_of("30", vec![], None)),
            3 => Err(too_large(1)),
            4 => Ok(list_of("40", vec![], None)),
            5 => Err(too_large(2)),
            _ => Ok(list_of("50", vec![], None)),
        },
        |_, _| Ok(closing_stream(vec![])),
    );
    let (log, handler) = error_log();
    let r = reflector(Arc::clone(&lw), fifo(), Config::default()).watch_error_handler(handler);
    for _ in 0..4 {
        let result = tokio::time::timeout(
            Duration::from_millis(10),
            r.list_and_watch(&CancellationToken::new()),
        )
        .await;
        assert!(result.map_or(true, |r| r.is_ok()), "list and watch never fails");
    }
    assert_eq!(lw.list_versions(), ["0", "20", "", "30", "", "40", ""]);
    assert!(
        log.lock().expect("lock").iter().all(|e| !e.contains("list")),
        "no list error is reported"
    );
}

fn details() -> StatusDetails {
    StatusDetails {
        name: String::new(),
        group: String::new(),
        kind: String::new(),
        uid: String::new(),
        causes: vec![],
        retry_after_seconds: 0,
    }
}

// TestWatchTimeout
#[tokio::test(start_paused = true)]
async fn watch_timeout_is_random_between_min_and_twice_min() {
    for (min, low, high) in [(None, 300, 600), (Some(1), 300, 600), (Some(1800), 1800, 3600)] {
        for _ in 0..20 {
            let lw = ScriptedLw::new(
                |_, _| Ok(list_of("1", vec![], None)),
                |_, _| Ok(closing_stream(vec![])),
            );
            let mut config = Config::default();
            if let Some(min) = min {
                config.min_watch_timeout = Duration::from_secs(min);
            }
            let r = reflector(Arc::clone(&lw), fifo(), config);
            let _ = tokio::time::timeout(
                Duration::from_millis(10),
                r.list_and_watch(&CancellationToken::new()),
            )
            .await;
            let timeout = lw.watches()[0].timeout_seconds.expect("timeout set");
            assert!((low..high).contains(&timeout), "min {min:?}: {timeout}");
        }
    }
}

// TestReflectorResourceVersionUpdate
#[tokio::test(start_paused = true)]
async fn every_watch_event_updates_the_resource_version() {
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("10", vec![], None)),
        |_, _| {
            Ok(open_stream(vec![
                WatchEvent::Added(pod("a", "10")),
                WatchEvent::Modified(pod("a", "20")),
                bookmark("30", false),
                WatchEvent::Deleted(pod("a", "40")),
            ]))
        },
    );
    let store = Arc::new(RecordingStore::default());
    let r = reflector(lw, store.clone(), Config::default());
    let _ = tokio::time::timeout(
        Duration::from_millis(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert_eq!(
        *store.resource_versions.lock().expect("lock"),
        ["10", "20", "30", "40"]
    );
    assert_eq!(r.last_sync_resource_version(), "40");
}

// TestReflectorReplacesStoreOnUnsafeDelete
#[tokio::test(start_paused = true)]
async fn relist_after_watch_error_replaces_the_store() {
    let lw = ScriptedLw::new(
        |n, _| {
            Ok(if n == 0 {
                list_of("3", pods(1..=3, "3"), None)
            } else {
                list_of("5", pods(1..=3, "5"), None)
            })
        },
        |n, _| {
            Ok(if n == 0 {
                closing_stream(vec![
                    WatchEvent::Added(pod("foo", "4")),
                    status_event(500, "StoreReadError"),
                ])
            } else {
                open_stream(vec![])
            })
        },
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), Config::default());
    r.list_and_watch(&CancellationToken::new())
        .await
        .expect("the round ends for a relist");
    assert!(store.get_by_key(&ObjectKey::new("", "foo")).is_some());
    let _ = tokio::time::timeout(
        Duration::from_millis(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert_eq!(
        store_names(&store),
        ["pod-1", "pod-2", "pod-3"],
        "foo is gone after the relist"
    );
    assert_eq!(r.last_sync_resource_version(), "5");
}

/// The lister of a test that only streams: every list fails.
fn no_list(_: usize, _: &ListOptions) -> Result<ObjectList<Pod>, source::Error> {
    Err(source::Error::status(
        500,
        "InternalError",
        "no list in this test",
    ))
}

fn streaming() -> Config {
    Config {
        initial_list_strategy: InitialListStrategy::StreamingList,
        ..Config::default()
    }
}

/// Polls `condition` every millisecond of paused time, for at most a second.
async fn settles(mut condition: impl FnMut() -> bool) -> bool {
    for _ in 0..1000 {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    condition()
}

/// A streaming list hands its initial events to the store as they arrive, as a paged list
/// hands its pages: before the end bookmark the store already holds the streamed objects, a
/// deletion among the initial events removes its object, and what no event listed goes only at
/// the bookmark.
#[tokio::test(start_paused = true)]
async fn streamed_initial_events_reach_the_store_as_they_arrive() {
    let writer = Writer::<Pod>::default();
    writer.add(Arc::new(pod("a", "1")));
    writer.add(Arc::new(pod("gone", "1")));
    let store = writer.store();
    let (events, stream) = mpsc::unbounded::<WatchEvent<Pod>>();
    let stream = Mutex::new(Some(stream));
    let lw = ScriptedLw::new(no_list, move |_, _| {
        Ok(stream
            .lock()
            .expect("lock")
            .take()
            .expect("one watch")
            .map(Ok)
            .boxed())
    });
    let r = Arc::new(reflector(lw, Arc::new(writer), streaming()));
    let round = tokio::spawn({
        let r = Arc::clone(&r);
        async move { r.list_and_watch(&CancellationToken::new()).await }
    });
    for event in [WatchEvent::Added(pod("a", "5")), WatchEvent::Added(pod("b", "5"))] {
        events.unbounded_send(event).expect("sent");
    }
    let streamed = ["a@5", "b@5", "gone@1"];
    assert!(
        settles(|| store_versions(&store) == streamed).await,
        "{:?}",
        store_versions(&store)
    );
    assert_eq!(
        r.last_sync_resource_version(),
        "",
        "the initial events have not ended"
    );

    events
        .unbounded_send(WatchEvent::Deleted(pod("b", "5")))
        .expect("sent");
    events.unbounded_send(bookmark("6", true)).expect("sent");
    assert!(settles(|| r.last_sync_resource_version() == "6").await);
    assert_eq!(store_versions(&store), ["a@5"]);
    round.abort();
}

/// A streaming list that breaks before its end bookmark leaves what it streamed in the store
/// until a retried stream completes; then the store holds exactly the completed snapshot: what
/// only the broken stream had (deleted on the server meanwhile) is gone, and what both had is
/// at the newer version.
#[tokio::test(start_paused = true)]
async fn a_broken_stream_retried_leaves_only_what_the_completed_snapshot_has() {
    let writer = Writer::<Pod>::default();
    writer.add(Arc::new(pod("before", "1")));
    let store = writer.store();
    let (events, retried) = mpsc::unbounded::<WatchEvent<Pod>>();
    let retried = Mutex::new(Some(retried));
    let lw = ScriptedLw::new(no_list, move |n, _| match n {
        0 => Ok(closing_stream(vec![
            WatchEvent::Added(pod("a", "5")),
            WatchEvent::Added(pod("b", "5")),
        ])),
        _ => Ok(retried
            .lock()
            .expect("lock")
            .take()
            .expect("one retry")
            .map(Ok)
            .boxed()),
    });
    let r = Arc::new(reflector(Arc::clone(&lw), Arc::new(writer), streaming()));
    let round = tokio::spawn({
        let r = Arc::clone(&r);
        async move { r.list_and_watch(&CancellationToken::new()).await }
    });
    assert!(settles(|| lw.watches().len() == 2).await, "the stream is retried");
    assert_eq!(
        store_versions(&store),
        ["a@5", "b@5", "before@1"],
        "the broken stream's objects stay until a stream completes"
    );
    assert_eq!(r.last_sync_resource_version(), "", "no snapshot completed");

    events
        .unbounded_send(WatchEvent::Added(pod("a", "6")))
        .expect("sent");
    events.unbounded_send(bookmark("7", true)).expect("sent");
    assert!(settles(|| r.last_sync_resource_version() == "7").await);
    assert_eq!(store_versions(&store), ["a@6"], "exactly the completed snapshot");
    assert!(lw.lists().is_empty(), "no fallback to a list");
    round.abort();
}

// TestWatchListResourceVersion
#[tokio::test(start_paused = true)]
async fn streaming_list_takes_the_version_of_the_end_bookmark() {
    type Case = (Vec<WatchEvent<Pod>>, &'static str);
    let cases: Vec<Case> = vec![
        (vec![], ""),
        (vec![WatchEvent::Added(pod("p1", "1"))], ""),
        (vec![WatchEvent::Added(pod("p1", "1")), bookmark("2", true)], "2"),
    ];
    for (events, want) in cases {
        let lw = ScriptedLw::new(no_list, move |_, _| Ok(open_stream(events.clone())));
        let r = reflector(lw, fifo(), streaming());
        let _ = tokio::time::timeout(
            Duration::from_millis(10),
            r.list_and_watch(&CancellationToken::new()),
        )
        .await;
        assert_eq!(r.last_sync_resource_version(), want);
    }
}

// TestWatchList (selected rows)
#[tokio::test(start_paused = true)]
async fn streaming_list_rows() {
    let streaming_request = |rv: Option<&str>| ListOptions {
        resource_version: rv.map(str::to_owned),
        resource_version_match: Some(VersionMatch::NotOlderThan),
        allow_watch_bookmarks: true,
        send_initial_events: true,
        ..ListOptions::default()
    };
    let without_timeouts = |mut watches: Vec<ListOptions>| {
        for w in &mut watches {
            w.timeout_seconds = None;
        }
        watches
    };

    // The server refuses sendInitialEvents: fall back to list + watch in the same round.
    for refusal in [
        source::Error::status(400, "Invalid", "sendInitialEvents is forbidden"),
        source::Error::status(500, "InternalError", "dummy"),
    ] {
        let refusal = Mutex::new(Some(refusal));
        let lw = ScriptedLw::new(
            |_, _| Ok(list_of("1", vec![pod("p1", "1")], None)),
            move |n, _| match (n, refusal.lock().expect("lock").take()) {
                (0, Some(err)) => Err(err),
                _ => Ok(open_stream(vec![WatchEvent::Added(pod("p2", "2"))])),
            },
        );
        let writer = Writer::<Pod>::default();
        let store = writer.store();
        let r = reflector(Arc::clone(&lw), Arc::new(writer), streaming());
        let _ = tokio::time::timeout(
            Duration::from_millis(10),
            r.list_and_watch(&CancellationToken::new()),
        )
        .await;
        assert_eq!(
            without_timeouts(lw.watches()),
            [
                streaming_request(None),
                ListOptions {
                    resource_version: Some("1".into()),
                    allow_watch_bookmarks: true,
                    ..ListOptions::default()
                }
            ]
        );
        assert_eq!(
            lw.lists(),
            [ListOptions {
                resource_version: Some("0".into()),
                limit: Some(500),
                ..ListOptions::default()
            }]
        );
        assert_eq!(store_names(&store), ["p1", "p2"]);
    }

    // Added, modified and deleted objects during the initial events.
    let lw = ScriptedLw::new(
        |_, _| Err(source::Error::status(500, "InternalError", "no list")),
        |_, _| {
            Ok(open_stream(vec![
                WatchEvent::Added(pod("p1", "1")),
                WatchEvent::Added(pod("p2", "2")),
                WatchEvent::Modified(pod("p1", "3")),
                WatchEvent::Added(pod("p3", "4")),
                WatchEvent::Deleted(pod("p3", "4")),
                bookmark("5", true),
            ]))
        },
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), streaming());
    let _ = tokio::time::timeout(
        Duration::from_millis(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert_eq!(lw.watches().len(), 1);
    assert_eq!(store_names(&store), ["p1", "p2"]);
    assert_eq!(
        store
            .get_by_key(&ObjectKey::new("", "p1"))
            .and_then(|p| p.metadata.resource_version.clone())
            .as_deref(),
        Some("3")
    );

    // 429 twice, then success: three identical streaming requests.
    let lw = ScriptedLw::new(
        |_, _| Err(source::Error::status(500, "InternalError", "no list")),
        |n, _| {
            if n < 2 {
                Err(source::Error::status(429, "TooManyRequests", "slow down"))
            } else {
                Ok(open_stream(vec![
                    WatchEvent::Added(pod("p1", "1")),
                    bookmark("1", true),
                ]))
            }
        },
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), streaming());
    let _ = tokio::time::timeout(
        Duration::from_secs(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert_eq!(without_timeouts(lw.watches()), vec![streaming_request(None); 3]);
    assert_eq!(store_names(&store), ["p1"]);

    // The watch stops after one event, before the bookmark: the same request again.
    let lw = ScriptedLw::new(
        |_, _| Err(source::Error::status(500, "InternalError", "no list")),
        |n, _| {
            Ok(if n == 0 {
                closing_stream(vec![WatchEvent::Added(pod("p1", "1"))])
            } else {
                open_stream(vec![WatchEvent::Added(pod("p1", "1")), bookmark("1", true)])
            })
        },
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), streaming());
    let _ = tokio::time::timeout(
        Duration::from_millis(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert_eq!(without_timeouts(lw.watches()), vec![streaming_request(None); 2]);
    assert_eq!(store_names(&store), ["p1"]);

    // The watch stops after the sync: the next request is a plain watch from the bookmark.
    let lw = ScriptedLw::new(
        |_, _| Err(source::Error::status(500, "InternalError", "no list")),
        |n, _| {
            Ok(if n == 0 {
                closing_stream(vec![
                    WatchEvent::Added(pod("p1", "1")),
                    WatchEvent::Added(pod("p2", "2")),
                    bookmark("2", true),
                    WatchEvent::Added(pod("p3", "3")),
                ])
            } else {
                open_stream(vec![WatchEvent::Added(pod("p4", "4"))])
            })
        },
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), streaming());
    let _ = tokio::time::timeout(
        Duration::from_millis(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert_eq!(
        without_timeouts(lw.watches()),
        [
            streaming_request(None),
            ListOptions {
                resource_version: Some("3".into()),
                allow_watch_bookmarks: true,
                ..ListOptions::default()
            }
        ]
    );
    assert_eq!(store_names(&store), ["p1", "p2", "p3", "p4"]);
}

#[tokio::test(start_paused = true)]
async fn streaming_list_without_end_bookmark_falls_back_to_a_list() {
    let lw = ScriptedLw::new(
        |_, _| Ok(list_of("7", vec![pod("p1", "7")], None)),
        |n, _| {
            Ok(if n < MAX_STREAMS_WITHOUT_INITIAL_EVENTS_END as usize {
                closing_stream(vec![WatchEvent::Added(pod("p1", "7"))])
            } else {
                open_stream(vec![])
            })
        },
    );
    let writer = Writer::<Pod>::default();
    let store = writer.store();
    let r = reflector(Arc::clone(&lw), Arc::new(writer), streaming());
    let _ = tokio::time::timeout(
        Duration::from_millis(10),
        r.list_and_watch(&CancellationToken::new()),
    )
    .await;
    assert_eq!(
        lw.lists().len(),
        1,
        "fell back to a list after {MAX_STREAMS_WITHOUT_INITIAL_EVENTS_END} streams"
    );
    assert_eq!(store_names(&store), ["p1"]);
}

// TestSharedInformerErrorHandling's reflector half: list errors reach the handler from run().
#[tokio::test(start_paused = true)]
async fn run_reports_list_errors_and_backs_off() {
    let lw = ScriptedLw::new(
        |_, _| Err(source::Error::status(403, "Forbidden", "Access Denied")),
        |_, _| Ok(open_stream(vec![])),
    );
    let (log, handler) = error_log();
    let r = Arc::new(reflector(Arc::clone(&lw), fifo(), no_jitter()).watch_error_handler(handler));
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (r, cancel) = (Arc::clone(&r), cancel.clone());
        async move { r.run(cancel).await }
    });
    tokio::time::sleep(Duration::from_millis(800 + 1600 + 3200 + 100)).await;
    cancel.cancel();
    task.await.expect("run returns");
    let log = log.lock().expect("lock").clone();
    assert_eq!(
        lw.lists().len(),
        4,
        "lists at 0, 0.8, 2.4 and 5.6 s: backoff, not a hot loop"
    );
    assert!(
        log.iter()
            .all(|e| e == "failed to list pods: the API server answered 403 Forbidden: Access Denied"),
        "{log:?}"
    );
}
