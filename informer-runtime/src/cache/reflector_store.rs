//! What a reflector writes to: a store kept in step with the API server ([`ReflectorStore`]),
//! and the relists it hands that store page by page ([`Relist`]).
//!
//! The stores of this module implement it: the informer's [`DeltaFifo`](super::delta_fifo::DeltaFifo), a
//! plain cache's [`Writer`](super::Writer) and the [`UndeltaStore`](super::UndeltaStore). A
//! [`Reflector`](crate::reflector::Reflector) only calls it.

use std::{marker::PhantomData, sync::Arc};

use kube::Resource;

use crate::{key::KeyParts, source::BoxError};

/// Where a reflector puts what it lists and watches (client-go's `Store` as the reflector
/// sees it). Implemented by [`DeltaFifo`](super::delta_fifo::DeltaFifo) (informers),
/// [`Writer`](super::Writer) (a plain cache) and [`UndeltaStore`](super::UndeltaStore).
pub trait ReflectorStore<K>: Send + Sync {
    /// Turns a decoded object into the shared object the store keeps, as soon as it arrives:
    /// list pages one by one, watch events one by one. An informer applies its transform here,
    /// so what the transform drops is freed before the next page is decoded.
    fn prepare(&self, obj: K) -> Arc<K> {
        Arc::new(obj)
    }
    /// An object was added.
    fn add(&self, obj: Arc<K>);
    /// An object was modified.
    fn update(&self, obj: Arc<K>);
    /// An object was deleted; `obj` is its final state.
    fn delete(&self, obj: Arc<K>);
    /// Begins a relist: the complete state of the resource, handed over page by page (see
    /// [`Relist`]). The default buffers the pages and hands them whole to
    /// [`replace`](Self::replace); the stores of this crate apply each page as it arrives, so
    /// a relist does not hold a second copy of the world.
    fn begin_relist(&self) -> Box<dyn Relist<K> + '_>
    where
        K: Resource + Send + Sync + 'static,
    {
        Box::new(BufferedRelist::new(self))
    }
    /// The complete state at `resource_version`, at once (what a buffered relist ends with).
    fn replace(&self, objects: Vec<Arc<K>>, resource_version: &str);
    /// The resync timer fired: re-deliver what the store knows, if it does that.
    fn resync(&self) -> Result<(), BoxError>;
    /// The reflector saw `resource_version` in a watch event (including bookmarks).
    fn update_resource_version(&self, _resource_version: &str) {}
}

/// A relist in progress, begun by [`ReflectorStore::begin_relist`]: the reflector hands it
/// every page of a list (or every initial event of a streaming list) as it arrives, then
/// finishes it with the list's resource version.
///
/// A store that applies pages as they come holds, at the peak of a relist, what it held
/// before plus about one page, instead of twice what it holds. Until the relist finishes, the
/// store holds the objects of the pages so far beside what it held before; the finish removes
/// what no page listed. Dropping a relist without finishing it (the list failed) keeps what its
/// pages applied: each listed object is at least as new as the one it replaced, and the next
/// relist that finishes removes what vanished.
pub trait Relist<K>: Send {
    /// The next page: these objects are part of the complete state.
    fn page(&mut self, objects: Vec<Arc<K>>);
    /// An object listed earlier is gone (a streaming list's initial events may say so before
    /// they end): the store deletes it, and it no longer counts as listed.
    fn delete(&mut self, object: Arc<K>);
    /// The list starts over (a continuation expired and one full list follows): the pages so
    /// far no longer count as listed.
    fn start_over(&mut self);
    /// The list is complete at `resource_version`: whatever the store holds that no page
    /// listed since the last [`start_over`](Self::start_over) is gone.
    fn finish(self: Box<Self>, resource_version: &str);
}

/// The relist of a store that takes a relist whole: pages are buffered, and the store's
/// [`replace`](ReflectorStore::replace) receives them all when the relist finishes. This is
/// what [`ReflectorStore::begin_relist`] does unless a store applies pages itself.
pub struct BufferedRelist<'a, K, S: ?Sized> {
    store: &'a S,
    objects: Vec<Arc<K>>,
    _kind: PhantomData<fn() -> K>,
}

impl<'a, K, S: ?Sized> BufferedRelist<'a, K, S> {
    /// Buffers a relist of `store`.
    pub fn new(store: &'a S) -> Self {
        Self {
            store,
            objects: Vec::new(),
            _kind: PhantomData,
        }
    }
}

impl<K: Resource + Send + Sync, S: ReflectorStore<K> + ?Sized> Relist<K> for BufferedRelist<'_, K, S> {
    fn page(&mut self, objects: Vec<Arc<K>>) {
        self.objects.extend(objects);
    }

    fn delete(&mut self, object: Arc<K>) {
        let gone = KeyParts::of(object.as_ref());
        self.objects
            .retain(|listed| KeyParts::of(listed.as_ref()) != gone);
    }

    fn start_over(&mut self) {
        self.objects = Vec::new();
    }

    fn finish(self: Box<Self>, resource_version: &str) {
        self.store.replace(self.objects, resource_version);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    /// A store that takes relists whole, recording what `replace` receives.
    #[derive(Default)]
    struct Whole(Mutex<Vec<(Vec<String>, String)>>);

    impl ReflectorStore<ConfigMap> for Whole {
        fn add(&self, _: Arc<ConfigMap>) {}
        fn update(&self, _: Arc<ConfigMap>) {}
        fn delete(&self, _: Arc<ConfigMap>) {}
        fn replace(&self, objects: Vec<Arc<ConfigMap>>, resource_version: &str) {
            let names = objects
                .iter()
                .map(|o| o.metadata.name.clone().unwrap_or_default())
                .collect();
            let mut replaced = self.0.lock().expect("not poisoned");
            replaced.push((names, resource_version.to_owned()));
        }
        fn resync(&self) -> Result<(), BoxError> {
            Ok(())
        }
    }

    fn cm(name: &str) -> Arc<ConfigMap> {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        Arc::new(cm)
    }

    /// The default relist buffers its pages and hands the store the list as it stands at the
    /// finish: pages since the last start-over, without what was deleted among them.
    #[test]
    fn a_buffered_relist_replaces_the_store_once_with_what_was_listed() {
        let store = Whole::default();
        let mut relist = store.begin_relist();
        relist.page(vec![cm("abandoned")]);
        relist.start_over();
        relist.page(vec![cm("a"), cm("b")]);
        relist.page(vec![cm("c")]);
        relist.delete(cm("b"));
        assert!(
            store.0.lock().expect("not poisoned").is_empty(),
            "nothing before the finish"
        );
        relist.finish("7");
        let replaced = store.0.lock().expect("not poisoned").clone();
        assert_eq!(replaced, [(vec!["a".to_owned(), "c".to_owned()], "7".to_owned())]);
    }
}
