//! What the connections and the `TestServer` handle share: the state, the fault switches and
//! the record of requests.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::faults::Faults;
use crate::kubelet::KubeletHandle;
use crate::storage::state::State;

/// State shared by the connections and the `TestServer` handle.
pub(crate) struct Shared {
    state: Arc<Mutex<State>>,
    faults: Mutex<Faults>,
    /// Every request served, oldest first.
    requests: Mutex<Vec<RequestRecord>>,
    /// Interval of watch bookmarks.
    pub(crate) bookmark_interval: Duration,
    /// Largest accepted request body.
    pub(crate) body_limit: usize,
    /// `host:port` of the listener.
    pub(crate) address: String,
    /// The simulated kubelet, when the server runs one.
    pub(crate) kubelet: Option<KubeletHandle>,
}

impl Shared {
    /// Shared state around `state`, with no faults and no requests yet.
    pub(crate) fn new(
        state: State,
        bookmark_interval: Duration,
        body_limit: usize,
        address: String,
        kubelet: Option<KubeletHandle>,
    ) -> Self {
        Self {
            state: Arc::new(Mutex::new(state)),
            kubelet,
            faults: Mutex::new(Faults::default()),
            requests: Mutex::new(Vec::new()),
            bookmark_interval,
            body_limit,
            address,
        }
    }

    /// Every request served so far, oldest first.
    pub(crate) fn requests(&self) -> Vec<RequestRecord> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Locks the registry and the store (a poisoned lock is still usable: writes are atomic).
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state's lock itself, for tasks that outlive a request (the kubelet's loop).
    pub(crate) fn state(&self) -> Arc<Mutex<State>> {
        self.state.clone()
    }

    /// Locks the fault switches.
    pub(crate) fn faults(&self) -> MutexGuard<'_, Faults> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a served request.
    pub(crate) fn record(&self, record: RequestRecord) {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record);
    }
}

/// One request the server received, as `TestServer::requests` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// The verb in the RBAC sense: `get`, `list`, `watch`, `create`, `update`, `patch`,
    /// `delete`, `deletecollection` (or `get` for non-resource paths).
    pub verb: &'static str,
    /// The plural resource name (empty for non-resource paths).
    pub resource: String,
    /// The query string, undecoded (empty if none).
    pub query: String,
    /// The name of the client that sent it, for clients made by `TestServer::named_client`.
    pub client: Option<String>,
    /// The `Accept` header (empty if none): which encodings the client asked for, in order.
    pub accept: String,
}

/// The request header carrying the name of a `TestServer::named_client`'s client, which
/// [`Failure::client`](crate::Failure::client) and [`Stall::client`](crate::Stall::client) match on.
pub const CLIENT_NAME_HEADER: &str = "x-informer-testserver-client";
