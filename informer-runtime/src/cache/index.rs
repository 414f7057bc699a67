//! Typed index handles: an index declared once, by name and function, registered on an
//! informer and queried through listers without repeating its name.
//!
//! ```
//! use std::sync::Arc;
//! use informer_runtime::cache::{Writer, index::Index};
//! use informer_runtime::lister::Lister;
//! use k8s_openapi::api::core::v1::Pod;
//!
//! /// Pods by the name of the node they are scheduled to (`spec.nodeName`).
//! static POD_BY_NODE_NAME: Index<Pod> = Index::new("pod-by-node-name", |pod| {
//!     pod.spec.iter().filter_map(|spec| spec.node_name.clone()).collect()
//! });
//!
//! let writer = Writer::<Pod>::default();
//! writer.add_index(&POD_BY_NODE_NAME)?;
//! let mut pod = Pod::default();
//! pod.metadata.name = Some("web".into());
//! pod.spec.get_or_insert_default().node_name = Some("node-1".into());
//! writer.add(Arc::new(pod));
//!
//! let lister = Lister::new(writer.store());
//! assert_eq!(lister.by_index(&POD_BY_NODE_NAME, "node-1")?.len(), 1);
//! # Ok::<(), informer_runtime::cache::Error>(())
//! ```
//!
//! Built-in handles cover the indexes controllers usually need: [`Index::NAMESPACE`],
//! [`Index::BY_CONTROLLER_UID`], [`Index::BY_CONTROLLER`] and [`Index::label`]. They are
//! associated constants, not statics, because a `static` cannot be generic over the object
//! type; write `Index::BY_CONTROLLER_UID` where the type is inferred, or
//! `Index::<Pod>::BY_CONTROLLER_UID`.
//!
//! Handles of one resource's fields, such as pods by node name above, are the user's one
//! line: this crate knows objects only through their metadata, whatever their type and
//! Kubernetes version. `k8s-informers` generates the few that controllers always need next to
//! their resource's informer (`k8s_informers::core::v1::POD_BY_NODE_NAME`).

use std::{borrow::Cow, collections::HashMap, fmt, sync::Arc};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;

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

/// The name of [`Index::BY_CONTROLLER_UID`].
pub const BY_CONTROLLER_UID_INDEX: &str = "by-controller-uid";

/// The name of [`Index::BY_CONTROLLER`].
pub const BY_CONTROLLER_INDEX: &str = "by-controller";

/// The prefix of the names of [`Index::label`] indexes (`label:app`).
pub const LABEL_INDEX_PREFIX: &str = "label:";

/// What computes an index's values.
pub(crate) enum IndexKind<K> {
    /// A plain function.
    Func(fn(&K) -> Vec<String>),
    /// The value of one label.
    Label(&'static str),
    /// A built-in index: compared by what it is, since a generic function may have a
    /// different address in every crate that uses it.
    Builtin(Builtin),
}

/// The built-in indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Namespace,
    ControllerUid,
    Controller,
}

impl<K> Clone for IndexKind<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for IndexKind<K> {}

impl<K> IndexKind<K> {
    /// Whether two sources compute the same values. Two handles holding the same function
    /// pointer are the same index (a `static` handle holds one pointer wherever it is used);
    /// identical functions merged by the compiler would compute the same values anyway.
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Func(a), Self::Func(b)) => std::ptr::fn_addr_eq(*a, *b),
            (Self::Label(a), Self::Label(b)) => a == b,
            (Self::Builtin(a), Self::Builtin(b)) => a == b,
            _ => false,
        }
    }
}

/// A typed index: its name and the function that maps an object to its indexed values.
///
/// Declare it once as a `static` (its constructors are `const fn`), register it with
/// [`SharedIndexInformer::add_index`] (or [`Writer::add_index`]) and query it with
/// [`Lister::by_index`] or the [`IndexedLister`] that registration returns. The string API
/// ([`Store::by_index`]) stays for generic code: [`name`](Self::name) is the index's name there.
///
/// Registering the same handle twice is a no-op; registering a handle whose name is taken by
/// another function fails with [`Error::IndexerConflict`], and querying a handle that is not
/// registered fails with [`Error::IndexNotFound`] (or [`Error::IndexFunctionMismatch`] if its
/// name belongs to another function), so a query never silently reads the wrong index.
///
/// A handle made by [`new`](Self::new) is identified by its function pointer: declare it as a
/// `static`, not a `const` (each use of a `const` may get its own copy of the function, which
/// would count as another function). Label and built-in handles are identified by what they
/// index, so `Index::label("app")` may be written anywhere.
///
/// [`SharedIndexInformer::add_index`]: crate::informer::SharedIndexInformer::add_index
/// [`Writer::add_index`]: crate::cache::Writer::add_index
/// [`Lister::by_index`]: crate::lister::Lister::by_index
/// [`IndexedLister`]: crate::lister::IndexedLister
/// [`Store::by_index`]: crate::cache::Store::by_index
/// [`Error::IndexerConflict`]: crate::cache::Error::IndexerConflict
/// [`Error::IndexNotFound`]: crate::cache::Error::IndexNotFound
/// [`Error::IndexFunctionMismatch`]: crate::cache::Error::IndexFunctionMismatch
pub struct Index<K> {
    name: &'static str,
    kind: IndexKind<K>,
}

impl<K> Clone for Index<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Index<K> {}

impl<K> fmt::Debug for Index<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Index").field(&self.name()).finish()
    }
}

impl<K> Index<K> {
    /// An index named `name` whose values for an object are `func(object)`.
    ///
    /// Returning no value leaves the object out of the index; duplicate values collapse.
    /// A non-capturing closure works, also in a `static`:
    ///
    /// ```
    /// use informer_runtime::cache::index::Index;
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// static BY_SERVICE_ACCOUNT: Index<Pod> = Index::new("by-service-account", |pod| {
    ///     pod.spec.iter().filter_map(|spec| spec.service_account_name.clone()).collect()
    /// });
    /// assert_eq!(BY_SERVICE_ACCOUNT.name(), "by-service-account");
    /// ```
    pub const fn new(name: &'static str, func: fn(&K) -> Vec<String>) -> Self {
        Self {
            name,
            kind: IndexKind::Func(func),
        }
    }

    /// An index of objects by the value of the label `key` (named `label:<key>`); objects
    /// without the label are left out.
    ///
    /// ```
    /// use informer_runtime::cache::index::Index;
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// static BY_APP: Index<Pod> = Index::label("app");
    /// assert_eq!(BY_APP.name(), "label:app");
    /// ```
    pub const fn label(key: &'static str) -> Self {
        Self {
            name: key,
            kind: IndexKind::Label(key),
        }
    }

    /// The index's name, as the string API knows it.
    pub fn name(&self) -> Cow<'static, str> {
        match self.kind {
            IndexKind::Func(_) | IndexKind::Builtin(_) => Cow::Borrowed(self.name),
            IndexKind::Label(key) => Cow::Owned(format!("{LABEL_INDEX_PREFIX}{key}")),
        }
    }

    pub(crate) fn kind(&self) -> IndexKind<K> {
        self.kind
    }

    /// Whether this is [`Index::NAMESPACE`].
    pub(crate) fn is_namespace(&self) -> bool {
        matches!(self.kind, IndexKind::Builtin(Builtin::Namespace))
    }

    const fn builtin(name: &'static str, builtin: Builtin) -> Self {
        Self {
            name,
            kind: IndexKind::Builtin(builtin),
        }
    }
}

impl<K: Resource> Index<K> {
    /// Objects by namespace (`""` for cluster-scoped objects): the index every informer of a
    /// factory carries, named [`NAMESPACE_INDEX`].
    ///
    /// The name `namespace` is reserved for this function (client-go's convention), so an
    /// existing `namespace` index registered through the string API counts as this handle.
    pub const NAMESPACE: Self = Self::builtin(NAMESPACE_INDEX, Builtin::Namespace);

    /// Objects by the UID of their controller (the owner reference with `controller: true`);
    /// objects without a controller are left out. Named [`BY_CONTROLLER_UID_INDEX`].
    pub const BY_CONTROLLER_UID: Self = Self::builtin(BY_CONTROLLER_UID_INDEX, Builtin::ControllerUid);

    /// Objects by the `namespace/name` of their controller (the object's namespace: owners
    /// live in the namespace of what they own, or are cluster-scoped: then the value is the
    /// owner's name alone, as for cluster-scoped objects). Named [`BY_CONTROLLER_INDEX`].
    ///
    /// The kind is not part of the value: check the owner reference's kind (or use
    /// [`Index::BY_CONTROLLER_UID`]) when controllers of several kinds may share a name.
    pub const BY_CONTROLLER: Self = Self::builtin(BY_CONTROLLER_INDEX, Builtin::Controller);

    /// The values of `obj` in this index.
    pub fn values(&self, obj: &K) -> Vec<String> {
        match self.kind {
            IndexKind::Func(func) => func(obj),
            IndexKind::Builtin(Builtin::Namespace) => namespace_index_func(obj),
            IndexKind::Builtin(Builtin::ControllerUid) => controller_uid(obj),
            IndexKind::Builtin(Builtin::Controller) => controller_name(obj),
            IndexKind::Label(key) => obj
                .meta()
                .labels
                .as_ref()
                .and_then(|labels| labels.get(key))
                .map(|value| vec![value.clone()])
                .unwrap_or_default(),
        }
    }

    /// The index function, for the string API ([`Indexers`]).
    pub fn index_func(&self) -> IndexFunc<K>
    where
        K: 'static,
    {
        let index = *self;
        Arc::new(move |obj: &K| index.values(obj))
    }
}

/// The owner references of `obj` that name its controller.
fn controllers<K: Resource>(obj: &K) -> impl Iterator<Item = &OwnerReference> {
    obj.meta()
        .owner_references
        .iter()
        .flatten()
        .filter(|owner| owner.controller == Some(true))
}

fn controller_uid<K: Resource>(obj: &K) -> Vec<String> {
    controllers(obj).map(|owner| owner.uid.clone()).collect()
}

fn controller_name<K: Resource>(obj: &K) -> Vec<String> {
    let namespace = obj.meta().namespace.as_deref().unwrap_or_default();
    // The text of the owner's `ObjectKey`, built in one allocation.
    controllers(obj)
        .map(|owner| match namespace {
            "" => owner.name.clone(),
            namespace => format!("{namespace}/{}", owner.name),
        })
        .collect()
}

#[cfg(test)]
mod tests;
