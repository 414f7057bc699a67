//! Decoding a watch response body: one JSON event per line, decoded straight from the
//! response's chunks.
//!
//! kube-apiserver writes every watch event as one line, usually in one HTTP chunk of its own.
//! The lines are cut as every watch body is (the crate-private `body_frames`): a line that
//! lies inside one chunk is decoded in place. No `String` is built per event.
//!
//! Public only with the `unstable-watch-body` feature (for the workspace's benchmark), and not
//! part of the supported API then either.
#![cfg_attr(not(feature = "unstable-watch-body"), allow(unreachable_pub))]

use std::{marker::PhantomData, sync::Arc};

use bytes::Bytes;
use futures::Stream;
use kube::core::{Status, WatchEvent};
use serde::de::DeserializeOwned;

use crate::source::{
    BoxError, Error,
    body_frames::{FrameDecoder, Lines, decode_frames},
    exact_json,
    skip::Skip,
};

/// The events in a watch body, given as a stream of its chunks
/// ([`KubeListerWatcher`](crate::source::KubeListerWatcher) uses it on kube's responses).
///
/// A line that is not an event but a `Status` (an error the server wrote instead of an event)
/// becomes [`Error::Api`]; a line that is neither becomes [`Error::Decode`] and the stream goes
/// on with the next line. A body error ends the stream with it, dropping a line it cut short:
/// an [`Error`] as it is, anything else as [`Error::Transport`]. When the error means that the
/// connection ended (reset, closed in the middle of a chunk, timed out:
/// [`Error::is_probable_eof`]), the reflector re-opens the watch from the last event; a body
/// that ends without an error is a watch the server closed.
///
/// ```
/// use bytes::Bytes;
/// use futures::{StreamExt, stream};
/// use informer_runtime::source::watch_body::decode_watch_body;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::core::WatchEvent;
///
/// # tokio_test_block_on(async {
/// let line = r#"{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"7"}}}"#;
/// // one event cut over two chunks
/// let chunks = stream::iter([
///     Ok::<_, std::io::Error>(Bytes::from(&line[..20])),
///     Ok(Bytes::from(format!("{}\n", &line[20..]))),
/// ]);
/// let events: Vec<_> = decode_watch_body::<ConfigMap, _, _>(chunks).collect().await;
/// assert!(matches!(&events[..], [Ok(WatchEvent::Added(cm))] if cm.metadata.name.as_deref() == Some("a")));
/// # });
/// # fn tokio_test_block_on(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[cfg(any(test, feature = "unstable-watch-body"))]
pub fn decode_watch_body<K, S, E>(body: S) -> impl Stream<Item = Result<WatchEvent<K>, Error>> + Send
where
    K: DeserializeOwned + Send,
    S: Stream<Item = Result<Bytes, E>> + Unpin + Send,
    E: Into<BoxError>,
{
    decode_watch_body_skipping(body, None)
}

/// Decodes one JSON text as the watch decoder decodes each line and the lister-watcher each
/// list (every `Vec` at its exact capacity), for the workspace's benchmark.
#[cfg(feature = "unstable-watch-body")]
pub fn decode_text<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    exact_json::from_str(text)
}

/// Decodes one CBOR data item (an answer, in the self-described tag or not) as the
/// lister-watcher decodes CBOR lists, for the workspace's benchmark.
///
/// # Errors
///
/// [`Error::Decode`] when the item is cut short, malformed, or does not fit `T`.
#[cfg(feature = "unstable-watch-body")]
pub fn decode_cbor<T: DeserializeOwned>(item: &[u8]) -> Result<T, Error> {
    crate::source::cbor::from_slice(item).map_err(|err| Error::Decode(Box::new(err)))
}

/// Decodes one item of a CBOR watch body as the lister-watcher does, for the workspace's
/// benchmark.
///
/// # Errors
///
/// As the watch body's decoder reports an item: [`Error::Decode`], or [`Error::Api`] for a
/// `Status`.
#[cfg(feature = "unstable-watch-body")]
pub fn decode_cbor_event<K: DeserializeOwned>(item: &[u8]) -> Result<WatchEvent<K>, Error> {
    crate::source::cbor::decode_event(item, None)
}

/// `deserializer` with its byte strings read as strings where a string is wanted (as the CBOR
/// decoder reads kube-apiserver's CBOR), for comparing CBOR crates in the benchmark.
#[cfg(feature = "unstable-watch-body")]
pub fn cbor_texts<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> impl serde::Deserializer<'de, Error = D::Error> {
    crate::source::cbor::Texts::new(deserializer)
}

/// [`decode_watch_body`], passing over what `skip` names in each event.
pub(crate) fn decode_watch_body_skipping<K, S, E>(
    body: S,
    skip: Option<Arc<Skip>>,
) -> impl Stream<Item = Result<WatchEvent<K>, Error>> + Send
where
    K: DeserializeOwned + Send,
    S: Stream<Item = Result<Bytes, E>> + Unpin + Send,
    E: Into<BoxError>,
{
    decode_frames(
        body,
        Lines,
        JsonEvents {
            skip,
            _events: PhantomData,
        },
    )
}

/// Decodes each line into a watch event of `K`.
struct JsonEvents<K> {
    /// What is skipped in each event.
    skip: Option<Arc<Skip>>,
    _events: PhantomData<fn() -> K>,
}

impl<K: DeserializeOwned> FrameDecoder for JsonEvents<K> {
    type Item = WatchEvent<K>;

    fn decode(&self, line: &[u8], last: bool) -> Option<Result<WatchEvent<K>, Error>> {
        match decode_line(line, self.skip.as_deref()) {
            // A last line without its newline: decoded if complete, dropped if cut short.
            Some(Err(Error::Decode(_))) if last => None,
            event => event,
        }
    }
}

/// Decodes one line: `None` for a blank line.
fn decode_line<K: DeserializeOwned>(
    line: &[u8],
    skip: Option<&Skip>,
) -> Option<Result<WatchEvent<K>, Error>> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return None;
    }
    Some(
        match exact_json::decode_slice_skipping::<WatchEvent<K>>(line, skip) {
            Ok(event) => Ok(event),
            Err(err) => match serde_json::from_slice::<Status>(line) {
                Ok(status) if status.code != 0 || status.status.is_some() => {
                    Err(Error::Api(Box::new(status)))
                }
                _ => Err(Error::Decode(Box::new(err))),
            },
        },
    )
}

#[cfg(test)]
mod tests {
    use futures::{StreamExt, stream};
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::source::test_support::{body, describe};

    fn event_line(kind: &str, name: &str, rv: u32) -> String {
        format!(
            r#"{{"type":"{kind}","object":{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"default","resourceVersion":"{rv}"}}}}}}"#
        ) + "\n"
    }

    async fn decode_all<E: Into<BoxError>>(
        body: impl Stream<Item = Result<Bytes, E>> + Unpin + Send,
    ) -> Vec<Result<WatchEvent<ConfigMap>, Error>> {
        decode_watch_body::<ConfigMap, _, _>(body).collect().await
    }

    #[tokio::test]
    async fn one_event_per_chunk() {
        let (a, b) = (event_line("ADDED", "a", 1), event_line("MODIFIED", "a", 2));
        let events = decode_all(body([a.as_bytes(), b.as_bytes()])).await;
        assert_eq!(describe(&events), ["added a", "modified a"]);
    }

    #[tokio::test]
    async fn several_events_in_one_chunk_and_one_event_over_several_chunks() {
        let (a, b, c) = (
            event_line("ADDED", "a", 1),
            event_line("ADDED", "b", 2),
            event_line("DELETED", "a", 3),
        );
        let joined = format!("{a}{b}{c}");
        let bytes = joined.as_bytes();
        // every way of cutting the body into three chunks decodes to the same events
        for first in [1, 10, a.len() - 1, a.len(), a.len() + 1, a.len() + b.len()] {
            let second = first + 7;
            let events = decode_all(body([&bytes[..first], &bytes[first..second], &bytes[second..]])).await;
            assert_eq!(
                describe(&events),
                ["added a", "added b", "deleted a"],
                "cut at {first} and {second}"
            );
        }
        let one_byte_chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(
            describe(&decode_all(body(&one_byte_chunks)).await),
            ["added a", "added b", "deleted a"]
        );
    }

    #[tokio::test]
    async fn blank_lines_and_carriage_returns_are_skipped() {
        let a = event_line("ADDED", "a", 1).replace('\n', "\r\n");
        let events = decode_all(body([b"\n", a.as_bytes(), b"\r\n \n"])).await;
        assert_eq!(describe(&events), ["added a"]);
    }

    #[tokio::test]
    async fn a_last_line_without_newline_is_decoded_if_complete_and_dropped_if_cut() {
        let a = event_line("ADDED", "a", 1);
        let events = decode_all(body([a.trim_end().as_bytes()])).await;
        assert_eq!(describe(&events), ["added a"]);
        let events = decode_all(body([&a.as_bytes()[..20]])).await;
        assert!(
            events.is_empty(),
            "a cut line ends the watch like a close: {:?}",
            describe(&events)
        );
    }

    #[tokio::test]
    async fn error_events_and_status_lines() {
        let error_event = r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}"#.to_owned() + "\n";
        let status_line = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden","reason":"Forbidden","code":403}"#.to_owned() + "\n";
        let events = decode_all(body([error_event.as_bytes(), status_line.as_bytes()])).await;
        assert_eq!(describe(&events), ["error event 410", "status 403"]);
    }

    #[tokio::test]
    async fn a_malformed_line_is_a_decode_error_and_later_lines_still_decode() {
        let b = event_line("ADDED", "b", 2);
        let events = decode_all(body([
            b"{\"type\":\"ADDED\",\"object\":{\"metadata\":\n" as &[u8],
            b"not json\n",
            b.as_bytes(),
        ]))
        .await;
        assert_eq!(describe(&events), ["decode error", "decode error", "added b"]);
        // a JSON object that is neither an event nor a Status is not taken for an empty Status
        let events = decode_all(body([b"{\"unexpected\":true}\n"])).await;
        assert_eq!(describe(&events), ["decode error"]);
        let events = decode_all(body([
            b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xff\"}}}\n",
        ]))
        .await;
        assert_eq!(describe(&events), ["decode error"], "a line that is not UTF-8");
    }

    #[tokio::test]
    async fn a_connection_that_ends_ends_the_stream_with_a_probable_eof_and_other_body_errors_are_reported() {
        use std::io::{Error as IoError, ErrorKind};
        let a = event_line("ADDED", "a", 1);
        for kind in [
            ErrorKind::UnexpectedEof,
            ErrorKind::ConnectionReset,
            ErrorKind::TimedOut,
        ] {
            let cut = stream::iter(vec![
                Ok(Bytes::from(a.clone())),
                Ok(Bytes::from_static(b"{\"type\":")),
                Err(IoError::new(kind, "from the socket")),
                Ok(Bytes::from(event_line("ADDED", "b", 2))),
            ]);
            let events = decode_all(cut).await;
            assert_eq!(
                describe(&events),
                ["added a", "transport error"],
                "{kind:?}: the cut line is dropped"
            );
            assert!(
                events[1].as_ref().is_err_and(Error::is_probable_eof),
                "{kind:?}: the connection ended, not the server's watch"
            );
        }

        let other = stream::iter(vec![
            Ok(Bytes::from(a)),
            Err(IoError::new(ErrorKind::InvalidData, "bad chunk size")),
            Ok(Bytes::from(event_line("ADDED", "b", 2))),
        ]);
        let events = decode_all(other).await;
        assert_eq!(
            describe(&events),
            ["added a", "transport error"],
            "nothing is read after an error"
        );
    }

    #[tokio::test]
    async fn a_lister_watcher_error_in_the_body_keeps_its_class() {
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        let body = stream::iter(vec![Err::<Bytes, _>(Error::Transport(Box::new(reset)))]);
        let events = decode_all(body).await;
        assert!(
            matches!(&events[..], [Err(err)] if err.is_probable_eof()),
            "a reset behind a lister-watcher error ends the stream with it"
        );
        let body = stream::iter(vec![Err::<Bytes, _>(Error::Decode("not gzip".into()))]);
        assert_eq!(
            describe(&decode_all(body).await),
            ["decode error"],
            "not wrapped in a transport error"
        );
    }
}
