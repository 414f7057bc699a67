//! Object storage: the global resourceVersion counter, objects, the bounded event history and
//! the registered watchers.
//!
//! Like etcd, every write takes the next revision of one global counter. Every write is kept in
//! a bounded history (oldest dropped first, like compaction) which serves watches from an older
//! resourceVersion and lists at an older snapshot (continue tokens, `resourceVersionMatch=Exact`).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use crate::registry::{ResourceType, StorageKey};
use crate::status::ApiError;

/// The kind of a change, as in a watch event's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    /// The object was created.
    Added,
    /// The object was changed.
    Modified,
    /// The object was deleted.
    Deleted,
}

impl EventType {
    /// The watch event `type` string.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One write.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// The revision of the write.
    pub(crate) rv: u64,
    /// Storage written to.
    pub(crate) key: StorageKey,
    /// What happened.
    pub(crate) kind: EventType,
    /// The object after the write (for a deletion: the deleted object at the deletion's revision).
    pub(crate) object: Value,
    /// The object before the write (for Modified and Deleted).
    pub(crate) prev: Option<Value>,
}

/// What the store sends to a watcher.
#[derive(Debug, Clone)]
pub(crate) enum WatchMessage {
    /// A write to the watched storage.
    Event(Arc<Event>),
    /// A line that is not JSON (fault injection).
    Malformed,
}

struct Watcher {
    key: StorageKey,
    tx: mpsc::UnboundedSender<WatchMessage>,
}

/// `(namespace, name)`, namespace empty for cluster-scoped objects; the sort order of lists.
pub(crate) type ObjectKey = (String, String);

/// Objects, revisions, history and watchers.
pub(crate) struct Store {
    rv: u64,
    objects: HashMap<StorageKey, BTreeMap<ObjectKey, Value>>,
    history: VecDeque<Arc<Event>>,
    history_limit: usize,
    /// Highest revision no longer in the history (0: nothing dropped yet).
    compacted: u64,
    watchers: Vec<Watcher>,
    /// Close all watches after this many more writes.
    close_watches_after: Option<u64>,
    /// Writes answer as if they happened but change nothing (`dryRun=All`).
    dry_run: bool,
    /// The objects naming each uid in their `ownerReferences`, for garbage collection.
    dependents: HashMap<String, BTreeSet<(StorageKey, ObjectKey)>>,
    /// The revision of the latest write, for what reacts to writes inside the server (the
    /// simulated kubelet); unlike watchers, never closed by faults.
    changes: Option<tokio::sync::watch::Sender<u64>>,
}

/// The uids an object's `ownerReferences` name.
pub(crate) fn owner_uids(object: &Value) -> impl Iterator<Item = &str> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|reference| reference["uid"].as_str())
}

/// Reads a string field of `metadata`.
pub(crate) fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata")?.get(field)?.as_str()
}

/// Key of an object from its metadata.
pub(crate) fn object_key(object: &Value) -> ObjectKey {
    (
        meta_str(object, "namespace").unwrap_or_default().to_string(),
        meta_str(object, "name").unwrap_or_default().to_string(),
    )
}

/// The mutable `metadata` map of an object (created when missing or not a map).
pub(crate) fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = json!({});
    }
    let map = match object.as_object_mut() {
        Some(map) => map,
        None => unreachable!("just made an object"),
    };
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    match meta.as_object_mut() {
        Some(meta) => meta,
        None => unreachable!("just made an object"),
    }
}

/// Takes out of an object of a built-in kind what kube-apiserver's storage drops: it decodes a
/// written object into its Go type and keeps it in protobuf, so empty lists and maps and the
/// zero values of `omitempty` fields are in none of its answers, JSON or protobuf
/// ([`informer_apimachinery::protobuf::omit_empty`]). Without this, the JSON answer of an object
/// whose last annotation was removed (`"annotations": {}`) and its protobuf answer (no
/// annotations) would decode to different objects. Custom resources are kept as written, as
/// kube-apiserver keeps them.
pub(crate) fn as_stored(rt: &ResourceType, object: &mut Value) {
    informer_apimachinery::protobuf::omit_empty(&rt.api_version(), &rt.kind, object);
}

impl Store {
    /// An empty store keeping `history_limit` events.
    pub(crate) fn new(history_limit: usize) -> Self {
        Self {
            rv: 0,
            objects: HashMap::new(),
            history: VecDeque::new(),
            history_limit: history_limit.max(1),
            compacted: 0,
            watchers: Vec::new(),
            close_watches_after: None,
            dry_run: false,
            dependents: HashMap::new(),
            changes: None,
        }
    }

    /// Makes the following writes dry runs (or real ones again).
    pub(crate) fn set_dry_run(&mut self, dry_run: bool) {
        self.dry_run = dry_run;
    }

    #[cfg(test)]
    /// Whether writes are dry runs.
    pub(crate) fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    /// The current (latest) revision.
    pub(crate) fn resource_version(&self) -> u64 {
        self.rv
    }

    /// Highest revision dropped from the history.
    #[cfg(test)]
    pub(crate) fn compacted(&self) -> u64 {
        self.compacted
    }

    /// The current object.
    pub(crate) fn get(&self, rt: &ResourceType, key: &ObjectKey) -> Option<&Value> {
        self.objects.get(&rt.storage_key())?.get(key)
    }

    /// Stores `object` (a create when the key is new, else an update) at the next revision,
    /// [as kube-apiserver stores it](as_stored).
    ///
    /// A dry run returns the object with the stored object's resourceVersion (none for a create).
    pub(crate) fn put(&mut self, rt: &ResourceType, mut object: Value) -> Value {
        as_stored(rt, &mut object);
        if self.dry_run {
            let current = self
                .get(rt, &object_key(&object))
                .and_then(|o| meta_str(o, "resourceVersion"))
                .map(str::to_string);
            let meta = metadata_mut(&mut object);
            match current {
                Some(rv) => meta.insert("resourceVersion".into(), json!(rv)),
                None => meta.remove("resourceVersion"),
            };
            return object;
        }
        self.rv += 1;
        metadata_mut(&mut object).insert("resourceVersion".into(), json!(self.rv.to_string()));
        let key = object_key(&object);
        let prev = self
            .objects
            .entry(rt.storage_key())
            .or_default()
            .insert(key.clone(), object.clone());
        let storage = rt.storage_key();
        if let Some(prev) = &prev {
            self.unindex_owners(&storage, &key, prev);
        }
        self.index_owners(&storage, &key, &object);
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(Event {
            rv: self.rv,
            key: rt.storage_key(),
            kind,
            object: object.clone(),
            prev,
        });
        object
    }

    /// The current objects of a resource, by key, without copying them.
    pub(crate) fn objects(&self, rt: &ResourceType) -> impl Iterator<Item = (&ObjectKey, &Value)> {
        self.objects.get(&rt.storage_key()).into_iter().flatten()
    }

    /// Names of the objects of a storage in namespace `ns`.
    pub(crate) fn names_in_namespace(&self, storage: &StorageKey, ns: &str) -> Vec<String> {
        self.objects
            .get(storage)
            .map(|objects| {
                objects
                    .range((ns.to_string(), String::new())..)
                    .take_while(|((n, _), _)| n == ns)
                    .map(|((_, name), _)| name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether a storage holds an object in namespace `ns`.
    pub(crate) fn has_in_namespace(&self, storage: &StorageKey, ns: &str) -> bool {
        self.objects.get(storage).is_some_and(|objects| {
            objects
                .range((ns.to_string(), String::new())..)
                .next()
                .is_some_and(|((n, _), _)| n == ns)
        })
    }

    /// Deletes an object at the next revision; returns it with that revision.
    ///
    /// A dry run returns the object as stored.
    pub(crate) fn remove(&mut self, storage: &StorageKey, key: &ObjectKey) -> Option<Value> {
        if self.dry_run {
            return self.objects.get(storage)?.get(key).cloned();
        }
        let prev = self.objects.get_mut(storage)?.remove(key)?;
        self.unindex_owners(storage, key, &prev);
        self.rv += 1;
        let mut object = prev.clone();
        metadata_mut(&mut object).insert("resourceVersion".into(), json!(self.rv.to_string()));
        self.record(Event {
            rv: self.rv,
            key: storage.clone(),
            kind: EventType::Deleted,
            object: object.clone(),
            prev: Some(prev),
        });
        Some(object)
    }

    /// Deletes every object of a storage (CRD removal), one event each.
    pub(crate) fn remove_all(&mut self, storage: &StorageKey) {
        let keys: Vec<ObjectKey> = self
            .objects
            .get(storage)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for key in keys {
            self.remove(storage, &key);
        }
        self.objects.remove(storage);
        self.watchers.retain(|w| &w.key != storage);
    }

    /// The objects whose `ownerReferences` name `uid`.
    pub(crate) fn dependents_of(&self, uid: &str) -> Vec<(StorageKey, ObjectKey)> {
        self.dependents
            .get(uid)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn index_owners(&mut self, storage: &StorageKey, key: &ObjectKey, object: &Value) {
        for uid in owner_uids(object) {
            self.dependents
                .entry(uid.to_owned())
                .or_default()
                .insert((storage.clone(), key.clone()));
        }
    }

    fn unindex_owners(&mut self, storage: &StorageKey, key: &ObjectKey, object: &Value) {
        for uid in owner_uids(object) {
            if let Some(set) = self.dependents.get_mut(uid) {
                set.remove(&(storage.clone(), key.clone()));
                if set.is_empty() {
                    self.dependents.remove(uid);
                }
            }
        }
    }

    fn record(&mut self, event: Event) {
        if let Some(changes) = &self.changes {
            changes.send_replace(event.rv);
        }
        let event = Arc::new(event);
        self.history.push_back(event.clone());
        while self.history.len() > self.history_limit {
            if let Some(old) = self.history.pop_front() {
                self.compacted = old.rv;
            }
        }
        self.watchers
            .retain(|w| w.key != event.key || w.tx.send(WatchMessage::Event(event.clone())).is_ok());
        if let Some(n) = self.close_watches_after.as_mut() {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.close_watches_after = None;
                self.watchers.clear();
            }
        }
    }

    /// Objects of a storage at the current revision or at an older one (`at`), sorted by key.
    pub(crate) fn snapshot(
        &self,
        rt: &ResourceType,
        at: Option<u64>,
    ) -> Result<BTreeMap<ObjectKey, Value>, ApiError> {
        let storage = rt.storage_key();
        let mut objects = self.objects.get(&storage).cloned().unwrap_or_default();
        let Some(at) = at else { return Ok(objects) };
        if at > self.rv {
            return Err(ApiError::too_large(at, self.rv));
        }
        if at < self.compacted {
            return Err(ApiError::too_old(at, self.compacted + 1));
        }
        for event in self.history.iter().rev().take_while(|e| e.rv > at) {
            if event.key != storage {
                continue;
            }
            let key = object_key(&event.object);
            match (&event.kind, &event.prev) {
                (EventType::Added, _) | (_, None) => {
                    objects.remove(&key);
                }
                (_, Some(prev)) => {
                    objects.insert(key, prev.clone());
                }
            }
        }
        Ok(objects)
    }

    /// Registers a watcher of a storage; with `since`, also returns the kept events after it.
    pub(crate) fn watch(
        &mut self,
        rt: &ResourceType,
        since: Option<u64>,
    ) -> Result<(Vec<Arc<Event>>, mpsc::UnboundedReceiver<WatchMessage>), ApiError> {
        let storage = rt.storage_key();
        let replay = match since {
            Some(since) if since < self.compacted => {
                return Err(ApiError::too_old(since, self.compacted + 1));
            }
            Some(since) => self
                .history
                .iter()
                .filter(|e| e.rv > since && e.key == storage)
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        let (tx, rx) = mpsc::unbounded_channel();
        self.watchers.push(Watcher { key: storage, tx });
        Ok((replay, rx))
    }

    /// A receiver told the revision of every write from now on (one channel per store,
    /// created on first use).
    pub(crate) fn changes(&mut self) -> tokio::sync::watch::Receiver<u64> {
        let rv = self.rv;
        self.changes
            .get_or_insert_with(|| tokio::sync::watch::channel(rv).0)
            .subscribe()
    }

    /// Ends every open watch.
    pub(crate) fn close_watches(&mut self) {
        self.watchers.clear();
        self.close_watches_after = None;
    }

    /// Ends every open watch after `n` more writes (`0`: now).
    pub(crate) fn close_watches_after(&mut self, n: u64) {
        if n == 0 {
            self.close_watches();
        } else {
            self.close_watches_after = Some(n);
        }
    }

    /// Sends a non-JSON line on every open watch.
    pub(crate) fn send_malformed(&mut self) {
        self.watchers
            .retain(|w| w.tx.send(WatchMessage::Malformed).is_ok());
    }

    /// Drops the whole history: older revisions can no longer be watched from or listed at.
    pub(crate) fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rv;
    }

    /// Number of open watches (closed ones are pruned first).
    pub(crate) fn watch_count(&mut self) -> usize {
        self.watchers.retain(|w| !w.tx.is_closed());
        self.watchers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pods() -> ResourceType {
        ResourceType::new("", "v1", "Pod", "pods", true)
    }

    fn pod(name: &str, v: u32) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"v": v}})
    }

    #[test]
    fn revisions_are_global_and_monotonic() {
        let mut store = Store::new(100);
        let a = store.put(&pods(), pod("a", 1));
        let cm = ResourceType::new("", "v1", "ConfigMap", "configmaps", true);
        let b = store.put(&cm, pod("b", 1));
        assert_eq!(meta_str(&a, "resourceVersion"), Some("1"));
        assert_eq!(meta_str(&b, "resourceVersion"), Some("2"));
        let deleted = store
            .remove(&pods().storage_key(), &("ns".into(), "a".into()))
            .expect("exists");
        assert_eq!(meta_str(&deleted, "resourceVersion"), Some("3"));
        assert_eq!(store.resource_version(), 3);
    }

    #[test]
    fn snapshots_rewind_history() {
        let mut store = Store::new(100);
        store.put(&pods(), pod("a", 1));
        store.put(&pods(), pod("b", 1));
        store.put(&pods(), pod("a", 2));
        store.remove(&pods().storage_key(), &("ns".into(), "b".into()));
        let at2 = store.snapshot(&pods(), Some(2)).expect("kept");
        assert_eq!(at2.len(), 2);
        assert_eq!(at2[&("ns".to_string(), "a".to_string())]["spec"]["v"], 1);
        let now = store.snapshot(&pods(), None).expect("current");
        assert_eq!(now.len(), 1);
        assert_eq!(store.snapshot(&pods(), Some(9)).map_err(|e| e.code), Err(504));
    }

    #[test]
    fn bounded_history_compacts() {
        let mut store = Store::new(2);
        for i in 0..5 {
            store.put(&pods(), pod("a", i));
        }
        assert_eq!(store.compacted(), 3);
        assert!(store.watch(&pods(), Some(3)).is_ok());
        let err = store.watch(&pods(), Some(2)).expect_err("too old");
        assert_eq!(
            (err.code, err.message.as_str()),
            (410, "too old resource version: 2 (4)")
        );
        assert_eq!(
            store.snapshot(&pods(), Some(1)).map_err(|e| e.code).err(),
            Some(410)
        );
        store.compact();
        assert!(store.watch(&pods(), Some(4)).is_err());
        assert!(store.watch(&pods(), Some(5)).is_ok());
    }

    #[test]
    fn watchers_get_events_of_their_storage_and_can_be_closed() {
        let mut store = Store::new(10);
        store.put(&pods(), pod("a", 1));
        let (replay, mut rx) = store.watch(&pods(), Some(0)).expect("watch");
        assert_eq!(replay.len(), 1);
        let cm = ResourceType::new("", "v1", "ConfigMap", "configmaps", true);
        store.put(&cm, pod("c", 1));
        store.put(&pods(), pod("a", 2));
        match rx.try_recv() {
            Ok(WatchMessage::Event(e)) => assert_eq!((e.rv, e.kind), (3, EventType::Modified)),
            other => panic!("unexpected {other:?}"),
        }
        store.close_watches_after(2);
        store.put(&pods(), pod("a", 3));
        assert_eq!(store.watch_count(), 1);
        store.put(&pods(), pod("a", 4));
        assert_eq!(store.watch_count(), 0);
        assert!(matches!(rx.try_recv(), Ok(WatchMessage::Event(_))));
        assert!(matches!(rx.try_recv(), Ok(WatchMessage::Event(_))));
        assert!(rx.try_recv().is_err());
    }
}
