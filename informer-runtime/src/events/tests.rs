//! The event recorder against the test server, over HTTP through `kube::Client`; the spam
//! filter and the error classification on their own.

use std::{sync::Arc, time::Duration};

use informer_testserver::{Failure, TestServer};
use k8s_openapi::api::{
    core::v1::{ConfigMap, Namespace},
    events::v1::Event as K8sEvent,
};
use kube::{Api, api::ObjectMeta};

use super::*;

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(format!("uid-{name}")),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn event(reason: &str) -> NewEvent {
    NewEvent {
        type_: EventType::Normal,
        reason: reason.into(),
        note: Some(format!("{reason} happened")),
        action: "Reconcile".into(),
        secondary: None,
    }
}

fn reporter() -> Reporter {
    Reporter {
        controller: "test-controller".into(),
        instance: Some("test-controller-0".into()),
    }
}

async fn server_and_client() -> (TestServer, Client) {
    let server = TestServer::start().await.expect("server starts");
    let client = server.client().expect("client");
    (server, client)
}

async fn events_in(client: &Client, namespace: &str) -> Vec<K8sEvent> {
    Api::<K8sEvent>::namespaced(client.clone(), namespace)
        .list(&Default::default())
        .await
        .expect("events listed")
        .items
}

const FLUSH: Duration = Duration::from_secs(20);

#[tokio::test]
async fn repeats_fold_into_one_event_with_a_series() {
    let (_server, client) = server_and_client().await;
    let recorder = EventRecorder::new(client.clone(), reporter()).expect("recorder");
    let cm = config_map("settings");
    recorder.record(&cm, event("Synced"));
    recorder.record(&cm, event("Synced"));
    recorder.flush(FLUSH).await.expect("flushed");

    let events = events_in(&client, "default").await;
    assert_eq!(events.len(), 1, "{events:?}");
    let published = &events[0];
    assert_eq!(published.series.as_ref().map(|s| s.count), Some(2));
    assert_eq!(published.reason.as_deref(), Some("Synced"));
    assert_eq!(published.reporting_controller.as_deref(), Some("test-controller"));
    let regarding = published.regarding.as_ref().expect("regarding");
    assert_eq!(regarding.name.as_deref(), Some("settings"));
    assert_eq!(regarding.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(regarding.uid.as_deref(), Some("uid-settings"));

    let stats = recorder.stats();
    assert_eq!(
        (
            stats.recorded,
            stats.queued,
            stats.published,
            stats.series_updates
        ),
        (2, 2, 2, 1),
        "{stats:?}"
    );
    assert_eq!(stats.failed + stats.dropped_spam + stats.dropped_queue_full, 0);
}

#[tokio::test]
async fn different_reasons_make_different_events() {
    let (_server, client) = server_and_client().await;
    let recorder = EventRecorder::new(client.clone(), reporter()).expect("recorder");
    let cm = config_map("settings");
    recorder.record(&cm, event("Synced"));
    recorder.record(&cm, event("Invalid"));
    recorder.flush(FLUSH).await.expect("flushed");

    let mut reasons: Vec<_> = events_in(&client, "default")
        .await
        .into_iter()
        .map(|e| {
            assert!(e.series.is_none());
            e.reason.unwrap_or_default()
        })
        .collect();
    reasons.sort();
    assert_eq!(reasons, ["Invalid", "Synced"]);
    assert_eq!(recorder.stats().series_updates, 0);
}

#[tokio::test]
async fn events_of_cluster_scoped_objects_go_to_the_default_namespace() {
    let (_server, client) = server_and_client().await;
    let recorder = EventRecorder::new(client.clone(), reporter()).expect("recorder");
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some("team-a".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    recorder.record(&namespace, event("Labelled"));
    recorder.flush(FLUSH).await.expect("flushed");
    let events = events_in(&client, "default").await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].regarding.as_ref().and_then(|r| r.kind.as_deref()),
        Some("Namespace")
    );
}

#[tokio::test]
async fn the_spam_filter_drops_the_26th_event_of_an_object_but_not_anothers() {
    let (_server, client) = server_and_client().await;
    let recorder = EventRecorder::new(client.clone(), reporter()).expect("recorder");
    let noisy = config_map("noisy");
    for _ in 0..26 {
        recorder.record(&noisy, event("Failing"));
    }
    let stats = recorder.stats();
    assert_eq!(
        (stats.recorded, stats.queued, stats.dropped_spam),
        (26, 25, 1),
        "{stats:?}"
    );

    recorder.record(&config_map("quiet"), event("Synced"));
    recorder.flush(FLUSH).await.expect("flushed");
    let stats = recorder.stats();
    assert_eq!(
        (
            stats.queued,
            stats.published,
            stats.dropped_spam,
            stats.series_updates
        ),
        (26, 26, 1, 24),
        "{stats:?}"
    );
    let events = events_in(&client, "default").await;
    let noisy_event = events
        .iter()
        .find(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("noisy"))
        .expect("noisy event");
    assert_eq!(noisy_event.series.as_ref().map(|s| s.count), Some(25));
    assert!(
        events
            .iter()
            .any(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("quiet"))
    );
}

#[tokio::test]
async fn a_small_spam_burst_is_configurable() {
    let (_server, client) = server_and_client().await;
    let config = Config::default()
        .spam_burst(2)
        .spam_refill_interval(Duration::from_secs(3600));
    let recorder = EventRecorder::with_config(client, reporter(), config).expect("recorder");
    let cm = config_map("settings");
    for reason in ["A", "B", "C"] {
        recorder.record(&cm, event(reason));
    }
    recorder.flush(FLUSH).await.expect("flushed");
    let stats = recorder.stats();
    assert_eq!((stats.published, stats.dropped_spam), (2, 1), "{stats:?}");
}

/// The replicator: "copied to" events about one source object, one per target
/// namespace. With `record` they fold into one Event (the note is not part of what folds);
/// with `record_about` each target has its own Event and count.
#[tokio::test]
async fn record_about_keeps_one_event_per_related_object() {
    let (_server, client) = server_and_client().await;
    let recorder = EventRecorder::new(client.clone(), reporter()).expect("recorder");
    let source = config_map("settings");
    let copied = |target: &str| NewEvent {
        note: Some(format!("copied to namespace {target}")),
        ..event("Copied")
    };
    for target in ["team-a", "team-b", "team-a", "team-a"] {
        recorder.record_about(&source, &namespace(target), copied(target));
    }
    recorder.flush(FLUSH).await.expect("flushed");

    let mut per_target: Vec<(String, Option<i32>, String)> = events_in(&client, "default")
        .await
        .into_iter()
        .map(|e| {
            let related = e.related.and_then(|r| r.name).unwrap_or_default();
            (related, e.series.map(|s| s.count), e.note.unwrap_or_default())
        })
        .collect();
    per_target.sort();
    assert_eq!(
        per_target,
        [
            (
                "team-a".to_owned(),
                Some(3),
                "copied to namespace team-a".to_owned()
            ),
            ("team-b".to_owned(), None, "copied to namespace team-b".to_owned()),
        ]
    );
    let stats = recorder.stats();
    assert_eq!((stats.published, stats.series_updates), (4, 2), "{stats:?}");
}

/// Without a related object, the same two events fold into one: what `record_about` is for.
#[tokio::test]
async fn record_folds_events_that_differ_only_in_their_note() {
    let (_server, client) = server_and_client().await;
    let recorder = EventRecorder::new(client.clone(), reporter()).expect("recorder");
    let source = config_map("settings");
    for target in ["team-a", "team-b"] {
        recorder.record(
            &source,
            NewEvent {
                note: Some(format!("copied to namespace {target}")),
                ..event("Copied")
            },
        );
    }
    recorder.flush(FLUSH).await.expect("flushed");
    let events = events_in(&client, "default").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].series.as_ref().map(|s| s.count), Some(2));
}

/// Each (object, related object) pair has its own spam bucket: a fan-out to more targets than
/// the burst is not cut, while one pair is still limited.
#[tokio::test]
async fn each_related_object_has_its_own_spam_bucket() {
    let (_server, client) = server_and_client().await;
    let config = Config::default().spam_burst(2);
    let recorder = EventRecorder::with_config(client.clone(), reporter(), config).expect("recorder");
    let source = config_map("settings");
    for i in 0..5 {
        recorder.record_about(&source, &namespace(&format!("team-{i}")), event("Copied"));
    }
    for _ in 0..3 {
        recorder.record_about(&source, &namespace("team-0"), event("Copied"));
    }
    recorder.flush(FLUSH).await.expect("flushed");
    let stats = recorder.stats();
    assert_eq!((stats.published, stats.dropped_spam), (6, 2), "{stats:?}");
    assert_eq!(events_in(&client, "default").await.len(), 5);
}

fn namespace(name: &str) -> Namespace {
    Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    }
}

#[test]
fn spam_buckets_refill_one_event_per_interval() {
    let mut filter = SpamFilter::new(2, Duration::from_secs(10));
    let start = Instant::now();
    let a = config_map("a").object_ref(&());
    let b = config_map("b").object_ref(&());
    assert!(filter.allow(&a, None, start));
    assert!(filter.allow(&a, None, start));
    assert!(!filter.allow(&a, None, start), "the burst is spent");
    assert!(filter.allow(&b, None, start), "another object has its own bucket");
    assert!(
        !filter.allow(&a, None, start + Duration::from_secs(5)),
        "half a token is not enough"
    );
    assert!(filter.allow(&a, None, start + Duration::from_secs(10)));
    assert!(!filter.allow(&a, None, start + Duration::from_secs(10)));
    assert!(filter.allow(&a, None, start + Duration::from_secs(1000)));
    assert!(
        filter.allow(&a, None, start + Duration::from_secs(1000)),
        "refilled up to the burst"
    );
    assert!(
        !filter.allow(&a, None, start + Duration::from_secs(1000)),
        "and no further"
    );

    let mut off = SpamFilter::new(1, Duration::ZERO);
    assert!((0..100).all(|_| off.allow(&a, None, start)));
}

#[test]
fn the_spam_filter_forgets_refilled_buckets() {
    let mut filter = SpamFilter::new(1, Duration::from_secs(1));
    let start = Instant::now();
    for i in 0..=SPAM_FILTER_TRACKED {
        assert!(filter.allow(&config_map(&format!("cm-{i}")).object_ref(&()), None, start));
    }
    let later = start + Duration::from_secs(2);
    assert!(filter.allow(&config_map("fresh").object_ref(&()), None, later));
    assert_eq!(
        filter.buckets.len(),
        1,
        "only the fresh bucket, just spent, is left"
    );
    assert!(filter.allow(&config_map("cm-0").object_ref(&()), None, later));
    assert!(!filter.allow(&config_map("cm-0").object_ref(&()), None, later));
}

#[tokio::test]
async fn a_full_queue_drops_events_instead_of_blocking() {
    let (server, client) = server_and_client().await;
    let recorder = EventRecorder::with_config(client, reporter(), Config::default().queue_capacity(1))
        .expect("recorder");
    server.set_delay(Some(Duration::from_millis(500)));
    let cm = config_map("settings");
    let started = std::time::Instant::now();
    for reason in ["A", "B", "C", "D", "E"] {
        recorder.record(&cm, event(reason));
    }
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "record blocked for {:?}",
        started.elapsed()
    );
    let stats = recorder.stats();
    // One slot in the queue and at most one event taken off it by the publisher.
    assert!(stats.dropped_queue_full >= 3, "{stats:?}");
    assert_eq!(stats.queued + stats.dropped_queue_full, 5, "{stats:?}");

    server.set_delay(None);
    recorder.flush(FLUSH).await.expect("flushed");
    let stats = recorder.stats();
    assert_eq!(stats.published, stats.queued, "{stats:?}");
}

#[tokio::test]
async fn record_returns_at_once_and_flush_waits_for_a_slow_server() {
    let (server, client) = server_and_client().await;
    let recorder = EventRecorder::new(client.clone(), reporter()).expect("recorder");
    server.set_delay(Some(Duration::from_millis(300)));
    let cm = config_map("settings");
    let started = std::time::Instant::now();
    for reason in ["A", "B", "C"] {
        recorder.record(&cm, event(reason));
    }
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(recorder.pending(), 3);

    let err = recorder
        .flush(Duration::from_millis(50))
        .await
        .expect_err("the server is slower than the deadline");
    assert!(
        matches!(err, Error::FlushTimeout { pending } if pending > 0),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("failed to flush"));

    recorder.flush(FLUSH).await.expect("flushed");
    assert_eq!(recorder.pending(), 0);
    assert_eq!(recorder.stats().published, 3);
    server.set_delay(None);
    assert_eq!(events_in(&client, "default").await.len(), 3);
}

fn quick_retries(retries: usize) -> Config {
    Config::default()
        .retries(retries)
        .retry_delay(Duration::from_millis(10), Duration::from_millis(20))
}

#[tokio::test]
async fn server_errors_are_retried() {
    let (server, client) = server_and_client().await;
    let recorder =
        EventRecorder::with_config(client.clone(), reporter(), quick_retries(3)).expect("recorder");
    server.fail_next(Failure::new(500).times(2).verb("create").resource("events"));
    recorder.record(&config_map("settings"), event("Synced"));
    recorder.flush(FLUSH).await.expect("flushed");
    let stats = recorder.stats();
    assert_eq!(
        (stats.published, stats.retries, stats.failed),
        (1, 2, 0),
        "{stats:?}"
    );
    assert_eq!(server.request_count("create", "events"), 3);
    assert_eq!(events_in(&client, "default").await.len(), 1);
}

#[tokio::test]
async fn server_errors_outlasting_the_retries_are_a_failure() {
    let (server, client) = server_and_client().await;
    let recorder = EventRecorder::with_config(client, reporter(), quick_retries(2)).expect("recorder");
    server.fail_next(Failure::new(502).times(10).verb("create").resource("events"));
    recorder.record(&config_map("settings"), event("Synced"));
    recorder.flush(FLUSH).await.expect("flushed");
    let stats = recorder.stats();
    assert_eq!(
        (stats.published, stats.retries, stats.failed),
        (0, 2, 1),
        "{stats:?}"
    );
    assert_eq!(server.request_count("create", "events"), 3);
}

#[tokio::test]
async fn permission_errors_are_not_retried() {
    let (server, client) = server_and_client().await;
    let recorder = EventRecorder::with_config(client, reporter(), quick_retries(3)).expect("recorder");
    server.fail_next(Failure::new(403).verb("create").resource("events"));
    recorder.record(&config_map("settings"), event("Synced"));
    recorder.flush(FLUSH).await.expect("flushed");
    let stats = recorder.stats();
    assert_eq!(
        (stats.published, stats.retries, stats.failed),
        (0, 0, 1),
        "{stats:?}"
    );
    assert_eq!(server.request_count("create", "events"), 1);

    recorder.record(&config_map("settings"), event("Synced"));
    recorder.flush(FLUSH).await.expect("flushed");
    assert_eq!(recorder.stats().published, 1, "later events go through");
}

#[tokio::test]
async fn the_task_publishes_what_is_queued_and_ends_with_the_last_clone() {
    let (server, client) = server_and_client().await;
    let recorder = EventRecorder::new(client.clone(), reporter()).expect("recorder");
    let clone = recorder.clone();
    let shared = Arc::downgrade(&recorder.shared);
    server.set_delay(Some(Duration::from_millis(100)));
    clone.record(&config_map("settings"), event("Synced"));
    drop(recorder);
    drop(clone);
    tokio::time::timeout(FLUSH, async {
        while shared.upgrade().is_some() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the publishing task ends");
    server.set_delay(None);
    assert_eq!(
        events_in(&client, "default").await.len(),
        1,
        "the queued event was published"
    );
}

#[test]
fn building_outside_a_runtime_is_an_error() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (server, client) = runtime.block_on(server_and_client());
    let result = EventRecorder::new(client, reporter());
    assert_eq!(result.err(), Some(Error::NoRuntime));
    runtime.block_on(server.shutdown());
}

#[test]
fn a_stopped_runtime_is_reported_by_flush_and_counted_by_record() {
    let server_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("server runtime");
    let (server, client) = server_runtime.block_on(server_and_client());
    server.set_delay(Some(Duration::from_secs(2)));

    let recorder_runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("recorder runtime");
    let recorder = recorder_runtime
        .block_on(async { EventRecorder::new(client, reporter()) })
        .expect("recorder");
    recorder.record(&config_map("settings"), event("Synced"));
    // Let the publisher take the event and wait on the slow server, then stop its runtime.
    recorder_runtime.block_on(async { tokio::time::sleep(Duration::from_millis(100)).await });
    drop(recorder_runtime);

    let err = server_runtime
        .block_on(recorder.flush(FLUSH))
        .expect_err("the publisher is gone");
    assert_eq!(err, Error::Stopped { pending: 1 });
    recorder.record(&config_map("settings"), event("Synced"));
    let stats = recorder.stats();
    assert_eq!(
        (stats.queued, stats.dropped_stopped, stats.published),
        (1, 1, 0),
        "{stats:?}"
    );
    server_runtime.block_on(server.shutdown());
}

#[test]
fn errors_are_classified_by_status_code_and_type() {
    let status = |code: u16| {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            ..kube::core::Status::default()
        }))
    };
    for code in [429, 500, 502, 503, 504] {
        assert!(is_transient(&status(code)), "{code}");
    }
    for code in [400, 403, 404, 409, 422] {
        assert!(!is_transient(&status(code)), "{code}");
    }
    let timeout = std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out");
    assert!(is_transient(&kube::Error::Service(Box::new(timeout))));
    let decode = serde_json::from_str::<u8>("x").expect_err("not a number");
    assert!(!is_transient(&kube::Error::SerdeError(decode)));
}

#[test]
fn config_setters_keep_values_usable() {
    let config = Config::default()
        .queue_capacity(0)
        .spam_burst(0)
        .retry_delay(Duration::from_secs(5), Duration::from_secs(1));
    assert_eq!(config.queue_capacity, 1);
    assert_eq!(config.spam_burst, 1);
    assert_eq!(config.retry_delay, Duration::from_secs(1));
    let defaults = Config::default();
    assert_eq!(
        (
            defaults.queue_capacity,
            defaults.spam_burst,
            defaults.spam_refill_interval
        ),
        (1000, 25, Duration::from_secs(300))
    );
}
