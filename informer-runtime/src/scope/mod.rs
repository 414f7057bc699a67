//! Scoped caches: informers that list and watch only some objects of a type (controller-runtime's
//! `cache.Options.ByObject`), and listers that refuse questions their cache cannot answer.
//!
//! A [`Scope`] restricts a cache to some namespaces, to objects whose labels or fields match
//! selectors, and can transform each object before it is cached. The restriction happens on
//! the API server: a scoped informer lists and watches the namespace's path with the
//! `labelSelector` and `fieldSelector` of its scope, so objects outside it are neither sent,
//! decoded nor held. "ConfigMaps labelled `replicate=true` in namespace `source`" is cached
//! beside every Namespace of the cluster by one factory:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use informer_runtime::{SharedInformerFactory, scope::Scope};
//! use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
//! use kube::core::Selector;
//! # let server = informer_testserver::TestServer::start().await?;
//! # let client = server.client()?;
//! # server.create_namespace("source")?;
//! # for (name, replicate) in [("settings", "true"), ("scratch", "false")] {
//! #     let mut cm = ConfigMap::default();
//! #     cm.metadata.name = Some(name.into());
//! #     cm.metadata.namespace = Some("source".into());
//! #     cm.metadata.labels = Some([("replicate".to_owned(), replicate.to_owned())].into());
//! #     server.create_typed(&cm)?;
//! # }
//!
//! let replicated = Scope::<ConfigMap>::all().namespace("source")?.labels("replicate=true")?;
//! let factory = SharedInformerFactory::new(client);
//! let config_maps = factory.informer_in(&replicated);
//! let namespaces = factory.unscoped_informer::<Namespace>();
//! factory.start();
//! assert!(factory.wait_for_cache_sync().await.all_synced());
//!
//! let lister = config_maps.lister();
//! // questions the scope covers are answered...
//! assert!(lister.by_namespace("source").get("settings")?.is_some());
//! assert_eq!(lister.list_in_scope(&Selector::default()).len(), 1);
//! // ...others are refused, not answered from a cache that lacks the objects
//! assert!(lister.by_namespace("other").list(&Selector::default()).is_err());
//! assert!(lister.list(&Selector::default()).is_err());
//! # let _ = namespaces;
//! factory.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Where scopes apply
//!
//! - [`SharedInformerFactory::informer_in`](crate::SharedInformerFactory::informer_in) gives the
//!   [`ScopedInformer`] of a scope.
//! - [`Builder::scope`](crate::factory::Builder::scope) sets a type's default scope (as
//!   `ByObject` does), used by
//!   [`SharedInformerFactory::informer`](crate::SharedInformerFactory::informer)
//!   and by controllers: [`Controller::new`](crate::controller::Controller::new), `owns` and
//!   `watches` read the default scope of their types; `new_in`, `Owns::scope` and
//!   `Watches::scope` take a scope of their own.
//! - [`SharedInformerFactory::unscoped_informer`](crate::SharedInformerFactory::unscoped_informer)
//!   (and the generated accessors and `for_resource`, which call it) means every object of the
//!   type the factory watches: asking for it creates that unscoped informer beside any scoped
//!   one (with a warning when the type has a default scope).
//!
//! The factory's own options still apply to scoped informers: its transforms run first (the
//! scope's transform runs after them, like controller-runtime's `DefaultTransform` then the
//! type's), its resync periods and watch-error handler apply, and its `tweak_list_options`
//! runs before the scope adds its selectors (the two are joined: both must match). A scope's
//! namespaces replace the factory's namespace; a scope without namespaces watches the
//! factory's.
//!
//! # Shared where equal
//!
//! Informers are shared per type and per (namespace, label selector, field selector,
//! transform): two controllers whose scopes are equal share one watch, as do a scope of every
//! object and [`unscoped_informer::<K>()`](crate::SharedInformerFactory::informer). Selectors compare
//! by meaning of their text once parsed (`a=1,b=2` equals `b==2,a=1`); a transform is the same
//! when it is the same function value: clones of one [`Scope`] share it, two scopes given
//! equal closures separately do not.
//!
//! # Several namespaces: one informer per namespace
//!
//! A scope of several namespaces is cached by one informer per namespace (controller-runtime's
//! multi-namespace cache): each lists and watches its namespace's path with the scope's
//! selectors, and is shared with any other scope that has that namespace and equal selectors.
//! Its [`ScopedInformer`] registers handlers on each, and its [`ScopedLister`] answers a
//! question about one namespace from that namespace's cache. The cost is one watch per
//! namespace; a scope of every namespace with a label selector is one watch.
//!
//! # Listers that know their scope
//!
//! A [`ScopedLister`] answers only questions its cache covers, and says why not otherwise
//! ([`Error::OutOfScope`]: what was asked, what the cache holds, how to get the answer):
//!
//! - a namespace outside the scope, or every namespace when the scope has some: refused;
//! - a list whose label selector does not imply the scope's (listing every ConfigMap of a
//!   cache of `replicate=true` ones): refused; one that implies it (`replicate=true,app=web`)
//!   is answered;
//! - a field selector in the scope: only questions that fix the field are answered (the
//!   namespace asked about fixes `metadata.namespace`, a get's name fixes `metadata.name`);
//! - a get returns an object the cache holds (every cached object is in scope). When the
//!   cache holds no object of that name, the answer is `Ok(None)` ("it does not exist") only
//!   if the scope has no selectors that an object of that name could fail; otherwise the
//!   cache cannot tell, and the get is refused.
//!
//! [`ScopedLister::list_in_scope`] and [`ScopedLister::by_index_in_scope`] ask within the
//! scope ("every cached object that ..."), which a cache always answers. Listers of unscoped
//! caches ([`Lister`](crate::Lister), from `unscoped_informer::<K>().lister()`) keep answering every
//! question without a `Result`; a scoped informer never hands one out.
//!
//! # Memory
//!
//! A scoped cache holds only its objects, and its process never receives the others. In the
//! project's benchmark (`informer-bench --only scoped`: 50 000 pods, a scope selecting a tenth
//! of them by label, each cache in a process of its own, 2 cores, the system allocator):
//!
//! | cache | pods cached | RSS | sync CPU (user + sys) |
//! |---|---:|---:|---:|
//! | every pod | 50 000 | 2056 MiB | 1.99 + 1.84 s |
//! | scope (`app in (…)`, a tenth) | 5 000 | 213 MiB (0.10x) | 0.16 + 0.16 s |
//! | every pod, `managedFields` stripped | 50 000 | 1529 MiB | 2.07 + 1.19 s |
//! | scope, `managedFields` stripped | 5 000 | 165 MiB (0.11x) | 0.20 + 0.13 s |
//!
//! Memory and sync CPU scale with what the scope selects, at the same cost per object.

pub(crate) mod coverage;
mod informer;
mod lister;

use std::{collections::BTreeSet, fmt, sync::Arc};

use kube::core::{NamespaceResourceScope, Resource, Selector};

pub use informer::{ScopedInformer, ScopedRegistration};
pub use lister::{ScopedLister, ScopedNamespaceLister};

pub(crate) use coverage::Selection;
pub(crate) use informer::Part;

use crate::{
    cache::{self, delta_fifo::Transform},
    selector::{self, FieldSelector, parse_field_selector, parse_label_selector},
};

/// The result of building a scope or asking a scoped lister.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A scope that could not be built, or a question a scoped cache cannot answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A label or field selector did not parse (or a kube `Selector` had an invalid key or
    /// value).
    #[error("failed to build a scope: {0}")]
    Selector(#[from] selector::Error),
    /// A namespace is not a valid namespace name.
    #[error(
        "failed to build a scope: invalid namespace {namespace:?}: {reason} (a namespace name is at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)"
    )]
    Namespace {
        /// The namespace as given.
        namespace: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A lister was asked a question its cache's scope does not cover.
    #[error("failed to answer {asked} from the {resource} cache scoped to {scope}: {reason}; {fix}")]
    OutOfScope {
        /// The resource (`configmaps`).
        resource: String,
        /// The question (`a list of every namespace with labels app=web`).
        asked: String,
        /// What the cache holds (`namespace source, labels replicate=true`).
        scope: String,
        /// Why the cache cannot answer.
        reason: String,
        /// How to get the answer.
        fix: String,
    },
    /// An index query failed (see [`cache::Error`]).
    #[error("failed to query the {resource} cache: {source}")]
    Index {
        /// The resource.
        resource: String,
        /// What the cache reported.
        #[source]
        source: cache::Error,
    },
}

/// What a cache of `K` holds: namespaces, a label selector, a field selector, and a transform
/// applied to each object before it is cached (see the [module documentation](self)).
///
/// Built from [`Scope::all`] with setters that add restrictions; setters that parse or check
/// their input return a `Result`, so a bad selector is an error where the scope is written:
///
/// ```
/// use informer_runtime::scope::Scope;
/// use k8s_openapi::api::core::v1::{ConfigMap, Pod};
///
/// let replicated = Scope::<ConfigMap>::all()
///     .namespace("source")?
///     .labels("replicate=true")?
///     .transform(|cm: &mut ConfigMap| cm.metadata.managed_fields = None);
/// assert_eq!(replicated.to_string(), "namespace source, labels replicate=true, transformed");
///
/// let on_node = Scope::<Pod>::all().fields("spec.nodeName=node-1")?;
/// assert_eq!(on_node.to_string(), "fields spec.nodeName=node-1");
///
/// let err = Scope::<ConfigMap>::all().labels("replicate=").and_then(|s| s.labels("app in ()"));
/// assert!(err.unwrap_err().to_string().contains("failed to parse label selector"));
/// # Ok::<(), informer_runtime::scope::Error>(())
/// ```
///
/// Namespaces can only be set for namespaced resources: `Scope::<Namespace>::all().namespace(..)`
/// does not compile.
pub struct Scope<K> {
    selection: Selection,
    transform: Option<Transform<K>>,
}

impl<K> Clone for Scope<K> {
    fn clone(&self) -> Self {
        Self {
            selection: self.selection.clone(),
            transform: self.transform.clone(),
        }
    }
}

impl<K> Default for Scope<K> {
    fn default() -> Self {
        Self::all()
    }
}

impl<K> PartialEq for Scope<K> {
    /// Equal selections and the same transform (see the [module documentation](self#shared-where-equal)).
    fn eq(&self, other: &Self) -> bool {
        self.selection == other.selection && self.transform_id() == other.transform_id()
    }
}

impl<K> Eq for Scope<K> {}

impl<K> fmt::Debug for Scope<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("namespaces", &self.selection.namespaces)
            .field("labels", &self.selection.labels.to_string())
            .field("fields", &self.selection.fields.to_string())
            .field("transformed", &self.transform.is_some())
            .finish()
    }
}

impl<K> fmt::Display for Scope<K> {
    /// `everything`, or what restricts the scope: `namespace source, labels replicate=true,
    /// transformed`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.selection.is_everything(), self.transform.is_some()) {
            (_, false) => write!(f, "{}", self.selection),
            (true, true) => f.write_str("transformed"),
            (false, true) => write!(f, "{}, transformed", self.selection),
        }
    }
}

impl<K> Scope<K> {
    /// Every object of `K` (of the namespace the factory watches, if it has one), untransformed.
    pub fn all() -> Self {
        Self {
            selection: Selection::default(),
            transform: None,
        }
    }

    /// Also requires the labels of `selector`, written as text (`replicate=true,tier!=db`);
    /// parsed with [`parse_label_selector`].
    ///
    /// # Errors
    ///
    /// [`Error::Selector`] if it does not parse.
    pub fn labels(self, selector: &str) -> Result<Self> {
        let parsed = parse_label_selector(selector)?;
        Ok(self.and_labels(parsed))
    }

    /// Also requires `selector`, a kube [`Selector`] (checked: its keys and values must be
    /// valid label keys and values).
    ///
    /// # Errors
    ///
    /// [`Error::Selector`] if a key or value is invalid, or an `in`/`notin` set is empty.
    pub fn label_selector(self, selector: Selector) -> Result<Self> {
        let checked = parse_label_selector(&selector.to_string())?;
        Ok(self.and_labels(checked))
    }

    /// Also requires the fields of `selector`, written as text (`spec.nodeName=node-1`); parsed
    /// with [`parse_field_selector`]. Which fields a resource can be selected by is the API
    /// server's to say: an unsupported one fails the informer's list.
    ///
    /// # Errors
    ///
    /// [`Error::Selector`] if it does not parse.
    pub fn fields(self, selector: &str) -> Result<Self> {
        let parsed = parse_field_selector(selector)?;
        Ok(self.field_selector(&parsed))
    }

    /// Also requires `selector`'s fields.
    #[must_use]
    pub fn field_selector(mut self, selector: &FieldSelector) -> Self {
        self.selection.fields = self.selection.fields.and(selector);
        self
    }

    /// Applies `transform` to each object before it is cached (after the factory's transforms),
    /// for example to drop what the controller never reads. Replaces an earlier transform of
    /// this scope. A panic in it is caught and reported, and the object is cached as the
    /// transform left it (see [`user_panic`](crate::user_panic)).
    #[must_use]
    pub fn transform(mut self, transform: impl Fn(&mut K) + Send + Sync + 'static) -> Self {
        self.transform = Some(Arc::new(transform));
        self
    }

    /// The namespaces the scope holds; empty for every namespace.
    pub fn selected_namespaces(&self) -> &BTreeSet<String> {
        &self.selection.namespaces
    }

    /// The label selector every cached object matches (empty: no restriction).
    pub fn selected_labels(&self) -> &Selector {
        &self.selection.labels
    }

    /// The field selector every cached object matches (empty: no restriction).
    pub fn selected_fields(&self) -> &FieldSelector {
        &self.selection.fields
    }

    /// Whether the scope transforms objects before they are cached.
    pub fn is_transformed(&self) -> bool {
        self.transform.is_some()
    }

    /// Whether the scope is every object, untransformed.
    pub fn is_everything(&self) -> bool {
        self.selection.is_everything() && self.transform.is_none()
    }

    pub(crate) fn selection(&self) -> &Selection {
        &self.selection
    }

    pub(crate) fn transform_fn(&self) -> Option<&Transform<K>> {
        self.transform.as_ref()
    }

    /// The identity of the transform, for sharing informers: the address of the shared
    /// function (kept alive by every informer made with it).
    pub(crate) fn transform_id(&self) -> Option<usize> {
        self.transform
            .as_ref()
            .map(|transform| Arc::as_ptr(transform).cast::<()>() as usize)
    }

    /// This scope restricted to `namespaces` when it has none of its own (a factory's
    /// namespace).
    pub(crate) fn within(mut self, namespaces: impl IntoIterator<Item = String>) -> Self {
        if self.selection.namespaces.is_empty() {
            self.selection.namespaces.extend(namespaces);
        }
        self
    }

    pub(crate) fn and_labels(mut self, labels: Selector) -> Self {
        let mut joined = std::mem::take(&mut self.selection.labels);
        joined.extend(labels);
        self.selection.labels = coverage::canonical_labels(joined);
        self
    }
}

impl<K: Resource<Scope = NamespaceResourceScope>> Scope<K> {
    /// Also holds `namespace` (a scope without namespaces holds every namespace; one with
    /// several holds each, with one informer per namespace).
    ///
    /// # Errors
    ///
    /// [`Error::Namespace`] if `namespace` is not a valid namespace name.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Result<Self> {
        let namespace = namespace.into();
        check_namespace(&namespace)?;
        self.selection.namespaces.insert(namespace);
        Ok(self)
    }

    /// Also holds each of `namespaces`.
    ///
    /// # Errors
    ///
    /// [`Error::Namespace`] for the first name that is not a valid namespace name.
    pub fn namespaces<N: Into<String>>(self, namespaces: impl IntoIterator<Item = N>) -> Result<Self> {
        namespaces
            .into_iter()
            .try_fold(self, |scope, namespace| scope.namespace(namespace))
    }
}

/// Checks a namespace name as kube-apiserver does (a DNS-1123 label).
fn check_namespace(namespace: &str) -> Result<()> {
    let invalid = |reason| Error::Namespace {
        namespace: namespace.to_owned(),
        reason,
    };
    let bytes = namespace.as_bytes();
    if bytes.is_empty() {
        return Err(invalid(
            "it is empty (a scope without namespaces holds every namespace)",
        ));
    }
    if bytes.len() > 63 {
        return Err(invalid("it is longer than 63 characters"));
    }
    if !bytes
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    {
        return Err(invalid(
            "it has a character other than a lowercase letter, a digit or '-'",
        ));
    }
    if bytes.first() == Some(&b'-') || bytes.last() == Some(&b'-') {
        return Err(invalid("it starts or ends with '-'"));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
