//! [`KubeletError`]: what can go wrong registering something on the simulated kubelet.

use crate::selector::SelectorError;
use crate::status::ApiError;

/// Errors of the simulated kubelet's registrations.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KubeletError {
    /// A [`PodMatch::labels`](super::PodMatch::labels) selector is malformed.
    #[error("failed to match pods by label")]
    Selector(#[source] SelectorError),
    /// A node or its Lease could not be created at start.
    #[error("failed to register {object}")]
    Register {
        /// The object, as `plural/[namespace/]name`.
        object: String,
        /// The store's answer.
        #[source]
        source: Box<ApiError>,
    },
    /// A node's [allocatable](super::Kubelet::allocatable) quantity is not a quantity.
    #[error("failed to read the allocatable {resource} of the simulated nodes, {quantity:?}: {reason}")]
    Allocatable {
        /// The resource.
        resource: String,
        /// What was given.
        quantity: String,
        /// Why it is not a quantity.
        reason: String,
    },
    /// The server does not serve a core type the kubelet writes (a type given to
    /// [`TestServerBuilder::resource`](crate::TestServerBuilder::resource) replaced it).
    #[error("failed to find the core/v1 resource {0} among the served types")]
    NotServed(&'static str),
}
