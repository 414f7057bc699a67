//! [`KubeletError`]: what can go wrong registering something on the simulated kubelet.

use crate::selector::SelectorError;

/// Errors of the simulated kubelet's registrations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeletError {
    /// A [`PodMatch::labels`](super::PodMatch::labels) selector is malformed.
    #[error("failed to match pods by label")]
    Selector(#[source] SelectorError),
}
