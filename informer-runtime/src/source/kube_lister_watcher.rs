//! The lister-watcher over `kube::Api`: how informers talk to a real API server.

use std::{
    error::Error as StdError,
    fmt::Debug,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use futures::{FutureExt, StreamExt, TryStreamExt, future::BoxFuture};
use http_body_util::BodyExt;
use kube::{
    Api, Client, Resource,
    api::{ListParams, WatchParams},
    client::Body,
    core::{ApiResource, ClusterResourceScope, DynamicObject, NamespaceResourceScope, ObjectList, Status},
};
use serde::de::DeserializeOwned;

use crate::{
    protobuf,
    source::body_frames::decode_frames,
    source::cbor::{self, CborObjects, Items},
    source::encoding::{Asked, Encoding, Wire, cbor_accept, protobuf_accept, wire},
    source::json_objects::JsonObjects,
    source::protobuf_objects::ProtobufObjects,
    source::protobuf_watch_body::decode_protobuf_watch_body,
    source::watch_body::decode_watch_body_skipping,
    source::{Error, FieldPath, ListOptions, ListerWatcher, TweakListOptions, WatchStream},
};

/// The client gives up on a watch this long after the server should have closed it: a
/// connection that died silently is noticed, and the watch re-opened.
const WATCH_IDLE_MARGIN: Duration = Duration::from_secs(5);

/// The longest CBOR watch event read (an object is at most 1.5 MiB in etcd); a longer one
/// means the stream is not what it claims to be.
const MAX_CBOR_EVENT: usize = 64 << 20;

/// The timeout of a watch whose options set none (kube's default).
const DEFAULT_WATCH_TIMEOUT: u32 = 290;

/// How long a list or watch request may wait for its response to start, by default.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);

/// Lists and watches through a [`kube::Api`], applying an optional tweak (selectors) to every
/// request. A request whose response does not start within the response timeout
/// ([`DEFAULT_RESPONSE_TIMEOUT`], see [`response_timeout`](Self::response_timeout)) is
/// abandoned and reported as [`Error::Timeout`], so the reflector retries it instead
/// of waiting forever.
///
/// Lists and watch events are decoded with every `Vec` at its exact capacity (one pass over
/// the text finds every array's length, which serde then allocates at once): a cache holds no
/// room left by a vector's doubling, without a copy of each object. Built-in types are read in
/// protobuf by default ([`Encoding`], [`encoding`](Self::encoding)), as client-go's
/// controllers read them, also with every `Vec` at its length; custom resources in JSON, or in
/// CBOR with [`Encoding::Cbor`].
///
/// For `kube::core::PartialObjectMeta<K>` it asks for metadata only (client-go's metadata
/// client): the server sends `PartialObjectMetadata` objects, with `metadata` and nothing
/// else, in lists and watches.
///
/// ```no_run
/// use informer_runtime::{SharedIndexInformer, informer, source::KubeListerWatcher};
/// use k8s_openapi::api::core::v1::Pod;
/// use kube::Api;
///
/// # fn example(client: kube::Client) {
/// let pods = KubeListerWatcher::new(Api::<Pod>::namespaced(client, "prod"))
///     .tweak_list_options(|options| options.label_selector = Some("app=web".into()));
/// let informer = SharedIndexInformer::new(pods, informer::Config::default());
/// # let _ = informer;
/// # }
/// ```
pub struct KubeListerWatcher<K> {
    api: Api<K>,
    tweak: Option<TweakListOptions>,
    response_timeout: Duration,
    encoding: Encoding,
    /// Set when a protobuf answer named a kind without a protobuf form here: JSON from then on.
    json_from_now_on: Arc<AtomicBool>,
    /// Fields skipped as each object is read.
    skip_fields: Arc<[FieldPath]>,
    /// How JSON objects are read.
    json: JsonObjects,
    /// How CBOR objects are read.
    cbor: CborObjects,
    /// How protobuf objects are read, found at the first protobuf answer.
    protobuf_objects: OnceLock<Arc<ProtobufObjects<K>>>,
}

impl<K> KubeListerWatcher<K> {
    /// Lists and watches what `api` covers (all namespaces, or one).
    pub fn new(api: Api<K>) -> Self {
        Self {
            api,
            tweak: None,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            encoding: Encoding::default(),
            json_from_now_on: Arc::default(),
            skip_fields: Arc::new([]),
            json: JsonObjects::default(),
            cbor: CborObjects::default(),
            protobuf_objects: OnceLock::new(),
        }
    }

    /// Skips these fields of every object as it is read (see [`FieldPath`]): the objects come
    /// out as if a transform had removed the fields, but the fields cost almost nothing. In
    /// protobuf (built-in types and metadata-only objects) and CBOR they are passed over unread;
    /// in JSON (custom resources) they are parsed but never built. A path that names no field of the
    /// type skips nothing in it (over protobuf a warning names the path and the type).
    ///
    /// ```no_run
    /// use informer_runtime::source::{FieldPath, KubeListerWatcher};
    /// use k8s_openapi::api::core::v1::Pod;
    /// use kube::Api;
    ///
    /// # fn example(client: kube::Client) {
    /// let pods = KubeListerWatcher::new(Api::<Pod>::all(client))
    ///     .skip_fields([FieldPath::managed_fields(), FieldPath::last_applied_configuration()]);
    /// # let _ = pods;
    /// # }
    /// ```
    #[must_use]
    pub fn skip_fields(mut self, paths: impl IntoIterator<Item = FieldPath>) -> Self {
        self.skip_fields = paths.into_iter().collect();
        self.json = JsonObjects::new(&self.skip_fields);
        self.cbor = CborObjects::new(&self.skip_fields);
        self.protobuf_objects = OnceLock::new();
        self
    }

    /// What to ask the API server for: [`Encoding::Protobuf`] (the default: protobuf for
    /// built-in types and metadata-only objects, decoded straight into `K` by the decoders
    /// `k8s-protobuf` generates), [`Encoding::Cbor`] (CBOR for custom resources and
    /// metadata-only objects, decoded straight into `K`) or [`Encoding::Json`].
    #[must_use]
    pub fn encoding(mut self, encoding: Encoding) -> Self {
        self.encoding = encoding;
        self
    }

    /// How long a list or watch may wait for its response to start (the body of a list may
    /// take longer; a watch then streams for its own timeout).
    #[must_use]
    pub fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// Changes every request's options, for example to add selectors.
    #[must_use]
    pub fn tweak_list_options(mut self, tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static) -> Self {
        self.tweak = Some(Arc::new(tweak));
        self
    }

    /// Uses a shared tweak (a factory's).
    #[must_use]
    pub fn shared_tweak_list_options(mut self, tweak: Option<TweakListOptions>) -> Self {
        self.tweak = tweak;
        self
    }

    /// Asks for protobuf or CBOR first in `request`'s `Accept` when the encoding and the type
    /// allow it.
    fn negotiate(&self, request: &mut http::Request<Vec<u8>>, metadata: bool, asked: Asked) {
        if self.encoding == Encoding::Json {
            return;
        }
        let path = request.uri().path();
        let cbor = (self.encoding == Encoding::Cbor)
            .then(|| cbor_accept(path, metadata, asked))
            .flatten();
        let protobuf = || {
            if self.json_from_now_on.load(Ordering::Relaxed) {
                return None;
            }
            protobuf_accept(path, metadata, asked)
        };
        if let Some(accept) = cbor.or_else(protobuf) {
            request.headers_mut().insert(http::header::ACCEPT, accept);
        }
    }

    fn tweaked(&self, options: &ListOptions) -> ListOptions {
        let mut options = options.clone();
        if let Some(tweak) = &self.tweak {
            tweak(&mut options);
        }
        options
    }
}

impl KubeListerWatcher<DynamicObject> {
    /// Lists and watches any resource described by `resource`, in `namespace` or in all.
    pub fn dynamic(client: Client, resource: &ApiResource, namespace: Option<&str>) -> Self {
        let api = match namespace {
            Some(namespace) => Api::namespaced_with(client, namespace, resource),
            None => Api::all_with(client, resource),
        };
        Self::new(api)
    }
}

/// Builds the `Api` of a typed resource for its scope: namespaced resources may be restricted
/// to one namespace, cluster-scoped ones never are.
pub trait ApiScope {
    /// Whether resources of this scope live in namespaces.
    const NAMESPACED: bool;

    /// The `Api` of `K` in `namespace` (`None`: all namespaces).
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>;
}

impl ApiScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }
}

impl ApiScope for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }
}

fn list_params(options: &ListOptions) -> ListParams {
    let mut params = ListParams::default();
    params.label_selector.clone_from(&options.label_selector);
    params.field_selector.clone_from(&options.field_selector);
    params.limit = options.limit;
    params.continue_token.clone_from(&options.continue_token);
    params.resource_version.clone_from(&options.resource_version);
    params.version_match = options
        .resource_version
        .as_ref()
        .and(options.resource_version_match.clone());
    params
}

fn watch_params(options: &ListOptions) -> WatchParams {
    WatchParams {
        label_selector: options.label_selector.clone(),
        field_selector: options.field_selector.clone(),
        timeout: options.timeout_seconds,
        bookmarks: options.allow_watch_bookmarks || options.send_initial_events,
        send_initial_events: options.send_initial_events,
    }
}

/// Whether `err` or one of its sources is an I/O error saying the server could not be reached.
fn has_connection_refused(err: &(dyn StdError + 'static)) -> bool {
    use std::io::ErrorKind::{
        AddrNotAvailable, ConnectionRefused, HostUnreachable, NetworkUnreachable, NotConnected,
    };
    std::iter::successors(Some(err), |&e| e.source()).any(|e| {
        e.downcast_ref::<std::io::Error>().is_some_and(|io| {
            matches!(
                io.kind(),
                ConnectionRefused | NotConnected | HostUnreachable | NetworkUnreachable | AddrNotAvailable
            )
        })
    })
}

/// Sorts kube's errors into the classes the reflector acts on.
pub(crate) fn classify(err: kube::Error) -> Error {
    match err {
        kube::Error::Api(status) => Error::Api(status),
        kube::Error::SerdeError(e) => Error::Decode(Box::new(e)),
        err @ (kube::Error::HyperError(_) | kube::Error::Service(_)) if has_connection_refused(&err) => {
            Error::Connect(Box::new(err))
        }
        err => Error::Transport(Box::new(err)),
    }
}

impl<K> ListerWatcher<K> for KubeListerWatcher<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Send + Sync,
{
    fn list(&self, options: &ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, Error>> {
        let params = list_params(&self.tweaked(options));
        async move {
            let url = self.api.resource_url();
            let request = kube::core::Request::new(url);
            let mut request = if K::metadata_api() {
                request.list_metadata(&params)
            } else {
                request.list(&params)
            }
            .map_err(|source| build_error("list", url, source))?;
            self.negotiate(&mut request, K::metadata_api(), Asked::List);
            let (wire, body) = self.send("list", request).await?;
            let bytes = body.collect().await.map_err(classify)?.to_bytes();
            match wire {
                Wire::Protobuf => self
                    .protobuf_objects()
                    .list(&bytes)
                    .map_err(|err| protobuf_error(&self.json_from_now_on, url, err)),
                Wire::Cbor => self.cbor.list(&bytes).map_err(|err| Error::Decode(Box::new(err))),
                Wire::Json => self.json.list(&bytes).map_err(|err| Error::Decode(Box::new(err))),
            }
        }
        .boxed()
    }

    fn watch(&self, options: &ListOptions) -> BoxFuture<'_, Result<WatchStream<K>, Error>> {
        let options = self.tweaked(options);
        let params = watch_params(&options);
        let resource_version = options.resource_version.clone().unwrap_or_default();
        let timeout = Duration::from_secs(u64::from(
            options.timeout_seconds.unwrap_or(DEFAULT_WATCH_TIMEOUT),
        ));
        async move {
            let url = self.api.resource_url();
            let request = kube::core::Request::new(url);
            let mut request = if K::metadata_api() {
                request.watch_metadata(&params, &resource_version)
            } else {
                request.watch(&params, &resource_version)
            }
            .map_err(|source| build_error("watch", url, source))?;
            // Watch bodies are read as they come: compressed watch streams are not asked for.
            request.headers_mut().insert(
                http::header::ACCEPT_ENCODING,
                http::HeaderValue::from_static("identity"),
            );
            self.negotiate(&mut request, K::metadata_api(), Asked::Watch);
            let (wire, body) = self.send("watch", request).await?;
            let chunks = body.into_data_stream().map_err(classify);
            let deadline = tokio::time::sleep(timeout + WATCH_IDLE_MARGIN);
            if wire == Wire::Cbor {
                let events = decode_frames(chunks, Items::new(MAX_CBOR_EVENT), self.cbor.events());
                return Ok(events.take_until(deadline).boxed());
            }
            if wire == Wire::Protobuf {
                let objects = self.protobuf_objects();
                let (json_from_now_on, url) = (self.json_from_now_on.clone(), url.to_owned());
                let events = decode_protobuf_watch_body(chunks, objects).map(move |event| match event {
                    Err(Error::Decode(err)) => match err.downcast::<protobuf::Error>() {
                        Ok(err) => Err(protobuf_error(&json_from_now_on, &url, *err)),
                        Err(err) => Err(Error::Decode(err)),
                    },
                    other => other,
                });
                return Ok(events.take_until(deadline).boxed());
            }
            Ok(decode_watch_body_skipping(chunks, self.json.watch_skip())
                .take_until(deadline)
                .boxed())
        }
        .boxed()
    }
}

/// A protobuf decode error; one that names a kind without a protobuf form here sets
/// `json_from_now_on`, so the next requests ask for JSON.
fn protobuf_error(json_from_now_on: &AtomicBool, url: &str, err: protobuf::Error) -> Error {
    if matches!(err, protobuf::Error::UnknownKind(_)) && !json_from_now_on.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            error = %err,
            url,
            "the API server answered in protobuf for a kind without a protobuf form here; asking for JSON from now on"
        );
    }
    Error::Decode(Box::new(err))
}

fn build_error(verb: &'static str, url: &str, source: kube::core::request::Error) -> Error {
    Error::Request {
        verb,
        url: url.to_owned(),
        source,
    }
}

impl<K> KubeListerWatcher<K>
where
    K: Resource + Clone + DeserializeOwned + 'static,
{
    /// How protobuf objects of `K` are read (found once).
    fn protobuf_objects(&self) -> Arc<ProtobufObjects<K>> {
        Arc::clone(
            self.protobuf_objects
                .get_or_init(|| Arc::new(ProtobufObjects::new(&self.skip_fields))),
        )
    }
}

impl<K: Resource + Clone> KubeListerWatcher<K> {
    /// Sends `request` (see [`send`]).
    async fn send(&self, verb: &'static str, request: http::Request<Vec<u8>>) -> Result<(Wire, Body), Error> {
        send(
            self.api.clone().into_client(),
            self.response_timeout,
            verb,
            request,
        )
        .await
    }
}

/// Sends `request` and returns what its successful response is (JSON, protobuf or CBOR), and
/// its body; an error response becomes its `Status` (or one built from its text when it is no
/// `Status` in the answer's encoding). Gives up when no response starts within `response_timeout`. Not
/// generic: compiled once, whatever the lister-watcher's type.
async fn send(
    client: Client,
    response_timeout: Duration,
    verb: &'static str,
    request: http::Request<Vec<u8>>,
) -> Result<(Wire, Body), Error> {
    let url = request.uri().path().to_owned();
    let response = tokio::time::timeout(response_timeout, client.send(request.map(Body::from)))
        .await
        .map_err(|_| Error::Timeout {
            verb,
            url,
            timeout: response_timeout,
        })?
        .map_err(classify)?;
    let code = response.status();
    let wire = wire(response.headers().get(http::header::CONTENT_TYPE));
    if code.is_success() {
        return Ok((wire, response.into_body()));
    }
    let text = response.into_body().collect().await.map_err(classify)?.to_bytes();
    let status = match wire {
        Wire::Protobuf => protobuf::from_slice::<Status>(&text).ok(),
        Wire::Cbor => cbor::from_slice::<Status>(&text).ok(),
        Wire::Json => serde_json::from_slice::<Status>(&text).ok(),
    };
    Err(Error::Api(Box::new(
        status.filter(|status| status.code != 0).unwrap_or_else(|| {
            Status::failure(
                String::from_utf8_lossy(&text).trim(),
                "Failed to parse error data",
            )
            .with_code(code.as_u16())
        }),
    )))
}

#[cfg(test)]
mod tests {
    use kube::core::params::VersionMatch;

    use super::*;

    #[test]
    fn list_options_become_list_params() {
        let options = ListOptions {
            label_selector: Some("app=web".into()),
            field_selector: Some("metadata.name=x".into()),
            resource_version: Some("10".into()),
            resource_version_match: Some(VersionMatch::NotOlderThan),
            limit: Some(500),
            continue_token: Some("abc".into()),
            ..ListOptions::default()
        };
        let params = list_params(&options);
        assert_eq!(params.label_selector.as_deref(), Some("app=web"));
        assert_eq!(params.field_selector.as_deref(), Some("metadata.name=x"));
        assert_eq!(params.resource_version.as_deref(), Some("10"));
        assert_eq!(params.version_match, Some(VersionMatch::NotOlderThan));
        assert_eq!(
            (params.limit, params.continue_token.as_deref()),
            (Some(500), Some("abc"))
        );

        let unset = list_params(&ListOptions {
            resource_version_match: Some(VersionMatch::NotOlderThan),
            ..ListOptions::default()
        });
        assert_eq!(unset.version_match, None, "a match without a version is not sent");
    }

    #[test]
    fn watch_options_become_watch_params() {
        let params = watch_params(&ListOptions {
            label_selector: Some("a=b".into()),
            timeout_seconds: Some(400),
            allow_watch_bookmarks: true,
            send_initial_events: true,
            ..ListOptions::default()
        });
        assert_eq!(params.label_selector.as_deref(), Some("a=b"));
        assert_eq!(params.timeout, Some(400));
        assert!(params.bookmarks && params.send_initial_events);
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_connect_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        // the listener is gone: connections to its port are refused
        let uri = format!("http://127.0.0.1:{port}").parse().expect("a uri");
        let client = Client::try_from(kube::Config::new(uri)).expect("client");
        let lister_watcher =
            KubeListerWatcher::new(Api::<k8s_openapi::api::core::v1::ConfigMap>::all(client));
        let err = lister_watcher
            .list(&ListOptions::default())
            .await
            .expect_err("refused");
        assert!(err.is_connection_refused(), "{err:?}");
        assert!(!err.is_probable_eof(), "{err:?}");
    }

    #[tokio::test]
    async fn a_server_that_never_answers_is_a_typed_timeout() {
        // accepts connections and reads nothing: no response ever starts
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let _silent = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let uri = format!("http://127.0.0.1:{port}").parse().expect("a uri");
        let client = Client::try_from(kube::Config::new(uri)).expect("client");
        let lister_watcher =
            KubeListerWatcher::new(Api::<k8s_openapi::api::core::v1::ConfigMap>::all(client))
                .response_timeout(Duration::from_millis(200));
        let err = lister_watcher
            .list(&ListOptions::default())
            .await
            .expect_err("no response");
        assert!(err.is_timeout(), "{err:?}");
        assert!(
            matches!(&err, Error::Timeout { verb: "list", timeout, .. } if *timeout == Duration::from_millis(200)),
            "{err:?}"
        );
        assert!(!err.is_connection_refused() && !err.is_probable_eof(), "{err:?}");
    }

    #[test]
    fn an_invalid_request_is_a_typed_request_error() {
        let err = build_error(
            "list",
            "/api/v1/pods",
            kube::core::request::Error::Validation("bad".into()),
        );
        assert!(matches!(err, Error::Request { verb: "list", .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "failed to build the list request of /api/v1/pods: failed to validate request: bad"
        );
    }

    #[test]
    fn classifies_kube_errors() {
        let status = kube::core::Status::failure("gone", "Expired").with_code(410);
        assert!(classify(kube::Error::Api(Box::new(status))).is_expired());
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert!(classify(kube::Error::Service(Box::new(refused))).is_connection_refused());
        let other = std::io::Error::other("reset");
        assert!(matches!(
            classify(kube::Error::ReadEvents(other)),
            Error::Transport(_)
        ));
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        let reset = classify(kube::Error::Service(Box::new(reset)));
        assert!(reset.is_probable_eof() && !reset.is_connection_refused());
        let bad_json = serde_json::from_str::<u8>("x").expect_err("not json");
        assert!(matches!(
            classify(kube::Error::SerdeError(bad_json)),
            Error::Decode(_)
        ));
    }
}
