//! The informer of a scope: one shared informer per namespace of the scope (one for a scope
//! of every namespace), handled as one.

use std::{fmt, sync::Arc};

use kube::Resource;

use super::{
    Scope,
    lister::{NamespaceCache, ScopedLister},
};
use crate::{
    cache::{Index, MaybeTombstone},
    informer::{
        self, InformerStats, Registration, SharedIndexInformer,
        handler::{EventHandlerFuncs, ResourceEventHandler},
    },
};

/// The cache of a [`Scope`] of `K`, from
/// [`SharedInformerFactory::informer_in`](crate::SharedInformerFactory::informer_in) (or
/// [`informer`](crate::SharedInformerFactory::informer) for a type's default
/// scope). Cloning gives another handle to the same informers.
///
/// It is one informer of the factory for a scope of every namespace, one per namespace
/// otherwise (see the [module documentation](super#several-namespaces-one-informer-per-namespace));
/// each is shared with every other scope of the factory that has its namespace, selectors and
/// transform, and started, waited for and stopped with the factory. Read it through its
/// [`lister`](Self::lister), which refuses questions outside the scope.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
///
/// use informer_runtime::{EventHandlerFuncs, SharedInformerFactory, scope::Scope};
/// use k8s_openapi::api::core::v1::ConfigMap;
/// # let server = informer_testserver::TestServer::start().await?;
///
/// let factory = SharedInformerFactory::new(server.client()?);
/// let scope = Scope::<ConfigMap>::all().namespaces(["source", "staging"])?;
/// let config_maps = factory.informer_in(&scope);
/// assert_eq!(config_maps.descriptions(), ["configmaps (namespace source)", "configmaps (namespace staging)"]);
/// let registration = config_maps.add_event_handler(EventHandlerFuncs::new().added(|cm: Arc<ConfigMap>, _| {
///     println!("{:?} in {:?}", cm.metadata.name, cm.metadata.namespace);
/// }))?;
/// factory.start();
/// assert!(config_maps.wait_for_sync().await);
/// assert!(registration.has_synced());
/// factory.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct ScopedInformer<K> {
    resource: Arc<str>,
    scope: Arc<Scope<K>>,
    /// The namespace each informer watches (`None`: every namespace), in the scope's order.
    parts: Arc<[(Option<String>, SharedIndexInformer<K>)]>,
}

impl<K> Clone for ScopedInformer<K> {
    fn clone(&self) -> Self {
        Self {
            resource: Arc::clone(&self.resource),
            scope: Arc::clone(&self.scope),
            parts: Arc::clone(&self.parts),
        }
    }
}

impl<K> fmt::Debug for ScopedInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedInformer")
            .field("resource", &self.resource)
            .field("scope", &self.scope.to_string())
            .field("informers", &self.parts.len())
            .finish()
    }
}

impl<K: Resource + Clone + Send + Sync + 'static> ScopedInformer<K> {
    pub(crate) fn new(
        resource: Arc<str>,
        scope: Scope<K>,
        parts: Vec<(Option<String>, SharedIndexInformer<K>)>,
    ) -> Self {
        Self {
            resource,
            scope: Arc::new(scope),
            parts: parts.into(),
        }
    }

    /// The scope, with the factory's namespace when the scope named none.
    pub fn scope(&self) -> &Scope<K> {
        &self.scope
    }

    /// A lister over the scope's cache, which refuses questions outside the scope.
    pub fn lister(&self) -> ScopedLister<K> {
        let caches: Vec<NamespaceCache<K>> = self
            .parts
            .iter()
            .map(|(namespace, informer)| NamespaceCache {
                namespace: namespace.clone(),
                store: informer.store(),
            })
            .collect();
        ScopedLister::new(Arc::clone(&self.resource), Arc::clone(&self.scope), caches.into())
    }

    /// An empty [`EventHandlerFuncs`] of the scope's type, whose closures know their argument
    /// types (see [`SharedIndexInformer::handler_funcs`]).
    pub fn handler_funcs(&self) -> EventHandlerFuncs<K> {
        EventHandlerFuncs::new()
    }

    /// Registers `handler` on every informer of the scope (see
    /// [`SharedIndexInformer::add_event_handler`]); it receives the changes of every
    /// namespace of the scope.
    ///
    /// # Errors
    ///
    /// What [`SharedIndexInformer::add_event_handler`] returns; the handler is then registered
    /// nowhere.
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K>,
    ) -> informer::Result<ScopedRegistration<K>> {
        let shared = Arc::new(handler);
        let mut registrations = Vec::with_capacity(self.parts.len());
        for (_, informer) in self.parts.iter() {
            match informer.add_event_handler(Shared(Arc::clone(&shared))) {
                Ok(registration) => registrations.push(registration),
                Err(error) => {
                    registrations.iter().for_each(Registration::remove);
                    return Err(error);
                }
            }
        }
        Ok(ScopedRegistration { registrations })
    }

    /// Adds the typed index `index` to every informer of the scope, for
    /// [`ScopedLister::by_index_in_scope`].
    ///
    /// # Errors
    ///
    /// What [`SharedIndexInformer::add_index`] returns.
    pub fn add_index(&self, index: &Index<K>) -> informer::Result<()> {
        for (_, informer) in self.parts.iter() {
            informer.add_index(index)?;
        }
        Ok(())
    }

    /// Whether every informer of the scope synced (and still runs).
    pub fn has_synced(&self) -> bool {
        self.parts.iter().all(|(_, informer)| informer.has_synced())
    }

    /// Waits until every informer of the scope synced or one stopped; returns
    /// [`has_synced`](Self::has_synced).
    pub async fn wait_for_sync(&self) -> bool {
        for (_, informer) in self.parts.iter() {
            if !informer.wait_for_sync().await {
                return false;
            }
        }
        self.has_synced()
    }

    /// The descriptions of the scope's informers (`configmaps (namespace source, labels
    /// replicate=true)`), as sync reports and logs name them.
    pub fn descriptions(&self) -> Vec<&str> {
        self.parts
            .iter()
            .map(|(_, informer)| informer.description())
            .collect()
    }

    /// What each informer of the scope has done so far.
    pub fn stats(&self) -> Vec<InformerStats> {
        self.parts.iter().map(|(_, informer)| informer.stats()).collect()
    }

    /// The informers of the scope, each with what it holds, for controllers.
    pub(crate) fn parts(&self) -> impl Iterator<Item = Part<K>> + '_ {
        self.parts.iter().map(|(namespace, informer)| Part {
            informer: informer.clone(),
            selection: Arc::new(self.scope.selection().of_namespace(namespace.as_deref())),
        })
    }
}

/// One informer of a scope and what it holds (its namespace, the scope's selectors).
pub(crate) struct Part<K> {
    pub(crate) informer: SharedIndexInformer<K>,
    pub(crate) selection: Arc<super::Selection>,
}

/// One handler shared by the informers of a scope.
struct Shared<H>(Arc<H>);

impl<K, H: ResourceEventHandler<K>> ResourceEventHandler<K> for Shared<H> {
    fn on_add(&self, object: Arc<K>, is_in_initial_list: bool) {
        self.0.on_add(object, is_in_initial_list);
    }

    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        self.0.on_update(old, new);
    }

    fn on_delete(&self, object: MaybeTombstone<K>) {
        self.0.on_delete(object);
    }
}

/// The registrations of one handler on the informers of a scope, from
/// [`ScopedInformer::add_event_handler`].
pub struct ScopedRegistration<K> {
    registrations: Vec<Registration<K>>,
}

impl<K> fmt::Debug for ScopedRegistration<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedRegistration")
            .field("registrations", &self.registrations)
            .finish()
    }
}

impl<K: Resource + Clone + Send + Sync + 'static> ScopedRegistration<K> {
    /// Whether every informer synced and the handler handled each one's initial list.
    pub fn has_synced(&self) -> bool {
        self.registrations.iter().all(Registration::has_synced)
    }

    /// Removes the handler from every informer of the scope.
    pub fn remove(&self) {
        self.registrations.iter().for_each(Registration::remove);
    }

    /// Notifications handled so far, over every informer.
    pub fn handled(&self) -> u64 {
        self.registrations.iter().map(Registration::handled).sum()
    }
}
