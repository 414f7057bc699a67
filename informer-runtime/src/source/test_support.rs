//! What the source's tests share: a response body given chunk by chunk, watch events of config
//! maps told in a line each, and, over HTTP against the embedded API server, the `Accept` a
//! request sent and the first events of a watch.

use bytes::Bytes;
use futures::{StreamExt, stream};
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::WatchEvent;

use crate::source::{Error, INITIAL_EVENTS_END_ANNOTATION, KubeListerWatcher, ListOptions, ListerWatcher};

/// A response body as a stream of its chunks.
pub(crate) type Body = stream::Iter<std::vec::IntoIter<Result<Bytes, std::io::Error>>>;

/// A body of `parts`, one chunk each.
pub(crate) fn body<P: AsRef<[u8]>>(parts: impl IntoIterator<Item = P>) -> Body {
    let chunks: Vec<_> = parts
        .into_iter()
        .map(|part| Ok(Bytes::copy_from_slice(part.as_ref())))
        .collect();
    stream::iter(chunks)
}

/// A body of `bytes` cut into chunks of `size` bytes (at least 1).
pub(crate) fn body_in_chunks_of(bytes: &[u8], size: usize) -> Body {
    body(bytes.chunks(size.max(1)))
}

/// Each event or error in a line: `added a`, `bookmark 7` (with the initial-events-end
/// annotation's value after it when there is one), `status 410`, `decode error`, ...
pub(crate) fn describe(events: &[Result<WatchEvent<ConfigMap>, Error>]) -> Vec<String> {
    let name = |cm: &ConfigMap| cm.metadata.name.clone().unwrap_or_default();
    events
        .iter()
        .map(|event| match event {
            Ok(WatchEvent::Added(cm)) => format!("added {}", name(cm)),
            Ok(WatchEvent::Modified(cm)) => format!("modified {}", name(cm)),
            Ok(WatchEvent::Deleted(cm)) => format!("deleted {}", name(cm)),
            Ok(WatchEvent::Bookmark(b)) => match b.metadata.annotations.get(INITIAL_EVENTS_END_ANNOTATION) {
                Some(end) => format!("bookmark {} {end}", b.metadata.resource_version),
                None => format!("bookmark {}", b.metadata.resource_version),
            },
            Ok(WatchEvent::Error(status)) => format!("error event {}", status.code),
            Err(Error::Api(status)) => format!("status {}", status.code),
            Err(Error::Decode(_)) => "decode error".into(),
            Err(Error::Transport(_)) => "transport error".into(),
            Err(Error::Connect(_)) => "connect error".into(),
            Err(other) => format!("other error {other}"),
        })
        .collect()
}

/// The `Accept` header of the last `verb` request on `resource` the server saw (empty when it
/// had none).
pub(crate) fn last_accept(server: &TestServer, verb: &str, resource: &str) -> String {
    server
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.verb == verb && r.resource == resource)
        .map(|r| r.accept)
        .unwrap_or_default()
}

/// The first `count` events of a watch from `from` (with bookmarks when `bookmarks`).
pub(crate) async fn watched<K: Clone>(
    lister_watcher: &KubeListerWatcher<K>,
    from: &str,
    count: usize,
    bookmarks: bool,
) -> Vec<WatchEvent<K>>
where
    KubeListerWatcher<K>: ListerWatcher<K>,
{
    let options = ListOptions {
        resource_version: Some(from.to_owned()),
        timeout_seconds: Some(5),
        allow_watch_bookmarks: bookmarks,
        ..ListOptions::default()
    };
    let stream = lister_watcher.watch(&options).await.expect("a watch");
    stream.take(count).map(|e| e.expect("an event")).collect().await
}
