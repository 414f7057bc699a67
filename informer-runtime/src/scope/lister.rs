//! Listers of scoped caches: they answer what their scope covers and refuse the rest with an
//! [`Error::OutOfScope`].

use std::{fmt, sync::Arc};

use kube::{
    Resource,
    core::{Selector, SelectorExt},
};

use super::{
    Error, Result, Scope,
    coverage::{Gap, Question},
};
use crate::{
    cache::{Index, NAMESPACE_INDEX, Store},
    key::ObjectKey,
};

/// One informer's cache of a scoped informer: the namespace it watches (`None`: every
/// namespace) and its store.
pub(crate) struct NamespaceCache<K> {
    pub(crate) namespace: Option<String>,
    pub(crate) store: Store<K>,
}

/// Lists and gets the objects of a scoped cache (see the
/// [module documentation](super#listers-that-know-their-scope)): questions the scope covers are
/// answered, others fail with [`Error::OutOfScope`], which says what was asked, what the cache
/// holds and how to get the answer.
///
/// From [`ScopedInformer::lister`](super::ScopedInformer::lister). A scope of every object
/// answers every question (its lister never fails).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use informer_runtime::{SharedInformerFactory, scope::{Error, Scope}};
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::core::Selector;
/// # let server = informer_testserver::TestServer::start().await?;
///
/// let factory = SharedInformerFactory::new(server.client()?);
/// let source = factory.informer_in(&Scope::<ConfigMap>::all().namespace("source")?);
/// factory.start();
/// factory.wait_for_cache_sync().await;
///
/// let lister = source.lister();
/// assert!(lister.by_namespace("source").get("settings")?.is_none()); // does not exist
/// let err = lister.by_namespace("other").get("settings").unwrap_err();
/// assert!(matches!(err, Error::OutOfScope { .. }));
/// assert!(err.to_string().contains("namespace other is outside the cache"), "{err}");
/// factory.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct ScopedLister<K> {
    resource: Arc<str>,
    scope: Arc<Scope<K>>,
    caches: Arc<[NamespaceCache<K>]>,
}

impl<K> Clone for ScopedLister<K> {
    fn clone(&self) -> Self {
        Self {
            resource: Arc::clone(&self.resource),
            scope: Arc::clone(&self.scope),
            caches: Arc::clone(&self.caches),
        }
    }
}

impl<K> fmt::Debug for ScopedLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedLister")
            .field("resource", &self.resource)
            .field("scope", &self.scope.to_string())
            .finish_non_exhaustive()
    }
}

impl<K: Resource> ScopedLister<K> {
    pub(crate) fn new(resource: Arc<str>, scope: Arc<Scope<K>>, caches: Arc<[NamespaceCache<K>]>) -> Self {
        Self {
            resource,
            scope,
            caches,
        }
    }

    /// The scope of the cache.
    pub fn scope(&self) -> &Scope<K> {
        &self.scope
    }

    /// The objects of every namespace whose labels match `selector`.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfScope`] when the scope has namespaces, or selectors that `selector` does
    /// not imply (see [`list_in_scope`](Self::list_in_scope) to list what the cache holds).
    pub fn list(&self, selector: &Selector) -> Result<Vec<Arc<K>>> {
        self.check(
            Question {
                namespace: None,
                name: None,
                labels: selector,
            },
            || format!("a list of every namespace with labels {:?}", selector.to_string()),
        )?;
        Ok(self.list_in_scope(selector))
    }

    /// The cluster-scoped object named `name`; `Ok(None)` when it does not exist.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfScope`] when the cache does not hold it and the scope's selectors leave
    /// open whether it exists.
    pub fn get(&self, name: &str) -> Result<Option<Arc<K>>> {
        self.get_in("", name)
    }

    /// The object under `key` (a namespaced or cluster-scoped one); `Ok(None)` when it does not
    /// exist.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfScope`] when the cache does not hold it and cannot tell whether it exists:
    /// its namespace is outside the scope, or the scope's selectors leave it open.
    pub fn get_by_key(&self, key: &ObjectKey) -> Result<Option<Arc<K>>> {
        self.get_in(key.namespace().unwrap_or_default(), key.name())
    }

    /// A lister of the objects in `namespace` (`""`: every namespace, as for
    /// [`Lister::by_namespace`](crate::Lister::by_namespace)).
    pub fn by_namespace(&self, namespace: &str) -> ScopedNamespaceLister<K> {
        ScopedNamespaceLister {
            lister: self.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// Every cached object whose labels match `selector`: the objects of the scope, which the
    /// cache always holds, so this never fails.
    pub fn list_in_scope(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.caches
            .iter()
            .flat_map(|cache| cache.store.list())
            .filter(|object| matches(selector, object.as_ref()))
            .collect()
    }

    /// The cached objects indexed under `value` by the typed index `index` (registered with
    /// [`ScopedInformer::add_index`](super::ScopedInformer::add_index)): within the scope, so
    /// the scope never refuses it.
    ///
    /// # Errors
    ///
    /// [`Error::Index`] if `index` is not registered on the cache.
    pub fn by_index_in_scope(&self, index: &Index<K>, value: &str) -> Result<Vec<Arc<K>>> {
        let mut found = Vec::new();
        for cache in self.caches.iter() {
            let index_error = |source| Error::Index {
                resource: self.resource.to_string(),
                source,
            };
            cache.store.check_index(index).map_err(index_error)?;
            found.extend(cache.store.by_index(&index.name(), value).map_err(index_error)?);
        }
        Ok(found)
    }

    /// The object the cache holds under `key`, without asking whether the scope covers it
    /// (for controllers, whose keys come from the cache).
    pub(crate) fn cached(&self, key: &ObjectKey) -> Option<Arc<K>> {
        let namespace = key.namespace().unwrap_or_default();
        self.caches_of(namespace)
            .find_map(|cache| cache.store.get_by_key(key))
    }

    fn get_in(&self, namespace: &str, name: &str) -> Result<Option<Arc<K>>> {
        let key = ObjectKey::new(namespace, name);
        if let Some(found) = self.cached(&key) {
            // every cached object is in scope: a true answer
            return Ok(Some(found));
        }
        self.check(
            Question {
                namespace: Some(namespace),
                name: Some(name),
                labels: &Selector::default(),
            },
            || format!("a get of {key}"),
        )?;
        Ok(None)
    }

    fn list_namespace(&self, namespace: &str, selector: &Selector) -> Result<Vec<Arc<K>>> {
        if namespace.is_empty() {
            return self.list(selector);
        }
        self.check(
            Question {
                namespace: Some(namespace),
                name: None,
                labels: selector,
            },
            || {
                format!(
                    "a list of namespace {namespace} with labels {:?}",
                    selector.to_string()
                )
            },
        )?;
        Ok(self
            .caches_of(namespace)
            .flat_map(|cache| objects_of(cache, namespace))
            .filter(|object| matches(selector, object.as_ref()))
            .collect())
    }

    /// The caches that may hold objects of `namespace`.
    fn caches_of<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a NamespaceCache<K>> {
        self.caches
            .iter()
            .filter(move |cache| cache.namespace.as_deref().is_none_or(|held| held == namespace))
    }

    fn check(&self, question: Question<'_>, asked: impl FnOnce() -> String) -> Result<()> {
        match self.scope.selection().gap(question) {
            None => Ok(()),
            Some(Gap { reason, fix }) => Err(Error::OutOfScope {
                resource: self.resource.to_string(),
                asked: asked(),
                scope: self.scope.to_string(),
                reason,
                fix,
            }),
        }
    }
}

/// The objects of `namespace` in `cache`: all of them when the cache is of that namespace,
/// else through the namespace index (a scan without it).
fn objects_of<K: Resource>(cache: &NamespaceCache<K>, namespace: &str) -> Vec<Arc<K>> {
    if cache.namespace.is_some() {
        return cache.store.list();
    }
    cache
        .store
        .by_index(NAMESPACE_INDEX, namespace)
        .unwrap_or_else(|_| {
            cache
                .store
                .list()
                .into_iter()
                .filter(|object| object.meta().namespace.as_deref() == Some(namespace))
                .collect()
        })
}

fn matches<K: Resource>(selector: &Selector, object: &K) -> bool {
    selector.selects_all() || selector.matches(object.meta().labels.as_ref().unwrap_or(&Default::default()))
}

/// The objects of one namespace of a [`ScopedLister`].
pub struct ScopedNamespaceLister<K> {
    lister: ScopedLister<K>,
    namespace: String,
}

impl<K> fmt::Debug for ScopedNamespaceLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedNamespaceLister")
            .field("namespace", &self.namespace)
            .field("scope", &self.lister.scope.to_string())
            .finish()
    }
}

impl<K: Resource> ScopedNamespaceLister<K> {
    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The objects of the namespace whose labels match `selector`.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfScope`] when the namespace is outside the scope, or the scope has
    /// selectors that `selector` (or the namespace) does not imply.
    pub fn list(&self, selector: &Selector) -> Result<Vec<Arc<K>>> {
        self.lister.list_namespace(&self.namespace, selector)
    }

    /// The object named `name` in the namespace; `Ok(None)` when it does not exist.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfScope`] when the cache does not hold it and cannot tell whether it exists
    /// (the namespace is outside the scope, or the scope's selectors leave it open).
    pub fn get(&self, name: &str) -> Result<Option<Arc<K>>> {
        self.lister.get_in(&self.namespace, name)
    }
}
