//! A relist handed to a store page by page.

use std::{collections::HashSet, marker::PhantomData, sync::Arc};

use kube::Resource;

use crate::{
    cache::Writer,
    cache::delta_fifo::DeltaFifo,
    cache::key::{SharedKey, object_key},
    reflector::ReflectorStore,
};

/// A relist in progress, begun by [`ReflectorStore::begin_replace`]: the reflector hands it
/// every page of the list as the page arrives, then finishes it with the list's resource
/// version.
///
/// A store that applies pages as they come holds, at the peak of a relist, what it held
/// before plus about one page, instead of twice what it holds. Dropping a replacement
/// without finishing it (the list failed) keeps what its pages applied: each listed object
/// is at least as new as the one it replaced, and the next relist removes what vanished.
pub trait Replacement<K>: Send {
    /// The next page of the list, prepared by [`ReflectorStore::prepare`].
    fn page(&mut self, objects: Vec<Arc<K>>);

    /// An object listed earlier is gone (a streaming list's initial events may say so before
    /// they end): the store deletes it, and it no longer counts as listed.
    fn delete(&mut self, object: Arc<K>);

    /// The list starts over (a continuation expired and one full list follows): the pages so
    /// far do not count as listed.
    fn start_over(&mut self);

    /// The list is complete at `resource_version`: whatever the store holds that no page
    /// listed since the last [`start_over`](Self::start_over) is gone.
    fn finish(self: Box<Self>, resource_version: &str);
}

/// The replacement of a store that takes a relist whole: pages are buffered, and the store's
/// [`replace`](ReflectorStore::replace) receives them all at the end.
pub struct BufferedReplacement<'a, K, S: ?Sized> {
    store: &'a S,
    objects: Vec<Arc<K>>,
    _kind: PhantomData<fn() -> K>,
}

impl<'a, K, S: ?Sized> BufferedReplacement<'a, K, S> {
    /// Buffers a relist of `store`.
    pub fn new(store: &'a S) -> Self {
        Self {
            store,
            objects: Vec::new(),
            _kind: PhantomData,
        }
    }
}

impl<K: Resource + Send + Sync, S: ReflectorStore<K> + ?Sized> Replacement<K>
    for BufferedReplacement<'_, K, S>
{
    fn page(&mut self, objects: Vec<Arc<K>>) {
        self.objects.extend(objects);
    }

    fn delete(&mut self, object: Arc<K>) {
        let key = object_key(object.as_ref());
        self.objects.retain(|listed| object_key(listed.as_ref()) != key);
    }

    fn start_over(&mut self) {
        self.objects = Vec::new();
    }

    fn finish(self: Box<Self>, resource_version: &str) {
        self.store.replace(self.objects, resource_version);
    }
}

/// A store that applies a relist page by page: each page's objects replace what the store
/// holds under their keys, and at the end every key no page listed is removed.
pub(crate) trait PagedStore<K>: Send + Sync {
    /// Applies one page, adding each object's key to `listed`.
    fn apply_page(&self, listed: &mut HashSet<SharedKey>, objects: Vec<Arc<K>>);
    /// Deletes `object` during a relist, removing its key from `listed`.
    fn delete_listed(&self, listed: &mut HashSet<SharedKey>, object: Arc<K>);
    /// Ends the relist: removes what is not in `listed`.
    fn remove_unlisted(&self, listed: &HashSet<SharedKey>);
}

/// The replacement of a [`PagedStore`]: the keys listed so far, and the store.
pub(crate) struct PagedReplacement<'a, S: ?Sized> {
    store: &'a S,
    listed: HashSet<SharedKey>,
}

impl<'a, S: ?Sized> PagedReplacement<'a, S> {
    pub(crate) fn new(store: &'a S) -> Self {
        Self {
            store,
            listed: HashSet::new(),
        }
    }
}

impl<K, S: PagedStore<K> + ?Sized> Replacement<K> for PagedReplacement<'_, S> {
    fn page(&mut self, objects: Vec<Arc<K>>) {
        self.store.apply_page(&mut self.listed, objects);
    }

    fn delete(&mut self, object: Arc<K>) {
        self.store.delete_listed(&mut self.listed, object);
    }

    fn start_over(&mut self) {
        self.listed.clear();
    }

    fn finish(self: Box<Self>, _resource_version: &str) {
        self.store.remove_unlisted(&self.listed);
    }
}

/// An informer's queue: each page becomes `Replaced` (or `Sync`) changes at once; the end
/// queues tombstones for vanished keys and completes the initial population.
impl<K: Resource + Send + Sync> PagedStore<K> for DeltaFifo<K> {
    fn apply_page(&self, listed: &mut HashSet<SharedKey>, objects: Vec<Arc<K>>) {
        self.replace_page(listed, objects);
    }

    fn delete_listed(&self, listed: &mut HashSet<SharedKey>, object: Arc<K>) {
        self.replace_delete(listed, object);
    }

    fn remove_unlisted(&self, listed: &HashSet<SharedKey>) {
        self.replace_end(listed);
    }
}

/// A plain cache: each page's objects are stored (indexes updated one by one), and the end
/// deletes the keys no page listed.
impl<K: Resource + Send + Sync> PagedStore<K> for Writer<K> {
    fn apply_page(&self, listed: &mut HashSet<SharedKey>, objects: Vec<Arc<K>>) {
        for obj in objects {
            let key = SharedKey::from(object_key(obj.as_ref()));
            listed.insert(Arc::clone(&key));
            self.insert(key, obj);
        }
    }

    fn delete_listed(&self, listed: &mut HashSet<SharedKey>, object: Arc<K>) {
        let key = object_key(object.as_ref());
        listed.remove(key.as_str());
        self.delete_by_key(&key);
    }

    fn remove_unlisted(&self, listed: &HashSet<SharedKey>) {
        for key in self.shared_keys() {
            if !listed.contains(&key) {
                self.delete_by_key(&key);
            }
        }
    }
}
