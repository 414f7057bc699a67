//! The server: builder, listener and connections, the Rust API on objects and the fault switches.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::bootstrap;
use crate::faults::{Failure, Stall};
use crate::http::handler;
use crate::http::shared::{CLIENT_NAME_HEADER, RequestRecord, Shared};
use crate::kubelet::run::Runner;
use crate::kubelet::{Kubelet, KubeletError, KubeletHandle};
use crate::registry::{Registry, ResourceType, builtin_types};
use crate::seed::{self, SeedError};
use crate::status::ApiError;
use crate::storage::state::{State, UpdateMode, with_type};

/// Errors of starting the server or making a client for it.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listening socket could not be opened.
    #[error("failed to bind 127.0.0.1:{port}")]
    Bind {
        /// Requested port (0: any).
        port: u16,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The server URL is not a valid URI (cannot happen for 127.0.0.1).
    #[error("failed to parse the server url {0}")]
    Url(String),
    /// A client name is not a valid header value.
    #[error("failed to use {0:?} as a client name: not a valid header value")]
    ClientName(String),
    /// kube could not build a client.
    #[error("failed to build a kube client")]
    Client(#[source] kube::Error),
    /// An object a fresh kube-apiserver holds could not be created at start (for example
    /// because a type given to [`TestServerBuilder::resource`] replaced its built-in type).
    #[error("failed to create the bootstrap object {object}")]
    Bootstrap {
        /// The object, as `plural/namespace/name`.
        object: String,
        /// The store's answer.
        #[source]
        source: Box<ApiError>,
    },
    /// The simulated kubelet could not register its nodes.
    #[error("failed to start the simulated kubelet")]
    Kubelet(#[source] KubeletError),
}

/// Configures and starts a [`TestServer`].
#[derive(Debug, Clone)]
pub struct TestServerBuilder {
    port: u16,
    history_size: usize,
    bookmark_interval: Duration,
    body_limit: usize,
    auto_create_namespaces: bool,
    types: Vec<ResourceType>,
    kubelet: Option<Kubelet>,
}

impl Default for TestServerBuilder {
    fn default() -> Self {
        Self {
            port: 0,
            history_size: 10_000,
            bookmark_interval: Duration::from_secs(60),
            body_limit: 3 * 1024 * 1024,
            auto_create_namespaces: false,
            types: builtin_types(),
            kubelet: None,
        }
    }
}

impl TestServerBuilder {
    /// Port to listen on at 127.0.0.1 (default 0: chosen by the OS).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Number of writes kept for watches and paged lists from older revisions (default 10 000).
    /// Older revisions answer 410 `Expired`, like a compacted etcd.
    pub fn history_size(mut self, events: usize) -> Self {
        self.history_size = events;
        self
    }

    /// Interval of BOOKMARK events on watches with `allowWatchBookmarks=true` (default 60 s).
    pub fn bookmark_interval(mut self, interval: Duration) -> Self {
        self.bookmark_interval = interval;
        self
    }

    /// Largest request body accepted; larger ones get 413 (default 3 MiB, like kube-apiserver).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Whether creating an object in a namespace that does not exist first creates the
    /// namespace, as a `kubectl create namespace` would (an ADDED event of its own), instead of
    /// failing with 404 `namespaces "x" not found` as kube-apiserver does (default false).
    /// Terminating namespaces refuse new objects either way.
    ///
    /// Meant for tests about something else, where creating their namespaces would be noise:
    /// a test of code that creates namespaces or reacts to them wants the default.
    ///
    /// ```
    /// use informer_testserver::TestServer;
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let strict = TestServer::start().await?;
    /// let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "shop"}});
    /// assert_eq!(strict.create(config_map.clone()).unwrap_err().code, 404);
    ///
    /// let lenient = TestServer::builder().auto_create_namespaces(true).start().await?;
    /// lenient.create(config_map)?;
    /// assert!(lenient.get("v1", "Namespace", None, "shop").is_ok());
    /// # Ok(())
    /// # }
    /// ```
    pub fn auto_create_namespaces(mut self, create: bool) -> Self {
        self.auto_create_namespaces = create;
        self
    }

    /// Runs a simulated kubelet and scheduler (see [`kubelet`](crate::kubelet)): its nodes are
    /// registered at start, pods are scheduled to them and run, deleting a pod on them is
    /// graceful, and `pods/log`, `exec` and `attach` answer what the test registers on
    /// [`TestServer::kubelet`]. Without it (the default) pods never get a node or a status.
    ///
    /// ```
    /// use informer_testserver::TestServer;
    /// use informer_testserver::kubelet::Kubelet;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = TestServer::builder().kubelet(Kubelet::with_nodes(2)).start().await?;
    /// let node = server.get("v1", "Node", None, "node-1")?;
    /// assert_eq!(node["metadata"]["labels"]["kubernetes.io/os"], "linux");
    /// # Ok(())
    /// # }
    /// ```
    pub fn kubelet(mut self, kubelet: Kubelet) -> Self {
        self.kubelet = Some(kubelet);
        self
    }

    /// Serves one more resource type.
    pub fn resource(mut self, rt: ResourceType) -> Self {
        self.types.push(rt);
        self
    }

    /// Binds and starts serving.
    pub async fn start(self) -> Result<TestServer, ServerError> {
        let listener = TcpListener::bind(("127.0.0.1", self.port))
            .await
            .map_err(|source| ServerError::Bind {
                port: self.port,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Bind {
            port: self.port,
            source,
        })?;
        let mut state = State::new(Registry::with_types(self.types), self.history_size);
        bootstrap::create_bootstrap_objects(&mut state, addr)
            .map_err(|(object, source)| ServerError::Bootstrap { object, source })?;
        state.register_local_api_services();
        state.auto_create_namespaces = self.auto_create_namespaces;
        let kubelet = self.kubelet.map(KubeletHandle::new);
        let runner = match &kubelet {
            Some(handle) => {
                let runner = Runner::start(&mut state, handle.clone()).map_err(ServerError::Kubelet)?;
                Some((runner, state.store.changes()))
            }
            None => None,
        };
        let shared = Arc::new(Shared::new(
            state,
            self.bookmark_interval,
            self.body_limit,
            addr.to_string(),
            kubelet,
        ));
        let (shutdown, shutdown_rx) = watch::channel(false);
        let (epoch, epoch_rx) = watch::channel(0u64);
        if let Some((runner, changes)) = runner {
            tokio::spawn(runner.run(shared.state(), changes, shutdown_rx.clone()));
        }
        let task = tokio::spawn(accept_loop(listener, shared.clone(), shutdown_rx, epoch_rx));
        Ok(TestServer {
            shared,
            addr,
            shutdown,
            epoch,
            task: Some(task),
        })
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
    epoch: watch::Receiver<u64>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    connections.spawn(serve_connection(stream, shared.clone(), epoch.clone()));
                }
            }
            _ = shutdown.changed() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let drain = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(Duration::from_secs(2), drain).await.is_err() {
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>, mut epoch: watch::Receiver<u64>) {
    epoch.mark_unchanged();
    let service = service_fn(move |request| handler::handle(shared.clone(), request));
    let connection = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = epoch.changed() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

/// An in-memory Kubernetes API server on 127.0.0.1.
///
/// Dropping it without [`TestServer::shutdown`] stops accepting and closes watches, but does not
/// wait for the connections to end.
pub struct TestServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    epoch: watch::Sender<u64>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl TestServer {
    /// Starts a server with the defaults of [`TestServerBuilder`].
    pub async fn start() -> Result<Self, ServerError> {
        Self::builder().start().await
    }

    /// A builder for a configured server.
    pub fn builder() -> TestServerBuilder {
        TestServerBuilder::default()
    }

    /// `http://127.0.0.1:<port>`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A `kube::Client` talking plain HTTP to this server, default namespace `default`.
    pub fn client(&self) -> Result<kube::Client, ServerError> {
        let uri = self
            .url()
            .parse::<http::Uri>()
            .map_err(|_| ServerError::Url(self.url()))?;
        kube::Client::try_from(kube::Config::new(uri)).map_err(ServerError::Client)
    }

    /// Like [`TestServer::client`], for a client whose requests carry `name` (in the
    /// [`CLIENT_NAME_HEADER`] header): [`Failure::client`] and [`Stall::client`] fail or stall
    /// the requests of this client only, as when one replica of a controller is partitioned
    /// from the API server; [`RequestRecord::client`] tells who sent what.
    ///
    /// ```
    /// use informer_testserver::{Failure, TestServer};
    /// use k8s_openapi::api::core::v1::Pod;
    /// use kube::api::{Api, ListParams};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = TestServer::start().await?;
    /// let a: Api<Pod> = Api::default_namespaced(server.named_client("a")?);
    /// let b: Api<Pod> = Api::default_namespaced(server.named_client("b")?);
    /// server.fail_next(Failure::new(500).verb("list").client("b"));
    /// assert!(a.list(&ListParams::default()).await.is_ok());
    /// assert!(b.list(&ListParams::default()).await.is_err());
    /// assert_eq!(server.requests()[1].client.as_deref(), Some("b"));
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn named_client(&self, name: &str) -> Result<kube::Client, ServerError> {
        let uri = self
            .url()
            .parse::<http::Uri>()
            .map_err(|_| ServerError::Url(self.url()))?;
        let mut config = kube::Config::new(uri);
        let value =
            http::HeaderValue::from_str(name).map_err(|_| ServerError::ClientName(name.to_string()))?;
        config
            .headers
            .push((http::HeaderName::from_static(CLIENT_NAME_HEADER), value));
        kube::Client::try_from(config).map_err(ServerError::Client)
    }

    /// Serves one more resource type (replacing one with the same group, version and plural).
    pub fn register(&self, rt: ResourceType) {
        self.shared.lock().registry.add(rt, None);
    }

    /// Serves a statically typed resource such as a k8s-openapi type.
    pub fn register_type<K>(&self)
    where
        K: kube::Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        self.register(ResourceType::of::<K>());
    }

    /// The simulated kubelet, when the server was built with one
    /// ([`TestServerBuilder::kubelet`]): register what pods do, their logs and exec answers.
    pub fn kubelet(&self) -> Option<KubeletHandle> {
        self.shared.kubelet.clone()
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.requests()
    }

    /// How many `verb` requests on `resource` were received so far.
    pub fn request_count(&self, verb: &str, resource: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.verb == verb && r.resource == resource)
            .count()
    }

    /// The current (latest) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().store.resource_version()
    }

    fn type_of(&self, api_version: &str, kind: &str) -> Result<ResourceType, ApiError> {
        self.shared
            .lock()
            .registry
            .by_kind(api_version, kind)
            .cloned()
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "no matches for kind \"{kind}\" in version \"{api_version}\""
                ))
            })
    }

    fn type_of_object(&self, object: &Value) -> Result<ResourceType, ApiError> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        if api_version.is_empty() || kind.is_empty() {
            return Err(ApiError::bad_request("Object 'Kind' or 'apiVersion' is missing"));
        }
        self.type_of(api_version, kind)
    }

    /// Creates an object (with `apiVersion` and `kind`; namespaced objects without
    /// `metadata.namespace` go to `default`) as a POST would, except that the status it gives
    /// is kept: a fixture can be an object its controller has already updated. A POST, as in
    /// kube-apiserver, resets the status of a kind with a status subresource (a custom
    /// resource's is dropped, a Deployment's is `{}`).
    ///
    /// ```
    /// use informer_testserver::TestServer;
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = TestServer::start().await?;
    /// let pod = server.create(json!({
    ///     "apiVersion": "v1",
    ///     "kind": "Pod",
    ///     "metadata": {"name": "web"},
    ///     "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    ///     "status": {"phase": "Running"},
    /// }))?;
    /// assert_eq!(pod["status"]["phase"], "Running");
    /// assert_eq!(pod["status"]["qosClass"], "BestEffort");
    /// # Ok(())
    /// # }
    /// ```
    pub fn create(&self, object: Value) -> Result<Value, ApiError> {
        let rt = self.type_of_object(&object)?;
        let ns = object["metadata"]["namespace"].as_str().map(str::to_string);
        self.shared
            .lock()
            .write()
            .create_with_status(&rt, ns.as_deref(), object)
    }

    /// Creates a typed object, e.g. a `k8s_openapi::api::core::v1::Pod`.
    pub fn create_typed<K: Serialize + DeserializeOwned>(&self, object: &K) -> Result<K, ApiError> {
        typed(self.create(untyped(object)?)?)
    }

    /// Creates the namespace `name`, as `kubectl create namespace` does: objects can be created
    /// in it from then on (a namespace that does not exist refuses them with 404, as in
    /// kube-apiserver, unless [`TestServerBuilder::auto_create_namespaces`] is set).
    ///
    /// ```
    /// use informer_testserver::TestServer;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = TestServer::start().await?;
    /// let shop = server.create_namespace("shop")?;
    /// assert_eq!(shop["status"]["phase"], "Active");
    /// server.create(serde_json::json!({
    ///     "apiVersion": "v1",
    ///     "kind": "ConfigMap",
    ///     "metadata": {"name": "settings", "namespace": "shop"},
    /// }))?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_namespace(&self, name: &str) -> Result<Value, ApiError> {
        self.create(serde_json::json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name},
        }))
    }

    /// Replaces an object, status included (a stale `resourceVersion` gives 409 Conflict; an
    /// empty one updates unconditionally).
    pub fn update(&self, object: Value) -> Result<Value, ApiError> {
        let rt = self.type_of_object(&object)?;
        let ns = object["metadata"]["namespace"].as_str().map(str::to_string);
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.shared
            .lock()
            .write()
            .update(&rt, ns.as_deref(), &name, object, UpdateMode::Full)
    }

    /// Replaces a typed object, status included.
    pub fn update_typed<K: Serialize + DeserializeOwned>(&self, object: &K) -> Result<K, ApiError> {
        typed(self.update(untyped(object)?)?)
    }

    /// Reads an object.
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let rt = self.type_of(api_version, kind)?;
        self.shared.lock().get(&rt, namespace, name)
    }

    /// The current objects of a resource, in one namespace or in all (`None`), sorted by
    /// namespace and name, with `apiVersion` and `kind` as a list returns them. Reads the store
    /// directly: no request is recorded and no fault applies.
    pub fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, ApiError> {
        let rt = self.type_of(api_version, kind)?;
        let objects = self.shared.lock().store.snapshot(&rt, None)?;
        Ok(objects
            .into_iter()
            .filter(|((object_namespace, _), _)| namespace.is_none_or(|n| n == object_namespace))
            .map(|(_, object)| with_type(object, &rt))
            .collect())
    }

    /// Deletes an object (objects with finalizers are only marked for deletion; so are pods on
    /// the nodes of the [simulated kubelet](TestServerBuilder::kubelet), with their grace
    /// period, until the kubelet removes them).
    pub fn delete(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let rt = self.type_of(api_version, kind)?;
        self.shared
            .lock()
            .write()
            .delete(&rt, namespace, name, &Value::Null)
    }

    /// Deletes a typed object by namespace and name.
    pub fn delete_typed<K>(&self, namespace: Option<&str>, name: &str) -> Result<Value, ApiError>
    where
        K: kube::Resource<DynamicType = ()>,
    {
        self.delete(&K::api_version(&()), &K::kind(&()), namespace, name)
    }

    /// Creates the objects of a YAML or JSON document (a `List`, or several `---` documents);
    /// returns how many were created.
    pub fn seed_str(&self, text: &str) -> Result<usize, SeedError> {
        let objects = seed::parse(text)?;
        let count = objects.len();
        for object in objects {
            let name = object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            self.create(object).map_err(|source| SeedError::Create {
                name,
                source: Box::new(source),
            })?;
        }
        Ok(count)
    }

    /// Like [`TestServer::seed_str`] with the content of a file.
    pub fn seed_file(&self, path: &Path) -> Result<usize, SeedError> {
        let text = std::fs::read_to_string(path).map_err(|source| SeedError::Read {
            path: path.display().to_string(),
            source,
        })?;
        self.seed_str(&text)
    }

    /// Fails the next requests matching `failure` (see [`Failure`]).
    pub fn fail_next(&self, failure: Failure) {
        self.shared.faults().add(failure);
    }

    /// Holds the next requests matching `stall` for its duration before serving them (see
    /// [`Stall`]).
    pub fn stall_next(&self, stall: Stall) {
        self.shared.faults().add_stall(stall);
    }

    /// Delays every response by `delay` (`None` removes the delay). Watches are delayed before
    /// their first line.
    pub fn set_delay(&self, delay: Option<Duration>) {
        self.shared.faults().set_delay(delay);
    }

    /// Holds back every live event of the watches of `resource` (plural, e.g. `configmaps`)
    /// by `lag` before sending it (`None` removes the lag), as a busy API server or a slow
    /// connection does: an informer's cache then trails the server's state by about `lag`,
    /// while requests are answered at once. Open watches lag from their next event on.
    ///
    /// Events keep their order, and bookmarks wait behind the events before them. The initial
    /// events of a watch and the events it replays from a resource version are sent at once; a
    /// watch that ends (dropped, timed out) loses the events still held back, which the
    /// client's next watch replays.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use informer_testserver::TestServer;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = TestServer::start().await?;
    /// // watchers of config maps see each change half a second after it happened
    /// server.set_watch_lag("configmaps", Some(Duration::from_millis(500)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_watch_lag(&self, resource: &str, lag: Option<Duration>) {
        self.shared.faults().set_watch_lag(resource, lag);
    }

    /// Disarms failures, stalls, delays and watch lags.
    pub fn clear_faults(&self) {
        self.shared.faults().clear();
    }

    /// Ends every open watch now (the responses end cleanly, as on a server-side timeout).
    pub fn drop_watches(&self) {
        self.shared.lock().store.close_watches();
    }

    /// Ends every open watch after `events` more writes (to any resource) have been sent.
    pub fn drop_watches_after(&self, events: u64) {
        self.shared.lock().store.close_watches_after(events);
    }

    /// Sends a line that is not JSON on every open watch.
    pub fn send_malformed_watch_line(&self) {
        self.shared.lock().store.send_malformed();
    }

    /// Drops the whole event history: watches from older resourceVersions and continue tokens
    /// of earlier lists now get 410 `Expired`.
    pub fn compact(&self) {
        self.shared.lock().store.compact();
    }

    /// Simulates an API server restart: closes every watch and every connection (after its
    /// in-flight request), keeping all data and history.
    pub fn restart(&self) {
        self.shared.lock().store.close_watches();
        self.epoch.send_modify(|e| *e += 1);
    }

    /// Number of open watches.
    pub fn watch_count(&self) -> usize {
        self.shared.lock().store.watch_count()
    }

    /// Stops: closes watches and connections and waits for every server task to end.
    pub async fn shutdown(mut self) {
        self.stop();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    fn stop(&self) {
        self.shared.lock().store.close_watches();
        let _ = self.shutdown.send(true);
        self.epoch.send_modify(|e| *e += 1);
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.stop();
        }
    }
}

fn untyped<K: Serialize>(object: &K) -> Result<Value, ApiError> {
    serde_json::to_value(object)
        .map_err(|e| ApiError::bad_request(format!("failed to serialize the object: {e}")))
}

fn typed<K: DeserializeOwned>(object: Value) -> Result<K, ApiError> {
    serde_json::from_value(object)
        .map_err(|e| ApiError::new(500, "InternalError", format!("failed to decode: {e}")))
}
