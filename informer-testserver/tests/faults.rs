//! Fault injection, one test per fault.

mod support;

use std::time::{Duration, Instant};

use futures::StreamExt;
use informer_testserver::{Failure, Stall, TestServer};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use support::{get, open, pod};

async fn setup() -> (TestServer, Api<Pod>) {
    let server = TestServer::start().await.expect("start");
    server.create_namespace("ns").expect("namespace");
    let pods = Api::namespaced(server.client().expect("client"), "ns");
    (server, pods)
}

fn code(e: kube::Error) -> (u16, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason.clone()),
        other => panic!("not an API error: {other:?}"),
    }
}

async fn ends<S: futures::Stream + Unpin>(stream: &mut S) -> bool {
    loop {
        match tokio::time::timeout(Duration::from_secs(2), stream.next()).await {
            Ok(None) => return true,
            Ok(Some(_)) => continue,
            Err(_) => return false,
        }
    }
}

#[tokio::test]
async fn failing_requests_with_500() {
    let (server, pods) = setup().await;
    server.fail_next(Failure::new(500).times(2));
    assert_eq!(
        code(pods.list(&ListParams::default()).await.expect_err("fails")),
        (500, "InternalError".into())
    );
    assert_eq!(code(pods.get("x").await.expect_err("fails")).0, 500);
    assert_eq!(code(pods.get("x").await.expect_err("not found")).0, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn throttling_with_retry_after() {
    let (server, _) = setup().await;
    server.fail_next(Failure::new(429).retry_after(7).verb("list").resource("pods"));
    let discovery = get(server.addr(), "/api/v1").await;
    assert_eq!(
        discovery.status, 200,
        "other verbs and resources are not affected"
    );
    let throttled = get(server.addr(), "/api/v1/pods").await;
    assert_eq!(throttled.status, 429);
    assert_eq!(
        throttled.headers.get("retry-after").map(String::as_str),
        Some("7")
    );
    let status = throttled.json();
    assert_eq!(
        (status["reason"].as_str(), status["code"].as_u64()),
        (Some("TooManyRequests"), Some(429))
    );
    assert_eq!(status["details"]["retryAfterSeconds"], 7);
    assert_eq!(get(server.addr(), "/api/v1/pods").await.status, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn forbidden_for_one_verb() {
    let (server, pods) = setup().await;
    server.fail_next(Failure::new(403).verb("create").resource("pods"));
    pods.list(&ListParams::default()).await.expect("list is allowed");
    let e = pods
        .create(&PostParams::default(), &pod("a", &[]))
        .await
        .expect_err("forbidden");
    match e {
        kube::Error::Api(s) => {
            assert_eq!((s.code, s.reason.as_str()), (403, "Forbidden"));
            assert!(
                s.message
                    .starts_with("pods is forbidden: User \"system:anonymous\" cannot create")
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    pods.create(&PostParams::default(), &pod("a", &[]))
        .await
        .expect("allowed again");
    server.shutdown().await;
}

#[tokio::test]
async fn dropping_watches_now_and_after_events() {
    let (server, pods) = setup().await;
    let mut stream = pods
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    server.drop_watches();
    assert!(ends(&mut stream).await);

    let rv = server.resource_version().to_string();
    let mut stream = pods
        .watch(&WatchParams::default().disable_bookmarks(), &rv)
        .await
        .expect("watch")
        .boxed();
    server.drop_watches_after(2);
    for name in ["a", "b", "c"] {
        pods.create(&PostParams::default(), &pod(name, &[]))
            .await
            .expect("create");
    }
    let mut seen = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(2), stream.next()).await {
        if let Ok(WatchEvent::Added(p)) = event {
            seen.push(p.metadata.name.unwrap_or_default());
        }
    }
    assert_eq!(seen, ["a", "b"]);
    assert_eq!(server.watch_count(), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_watch_line() {
    let (server, pods) = setup().await;
    let mut raw = open(
        server.addr(),
        "GET",
        "/api/v1/pods?watch=true&resourceVersion=4",
        &[],
        b"",
    )
    .await;
    let mut typed = pods
        .watch(&WatchParams::default(), &server.resource_version().to_string())
        .await
        .expect("watch")
        .boxed();
    while server.watch_count() < 2 {
        tokio::task::yield_now().await;
    }
    server.send_malformed_watch_line();
    let line = raw.chunk().await.expect("a line");
    assert!(serde_json::from_slice::<serde_json::Value>(&line).is_err());
    let event = tokio::time::timeout(Duration::from_secs(2), typed.next())
        .await
        .expect("in time")
        .expect("open");
    assert!(event.is_err(), "kube reports the undecodable line");
    server.shutdown().await;
}

#[tokio::test]
async fn compaction_expires_old_versions() {
    let (server, pods) = setup().await;
    let a = pods
        .create(&PostParams::default(), &pod("a", &[]))
        .await
        .expect("create");
    pods.create(&PostParams::default(), &pod("b", &[]))
        .await
        .expect("create");
    server.compact();
    let old = a.metadata.resource_version.expect("rv");
    let mut stream = pods
        .watch(&WatchParams::default(), &old)
        .await
        .expect("watch")
        .boxed();
    match stream.next().await {
        Some(Ok(WatchEvent::Error(s))) => assert_eq!((s.code, s.reason.as_str()), (410, "Expired")),
        other => panic!("expected 410, got {other:?}"),
    }
    let current = server.resource_version().to_string();
    let mut stream = pods
        .watch(&WatchParams::default().disable_bookmarks(), &current)
        .await
        .expect("watch")
        .boxed();
    pods.create(&PostParams::default(), &pod("c", &[]))
        .await
        .expect("create");
    assert!(matches!(stream.next().await, Some(Ok(WatchEvent::Added(_)))));
    server.shutdown().await;
}

#[tokio::test]
async fn delayed_responses() {
    let (server, pods) = setup().await;
    server.set_delay(Some(Duration::from_millis(150)));
    let start = Instant::now();
    pods.list(&ListParams::default()).await.expect("list");
    assert!(start.elapsed() >= Duration::from_millis(150));
    server.clear_faults();
    let start = Instant::now();
    pods.list(&ListParams::default()).await.expect("list");
    assert!(start.elapsed() < Duration::from_millis(150));
    server.shutdown().await;
}

#[tokio::test]
async fn stalls_and_failures_for_one_client() {
    let server = TestServer::start().await.expect("start");
    let a: Api<Pod> = Api::namespaced(server.named_client("a").expect("client a"), "ns");
    let b: Api<Pod> = Api::namespaced(server.named_client("b").expect("client b"), "ns");
    server.stall_next(
        Stall::new(Duration::from_millis(300))
            .times(usize::MAX)
            .verb("list")
            .client("b"),
    );
    server.fail_next(Failure::new(500).verb("get").client("a"));
    let start = Instant::now();
    a.list(&ListParams::default()).await.expect("list a");
    assert!(start.elapsed() < Duration::from_millis(300), "a is not stalled");
    let start = Instant::now();
    b.list(&ListParams::default()).await.expect("list b");
    assert!(start.elapsed() >= Duration::from_millis(300), "b is stalled");
    assert_eq!(code(b.get("x").await.expect_err("not found")).0, 404);
    assert_eq!(code(a.get("x").await.expect_err("injected")).0, 500);
    // A client gives up on a stalled request; the rule stays armed until cleared.
    let stalled = tokio::time::timeout(Duration::from_millis(50), b.list(&ListParams::default())).await;
    assert!(stalled.is_err(), "still stalled");
    server.clear_faults();
    let start = Instant::now();
    b.list(&ListParams::default()).await.expect("list b");
    assert!(start.elapsed() < Duration::from_millis(300), "cleared");
    let clients: Vec<_> = server.requests().into_iter().map(|r| r.client).collect();
    assert_eq!(clients[..2], [Some("a".to_string()), Some("b".to_string())]);
    server.shutdown().await;
}

#[tokio::test]
async fn restart_keeps_data_and_closes_watches() {
    let (server, pods) = setup().await;
    pods.create(&PostParams::default(), &pod("a", &[]))
        .await
        .expect("create");
    let rv = server.resource_version().to_string();
    let mut stream = pods
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    server.restart();
    assert!(ends(&mut stream).await);
    // a fresh connection sees the same data, and watches resume from the old resourceVersion
    let pods: Api<Pod> = Api::namespaced(server.client().expect("client"), "ns");
    assert_eq!(
        pods.list(&ListParams::default()).await.expect("list").items.len(),
        1
    );
    let mut stream = pods
        .watch(&WatchParams::default().disable_bookmarks(), &rv)
        .await
        .expect("watch")
        .boxed();
    pods.create(&PostParams::default(), &pod("b", &[]))
        .await
        .expect("create");
    assert!(matches!(stream.next().await, Some(Ok(WatchEvent::Added(_)))));
    server.shutdown().await;
}
