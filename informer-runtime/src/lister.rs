//! Listers: read-only, typed views of an informer's cache (client-go's listers).

use std::{any::Any, fmt, sync::Arc};

use kube::{
    Resource,
    core::{DynamicObject, ObjectMeta, Selector, SelectorExt},
};
use serde::Serialize;

use crate::{
    cache::{self, Index, NAMESPACE_INDEX, Store},
    key::{KeyParts, ObjectKey},
};

fn matches<K: Resource>(selector: &Selector, obj: &K) -> bool {
    selector.selects_all() || selector.matches(obj.meta().labels.as_ref().unwrap_or(&Default::default()))
}

fn filter<K: Resource>(objects: Vec<Arc<K>>, selector: &Selector) -> Vec<Arc<K>> {
    if selector.selects_all() {
        return objects;
    }
    objects
        .into_iter()
        .filter(|obj| matches(selector, obj.as_ref()))
        .collect()
}

/// Lists objects of every namespace, or gets cluster-scoped objects by name.
///
/// ```
/// use std::sync::Arc;
/// use informer_runtime::{lister::Lister, cache::{Writer, namespace_indexers}};
/// use k8s_openapi::api::core::v1::Pod;
/// use kube::{api::ObjectMeta, core::Selector};
///
/// let writer = Writer::<Pod>::new(namespace_indexers());
/// let meta = ObjectMeta {
///     name: Some("web".into()),
///     namespace: Some("prod".into()),
///     labels: Some([("app".to_owned(), "web".to_owned())].into()),
///     ..Default::default()
/// };
/// writer.add(Arc::new(Pod { metadata: meta, ..Default::default() }));
///
/// let lister = Lister::new(writer.store());
/// let web: Selector = [("app", "web")].into_iter().collect();
/// assert_eq!(lister.list(&web).len(), 1);
/// assert!(lister.by_namespace("prod").get("web").is_some());
/// assert!(lister.by_namespace("dev").list(&Selector::default()).is_empty());
/// ```
pub struct Lister<K> {
    store: Store<K>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
        }
    }
}

impl<K> fmt::Debug for Lister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lister").field("store", &self.store).finish()
    }
}

impl<K: Resource> Lister<K> {
    /// A lister over `store`.
    pub fn new(store: Store<K>) -> Self {
        Self { store }
    }

    /// The objects whose labels match `selector` (all of them for an empty selector).
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        filter(self.store.list(), selector)
    }

    /// The cluster-scoped object named `name`.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.store.get_by_parts(KeyParts { namespace: "", name })
    }

    /// The object under `key`, in any namespace (a reconcile's key, for example).
    pub fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.store.get_by_key(key)
    }

    /// A lister of the objects in `namespace`.
    pub fn by_namespace(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            store: self.store.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// The objects indexed under `value` by the typed index `index`; O(result).
    ///
    /// Fails if `index` is not registered on the cache ([`cache::Error::IndexNotFound`]) or
    /// its name belongs to another function ([`cache::Error::IndexFunctionMismatch`]): a
    /// query never reads another index by mistake. [`Lister::index`] checks once and returns
    /// a lister whose queries cannot fail.
    pub fn by_index(&self, index: &Index<K>, value: &str) -> cache::Result<Vec<Arc<K>>> {
        self.store.check_index(index)?;
        self.store.by_index(&index.name(), value)
    }

    /// A lister of the typed index `index`, checked to be registered on the cache (see
    /// [`Lister::by_index`] for the errors). Indexes are never removed, so its queries cannot
    /// fail afterwards.
    pub fn index(&self, index: &Index<K>) -> cache::Result<IndexedLister<K>> {
        self.store.check_index(index)?;
        Ok(IndexedLister {
            store: self.store.clone(),
            index: *index,
        })
    }
}

/// Queries one typed index of a cache; returned by
/// [`SharedIndexInformer::add_index`](crate::informer::SharedIndexInformer::add_index) and
/// [`Lister::index`], which checked that the index is registered, so its queries return plain
/// values.
///
/// ```
/// use std::sync::Arc;
/// use informer_runtime::{ObjectKey, cache::{Index, Writer}, lister::Lister};
/// use k8s_openapi::api::core::v1::Pod;
///
/// let writer = Writer::<Pod>::default();
/// writer.add_index(&Index::label("app"))?;
/// let mut pod = Pod::default();
/// pod.metadata.name = Some("web-1".into());
/// pod.metadata.labels = Some([("app".to_owned(), "web".to_owned())].into());
/// writer.add(Arc::new(pod));
///
/// let by_app = Lister::new(writer.store()).index(&Index::label("app"))?;
/// assert_eq!(by_app.get("web").len(), 1);
/// assert_eq!(by_app.keys("web"), [ObjectKey::new("", "web-1")]);
/// # Ok::<(), informer_runtime::cache::Error>(())
/// ```
pub struct IndexedLister<K> {
    store: Store<K>,
    index: Index<K>,
}

impl<K> Clone for IndexedLister<K> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            index: self.index,
        }
    }
}

impl<K> fmt::Debug for IndexedLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexedLister")
            .field("index", &self.index)
            .finish()
    }
}

impl<K: Resource> IndexedLister<K> {
    /// The index.
    pub fn index(&self) -> &Index<K> {
        &self.index
    }

    /// The objects indexed under `value`; O(result).
    pub fn get(&self, value: &str) -> Vec<Arc<K>> {
        self.store
            .by_index(&self.index.name(), value)
            .unwrap_or_else(|error| unreachable_index(&error))
    }

    /// The keys of the objects indexed under `value`, sorted.
    pub fn keys(&self, value: &str) -> Vec<ObjectKey> {
        self.store
            .index_keys(&self.index.name(), value)
            .unwrap_or_else(|error| unreachable_index(&error))
    }

    /// Every value that currently has objects in the index, in no particular order.
    pub fn values(&self) -> Vec<String> {
        self.store.list_index_func_values(&self.index.name())
    }
}

/// Indexes are never removed from a cache, so a checked index is always found; should that
/// ever change, the query reports it rather than panicking.
fn unreachable_index<T: Default>(error: &cache::Error) -> T {
    tracing::error!(%error, "a checked index disappeared from its cache");
    T::default()
}

/// Lists and gets the objects of one namespace, through the namespace index.
pub struct NamespaceLister<K> {
    store: Store<K>,
    namespace: String,
}

impl<K> fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K: Resource> NamespaceLister<K> {
    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The objects of the namespace whose labels match `selector`. Costs O(objects in the
    /// namespace) with the namespace index; without it, falls back to a scan (with a warning).
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        if self.namespace.is_empty() {
            return filter(self.store.list(), selector);
        }
        match self.store.by_index(NAMESPACE_INDEX, &self.namespace) {
            Ok(objects) => filter(objects, selector),
            Err(_) => {
                tracing::warn!(namespace = %self.namespace, "the store has no namespace index: scanning");
                self.store
                    .list()
                    .into_iter()
                    .filter(|obj| obj.meta().namespace.as_deref() == Some(self.namespace.as_str()))
                    .filter(|obj| matches(selector, obj.as_ref()))
                    .collect()
            }
        }
    }

    /// The object named `name` in the namespace.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.store.get_by_parts(KeyParts {
            namespace: &self.namespace,
            name,
        })
    }

    /// The objects of the namespace indexed under `value` by the typed index `index`
    /// (O(result) of the index); fails as [`Lister::by_index`] does.
    pub fn by_index(&self, index: &Index<K>, value: &str) -> cache::Result<Vec<Arc<K>>> {
        let objects = Lister::new(self.store.clone()).by_index(index, value)?;
        if self.namespace.is_empty() {
            return Ok(objects);
        }
        Ok(objects
            .into_iter()
            .filter(|obj| obj.meta().namespace.as_deref() == Some(self.namespace.as_str()))
            .collect())
    }
}

/// An object of any type, for code that works across resource types (`for_resource`).
///
/// Cached objects are shared, not copied: an `Arc<Pod>` becomes an `Arc<dyn AnyObject>`.
pub trait AnyObject: Send + Sync + 'static {
    /// The object's metadata.
    fn metadata(&self) -> &ObjectMeta;
    /// The object as `Any`, to downcast to its type.
    fn as_any(&self) -> &dyn Any;
    /// The shared object as `Any`, to downcast to its type without copying.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
    /// A copy as a [`DynamicObject`] (serializes the object: not for hot paths).
    fn to_dynamic_object(&self) -> Result<DynamicObject, serde_json::Error>;
}

impl<K: Resource + Serialize + Send + Sync + 'static> AnyObject for K {
    fn metadata(&self) -> &ObjectMeta {
        self.meta()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }

    fn to_dynamic_object(&self) -> Result<DynamicObject, serde_json::Error> {
        serde_json::from_value(serde_json::to_value(self)?)
    }
}

impl fmt::Debug for dyn AnyObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let meta = self.metadata();
        f.debug_struct("AnyObject")
            .field("namespace", &meta.namespace)
            .field("name", &meta.name)
            .finish()
    }
}

/// Downcasts a shared object to its type.
pub fn downcast<K: Send + Sync + 'static>(object: Arc<dyn AnyObject>) -> Option<Arc<K>> {
    object.into_any().downcast::<K>().ok()
}

trait ErasedStore: Send + Sync {
    fn list(&self, selector: &Selector) -> Vec<Arc<dyn AnyObject>>;
    fn list_namespace(&self, namespace: &str, selector: &Selector) -> Vec<Arc<dyn AnyObject>>;
    fn get(&self, key: KeyParts<'_>) -> Option<Arc<dyn AnyObject>>;
}

impl<K: Resource + Serialize + Send + Sync + 'static> ErasedStore for Store<K> {
    fn list(&self, selector: &Selector) -> Vec<Arc<dyn AnyObject>> {
        erase(Lister::new(self.clone()).list(selector))
    }

    fn list_namespace(&self, namespace: &str, selector: &Selector) -> Vec<Arc<dyn AnyObject>> {
        erase(Lister::new(self.clone()).by_namespace(namespace).list(selector))
    }

    fn get(&self, key: KeyParts<'_>) -> Option<Arc<dyn AnyObject>> {
        self.get_by_parts(key).map(|obj| obj as Arc<dyn AnyObject>)
    }
}

fn erase<K: AnyObject>(objects: Vec<Arc<K>>) -> Vec<Arc<dyn AnyObject>> {
    objects.into_iter().map(|obj| obj as Arc<dyn AnyObject>).collect()
}

/// A lister over any informer's cache, whatever its type (client-go's `GenericLister`).
#[derive(Clone)]
pub struct GenericLister {
    store: Arc<dyn ErasedStore>,
}

impl fmt::Debug for GenericLister {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericLister").finish_non_exhaustive()
    }
}

impl GenericLister {
    /// A generic lister over `store`.
    pub fn new<K: Resource + Serialize + Send + Sync + 'static>(store: Store<K>) -> Self {
        Self {
            store: Arc::new(store),
        }
    }

    /// The objects whose labels match `selector`.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<dyn AnyObject>> {
        self.store.list(selector)
    }

    /// The cluster-scoped object named `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn AnyObject>> {
        self.store.get(KeyParts { namespace: "", name })
    }

    /// A lister of the objects in `namespace`.
    pub fn by_namespace(&self, namespace: &str) -> GenericNamespaceLister {
        GenericNamespaceLister {
            store: Arc::clone(&self.store),
            namespace: namespace.to_owned(),
        }
    }
}

/// The objects of one namespace of a [`GenericLister`].
#[derive(Clone)]
pub struct GenericNamespaceLister {
    store: Arc<dyn ErasedStore>,
    namespace: String,
}

impl fmt::Debug for GenericNamespaceLister {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericNamespaceLister")
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl GenericNamespaceLister {
    /// The objects of the namespace whose labels match `selector`.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<dyn AnyObject>> {
        self.store.list_namespace(&self.namespace, selector)
    }

    /// The object named `name` in the namespace.
    pub fn get(&self, name: &str) -> Option<Arc<dyn AnyObject>> {
        self.store.get(KeyParts {
            namespace: &self.namespace,
            name,
        })
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Namespace, Pod};

    use super::*;
    use crate::cache::{Writer, namespace_indexers};

    fn pod(namespace: &str, name: &str, app: &str) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                labels: Some([("app".to_owned(), app.to_owned())].into()),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        })
    }

    fn names<K: Resource>(objects: &[Arc<K>]) -> Vec<String> {
        let mut names: Vec<String> = objects.iter().filter_map(|o| o.meta().name.clone()).collect();
        names.sort();
        names
    }

    fn fixture() -> Store<Pod> {
        let store = Writer::new(namespace_indexers());
        store.add(pod("a", "web-1", "web"));
        store.add(pod("a", "db-1", "db"));
        store.add(pod("b", "web-2", "web"));
        store.store()
    }

    #[test]
    fn list_filters_by_label_selector() {
        let lister = Lister::new(fixture());
        assert_eq!(
            names(&lister.list(&Selector::default())),
            ["db-1", "web-1", "web-2"]
        );
        let web: Selector = [("app", "web")].into_iter().collect();
        assert_eq!(names(&lister.list(&web)), ["web-1", "web-2"]);
    }

    #[test]
    fn namespace_lister_uses_the_namespace() {
        let lister = Lister::new(fixture());
        let web: Selector = [("app", "web")].into_iter().collect();
        assert_eq!(
            names(&lister.by_namespace("a").list(&Selector::default())),
            ["db-1", "web-1"]
        );
        assert_eq!(names(&lister.by_namespace("a").list(&web)), ["web-1"]);
        assert!(lister.by_namespace("a").get("web-2").is_none());
        assert!(lister.by_namespace("b").get("web-2").is_some());
        assert_eq!(
            names(&lister.by_namespace("").list(&web)),
            ["web-1", "web-2"],
            "\"\" is every namespace"
        );
    }

    #[test]
    fn namespace_lister_without_index_scans() {
        let store = Writer::default();
        store.add(pod("a", "web-1", "web"));
        store.add(pod("b", "web-2", "web"));
        assert_eq!(
            names(
                &Lister::new(store.store())
                    .by_namespace("b")
                    .list(&Selector::default())
            ),
            ["web-2"]
        );
    }

    #[test]
    fn cluster_scoped_get_by_name() {
        let store = Writer::<Namespace>::new(namespace_indexers());
        store.add(Arc::new(Namespace {
            metadata: ObjectMeta {
                name: Some("kube-system".into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        }));
        assert!(Lister::new(store.store()).get("kube-system").is_some());
    }

    #[test]
    fn generic_lister_shares_objects_and_downcasts() {
        let store = fixture();
        let generic = GenericLister::new(store.clone());
        let found = generic.by_namespace("a").get("web-1").expect("cached");
        assert_eq!(found.metadata().name.as_deref(), Some("web-1"));
        let typed = downcast::<Pod>(found).expect("a pod");
        assert!(
            Arc::ptr_eq(
                &typed,
                &store.get_by_key(&ObjectKey::new("a", "web-1")).expect("cached")
            ),
            "no copy"
        );
        assert_eq!(generic.list(&Selector::default()).len(), 3);
        assert_eq!(generic.by_namespace("b").list(&Selector::default()).len(), 1);
        let dynamic = generic.get("missing");
        assert!(dynamic.is_none());
        let as_dynamic = generic
            .by_namespace("b")
            .get("web-2")
            .expect("cached")
            .to_dynamic_object()
            .expect("json");
        assert_eq!(as_dynamic.metadata.name.as_deref(), Some("web-2"));
    }
}
