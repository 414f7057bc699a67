//! The factory's [`Error`]s.

use kube::core::GroupVersionResource;

/// The result of a factory operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed factory operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `for_resource` was asked for a resource the factory has no informer for.
    #[error(
        "failed to find an informer for {group}/{version}, Resource={resource}: no informer is generated for this resource (check the group, version and plural)"
    )]
    NoInformerFor {
        /// The API group ("" for core).
        group: String,
        /// The API version.
        version: String,
        /// The plural resource name.
        resource: String,
    },
    /// The informers' own thread could not be started.
    #[error("failed to start the informers' thread: {0}")]
    StartThread(#[source] std::io::Error),
    /// [`SharedInformerFactory::informer_for`](super::SharedInformerFactory::informer_for) was asked to create an informer of a type the
    /// factory already has one of.
    #[error(
        "failed to create an informer of {type_name}: the factory already has one (created by an earlier request, such as `unscoped_informer::<K>()` or a generated accessor); request custom informers before anything else asks for the type, or add indexes to the existing one with `add_indexers`"
    )]
    InformerExists {
        /// The resource type.
        type_name: &'static str,
    },
    /// The client for the informers' own thread could not be made from the configuration.
    #[error("failed to create a client on the informers' thread: {0}")]
    Client(#[source] kube::Error),
    /// [`SharedInformerFactory::informer_for`](super::SharedInformerFactory::informer_for) was asked for a resource the factory is
    /// [restricted](super::Builder::resource_labels) to some objects of: a custom constructor could
    /// list and watch them all.
    #[error(
        "failed to create a custom informer of {resource}: the factory caches only the objects that `{selector}` selects, and a custom constructor could list them all; use `informer`, `informer_in` or `metadata_informer`, which carry the selector, or a factory without the restriction"
    )]
    Restricted {
        /// The resource, as `plural.group`.
        resource: String,
        /// The factory's label selectors for it, joined by `,`.
        selector: String,
    },
}

impl Error {
    /// The error for an unknown `gvr`.
    pub fn no_informer_for(gvr: &GroupVersionResource) -> Self {
        Self::NoInformerFor {
            group: gvr.group.clone(),
            version: gvr.version.clone(),
            resource: gvr.resource.clone(),
        }
    }
}
