//! A fake lister-watcher for tests (client-go's `FakeControllerSource`).

use std::{
    collections::{BTreeMap, VecDeque},
    sync::{Mutex, MutexGuard, PoisonError},
};

use futures::{FutureExt, StreamExt, channel::mpsc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::{
    Resource,
    core::{
        ObjectList, Status, TypeMeta, WatchEvent,
        watch::{Bookmark, BookmarkMeta},
    },
};

use crate::{
    key::ObjectKey,
    source::{Error, INITIAL_EVENTS_END_ANNOTATION, ListOptions, ListerWatcher, WatchStream},
};

type Sender<K> = mpsc::UnboundedSender<Result<WatchEvent<K>, Error>>;

struct State<K> {
    items: BTreeMap<ObjectKey, K>,
    last_resource_version: u64,
    /// Changes after `history_floor`, oldest first.
    history: Vec<(u64, WatchEvent<K>)>,
    /// Watches from a resource version older than this get 410 Expired.
    history_floor: u64,
    watchers: Vec<Sender<K>>,
    list_error: Option<Status>,
    watch_call_errors: VecDeque<Error>,
    streaming_list_supported: bool,
    list_requests: Vec<ListOptions>,
    watch_requests: Vec<ListOptions>,
}

/// An in-memory source of objects that lists and watches like an API server
/// (client-go's `FakeControllerSource`).
///
/// Every change bumps one global resource version and stamps it on the object. A list returns
/// the live objects at the latest resource version (selectors and paging are ignored); a watch
/// replays the changes after its resource version (from the beginning for `"0"`), or starts
/// with the current state as ADDED events when it has none, then streams new ones. The `*_drop_watch`
/// variants change the state without telling open watches, and
/// [`reset_watch`](Self::reset_watch) closes every watch and forgets the history, so a watch
/// from before it gets 410 Expired and the reflector must relist.
pub struct FakeControllerSource<K> {
    state: Mutex<State<K>>,
}

impl<K> Default for FakeControllerSource<K> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                items: BTreeMap::new(),
                last_resource_version: 0,
                history: Vec::new(),
                history_floor: 0,
                watchers: Vec::new(),
                list_error: None,
                watch_call_errors: VecDeque::new(),
                streaming_list_supported: true,
                list_requests: Vec::new(),
                watch_requests: Vec::new(),
            }),
        }
    }
}

#[derive(Clone, Copy)]
enum Change {
    Added,
    Modified,
    Deleted,
}

impl<K: Resource + Clone + Send + Sync + 'static> FakeControllerSource<K> {
    /// An empty source.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn change(&self, change: Change, mut obj: K, broadcast: bool) -> K {
        let mut state = self.lock();
        state.last_resource_version += 1;
        let rv = state.last_resource_version;
        obj.meta_mut().resource_version = Some(rv.to_string());
        let key = ObjectKey::of(&obj);
        let event = match change {
            Change::Added => {
                state.items.insert(key, obj.clone());
                WatchEvent::Added(obj.clone())
            }
            Change::Modified => {
                state.items.insert(key, obj.clone());
                WatchEvent::Modified(obj.clone())
            }
            Change::Deleted => {
                state.items.remove(&key);
                WatchEvent::Deleted(obj.clone())
            }
        };
        state.history.push((rv, event.clone()));
        if broadcast {
            state
                .watchers
                .retain(|w| w.unbounded_send(Ok(event.clone())).is_ok());
        }
        obj
    }

    /// Adds an object; returns it with its new resource version.
    pub fn add(&self, obj: K) -> K {
        self.change(Change::Added, obj, true)
    }

    /// Modifies an object; returns it with its new resource version.
    pub fn modify(&self, obj: K) -> K {
        self.change(Change::Modified, obj, true)
    }

    /// Deletes an object; returns it with its new resource version.
    pub fn delete(&self, obj: K) -> K {
        self.change(Change::Deleted, obj, true)
    }

    /// Adds an object without telling open watches.
    pub fn add_drop_watch(&self, obj: K) -> K {
        self.change(Change::Added, obj, false)
    }

    /// Modifies an object without telling open watches.
    pub fn modify_drop_watch(&self, obj: K) -> K {
        self.change(Change::Modified, obj, false)
    }

    /// Deletes an object without telling open watches.
    pub fn delete_drop_watch(&self, obj: K) -> K {
        self.change(Change::Deleted, obj, false)
    }

    /// Closes every open watch and forgets the change history: watches from an older resource
    /// version get 410 Expired.
    pub fn reset_watch(&self) {
        let mut state = self.lock();
        state.watchers.clear();
        state.history.clear();
        state.history_floor = state.last_resource_version;
    }

    /// Closes every open watch cleanly (as a server-side timeout does).
    pub fn close_watches(&self) {
        self.lock().watchers.clear();
    }

    /// Sends an `ERROR` event with `status` to every open watch.
    pub fn send_error_event(&self, status: Status) {
        let mut state = self.lock();
        state.watchers.retain(|w| {
            w.unbounded_send(Ok(WatchEvent::Error(Box::new(status.clone()))))
                .is_ok()
        });
    }

    /// Sends a bookmark at the latest resource version to every open watch.
    pub fn send_bookmark(&self) {
        let mut state = self.lock();
        let event = bookmark(state.last_resource_version, false);
        state
            .watchers
            .retain(|w| w.unbounded_send(Ok(event.clone())).is_ok());
    }

    /// Makes every list fail with `status` (or succeed again with `None`).
    pub fn set_list_error(&self, status: Option<Status>) {
        self.lock().list_error = status;
    }

    /// Makes the next watch call fail with `error`; several calls queue up.
    pub fn fail_next_watch(&self, error: Error) {
        self.lock().watch_call_errors.push_back(error);
    }

    /// Whether watches honour `sendInitialEvents` (else they fail with 400 Invalid).
    pub fn set_streaming_list_supported(&self, supported: bool) {
        self.lock().streaming_list_supported = supported;
    }

    /// The live objects.
    pub fn objects(&self) -> Vec<K> {
        self.lock().items.values().cloned().collect()
    }

    /// The latest resource version.
    pub fn resource_version(&self) -> u64 {
        self.lock().last_resource_version
    }

    /// The options of every list request so far.
    pub fn list_requests(&self) -> Vec<ListOptions> {
        self.lock().list_requests.clone()
    }

    /// The options of every watch request so far.
    pub fn watch_requests(&self) -> Vec<ListOptions> {
        self.lock().watch_requests.clone()
    }

    fn list_now(&self, options: &ListOptions) -> Result<ObjectList<K>, Error> {
        let mut state = self.lock();
        state.list_requests.push(options.clone());
        if let Some(status) = &state.list_error {
            return Err(Error::Api(Box::new(status.clone())));
        }
        Ok(ObjectList {
            types: TypeMeta::default(),
            metadata: ListMeta {
                resource_version: Some(state.last_resource_version.to_string()),
                ..ListMeta::default()
            },
            items: state.items.values().cloned().collect(),
        })
    }

    fn watch_now(&self, options: &ListOptions) -> Result<WatchStream<K>, Error> {
        let mut state = self.lock();
        state.watch_requests.push(options.clone());
        if let Some(error) = state.watch_call_errors.pop_front() {
            return Err(error);
        }
        let (tx, rx) = mpsc::unbounded();
        if options.send_initial_events && !state.streaming_list_supported {
            return Err(Error::status(
                400,
                "Invalid",
                "sendInitialEvents is not supported",
            ));
        }
        match options.resource_version.as_deref().filter(|rv| !rv.is_empty()) {
            // Like kube-apiserver: the current state as synthetic ADDED events, then changes.
            None => {
                for obj in state.items.values() {
                    let _ = tx.unbounded_send(Ok(WatchEvent::Added(obj.clone())));
                }
                if options.send_initial_events {
                    let _ = tx.unbounded_send(Ok(bookmark(state.last_resource_version, true)));
                }
            }
            Some(rv) => {
                let Ok(rv) = rv.parse::<u64>() else {
                    return Err(Error::status(
                        400,
                        "BadRequest",
                        format!("invalid resource version {rv:?}"),
                    ));
                };
                if rv < state.history_floor {
                    let status = Status::failure("too old resource version", "Expired").with_code(410);
                    let _ = tx.unbounded_send(Ok(WatchEvent::Error(Box::new(status))));
                    return Ok(rx.boxed());
                }
                if options.send_initial_events {
                    for obj in state.items.values() {
                        let _ = tx.unbounded_send(Ok(WatchEvent::Added(obj.clone())));
                    }
                    let _ = tx.unbounded_send(Ok(bookmark(state.last_resource_version, true)));
                } else {
                    for (_, event) in state.history.iter().filter(|(change_rv, _)| *change_rv > rv) {
                        let _ = tx.unbounded_send(Ok(event.clone()));
                    }
                }
            }
        }
        state.watchers.push(tx);
        Ok(rx.boxed())
    }
}

/// A bookmark event at `resource_version`, annotated as the end of a streaming list's initial
/// events if `initial_events_end`.
pub fn bookmark<K>(resource_version: impl ToString, initial_events_end: bool) -> WatchEvent<K> {
    let mut annotations = BTreeMap::new();
    if initial_events_end {
        annotations.insert(INITIAL_EVENTS_END_ANNOTATION.to_owned(), "true".to_owned());
    }
    WatchEvent::Bookmark(Bookmark {
        types: TypeMeta::default(),
        metadata: BookmarkMeta {
            resource_version: resource_version.to_string(),
            annotations,
        },
    })
}

impl<K: Resource + Clone + Send + Sync + 'static> ListerWatcher<K> for FakeControllerSource<K> {
    fn list(&self, options: &ListOptions) -> futures::future::BoxFuture<'_, Result<ObjectList<K>, Error>> {
        let result = self.list_now(options);
        async move { result }.boxed()
    }

    fn watch(&self, options: &ListOptions) -> futures::future::BoxFuture<'_, Result<WatchStream<K>, Error>> {
        let result = self.watch_now(options);
        async move { result }.boxed()
    }
}
