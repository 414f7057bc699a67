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

use self::request_scanner::{RequestKind, RequestScanner};

mod request_scanner;

/// Bytes read from one side of a connection at a time.
const BUFFER_SIZE: usize = 16 * 1024;

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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::TestServer;

    const WAIT: Duration = Duration::from_secs(10);

    fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
        haystack.windows(needle.len()).position(|window| window == needle)
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
