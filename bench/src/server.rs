//! A thin HTTP server over loopback that serves the pre-rendered bytes and nothing else.
//!
//! - `GET /api/v1/pods?limit=..&continue=..`: the pre-rendered page the token names (pages
//!   always hold [`PAGE_SIZE`](crate::render::PAGE_SIZE) items, whatever `limit` says);
//! - `GET /api/v1/pods?watch=true&resourceVersion=<list's>`: once [`Server::release`] was
//!   called, every pre-rendered event line, one HTTP chunk each; then the connection stays
//!   open (like a real watch) until the client closes it or the server stops;
//! - `GET /api/v1/pods?watch=true&sendInitialEvents=true`: one `ADDED` line per pod and the
//!   end bookmark at once, then the events as above;
//! - a watch from any other resource version stays open without events (a watcher that
//!   re-opens its watch after the last event gets nothing twice);
//! - `POST /release`: as [`Server::release`], for a consumer in another process that chooses
//!   when its watch gets the events (the priority-queue latency phase);
//! - with a `labelSelector`: the same, over the pages of the rendered selection of that
//!   selector (see [`Rendered::with_selection`], [`Rendered::selections_only`]); another
//!   selector is refused with a 400 (the server filters nothing itself), and so is a list
//!   without a selector when the list of every pod was not rendered;
//! - `POST /expire`: as after a compaction, every open watch ends with a `410 Expired` error
//!   event, and so does every watch opened before the next list, so its client relists (for the
//!   memory peak of a relist).
//!
//! A request whose `Accept` names `application/vnd.kubernetes.protobuf` first (with or without
//! parameters, as a metadata-only request's `as=PartialObjectMetadataList` does) is answered in
//! protobuf, as kube-apiserver answers built-in types: list pages as protobuf documents
//! (`Content-Type: application/vnd.kubernetes.protobuf`), watches as one protobuf frame per
//! chunk (`application/vnd.kubernetes.protobuf;stream=watch`), errors as protobuf `Status`es.
//! Any other request is answered in JSON. A metadata-only watch is sent the same pod events
//! as a full one, in either encoding (the server renders no metadata-only events).
//!
//! Holding the events until [`Server::release`] lets a benchmark measure the sync and the
//! watch phase separately. The server runs on a thread of its own (a current-thread runtime),
//! so its CPU time can be told apart from the consumer's.

use std::{convert::Infallible, net::SocketAddr, sync::Arc, thread::JoinHandle};

use bytes::Bytes;
use futures::StreamExt;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::{body::Frame, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use informer_runtime::protobuf;
use serde_json::json;
use tokio::{net::TcpListener, sync::watch};

use crate::{
    cpu::{self, ThreadCpu},
    render::{Encoding, Rendered, protobuf_bytes},
};

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A running server; stopped (with every connection) on [`Server::stop`] or drop.
#[derive(Debug)]
pub(crate) struct Server {
    url: String,
    release: watch::Sender<bool>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    cpu: ThreadCpu,
}

struct Shared {
    rendered: Arc<Rendered>,
    release: watch::Receiver<bool>,
    /// What `POST /release` sets (the same channel as [`Server::release`]).
    release_by_request: watch::Sender<bool>,
    /// Bumped by `POST /expire`: watches opened before end with a 410.
    expired: watch::Sender<u64>,
    /// Set by `POST /expire`, cleared by the next list: watches opened meanwhile get a 410.
    expired_until_list: std::sync::atomic::AtomicBool,
}

impl Server {
    /// Starts serving `rendered` on a free loopback port.
    pub(crate) fn start(rendered: Arc<Rendered>) -> std::io::Result<Self> {
        let (release, release_rx) = watch::channel(false);
        let (stop, stop_rx) = tokio::sync::oneshot::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let shared = Arc::new(Shared {
            rendered,
            release: release_rx,
            release_by_request: release.clone(),
            expired: watch::channel(0).0,
            expired_until_list: std::sync::atomic::AtomicBool::new(false),
        });
        let thread = std::thread::Builder::new()
            .name("bench-server".into())
            .spawn(move || serve(shared, stop_rx, ready_tx))?;
        let (addr, cpu) = ready_rx
            .recv()
            .map_err(|_| std::io::Error::other("the server thread ended before listening"))??;
        Ok(Self {
            url: format!("http://{addr}"),
            release,
            stop: Some(stop),
            thread: Some(thread),
            cpu,
        })
    }

    /// The base URL, such as `http://127.0.0.1:40000`.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// A kube client for the server.
    pub(crate) fn client(&self) -> kube::Client {
        client(&self.url)
    }

    /// Lets watches from the list's resource version stream their events.
    pub(crate) fn release(&self) {
        cpu::enable_perf();
        self.release.send_replace(true);
    }

    /// The CPU time the server's thread used so far.
    pub(crate) fn cpu(&self) -> &ThreadCpu {
        &self.cpu
    }

    /// Stops the server and closes every connection.
    pub(crate) fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Makes every watch open on the server at `url` end with a 410.
pub(crate) async fn expire_watches(client: &kube::Client) {
    let request = http::Request::post("/expire")
        .body(Vec::new())
        .expect("a request");
    client
        .request_text(request)
        .await
        .expect("the bench server expires its watches");
}

/// Lets the watches of the server behind `client` stream their events (`POST /release`).
pub(crate) async fn release_events(client: &kube::Client) {
    let request = http::Request::post("/release")
        .body(Vec::new())
        .expect("a request");
    client
        .request_text(request)
        .await
        .expect("the bench server releases its events");
}

/// A kube client for a server at `url`.
pub(crate) fn client(url: &str) -> kube::Client {
    let uri: http::Uri = url.parse().expect("the server URL is a valid URI");
    kube::Client::try_from(kube::Config::new(uri)).expect("a kube client for a plain-HTTP URL")
}

type Ready = std::io::Result<(SocketAddr, ThreadCpu)>;

fn serve(
    shared: Arc<Shared>,
    stop: tokio::sync::oneshot::Receiver<()>,
    ready: std::sync::mpsc::Sender<Ready>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            let _ = ready.send(Err(err));
            return;
        }
    };
    runtime.block_on(async move {
        let listener = match TcpListener::bind("127.0.0.1:0").await {
            Ok(listener) => listener,
            Err(err) => {
                let _ = ready.send(Err(err));
                return;
            }
        };
        let bound = listener
            .local_addr()
            .and_then(|addr| Ok((addr, ThreadCpu::current()?)));
        let failed = bound.is_err();
        let _ = ready.send(bound);
        if failed {
            return;
        }
        let accept = async {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let shared = Arc::clone(&shared);
                        async move { Ok::<_, Infallible>(respond(&shared, &request)) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        };
        tokio::select! {
            () = accept => {}
            _ = stop => {}
        }
    });
    // Dropping the runtime drops every connection task.
}

/// The `Content-Type` of a document in `encoding`.
fn document_type(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Json => "application/json",
        Encoding::Protobuf => protobuf::MEDIA_TYPE,
    }
}

/// The `Content-Type` of a watch stream in `encoding`.
fn watch_type(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Json => "application/json",
        Encoding::Protobuf => protobuf::WATCH_MEDIA_TYPE,
    }
}

/// What a request's `Accept` asks for: protobuf when its first media type is protobuf's.
fn asked_encoding<B>(request: &Request<B>) -> Encoding {
    let first = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .and_then(|accept| accept.split(',').next())
        .and_then(|media| media.split(';').next())
        .unwrap_or_default();
    if first.trim().eq_ignore_ascii_case(protobuf::MEDIA_TYPE) {
        Encoding::Protobuf
    } else {
        Encoding::Json
    }
}

fn full(status: StatusCode, body: Bytes, encoding: Encoding) -> Response<Body> {
    let mut response = Response::new(Full::new(body).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(document_type(encoding)),
    );
    response
}

/// A failure `Status` with `reason`, `code` and `message`, in `encoding`.
fn status_document(reason: &str, code: u16, message: &str, encoding: Encoding) -> Bytes {
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "message": message,
        "code": code,
    });
    Bytes::from(match encoding {
        Encoding::Json => serde_json::to_vec(&status).unwrap_or_default(),
        Encoding::Protobuf => protobuf_bytes(&status),
    })
}

/// A failure response with its `Status`.
fn failure(status: StatusCode, reason: &str, message: &str, encoding: Encoding) -> Response<Body> {
    full(
        status,
        status_document(reason, status.as_u16(), message, encoding),
        encoding,
    )
}

/// The `ERROR` event that ends a watch with a 410, as a JSON line or a protobuf frame.
fn expired_event(encoding: Encoding) -> Bytes {
    let status = status_document("Expired", 410, "the watch expired", encoding);
    match encoding {
        Encoding::Json => {
            let mut line = b"{\"type\":\"ERROR\",\"object\":".to_vec();
            line.extend_from_slice(&status);
            line.extend_from_slice(b"}\n");
            Bytes::from(line)
        }
        Encoding::Protobuf => Bytes::from(
            protobuf::WatchFrame {
                event_type: "ERROR",
                object: &status,
            }
            .encode(),
        ),
    }
}

/// A 400 with `message`.
fn refused(message: &str, encoding: Encoding) -> Response<Body> {
    failure(StatusCode::BAD_REQUEST, "BadRequest", message, encoding)
}

fn respond<B>(shared: &Shared, request: &Request<B>) -> Response<Body> {
    let encoding = asked_encoding(request);
    if request.uri().path() == "/release" {
        shared.release_by_request.send_replace(true);
        return full(StatusCode::OK, Bytes::from_static(b"{}"), Encoding::Json);
    }
    if request.uri().path() == "/expire" {
        shared
            .expired_until_list
            .store(true, std::sync::atomic::Ordering::SeqCst);
        shared.expired.send_modify(|generation| *generation += 1);
        return full(StatusCode::OK, Bytes::from_static(b"{}"), Encoding::Json);
    }
    if request.uri().path() != "/api/v1/pods" {
        return failure(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the bench server serves only pods",
            encoding,
        );
    }
    let query = request.uri().query().unwrap_or_default();
    let param = |name: &str| {
        form_urlencoded::parse(query.as_bytes())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    };
    let is_true = |name: &str| param(name).is_some_and(|v| v == "true" || v == "1");
    let rendered = &shared.rendered;
    let selection = match param("labelSelector").filter(|s| !s.is_empty()) {
        None if rendered.serves_every_pod() => None,
        None => return refused("the bench server serves only its rendered selections", encoding),
        Some(selector) => match rendered.selection(&selector) {
            Some(selection) => Some(selection),
            None => return refused("the bench server serves only its rendered selections", encoding),
        },
    };
    if !is_true("watch") {
        shared
            .expired_until_list
            .store(false, std::sync::atomic::Ordering::SeqCst);
        let accept = request
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let metadata_only = accept.contains("as=PartialObjectMetadataList");
        let page = match selection {
            Some(selection) => selection.page_for(param("continue").as_deref(), encoding),
            None => rendered.page_for(param("continue").as_deref(), metadata_only, encoding),
        };
        return match page {
            Some(page) => full(StatusCode::OK, page.clone(), encoding),
            None => failure(
                StatusCode::GONE,
                "Expired",
                "the continue token is unknown",
                encoding,
            ),
        };
    }
    watch_response(shared, encoding, &param, is_true("sendInitialEvents"))
}

/// A watch: the initial events if asked for, the events once released if it starts from the
/// list's resource version, then nothing until the next expiry, which ends it with a 410.
fn watch_response(
    shared: &Shared,
    encoding: Encoding,
    param: &dyn Fn(&str) -> Option<String>,
    send_initial_events: bool,
) -> Response<Body> {
    let rendered = &shared.rendered;
    let initial: Vec<Bytes> = if send_initial_events {
        rendered.initial_events(encoding)
    } else {
        Vec::new()
    };
    let from_list = send_initial_events
        || param("resourceVersion").as_deref() == Some(rendered.list_resource_version.to_string().as_str());
    let events = if from_list {
        rendered.events(encoding).to_vec()
    } else {
        Vec::new()
    };
    let mut release = shared.release.clone();
    let gated = futures::stream::once(async move {
        let _ = release.wait_for(|released| *released).await;
        futures::stream::iter(events)
    })
    .flatten();
    // Open until the next `POST /expire`, which ends it with a 410 (at once after an expiry
    // not followed by a list yet).
    let mut expired = shared.expired.subscribe();
    let already = shared
        .expired_until_list
        .load(std::sync::atomic::Ordering::SeqCst);
    let expiry = async move {
        if !already {
            let _ = expired.changed().await;
        }
    };
    let gone = futures::stream::once(async move { expired_event(encoding) });
    let chunks = futures::stream::iter(initial)
        .chain(gated)
        .chain(futures::stream::pending())
        .take_until(expiry)
        .chain(gone)
        .map(|chunk| Ok::<_, Infallible>(Frame::data(chunk)));
    let mut response = Response::new(StreamBody::new(chunks).boxed_unsync());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(watch_type(encoding)),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepting(accept: &str) -> Request<()> {
        Request::get("/api/v1/pods")
            .header(header::ACCEPT, accept)
            .body(())
            .expect("a request")
    }

    #[test]
    fn protobuf_is_served_when_asked_for_first() {
        let asked = |accept| asked_encoding(&accepting(accept));
        assert_eq!(
            asked("application/vnd.kubernetes.protobuf, application/json"),
            Encoding::Protobuf
        );
        assert_eq!(
            asked(
                "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json"
            ),
            Encoding::Protobuf
        );
        assert_eq!(
            asked("application/json, application/vnd.kubernetes.protobuf"),
            Encoding::Json
        );
        assert_eq!(asked("application/json"), Encoding::Json);
        assert_eq!(
            asked_encoding(&Request::get("/").body(()).expect("a request")),
            Encoding::Json
        );
    }

    #[test]
    fn an_expired_watch_ends_with_a_410_in_the_encoding_asked_for() {
        let line = expired_event(Encoding::Json);
        let event: kube::core::WatchEvent<k8s_openapi::api::core::v1::Pod> =
            serde_json::from_slice(&line).expect("a JSON event");
        assert!(matches!(event, kube::core::WatchEvent::Error(status) if status.code == 410));
        let frame = expired_event(Encoding::Protobuf);
        let event = protobuf::WatchFrame::parse(&frame[4..]).expect("a frame");
        assert_eq!(event.event_type, "ERROR");
        let status: kube::core::Status = protobuf::from_slice(event.object).expect("a Status");
        assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    }
}
