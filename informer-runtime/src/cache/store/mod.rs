//! The thread-safe, indexed object store behind every informer (client-go's `Indexer`).

use std::{
    collections::HashMap,
    fmt,
    sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard},
};

use kube::Resource;

use crate::{
    cache::index::{self, IndexFunc, IndexKind, Indexers},
    key::{KeyParts, ObjectKey},
    user_panic::{PanicReporter, UserFunction, UserPanic, catch},
};

/// The objects of a store, or of one index bucket, by key.
type Objects<K> = hashbrown::HashMap<ObjectKey, Arc<K>>;

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

/// Indexed value → the objects under it, by key. Buckets hold the objects themselves (the
/// same `Arc`s as the items), so a lookup reads one bucket and nothing else.
type IndexBuckets<K> = hashbrown::HashMap<String, Objects<K>>;

struct State<K> {
    items: Objects<K>,
    indexers: Indexers<K>,
    indices: HashMap<String, IndexBuckets<K>>,
    /// The kinds of the indexes registered through typed handles.
    handles: HashMap<String, IndexKind<K>>,
}

impl<K> State<K> {
    /// Whether the index `name` (which exists) was registered by `index`'s function: through
    /// the same handle, or, for the namespace index, through the string API.
    fn registered_by(&self, name: &str, index: &index::Index<K>) -> bool {
        match self.handles.get(name) {
            Some(kind) => kind.same_as(&index.kind()),
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
/// use informer_runtime::{ObjectKey, cache::{NAMESPACE_INDEX, Writer, namespace_indexers}};
/// use k8s_openapi::api::core::v1::Pod;
/// use kube::api::ObjectMeta;
///
/// let writer = Writer::<Pod>::new(namespace_indexers());
/// let store = writer.store();
/// let meta = ObjectMeta { name: Some("web".into()), namespace: Some("prod".into()), ..Default::default() };
/// writer.add(Arc::new(Pod { metadata: meta, ..Default::default() }));
///
/// assert_eq!(store.by_index(NAMESPACE_INDEX, "prod")?.len(), 1);
/// assert!(store.get_by_key(&ObjectKey::new("prod", "web")).is_some());
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
    pub fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.read().items.get(key).cloned()
    }

    /// The object stored under `obj`'s key (`&Arc<K>` works too).
    pub fn get(&self, obj: &K) -> Option<Arc<K>> {
        self.get_by_parts(KeyParts::of(obj))
    }

    /// The object stored under the key with these parts, without building the key.
    pub(crate) fn get_by_parts(&self, parts: KeyParts<'_>) -> Option<Arc<K>> {
        self.read().items.get(&parts).cloned()
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.read().items.values().cloned().collect()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
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
        let unique: HashMap<&ObjectKey, &Arc<K>> = values
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
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<ObjectKey>, Error> {
        let state = self.read();
        let index = state.indices.get(name).ok_or_else(|| not_found(name))?;
        let mut keys: Vec<ObjectKey> = index
            .get(value)
            .into_iter()
            .flat_map(hashbrown::HashMap::keys)
            .cloned()
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
        let indices = indexers
            .keys()
            .map(|name| (name.clone(), IndexBuckets::new()))
            .collect();
        Self {
            store: Store {
                state: Arc::new(RwLock::new(State {
                    items: Objects::new(),
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
        let key = ObjectKey::of(obj.as_ref());
        self.insert(key, obj)
    }

    /// Same as [`Writer::add`] (client-go keeps both names).
    pub fn update(&self, obj: Arc<K>) -> Option<Arc<K>> {
        self.add(obj)
    }

    /// Stores `obj` under `key`; returns the object it replaced.
    pub(crate) fn insert(&self, key: ObjectKey, obj: Arc<K>) -> Option<Arc<K>> {
        let mut panics = IndexPanics::new(&self.store.panics);
        let old = {
            let mut state = self.write();
            let state = &mut *state;
            let old = state.items.insert(key.clone(), Arc::clone(&obj));
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

    /// Removes the object stored under `obj`'s key (`&Arc<K>` works too).
    pub fn delete(&self, obj: &K) -> Option<Arc<K>> {
        self.remove(&KeyParts::of(obj))
    }

    /// Removes the object stored under `key`; absent keys are a no-op.
    pub fn delete_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.remove(key)
    }

    /// Removes the object stored under the key `key` is equivalent to.
    fn remove<Q>(&self, key: &Q) -> Option<Arc<K>>
    where
        Q: std::hash::Hash + hashbrown::Equivalent<ObjectKey> + ?Sized,
    {
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
        let items: Objects<K> = objects
            .into_iter()
            .map(|obj| (ObjectKey::of(obj.as_ref()), obj))
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
    /// with [`Error::IndexerConflict`], except that an existing [`NAMESPACE_INDEX`](crate::cache::NAMESPACE_INDEX) counts as
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
                state.handles.insert(name.into_owned(), index.kind());
                return Ok(());
            }
            let indexer = index.index_func();
            let built = build_index(&name, &indexer, &state.items, &mut panics);
            state.indices.insert(name.to_string(), built);
            state.indexers.insert(name.to_string(), indexer);
            state.handles.insert(name.into_owned(), index.kind());
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

fn bucket_objects<K>(bucket: Option<&Objects<K>>) -> Vec<Arc<K>> {
    bucket.map(|b| b.values().cloned().collect()).unwrap_or_default()
}

fn add_to_index<K>(index: &mut IndexBuckets<K>, values: Vec<String>, key: &ObjectKey, obj: &Arc<K>) {
    for value in values {
        index
            .entry(value)
            .or_default()
            .insert(key.clone(), Arc::clone(obj));
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
    fn values<K>(
        &mut self,
        name: &str,
        indexer: &IndexFunc<K>,
        obj: &K,
        key: &ObjectKey,
    ) -> Option<Vec<String>> {
        catch(|| indexer(obj))
            .map_err(|message| {
                let function = UserFunction::IndexFunction {
                    index: name.to_owned(),
                };
                self.caught
                    .push(self.reporter.panic(function, Some(key.clone()), message));
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
    items: &Objects<K>,
    panics: &mut IndexPanics<'_>,
) -> IndexBuckets<K> {
    let mut index = IndexBuckets::new();
    for (key, obj) in items {
        if let Some(values) = panics.values(name, indexer, obj, key) {
            add_to_index(&mut index, values, key, obj);
        }
    }
    index
}

/// Removes `key` from every bucket of `index`: for an object whose index values cannot be
/// computed again (its index function panicked).
fn remove_from_every_bucket<K>(index: &mut IndexBuckets<K>, key: &ObjectKey) {
    index.retain(|_, bucket| {
        bucket.remove(key);
        !bucket.is_empty()
    });
}

fn update_indices<K>(
    indexers: &Indexers<K>,
    indices: &mut HashMap<String, IndexBuckets<K>>,
    old: Option<&K>,
    new: Option<&Arc<K>>,
    key: &ObjectKey,
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
                Some(bucket) => bucket.insert(key.clone(), Arc::clone(new)),
                None => index
                    .entry(new_value.clone())
                    .or_default()
                    .insert(key.clone(), Arc::clone(new)),
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

mod relist;
#[cfg(test)]
mod tests;
