//! A TCP proxy that resets connections carrying watches, as a load balancer or a draining API
//! server does: [`ResetProxy`].

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::{JoinHandle, JoinSet};

/// Bytes read from one side of a connection at a time.
const BUFFER_SIZE: usize = 16 * 1024;

/// A request head (or a chunk-size or trailer line) longer than this stops the scan of its
/// connection: its later requests are forwarded without being looked at.
const MAX_HEAD_SIZE: usize = 64 * 1024;

/// Errors of starting a [`ResetProxy`] or making a client for it.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The listening socket could not be opened.
    #[error("failed to bind the proxy to 127.0.0.1")]
    Bind(#[source] io::Error),
    /// The proxy URL is not a valid URI (cannot happen for 127.0.0.1).
    #[error("failed to parse the proxy url {0}")]
    Url(String),
    /// kube could not build a client.
    #[error("failed to build a kube client for the proxy")]
    Client(#[source] kube::Error),
}

/// What a [`ResetProxy`] has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProxyStats {
    /// Client connections accepted.
    pub connections: u64,
    /// Connections that carried at least one watch request.
    pub watch_connections: u64,
    /// Watch requests seen, forwarded or reset before they reached the server.
    pub watch_requests: u64,
    /// Connections closed with a reset.
    pub resets: u64,
}

/// A TCP proxy on 127.0.0.1 in front of an API server (usually a
/// [`TestServer`](crate::TestServer)) that resets the connections carrying watches, to test
/// how clients and controllers survive connection resets.
///
/// Every connection to the proxy is forwarded byte for byte to the upstream address. The proxy
/// follows the HTTP/1 requests on each connection and knows which connections carry a watch
/// (a request whose query has `watch=true` or `watch=1`); with keep-alive, a connection that
/// carried a list may carry a watch later, and the other way round. A reset closes both the
/// client's and the upstream connection with a TCP RST (`SO_LINGER` 0): the client reads
/// "connection reset by peer", as after a load balancer or an API server drain.
///
/// - [`reset_watches`](Self::reset_watches) resets every connection carrying a watch now;
/// - [`reset_connections`](Self::reset_connections) resets every connection;
/// - [`reset_watches_after_bytes`](Self::reset_watches_after_bytes) resets each watch once
///   its response has reached a number of bytes, usually in the middle of an event;
/// - [`reset_next_watch_requests`](Self::reset_next_watch_requests) resets the next watches
///   before any response, as they are being opened.
///
/// Dropping the proxy (or [`shutdown`](Self::shutdown)) stops accepting and closes every
/// connection.
///
/// ```
/// use futures::StreamExt;
/// use informer_testserver::{ResetProxy, TestServer};
/// use k8s_openapi::api::core::v1::Pod;
/// use kube::api::{Api, WatchParams};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = TestServer::start().await?;
/// let proxy = ResetProxy::start(server.addr()).await?;
/// // Clients of the proxy (informers built on it too) reach the server through it.
/// let pods: Api<Pod> = Api::default_namespaced(proxy.client()?);
/// let mut events = pods.watch(&WatchParams::default(), "0").await?.boxed();
///
/// // The watch's response has started: the proxy has seen its request.
/// assert_eq!(proxy.open_watches(), 1);
/// assert_eq!(proxy.reset_watches(), 1);
/// // The client reads "connection reset by peer"; kube's stream reports it and ends.
/// assert!(matches!(events.next().await, Some(Err(_))));
/// assert_eq!(proxy.stats().resets, 1);
///
/// // Cut every later watch after 4 KiB of its response, and reset the next two watch
/// // requests before they reach the server.
/// proxy.reset_watches_after_bytes(4096);
/// proxy.reset_next_watch_requests(2);
/// proxy.clear_faults();
/// proxy.shutdown().await;
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct ResetProxy {
    shared: Arc<Shared>,
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl ResetProxy {
    /// Listens on 127.0.0.1 at a port chosen by the OS and forwards every connection to
    /// `upstream` (for a [`TestServer`](crate::TestServer), its
    /// [`addr`](crate::TestServer::addr)).
    pub async fn start(upstream: SocketAddr) -> Result<Self, ProxyError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(ProxyError::Bind)?;
        let addr = listener.local_addr().map_err(ProxyError::Bind)?;
        let shared = Arc::new(Shared::new(upstream));
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, shared.clone(), stopped));
        Ok(Self {
            shared,
            addr,
            stop,
            task,
        })
    }

    /// `http://127.0.0.1:<port>` of the proxy.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The proxy's listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address connections are forwarded to.
    pub fn upstream(&self) -> SocketAddr {
        self.shared.upstream
    }

    /// A `kube::Config` for plain HTTP through the proxy, default namespace `default`: set its
    /// timeouts, or give it to a factory that builds its own client.
    pub fn config(&self) -> Result<kube::Config, ProxyError> {
        let uri = self
            .url()
            .parse::<http::Uri>()
            .map_err(|_| ProxyError::Url(self.url()))?;
        Ok(kube::Config::new(uri))
    }

    /// A `kube::Client` talking plain HTTP through the proxy, default namespace `default`.
    pub fn client(&self) -> Result<kube::Client, ProxyError> {
        kube::Client::try_from(self.config()?).map_err(ProxyError::Client)
    }

    /// Resets every connection carrying a watch now; returns how many.
    pub fn reset_watches(&self) -> usize {
        self.shared.reset_where(Connection::carries_watch)
    }

    /// Resets every open connection, whatever it carries (an API server going away); returns
    /// how many.
    pub fn reset_connections(&self) -> usize {
        self.shared.reset_where(|_| true)
    }

    /// From now on, resets each watch connection once it has forwarded `bytes` bytes of the
    /// watch's response (status line and headers included), cutting the response exactly
    /// there, usually in the middle of an event. Re-opened watches are cut again: each one
    /// gets `bytes` bytes. [`clear_faults`](Self::clear_faults) stops it.
    pub fn reset_watches_after_bytes(&self, bytes: u64) {
        self.shared.rules().reset_watches_after_bytes = Some(bytes);
    }

    /// Resets the connections of the next `count` watch requests as soon as their request
    /// arrives: the request never reaches the server and the client sees its connection reset
    /// before any response, as when a watch is being opened.
    pub fn reset_next_watch_requests(&self, count: usize) {
        self.shared.rules().reset_next_watch_requests = count;
    }

    /// Stops [`reset_watches_after_bytes`](Self::reset_watches_after_bytes) and forgets the
    /// remaining [`reset_next_watch_requests`](Self::reset_next_watch_requests).
    pub fn clear_faults(&self) {
        *self.shared.rules() = Rules::default();
    }

    /// Connections carrying a watch now.
    pub fn open_watches(&self) -> usize {
        self.shared
            .connections()
            .values()
            .filter(|connection| connection.carries_watch())
            .count()
    }

    /// Connections, watches and resets so far.
    pub fn stats(&self) -> ProxyStats {
        let counters = &self.shared.counters;
        ProxyStats {
            connections: counters.connections.load(Ordering::SeqCst),
            watch_connections: counters.watch_connections.load(Ordering::SeqCst),
            watch_requests: counters.watch_requests.load(Ordering::SeqCst),
            resets: counters.resets.load(Ordering::SeqCst),
        }
    }

    /// Stops accepting, closes every connection and waits for the proxy's tasks to end.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Fault rules applying to the next watches.
#[derive(Debug, Default)]
struct Rules {
    reset_watches_after_bytes: Option<u64>,
    reset_next_watch_requests: usize,
}

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    watch_connections: AtomicU64,
    watch_requests: AtomicU64,
    resets: AtomicU64,
}

/// State shared by the connections and the [`ResetProxy`] handle.
#[derive(Debug)]
struct Shared {
    upstream: SocketAddr,
    connections: Mutex<HashMap<u64, Arc<Connection>>>,
    rules: Mutex<Rules>,
    counters: Counters,
}

impl Shared {
    fn new(upstream: SocketAddr) -> Self {
        Self {
            upstream,
            connections: Mutex::new(HashMap::new()),
            rules: Mutex::new(Rules::default()),
            counters: Counters::default(),
        }
    }

    fn connections(&self) -> MutexGuard<'_, HashMap<u64, Arc<Connection>>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn rules(&self) -> MutexGuard<'_, Rules> {
        self.rules.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn reset_where(&self, condition: impl Fn(&Connection) -> bool) -> usize {
        let connections = self.connections();
        let chosen: Vec<_> = connections.values().filter(|c| condition(c)).collect();
        for connection in &chosen {
            connection.reset();
        }
        chosen.len()
    }

    /// Notes a request starting on `connection`; `false` if the connection is to be reset
    /// before the request is forwarded.
    fn start_request(&self, connection: &Connection, kind: RequestKind) -> bool {
        if kind == RequestKind::Other {
            connection.watch.store(false, Ordering::SeqCst);
            return true;
        }
        self.counters.watch_requests.fetch_add(1, Ordering::SeqCst);
        if !connection.ever_watched.swap(true, Ordering::SeqCst) {
            self.counters.watch_connections.fetch_add(1, Ordering::SeqCst);
        }
        let mut rules = self.rules();
        if rules.reset_next_watch_requests > 0 {
            rules.reset_next_watch_requests -= 1;
            return false;
        }
        connection.watch_response_bytes.store(0, Ordering::SeqCst);
        connection.watch.store(true, Ordering::SeqCst);
        true
    }

    /// How many of `read` response bytes `connection` may forward, and whether it is to be
    /// reset after them.
    fn response_allowance(&self, connection: &Connection, read: usize) -> (usize, bool) {
        let limit = self.rules().reset_watches_after_bytes;
        let Some(limit) = limit.filter(|_| connection.carries_watch()) else {
            return (read, false);
        };
        let sent = connection.watch_response_bytes.load(Ordering::SeqCst);
        let left = usize::try_from(limit.saturating_sub(sent)).unwrap_or(usize::MAX);
        let allowed = read.min(left);
        connection
            .watch_response_bytes
            .fetch_add(allowed as u64, Ordering::SeqCst);
        (allowed, allowed == left)
    }
}

/// One proxied connection, as the handle sees it.
#[derive(Debug, Default)]
struct Connection {
    /// Its latest request is a watch.
    watch: AtomicBool,
    /// It carried a watch once.
    ever_watched: AtomicBool,
    /// Response bytes forwarded since its latest watch request.
    watch_response_bytes: AtomicU64,
    reset: Notify,
}

impl Connection {
    fn carries_watch(&self) -> bool {
        self.watch.load(Ordering::SeqCst)
    }

    fn reset(&self) {
        self.reset.notify_one();
    }
}

/// Keeps a connection listed while its task runs (also when the task is aborted).
struct Listed<'a> {
    shared: &'a Shared,
    id: u64,
    connection: Arc<Connection>,
}

impl<'a> Listed<'a> {
    fn new(shared: &'a Shared, id: u64) -> Self {
        let connection = Arc::new(Connection::default());
        shared.connections().insert(id, connection.clone());
        Self {
            shared,
            id,
            connection,
        }
    }
}

impl Drop for Listed<'_> {
    fn drop(&mut self) {
        self.shared.connections().remove(&self.id);
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let mut connections = JoinSet::new();
    let mut next_id = 0u64;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((client, _)) = accepted {
                    next_id += 1;
                    connections.spawn(proxy_connection(client, next_id, shared.clone()));
                }
            }
            // a send, or the handle dropped
            _ = stop.changed() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.abort_all();
    while connections.join_next().await.is_some() {}
}

/// How a proxied connection ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// Both sides closed, or one failed.
    Closed,
    /// A reset was asked for.
    Reset,
}

async fn proxy_connection(mut client: TcpStream, id: u64, shared: Arc<Shared>) {
    shared.counters.connections.fetch_add(1, Ordering::SeqCst);
    let Ok(mut upstream) = TcpStream::connect(shared.upstream).await else {
        reset_stream(&client);
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let listed = Listed::new(&shared, id);
    let end = forward(&mut client, &mut upstream, &listed.connection, &shared).await;
    if end == End::Reset {
        shared.counters.resets.fetch_add(1, Ordering::SeqCst);
        reset_stream(&client);
        reset_stream(&upstream);
    }
}

/// Makes closing `stream` send a RST instead of a FIN.
fn reset_stream(stream: &TcpStream) {
    // Should the option fail to set, the close is a plain one: nothing else to do.
    let _ = stream.set_zero_linger();
}

async fn forward(
    client: &mut TcpStream,
    upstream: &mut TcpStream,
    connection: &Connection,
    shared: &Shared,
) -> End {
    let (mut client_read, mut client_write) = client.split();
    let (mut upstream_read, mut upstream_write) = upstream.split();
    let requests = forward_requests(&mut client_read, &mut upstream_write, connection, shared);
    let responses = forward_responses(&mut upstream_read, &mut client_write, connection, shared);
    tokio::select! {
        _ = futures::future::try_join(requests, responses) => End::Closed,
        () = connection.reset.notified() => End::Reset,
    }
}

/// Copies the client's requests upstream, noting which are watches; pends forever once the
/// connection is to be reset.
async fn forward_requests(
    from: &mut (impl AsyncRead + Unpin),
    to: &mut (impl AsyncWrite + Unpin),
    connection: &Connection,
    shared: &Shared,
) -> io::Result<()> {
    let mut scanner = RequestScanner::default();
    let mut buffer = vec![0; BUFFER_SIZE];
    loop {
        let read = from.read(&mut buffer).await?;
        if read == 0 {
            return to.shutdown().await;
        }
        for kind in scanner.scan(&buffer[..read]) {
            if !shared.start_request(connection, kind) {
                connection.reset();
                return std::future::pending().await;
            }
        }
        to.write_all(&buffer[..read]).await?;
    }
}

/// Copies the server's responses to the client, cutting a watch's response where a
/// [`Rules::reset_watches_after_bytes`] limit runs out; pends forever once the connection is
/// to be reset.
async fn forward_responses(
    from: &mut (impl AsyncRead + Unpin),
    to: &mut (impl AsyncWrite + Unpin),
    connection: &Connection,
    shared: &Shared,
) -> io::Result<()> {
    let mut buffer = vec![0; BUFFER_SIZE];
    loop {
        let read = from.read(&mut buffer).await?;
        if read == 0 {
            return to.shutdown().await;
        }
        let (allowed, reset) = shared.response_allowance(connection, read);
        to.write_all(&buffer[..allowed]).await?;
        if reset {
            to.flush().await?;
            connection.reset();
            return std::future::pending().await;
        }
    }
}

/// Whether a request is a watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RequestKind {
    Watch,
    Other,
}

/// Where a [`RequestScanner`] is in the bytes of a connection.
#[derive(Debug, Default, PartialEq, Eq)]
enum ScanState {
    /// In a request line and headers.
    #[default]
    Head,
    /// In a body of known length.
    Body { remaining: u64 },
    /// In the size line of a chunk.
    ChunkSize,
    /// In a chunk's data and the line end after it.
    ChunkData { remaining: u64 },
    /// In the trailer lines after the last chunk.
    Trailers,
    /// Past a protocol upgrade or something unreadable: no more requests are looked for.
    Opaque,
}

/// Follows the HTTP/1 requests a client sends on one connection, request line, headers and
/// body (by `Content-Length` or chunked), to tell where each request starts.
#[derive(Debug, Default)]
struct RequestScanner {
    state: ScanState,
    /// The unfinished head or line.
    pending: Vec<u8>,
}

impl RequestScanner {
    /// Reads the next bytes of the connection; returns the requests whose head ended in them.
    fn scan(&mut self, mut bytes: &[u8]) -> Vec<RequestKind> {
        let mut heads = Vec::new();
        while !bytes.is_empty() {
            bytes = match self.state {
                ScanState::Head => self.scan_head(bytes, &mut heads),
                ScanState::Body { remaining } => self.skip(bytes, remaining, ScanState::Head),
                ScanState::ChunkData { remaining } => self.skip(bytes, remaining, ScanState::ChunkSize),
                ScanState::ChunkSize => self.scan_chunk_size(bytes),
                ScanState::Trailers => self.scan_trailer(bytes),
                ScanState::Opaque => &[],
            };
        }
        heads
    }

    fn scan_head<'a>(&mut self, bytes: &'a [u8], heads: &mut Vec<RequestKind>) -> &'a [u8] {
        if self.pending.is_empty() {
            // line ends between requests are allowed and ignored
            let start = bytes
                .iter()
                .position(|b| !matches!(b, b'\r' | b'\n'))
                .unwrap_or(bytes.len());
            if start > 0 {
                return &bytes[start..];
            }
        }
        let searched_from = self.pending.len().saturating_sub(3);
        let before = self.pending.len();
        self.pending.extend_from_slice(bytes);
        let Some(at) = find(&self.pending[searched_from..], b"\r\n\r\n") else {
            self.give_up_if_too_long();
            return &[];
        };
        let end = searched_from + at + 4;
        let (kind, body) = parse_head(&self.pending[..end]);
        heads.push(kind);
        self.state = body;
        self.pending.clear();
        &bytes[end - before..]
    }

    fn skip<'a>(&mut self, bytes: &'a [u8], remaining: u64, then: ScanState) -> &'a [u8] {
        let skipped = usize::try_from(remaining).map_or(bytes.len(), |r| r.min(bytes.len()));
        let remaining = remaining - skipped as u64;
        self.state = match (&self.state, remaining) {
            (_, 0) => then,
            (ScanState::Body { .. }, remaining) => ScanState::Body { remaining },
            (_, remaining) => ScanState::ChunkData { remaining },
        };
        &bytes[skipped..]
    }

    fn scan_chunk_size<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        let (rest, line) = self.collect_line(bytes);
        if let Some(line) = line {
            let size = line.split(|&b| b == b';').next().unwrap_or_default();
            let size = std::str::from_utf8(size.trim_ascii())
                .ok()
                .and_then(|size| u64::from_str_radix(size, 16).ok());
            self.state = match size {
                Some(0) => ScanState::Trailers,
                // the data, then its line end
                Some(size) => ScanState::ChunkData {
                    remaining: size.saturating_add(2),
                },
                None => ScanState::Opaque,
            };
        }
        rest
    }

    fn scan_trailer<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        let (rest, line) = self.collect_line(bytes);
        if line.is_some_and(|line| line.trim_ascii().is_empty()) {
            self.state = ScanState::Head;
        }
        rest
    }

    /// Collects bytes up to a line end; returns the rest and the line once it ended.
    fn collect_line<'a>(&mut self, bytes: &'a [u8]) -> (&'a [u8], Option<Vec<u8>>) {
        match bytes.iter().position(|&b| b == b'\n') {
            Some(end) => {
                self.pending.extend_from_slice(&bytes[..=end]);
                (&bytes[end + 1..], Some(std::mem::take(&mut self.pending)))
            }
            None => {
                self.pending.extend_from_slice(bytes);
                self.give_up_if_too_long();
                (&[], None)
            }
        }
    }

    fn give_up_if_too_long(&mut self) {
        if self.pending.len() > MAX_HEAD_SIZE {
            self.state = ScanState::Opaque;
            self.pending = Vec::new();
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// The kind of the request whose head is `head`, and what follows the head.
fn parse_head(head: &[u8]) -> (RequestKind, ScanState) {
    let head = String::from_utf8_lossy(head);
    let mut lines = head.lines();
    let target = lines
        .next()
        .and_then(|request_line| request_line.split(' ').nth(1))
        .unwrap_or_default();
    let kind = if is_watch_target(target) {
        RequestKind::Watch
    } else {
        RequestKind::Other
    };
    let (mut length, mut chunked, mut upgrade) = (0u64, false, false);
    for (name, value) in lines.filter_map(|line| line.split_once(':')) {
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().unwrap_or(0),
            "transfer-encoding" => chunked = value.to_ascii_lowercase().ends_with("chunked"),
            "upgrade" => upgrade = true,
            _ => {}
        }
    }
    let body = match (upgrade, chunked, length) {
        (true, _, _) => ScanState::Opaque,
        (false, true, _) => ScanState::ChunkSize,
        (false, false, 0) => ScanState::Head,
        (false, false, remaining) => ScanState::Body { remaining },
    };
    (kind, body)
}

/// Whether a request target's query asks for a watch (`watch=true` or `watch=1`).
fn is_watch_target(target: &str) -> bool {
    target.split_once('?').is_some_and(|(_, query)| {
        query
            .split('&')
            .any(|pair| matches!(pair, "watch=true" | "watch=1"))
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::TestServer;

    const WAIT: Duration = Duration::from_secs(10);

    fn scan_all(parts: &[&[u8]]) -> Vec<RequestKind> {
        let mut scanner = RequestScanner::default();
        parts.iter().flat_map(|part| scanner.scan(part)).collect()
    }

    #[test]
    fn the_scanner_finds_watches_among_keep_alive_requests() {
        let list = b"GET /api/v1/pods?limit=500 HTTP/1.1\r\nhost: x\r\n\r\n";
        let watch = b"GET /api/v1/pods?allowWatchBookmarks=true&watch=true&resourceVersion=5 HTTP/1.1\r\nhost: x\r\n\r\n";
        let watch_one = b"GET /api/v1/pods?watch=1 HTTP/1.1\r\n\r\n";
        let not_watch = b"GET /api/v1/pods?watch=false&x=watch=true HTTP/1.1\r\n\r\n";
        let all = [&list[..], watch, watch_one, not_watch].concat();
        let expected = [
            RequestKind::Other,
            RequestKind::Watch,
            RequestKind::Watch,
            RequestKind::Other,
        ];
        assert_eq!(scan_all(&[&all]), expected);
        let one_byte_at_a_time: Vec<&[u8]> = all.chunks(1).collect();
        assert_eq!(scan_all(&one_byte_at_a_time), expected);
    }

    #[test]
    fn the_scanner_skips_bodies_by_length_and_by_chunks() {
        let fake = b"GET /api/v1/pods?watch=true HTTP/1.1\r\n\r\n";
        let sized = [
            format!(
                "POST /api/v1/namespaces/a/pods HTTP/1.1\r\ncontent-length: {}\r\n\r\n",
                fake.len()
            )
            .as_bytes(),
            fake,
        ]
        .concat();
        let chunked = [
            &b"PUT /api/v1/namespaces/a/pods/p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            format!("{:x};ext=1\r\n", fake.len()).as_bytes(),
            fake,
            b"\r\n0\r\ntrailer: t\r\n\r\n",
        ]
        .concat();
        let list = b"GET /api/v1/pods HTTP/1.1\r\n\r\n";
        let all = [&sized[..], &chunked, list].concat();
        let expected = [RequestKind::Other; 3];
        assert_eq!(scan_all(&[&all]), expected);
        let cut_in_three: Vec<&[u8]> = all.chunks(all.len() / 3 + 1).collect();
        assert_eq!(scan_all(&cut_in_three), expected);
        let one_byte_at_a_time: Vec<&[u8]> = all.chunks(1).collect();
        assert_eq!(scan_all(&one_byte_at_a_time), expected);
    }

    #[test]
    fn the_scanner_stops_after_an_upgrade() {
        let upgrade = b"GET /api/v1/namespaces/a/pods/p/exec HTTP/1.1\r\nupgrade: websocket\r\n\r\n";
        let later = b"GET /api/v1/pods?watch=true HTTP/1.1\r\n\r\n";
        assert_eq!(scan_all(&[&[&upgrade[..], later].concat()]), [RequestKind::Other]);
    }

    async fn setup() -> (TestServer, ResetProxy) {
        let server = TestServer::start().await.expect("server starts");
        let proxy = ResetProxy::start(server.addr()).await.expect("proxy starts");
        (server, proxy)
    }

    async fn connect(proxy: &ResetProxy) -> TcpStream {
        TcpStream::connect(proxy.addr()).await.expect("connected")
    }

    async fn send(stream: &mut TcpStream, target: &str) {
        let request = format!("GET {target} HTTP/1.1\r\nhost: test\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("sent");
    }

    /// Reads until the head of a response ended; returns everything read.
    async fn read_head(stream: &mut TcpStream) -> Vec<u8> {
        let mut read = Vec::new();
        let mut buffer = [0; 4096];
        while find(&read, b"\r\n\r\n").is_none() {
            let n = stream.read(&mut buffer).await.expect("read");
            assert!(n > 0, "the connection closed before a response head");
            read.extend_from_slice(&buffer[..n]);
        }
        read
    }

    /// Reads a whole response with a `Content-Length` body.
    async fn read_sized_response(stream: &mut TcpStream) -> Vec<u8> {
        let mut read = read_head(stream).await;
        let head_end = find(&read, b"\r\n\r\n").expect("a head") + 4;
        let head = String::from_utf8_lossy(&read[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|length| length.trim().parse().ok())
            .expect("a content-length");
        let mut buffer = [0; 4096];
        while read.len() < head_end + length {
            let n = stream.read(&mut buffer).await.expect("read");
            assert!(n > 0, "the connection closed inside a body");
            read.extend_from_slice(&buffer[..n]);
        }
        read
    }

    /// Reads until the connection ends; returns the bytes read and how it ended.
    async fn read_to_end(stream: &mut TcpStream) -> (Vec<u8>, io::Result<()>) {
        let mut read = Vec::new();
        let mut buffer = [0; 4096];
        let ended = tokio::time::timeout(WAIT, async {
            loop {
                match stream.read(&mut buffer).await {
                    Ok(0) => return Ok(()),
                    Ok(n) => read.extend_from_slice(&buffer[..n]),
                    Err(err) => return Err(err),
                }
            }
        })
        .await
        .expect("the connection ends");
        (read, ended)
    }

    fn is_reset(ended: &io::Result<()>) -> bool {
        ended
            .as_ref()
            .is_err_and(|err| err.kind() == io::ErrorKind::ConnectionReset)
    }

    async fn wait_for(what: &str, condition: impl Fn() -> bool) {
        tokio::time::timeout(WAIT, async {
            while !condition() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
    }

    #[tokio::test]
    async fn forwards_requests_and_resets_a_watch_that_follows_a_list_on_one_connection() {
        let (server, proxy) = setup().await;
        let mut stream = connect(&proxy).await;
        send(&mut stream, "/api/v1/namespaces/default/pods").await;
        let list = read_sized_response(&mut stream).await;
        assert!(
            list.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&list)
        );
        assert_eq!(proxy.open_watches(), 0, "a list is not a watch");

        send(&mut stream, "/api/v1/namespaces/default/pods?watch=true").await;
        read_head(&mut stream).await;
        assert_eq!(proxy.open_watches(), 1);
        assert_eq!(proxy.reset_watches(), 1);
        let (_, ended) = read_to_end(&mut stream).await;
        assert!(is_reset(&ended), "the client sees a reset: {ended:?}");
        wait_for("the reset connection to go", || proxy.open_watches() == 0).await;
        assert_eq!(
            proxy.stats(),
            ProxyStats {
                connections: 1,
                watch_connections: 1,
                watch_requests: 1,
                resets: 1
            }
        );
        assert_eq!(server.request_count("watch", "pods"), 1);
        wait_for("the server to see its side reset", || server.watch_count() == 0).await;
        proxy.shutdown().await;
        server.shutdown().await;
    }

    #[tokio::test]
    async fn a_watch_is_cut_after_the_given_bytes_of_its_response() {
        let (server, proxy) = setup().await;
        server.create(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}))
            .expect("created");
        proxy.reset_watches_after_bytes(200);
        let mut stream = connect(&proxy).await;
        send(
            &mut stream,
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0",
        )
        .await;
        let (read, ended) = read_to_end(&mut stream).await;
        assert!(is_reset(&ended), "{ended:?}");
        assert_eq!(read.len(), 200, "{}", String::from_utf8_lossy(&read));

        proxy.clear_faults();
        let mut stream = connect(&proxy).await;
        send(&mut stream, "/api/v1/namespaces/default/configmaps").await;
        read_sized_response(&mut stream).await;
        assert_eq!(proxy.stats().resets, 1, "lists and cleared rules cut nothing");
        proxy.shutdown().await;
        server.shutdown().await;
    }

    #[tokio::test]
    async fn the_next_watch_requests_are_reset_before_reaching_the_server() {
        let (server, proxy) = setup().await;
        proxy.reset_next_watch_requests(1);
        let mut stream = connect(&proxy).await;
        send(&mut stream, "/api/v1/namespaces/default/pods?watch=1").await;
        let (read, ended) = read_to_end(&mut stream).await;
        assert!(is_reset(&ended), "{ended:?}");
        assert!(read.is_empty(), "no response before the reset");
        assert_eq!(server.request_count("watch", "pods"), 0);

        let mut stream = connect(&proxy).await;
        send(&mut stream, "/api/v1/namespaces/default/pods?watch=1").await;
        read_head(&mut stream).await;
        assert_eq!(server.request_count("watch", "pods"), 1, "only the next one");
        assert_eq!(proxy.stats().watch_requests, 2);
        proxy.shutdown().await;
        server.shutdown().await;
    }

    #[tokio::test]
    async fn reset_connections_resets_lists_too_and_shutdown_closes_everything() {
        let (server, proxy) = setup().await;
        let mut idle = connect(&proxy).await;
        send(&mut idle, "/api/v1/namespaces/default/pods").await;
        read_sized_response(&mut idle).await;
        assert_eq!(proxy.reset_watches(), 0);
        assert_eq!(proxy.reset_connections(), 1);
        let (_, ended) = read_to_end(&mut idle).await;
        assert!(is_reset(&ended), "{ended:?}");

        let mut open = connect(&proxy).await;
        send(&mut open, "/api/v1/namespaces/default/pods?watch=true").await;
        read_head(&mut open).await;
        let addr = proxy.addr();
        proxy.shutdown().await;
        let (_, ended) = read_to_end(&mut open).await;
        assert!(ended.is_ok() || is_reset(&ended), "{ended:?}");
        assert!(TcpStream::connect(addr).await.is_err(), "no longer listening");
        server.shutdown().await;
    }
}
