//! The thread-safe, indexed object store behind every informer (client-go's `Indexer`).

use std::{
    collections::HashMap,
    fmt,
    sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard},
};

use kube::Resource;

use crate::{
    cache::index::{self, Source},
    cache::key::{SharedKey, object_key},
    user_panic::{PanicReporter, UserFunction, UserPanic, catch},
};

/// The name of the built-in index of objects by namespace.
pub const NAMESPACE_INDEX: &str = "namespace";

/// A function that maps an object to the values it is indexed under.
///
/// Returning no value leaves the object out of the index; returning `""` puts it in the `""`
/// bucket (as the namespace index does for cluster-scoped objects). Duplicate values collapse.
pub type IndexFunc<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// Named index functions.
pub type Indexers<K> = HashMap<String, IndexFunc<K>>;

/// The namespace index function: `[namespace]`, or `[""]` for cluster-scoped objects
/// (client-go's `MetaNamespaceIndexFunc`).
pub fn namespace_index_func<K: Resource>(obj: &K) -> Vec<String> {
    vec![obj.meta().namespace.clone().unwrap_or_default()]
}

/// Indexers holding only the namespace index, which every informer of a factory carries.
pub fn namespace_indexers<K: Resource + 'static>() -> Indexers<K> {
    let mut indexers: Indexers<K> = HashMap::new();
    indexers.insert(NAMESPACE_INDEX.to_owned(), Arc::new(namespace_index_func::<K>));
    indexers
}

/// The result of a store operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed index query or index registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The index name is not registered.
    #[error("failed to query index {name:?}: no index with that name exists (add it with add_indexers)")]
    IndexNotFound {
        /// The index that was asked for.
        name: String,
    },
    /// The index function panicked on the object of an [`Store::index`] query.
    #[error("failed to query index {name:?}: its index function panicked on the given object: {message}")]
    IndexFunctionPanicked {
        /// The index that was asked for.
        name: String,
        /// The panic's message.
        message: String,
    },
    /// The index name is registered, by another function than the queried handle's.
    #[error(
        "failed to query index {name:?}: it was registered with another index function than this handle's"
    )]
    IndexFunctionMismatch {
        /// The index that was asked for.
        name: String,
    },
    /// Some of the indexers to add are already registered; none were added.
    #[error("failed to add indexers: indexer conflict: {names:?} already exist")]
    IndexerConflict {
        /// The names that already exist.
        names: Vec<String>,
    },
}

/// index value -> keys of the objects indexed under it.
/// Indexed value → the objects under it, by key. Buckets hold the objects themselves (the
/// same `Arc`s as the items), so a lookup reads one bucket and nothing else.
type Index<K> = HashMap<String, HashMap<SharedKey, Arc<K>>>;

struct State<K> {
    items: HashMap<SharedKey, Arc<K>>,
    indexers: Indexers<K>,
    indices: HashMap<String, Index<K>>,
    /// The sources of the indexes registered through typed handles.
    handles: HashMap<String, Source<K>>,
}

impl<K> State<K> {
    /// Whether the index `name` (which exists) was registered by `index`'s function: through
    /// the same handle, or, for the namespace index, through the string API.
    fn registered_by(&self, name: &str, index: &index::Index<K>) -> bool {
        match self.handles.get(name) {
            Some(source) => source.same_as(&index.source()),
            None => index.is_namespace(),
        }
    }
}

/// A read-only view of a thread-safe map of key to `Arc<K>` with secondary indexes (the
/// reading half of client-go's `Indexer`).
///
/// This is what an informer hands out ([`SharedIndexInformer::store`]): a user can read the
/// shared cache, never corrupt it. Its [`Writer`] (kept by the informer, or by whoever built
/// the store) writes. Objects are stored once; every read hands out `Arc<K>`. Cloning a
/// `Store` gives another view of the same data. Index lookups cost O(result); an index bucket
/// that becomes empty is removed, so high-cardinality values do not leak memory.
///
/// ```
/// use std::sync::Arc;
/// use informer_runtime::cache::{NAMESPACE_INDEX, Writer, namespace_indexers};
/// use k8s_openapi::api::core::v1::Pod;
/// use kube::api::ObjectMeta;
///
/// let writer = Writer::<Pod>::new(namespace_indexers());
/// let store = writer.store();
/// let meta = ObjectMeta { name: Some("web".into()), namespace: Some("prod".into()), ..Default::default() };
/// writer.add(Arc::new(Pod { metadata: meta, ..Default::default() }));
///
/// assert_eq!(store.by_index(NAMESPACE_INDEX, "prod")?.len(), 1);
/// assert!(store.get_by_key("prod/web").is_some());
/// # Ok::<(), informer_runtime::cache::Error>(())
/// ```
///
/// A store cannot write:
///
/// ```compile_fail
/// # use std::sync::Arc;
/// # use informer_runtime::cache::{Store, Writer};
/// # use k8s_openapi::api::core::v1::Pod;
/// let store: Store<Pod> = Writer::default().store();
/// store.add(Arc::new(Pod::default()));
/// ```
///
/// [`SharedIndexInformer::store`]: crate::informer::SharedIndexInformer::store
pub struct Store<K> {
    state: Arc<RwLock<State<K>>>,
    panics: Arc<PanicReporter>,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Self {
            state: Arc::clone(&self.state),
            panics: Arc::clone(&self.panics),
        }
    }
}

impl<K> fmt::Debug for Store<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.read();
        f.debug_struct("Store")
            .field("len", &state.items.len())
            .field("indexers", &state.indexers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The writing half of a [`Store`]: adds, updates, deletes and replaces objects, and adds
/// indexes. It dereferences to its store for reads; [`store`](Self::store) hands out
/// read-only views. An informer keeps its writer to itself; build one to feed a
/// [`Reflector`](crate::reflector::Reflector) of your own.
pub struct Writer<K> {
    store: Store<K>,
}

impl<K> fmt::Debug for Writer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Writer").field(&self.store).finish()
    }
}

impl<K: Resource> Default for Writer<K> {
    fn default() -> Self {
        Self::new(Indexers::new())
    }
}

impl<K> std::ops::Deref for Writer<K> {
    type Target = Store<K>;

    fn deref(&self) -> &Store<K> {
        &self.store
    }
}

impl<K> Writer<K> {
    /// A read-only view of the store this writes to.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    fn write(&self) -> RwLockWriteGuard<'_, State<K>> {
        self.store.state.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K> Store<K> {
    fn read(&self) -> RwLockReadGuard<'_, State<K>> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: Resource> Store<K> {
    /// The object stored under `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.read().items.get(key).cloned()
    }

    /// The object stored under `obj`'s key.
    pub fn get(&self, obj: &K) -> Option<Arc<K>> {
        self.get_by_key(&object_key(obj))
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.read().items.values().cloned().collect()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.read().items.keys().map(|k| k.to_string()).collect()
    }

    pub(crate) fn shared_keys(&self) -> Vec<SharedKey> {
        self.read().items.keys().cloned().collect()
    }

    /// The number of stored objects.
    pub fn len(&self) -> usize {
        self.read().items.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.read().items.is_empty()
    }

    /// The objects that share an indexed value with `obj` under index `name`
    /// (client-go's `Index`).
    pub fn index(&self, name: &str, obj: &K) -> Result<Vec<Arc<K>>, Error> {
        let state = self.read();
        let indexer = state.indexers.get(name).ok_or_else(|| not_found(name))?;
        let index = state.indices.get(name).ok_or_else(|| not_found(name))?;
        let values = catch(|| indexer(obj)).map_err(|message| Error::IndexFunctionPanicked {
            name: name.to_owned(),
            message,
        })?;
        if let [value] = values.as_slice() {
            return Ok(bucket_objects(index.get(value.as_str())));
        }
        let unique: HashMap<&SharedKey, &Arc<K>> = values
            .iter()
            .filter_map(|v| index.get(v.as_str()))
            .flatten()
            .collect();
        Ok(unique.into_values().cloned().collect())
    }

    /// The objects indexed under `value` in index `name`; O(result).
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        let state = self.read();
        let index = state.indices.get(name).ok_or_else(|| not_found(name))?;
        Ok(bucket_objects(index.get(value)))
    }

    /// The keys indexed under `value` in index `name`, sorted.
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<String>, Error> {
        let state = self.read();
        let index = state.indices.get(name).ok_or_else(|| not_found(name))?;
        let mut keys: Vec<String> = index
            .get(value)
            .into_iter()
            .flat_map(HashMap::keys)
            .map(|k| k.to_string())
            .collect();
        keys.sort_unstable();
        Ok(keys)
    }

    /// Every value that currently has objects in index `name` (empty for an unknown index).
    pub fn list_index_func_values(&self, name: &str) -> Vec<String> {
        self.read()
            .indices
            .get(name)
            .map(|index| index.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The names of the registered indexes.
    pub fn indexer_names(&self) -> Vec<String> {
        self.read().indexers.keys().cloned().collect()
    }

    /// Whether an index named `name` is registered.
    pub fn has_index(&self, name: &str) -> bool {
        self.read().indexers.contains_key(name)
    }

    /// Whether `index` is registered by this very handle: `Ok`, or why not.
    pub(crate) fn check_index(&self, index: &index::Index<K>) -> Result<(), Error> {
        let name = index.name();
        let state = self.read();
        if !state.indexers.contains_key(name.as_ref()) {
            return Err(not_found(&name));
        }
        if state.registered_by(&name, index) {
            Ok(())
        } else {
            Err(Error::IndexFunctionMismatch {
                name: name.into_owned(),
            })
        }
    }
}

impl<K: Resource> Writer<K> {
    /// An empty store with the given indexers.
    ///
    /// An index function that panics on an object is reported (logged at error level) and
    /// that object is left out of that index; the store and its other indexes go on. In an
    /// informer the report names the informer and is counted in its stats (see
    /// [`user_panic`](crate::user_panic)).
    pub fn new(indexers: Indexers<K>) -> Self {
        Self::with_panic_reporter(indexers, Arc::new(PanicReporter::new("store")))
    }

    /// An empty store reporting index function panics to `panics` (the informer's reporter).
    pub(crate) fn with_panic_reporter(indexers: Indexers<K>, panics: Arc<PanicReporter>) -> Self {
        let indices = indexers.keys().map(|name| (name.clone(), Index::new())).collect();
        Self {
            store: Store {
                state: Arc::new(RwLock::new(State {
                    items: HashMap::new(),
                    indexers,
                    indices,
                    handles: HashMap::new(),
                })),
                panics,
            },
        }
    }

    /// Stores `obj` under its key, replacing any previous object, and updates every index.
    pub fn add(&self, obj: Arc<K>) -> Option<Arc<K>> {
        let key: SharedKey = object_key(obj.as_ref()).into();
        self.insert(key, obj)
    }

    /// Same as [`Writer::add`] (client-go keeps both names).
    pub fn update(&self, obj: Arc<K>) -> Option<Arc<K>> {
        self.add(obj)
    }

    /// Stores `obj` under `key`; returns the object it replaced.
    pub(crate) fn insert(&self, key: SharedKey, obj: Arc<K>) -> Option<Arc<K>> {
        let mut panics = IndexPanics::new(&self.store.panics);
        let old = {
            let mut state = self.write();
            let state = &mut *state;
            let old = state.items.insert(Arc::clone(&key), Arc::clone(&obj));
            update_indices(
                &state.indexers,
                &mut state.indices,
                old.as_deref(),
                Some(&obj),
                &key,
                &mut panics,
            );
            old
        };
        panics.report();
        old
    }

    /// Removes the object stored under `obj`'s key.
    pub fn delete(&self, obj: &K) -> Option<Arc<K>> {
        self.delete_by_key(&object_key(obj))
    }

    /// Removes the object stored under `key`; absent keys are a no-op.
    pub fn delete_by_key(&self, key: &str) -> Option<Arc<K>> {
        let mut panics = IndexPanics::new(&self.store.panics);
        let old = {
            let mut state = self.write();
            let state = &mut *state;
            let (key, old) = state.items.remove_entry(key)?;
            update_indices(
                &state.indexers,
                &mut state.indices,
                Some(old.as_ref()),
                None,
                &key,
                &mut panics,
            );
            old
        };
        panics.report();
        Some(old)
    }

    /// Replaces the whole content with `objects` and rebuilds every index
    /// (a later object with the same key wins).
    pub fn replace(&self, objects: impl IntoIterator<Item = Arc<K>>) {
        let items: HashMap<SharedKey, Arc<K>> = objects
            .into_iter()
            .map(|obj| (SharedKey::from(object_key(obj.as_ref())), obj))
            .collect();
        let mut panics = IndexPanics::new(&self.store.panics);
        {
            let mut state = self.write();
            let state = &mut *state;
            state.items = items;
            for (name, indexer) in &state.indexers {
                let index = build_index(name, indexer, &state.items, &mut panics);
                state.indices.insert(name.clone(), index);
            }
        }
        panics.report();
    }

    /// Registers the typed index `index` and indexes every stored object at once (also on a
    /// running, non-empty store).
    ///
    /// Registering the same handle again is a no-op. A name taken by another function fails
    /// with [`Error::IndexerConflict`], except that an existing [`NAMESPACE_INDEX`] counts as
    /// [`Index::NAMESPACE`](index::Index::NAMESPACE).
    pub fn add_index(&self, index: &index::Index<K>) -> Result<(), Error>
    where
        K: 'static,
    {
        let name = index.name();
        let mut panics = IndexPanics::new(&self.store.panics);
        {
            let mut state = self.write();
            let state = &mut *state;
            if state.indexers.contains_key(name.as_ref()) {
                if !state.registered_by(&name, index) {
                    return Err(Error::IndexerConflict {
                        names: vec![name.into_owned()],
                    });
                }
                state.handles.insert(name.into_owned(), index.source());
                return Ok(());
            }
            let indexer = index.index_func();
            let built = build_index(&name, &indexer, &state.items, &mut panics);
            state.indices.insert(name.to_string(), built);
            state.indexers.insert(name.to_string(), indexer);
            state.handles.insert(name.into_owned(), index.source());
        }
        panics.report();
        Ok(())
    }

    /// Registers more indexes and indexes every stored object at once; works on a running,
    /// non-empty store. If any name already exists, nothing is added.
    pub fn add_indexers(&self, new: Indexers<K>) -> Result<(), Error> {
        let mut panics = IndexPanics::new(&self.store.panics);
        {
            let mut state = self.write();
            let state = &mut *state;
            let mut conflicts: Vec<String> = new
                .keys()
                .filter(|name| state.indexers.contains_key(*name))
                .cloned()
                .collect();
            if !conflicts.is_empty() {
                conflicts.sort_unstable();
                return Err(Error::IndexerConflict { names: conflicts });
            }
            for (name, indexer) in new {
                let index = build_index(&name, &indexer, &state.items, &mut panics);
                state.indices.insert(name.clone(), index);
                state.indexers.insert(name, indexer);
            }
        }
        panics.report();
        Ok(())
    }
}

fn not_found(name: &str) -> Error {
    Error::IndexNotFound {
        name: name.to_owned(),
    }
}

fn bucket_objects<K>(bucket: Option<&HashMap<SharedKey, Arc<K>>>) -> Vec<Arc<K>> {
    bucket.map(|b| b.values().cloned().collect()).unwrap_or_default()
}

fn add_to_index<K>(index: &mut Index<K>, values: Vec<String>, key: &SharedKey, obj: &Arc<K>) {
    for value in values {
        index
            .entry(value)
            .or_default()
            .insert(Arc::clone(key), Arc::clone(obj));
    }
}

/// Index function panics caught while the store's lock is held, reported once it is released
/// (the watch-error handler they are passed to may read the store).
struct IndexPanics<'a> {
    reporter: &'a PanicReporter,
    caught: Vec<UserPanic>,
}

impl<'a> IndexPanics<'a> {
    fn new(reporter: &'a PanicReporter) -> Self {
        Self {
            reporter,
            caught: Vec::new(),
        }
    }

    /// The values `indexer` gives `obj`; `None` if it panicked (recorded).
    fn values<K>(&mut self, name: &str, indexer: &IndexFunc<K>, obj: &K, key: &str) -> Option<Vec<String>> {
        catch(|| indexer(obj))
            .map_err(|message| {
                let function = UserFunction::IndexFunction {
                    index: name.to_owned(),
                };
                self.caught
                    .push(self.reporter.panic(function, Some(key.to_owned()), message));
            })
            .ok()
    }

    fn report(self) {
        for panic in self.caught {
            self.reporter.report(panic);
        }
    }
}

/// Index `name` of every item.
fn build_index<K>(
    name: &str,
    indexer: &IndexFunc<K>,
    items: &HashMap<SharedKey, Arc<K>>,
    panics: &mut IndexPanics<'_>,
) -> Index<K> {
    let mut index = Index::new();
    for (key, obj) in items {
        if let Some(values) = panics.values(name, indexer, obj, key) {
            add_to_index(&mut index, values, key, obj);
        }
    }
    index
}

/// Removes `key` from every bucket of `index`: for an object whose index values cannot be
/// computed again (its index function panicked).
fn remove_from_every_bucket<K>(index: &mut Index<K>, key: &SharedKey) {
    index.retain(|_, bucket| {
        bucket.remove(key);
        !bucket.is_empty()
    });
}

fn update_indices<K>(
    indexers: &Indexers<K>,
    indices: &mut HashMap<String, Index<K>>,
    old: Option<&K>,
    new: Option<&Arc<K>>,
    key: &SharedKey,
    panics: &mut IndexPanics<'_>,
) {
    for (name, indexer) in indexers {
        // `None`: no object; `Some(None)`: its index function panicked.
        let old_values = old.map(|o| panics.values(name, indexer, o, key));
        let new_values = new.map(|n| panics.values(name, indexer, n.as_ref(), key));
        let index = indices.entry(name.clone()).or_default();
        if let (Some(Some([old_value])), Some(Some([new_value])), Some(new)) = (
            old_values.as_ref().map(|v| v.as_deref()),
            new_values.as_ref().map(|v| v.as_deref()),
            new,
        ) && old_value == new_value
        {
            // same bucket: only the object changes
            match index.get_mut(new_value.as_str()) {
                Some(bucket) => bucket.insert(Arc::clone(key), Arc::clone(new)),
                None => index
                    .entry(new_value.clone())
                    .or_default()
                    .insert(Arc::clone(key), Arc::clone(new)),
            };
            continue;
        }
        match old_values {
            Some(Some(values)) => {
                for value in values {
                    if let Some(bucket) = index.get_mut(value.as_str()) {
                        bucket.remove(key);
                        if bucket.is_empty() {
                            index.remove(value.as_str());
                        }
                    }
                }
            }
            Some(None) => remove_from_every_bucket(index, key),
            None => {}
        }
        if let (Some(new), Some(Some(values))) = (new, new_values) {
            add_to_index(index, values, key, new);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{ConfigMap, Pod};
    use kube::api::ObjectMeta;

    use super::*;

    #[test]
    fn an_update_within_the_same_bucket_is_seen_through_the_index() {
        let store = Writer::new(namespace_indexers());
        let pod = |rv: &str| {
            Arc::new(Pod {
                metadata: ObjectMeta {
                    name: Some("a".into()),
                    namespace: Some("ns".into()),
                    resource_version: Some(rv.into()),
                    ..ObjectMeta::default()
                },
                ..Pod::default()
            })
        };
        store.add(pod("1"));
        store.update(pod("2"));
        let by_index = store
            .by_index(NAMESPACE_INDEX, "ns")
            .expect("the namespace index");
        let versions: Vec<_> = by_index
            .iter()
            .map(|p| p.metadata.resource_version.as_deref())
            .collect();
        assert_eq!(versions, [Some("2")]);
        let stored = store.get_by_key("ns/a").expect("stored");
        assert!(
            Arc::ptr_eq(&stored, &by_index[0]),
            "the index holds the stored object"
        );
        let via_index = store
            .index(NAMESPACE_INDEX, &pod("3"))
            .expect("the namespace index");
        assert!(Arc::ptr_eq(&stored, &via_index[0]));
        store.delete_by_key("ns/a");
        assert!(
            store
                .by_index(NAMESPACE_INDEX, "ns")
                .expect("the namespace index")
                .is_empty()
        );
        assert!(store.list_index_func_values(NAMESPACE_INDEX).is_empty());
    }

    /// A config map named `name` whose "val" data entry is the payload.
    fn cm(name: &str, val: &str) -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([("val".to_owned(), val.to_owned())])),
            ..ConfigMap::default()
        })
    }

    fn val(obj: &ConfigMap) -> String {
        obj.data
            .as_ref()
            .and_then(|d| d.get("val"))
            .cloned()
            .unwrap_or_default()
    }

    fn indexers(
        name: &str,
        f: impl Fn(&ConfigMap) -> Vec<String> + Send + Sync + 'static,
    ) -> Indexers<ConfigMap> {
        HashMap::from([(name.to_owned(), Arc::new(f) as IndexFunc<ConfigMap>)])
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    // Port of client-go TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex.
    #[test]
    fn delete_removes_empty_sets_from_index() {
        let store = Writer::new(indexers("testmodes", |o| vec![val(o)]));
        store.add(cm("testKey", "testKey"));
        assert_eq!(
            store.index_keys("testmodes", "testKey").unwrap_or_default().len(),
            1
        );
        store.delete_by_key("testKey");
        assert!(
            store.list_index_func_values("testmodes").is_empty(),
            "empty bucket must be removed"
        );
    }

    // Port of client-go TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex.
    #[test]
    fn delete_keeps_non_empty_sets() {
        let store = Writer::new(indexers("testmodes", |_| vec!["testIndex".to_owned()]));
        store.add(cm("retain", "retain"));
        store.add(cm("delete", "delete"));
        assert_eq!(
            store
                .index_keys("testmodes", "testIndex")
                .unwrap_or_default()
                .len(),
            2
        );
        store.delete_by_key("delete");
        assert_eq!(
            store.index_keys("testmodes", "testIndex").unwrap_or_default(),
            vec!["retain"]
        );
    }

    // Port of client-go TestThreadSafeStoreIndexingFunctionsWithMultipleValues.
    #[test]
    fn index_functions_with_multiple_values() {
        let store = Writer::new(indexers("test", |o| {
            val(o).split(',').map(str::to_owned).collect()
        }));
        let check = |foo: &[&str], bar: &[&str], baz: &[&str]| {
            for (value, want) in [("foo", foo), ("bar", bar), ("baz", baz)] {
                assert_eq!(
                    store.index_keys("test", value).unwrap_or_default(),
                    want,
                    "bucket {value}"
                );
            }
        };
        store.add(cm("key1", "foo"));
        store.add(cm("key2", "bar"));
        check(&["key1"], &["key2"], &[]);
        store.update(cm("key2", "foo,bar"));
        check(&["key1", "key2"], &["key2"], &[]);
        store.update(cm("key1", "foo,bar"));
        check(&["key1", "key2"], &["key1", "key2"], &[]);
        store.add(cm("key3", "foo,bar,baz"));
        check(&["key1", "key2", "key3"], &["key1", "key2", "key3"], &["key3"]);
        store.update(cm("key1", "foo"));
        check(&["key1", "key2", "key3"], &["key2", "key3"], &["key3"]);
        store.update(cm("key2", "bar"));
        check(&["key1", "key3"], &["key2", "key3"], &["key3"]);
        store.delete_by_key("key1");
        check(&["key3"], &["key2", "key3"], &["key3"]);
        store.delete_by_key("key3");
        check(&[], &["key2"], &[]);
    }

    fn pod(name: &str, labels: &[(&str, &str)], annotations: &[(&str, &str)]) -> Arc<Pod> {
        let map = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        Arc::new(Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(map(labels)),
                annotations: Some(map(annotations)),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        })
    }

    fn names(pods: Vec<Arc<Pod>>) -> Vec<String> {
        sorted(pods.iter().filter_map(|p| p.metadata.name.clone()).collect())
    }

    // Port of client-go TestGetIndexFuncValues (index_test.go).
    #[test]
    fn list_index_func_values() {
        let mut idx: Indexers<Pod> = HashMap::new();
        idx.insert(
            "testmodes".into(),
            Arc::new(|p: &Pod| {
                p.metadata
                    .labels
                    .iter()
                    .flatten()
                    .filter(|(k, _)| *k == "foo")
                    .map(|(_, v)| v.clone())
                    .collect()
            }),
        );
        let store = Writer::new(idx);
        store.add(pod("one", &[("foo", "bar")], &[]));
        store.add(pod("two", &[("foo", "bar")], &[]));
        store.add(pod("tre", &[("foo", "biz")], &[]));
        assert_eq!(
            sorted(store.list_index_func_values("testmodes")),
            vec!["bar", "biz"]
        );
    }

    // Port of client-go TestMultiIndexKeys (index_test.go).
    #[test]
    fn multi_index_keys() {
        let mut idx: Indexers<Pod> = HashMap::new();
        idx.insert(
            "byUser".into(),
            Arc::new(|p: &Pod| {
                p.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("users"))
                    .map(|u| u.split(',').map(str::to_owned).collect())
                    .unwrap_or_default()
            }),
        );
        let store = Writer::new(idx);
        store.add(pod("one", &[], &[("users", "ernie,bert")]));
        store.add(pod("two", &[], &[("users", "bert,oscar")]));
        store.add(pod("tre", &[], &[("users", "ernie,elmo")]));
        let by = |v: &str| names(store.by_index("byUser", v).unwrap_or_default());
        assert_eq!(by("ernie"), vec!["one", "tre"]);
        assert_eq!(by("bert"), vec!["one", "two"]);
        assert_eq!(by("elmo"), vec!["tre"]);
        assert_eq!(by("oscar"), vec!["two"]);
        assert!(by("elmo1").is_empty());

        store.delete_by_key("tre");
        assert_eq!(by("ernie"), vec!["one"]);
        assert!(by("elmo").is_empty());

        store.update(pod("two", &[], &[("users", "oscar")]));
        assert_eq!(by("bert"), vec!["one"]);
    }

    // Port of client-go TestCache / doTestStore (store_test.go).
    #[test]
    fn store_add_update_delete_list_replace() {
        let store = Writer::<ConfigMap>::default();
        store.add(cm("foo", "bar"));
        assert_eq!(store.get_by_key("foo").map(|o| val(&o)), Some("bar".into()));
        store.update(cm("foo", "baz"));
        assert_eq!(store.get_by_key("foo").map(|o| val(&o)), Some("baz".into()));
        store.delete(&cm("foo", ""));
        assert!(store.get_by_key("foo").is_none());

        store.add(cm("a", "b"));
        store.add(cm("c", "d"));
        store.add(cm("e", "e"));
        assert_eq!(
            sorted(store.list().iter().map(|o| val(o)).collect()),
            vec!["b", "d", "e"]
        );

        store.replace([cm("foo", "foo"), cm("bar", "bar")]);
        assert_eq!(
            sorted(store.list().iter().map(|o| val(o)).collect()),
            vec!["bar", "foo"]
        );
        assert_eq!(sorted(store.list_keys()), vec!["bar", "foo"]);
    }

    // Port of client-go TestIndex / doTestIndex (store_test.go).
    #[test]
    fn index_returns_objects_sharing_a_value() {
        let store = Writer::new(indexers("by_val", |o| vec![val(o)]));
        for (k, v) in [("a", "b"), ("c", "b"), ("e", "f"), ("g", "h")] {
            store.add(cm(k, v));
        }
        let keys_for = |v: &str| -> Vec<String> {
            sorted(
                store
                    .index("by_val", &cm("probe", v))
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|o| o.metadata.name.clone())
                    .collect(),
            )
        };
        assert_eq!(keys_for("b"), vec!["a", "c"]);
        assert_eq!(keys_for("f"), vec!["e"]);
        assert_eq!(keys_for("h"), vec!["g"]);
    }

    #[test]
    fn unknown_index_is_an_error() {
        let store = Writer::<ConfigMap>::default();
        let err = store.by_index("nope", "x").expect_err("unknown index");
        assert!(err.to_string().contains("\"nope\""), "{err}");
        assert!(store.index_keys("nope", "x").is_err());
        assert!(store.index("nope", &cm("a", "b")).is_err());
        assert!(store.list_index_func_values("nope").is_empty());
    }

    #[test]
    fn add_indexers_indexes_existing_items_and_rejects_conflicts() {
        let store = Writer::new(indexers("by_val", |o| vec![val(o)]));
        store.add(cm("a", "x"));
        store.add(cm("b", "y"));
        let err = store
            .add_indexers(HashMap::from([
                (
                    "by_val".to_owned(),
                    Arc::new(|_: &ConfigMap| vec![]) as IndexFunc<ConfigMap>,
                ),
                (
                    "by_name".to_owned(),
                    Arc::new(|o: &ConfigMap| vec![o.metadata.name.clone().unwrap_or_default()]),
                ),
            ]))
            .expect_err("conflict");
        assert_eq!(
            err,
            Error::IndexerConflict {
                names: vec!["by_val".into()]
            }
        );
        assert!(!store.has_index("by_name"), "a conflict adds nothing");

        store
            .add_indexers(indexers("by_name", |o| {
                vec![o.metadata.name.clone().unwrap_or_default()]
            }))
            .expect("no conflict");
        assert_eq!(store.index_keys("by_name", "b").unwrap_or_default(), vec!["b"]);
        store.add(cm("c", "z"));
        assert_eq!(store.index_keys("by_name", "c").unwrap_or_default(), vec!["c"]);
    }

    #[test]
    fn namespace_index_puts_cluster_scoped_objects_in_empty_bucket() {
        let store = Writer::<Pod>::new(namespace_indexers());
        let mut p = (*pod("a", &[], &[])).clone();
        p.metadata.namespace = Some("ns1".into());
        store.add(Arc::new(p));
        store.add(pod("cluster", &[], &[]));
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "ns1").unwrap_or_default(),
            vec!["ns1/a"]
        );
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "").unwrap_or_default(),
            vec!["cluster"]
        );
    }

    /// Indexes by the `val` entry, and panics on the value "panics".
    fn panicking_on(
        val_that_panics: &'static str,
    ) -> impl Fn(&ConfigMap) -> Vec<String> + Send + Sync + 'static {
        move |o| {
            let v = val(o);
            assert_ne!(v, val_that_panics, "index function bug");
            vec![v]
        }
    }

    #[test]
    fn a_panicking_index_function_leaves_the_object_out_of_that_index_only() {
        let mut both = indexers("by_val", panicking_on("panics"));
        both.extend(namespace_indexers());
        let store = Writer::new(both);
        store.add(cm("a", "x"));
        store.add(cm("b", "panics"));
        assert_eq!(store.len(), 2, "both stored");
        assert_eq!(store.index_keys("by_val", "x").unwrap_or_default(), vec!["a"]);
        assert_eq!(store.list_index_func_values("by_val"), vec!["x"]);
        assert_eq!(
            sorted(store.index_keys(NAMESPACE_INDEX, "").unwrap_or_default()),
            vec!["a", "b"]
        );

        // an old value that cannot be computed again is found in every bucket
        store.update(cm("a", "panics"));
        assert!(store.list_index_func_values("by_val").is_empty());
        store.update(cm("a", "y"));
        assert_eq!(store.index_keys("by_val", "y").unwrap_or_default(), vec!["a"]);
        store.delete(&cm("b", "panics"));
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "").unwrap_or_default(),
            vec!["a"]
        );
    }

    #[test]
    fn replace_and_add_indexers_skip_objects_whose_index_function_panics() {
        let store = Writer::new(indexers("by_val", panicking_on("panics")));
        store.replace([cm("a", "x"), cm("b", "panics")]);
        assert_eq!(store.len(), 2);
        assert_eq!(store.list_index_func_values("by_val"), vec!["x"]);
        store
            .add_indexers(indexers("by_val_too", panicking_on("x")))
            .expect("added");
        assert_eq!(store.list_index_func_values("by_val_too"), vec!["panics"]);
    }

    #[test]
    fn an_index_query_whose_index_function_panics_is_an_error() {
        let store = Writer::new(indexers("by_val", panicking_on("panics")));
        store.add(cm("a", "x"));
        let err = store.index("by_val", &cm("q", "panics")).expect_err("panicked");
        assert_eq!(
            err.to_string(),
            "failed to query index \"by_val\": its index function panicked on the given object: \
             assertion `left != right` failed: index function bug\n  left: \"panics\"\n right: \"panics\""
        );
        assert_eq!(
            store.index("by_val", &cm("q", "x")).map(|v| v.len()),
            Ok(1),
            "the store still works"
        );
    }
}
