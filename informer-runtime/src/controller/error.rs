//! [`Error`]: why a controller failed to run or to stop.

use std::time::Duration;

use crate::informer;

/// The result of running a controller.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A controller that failed to run or to stop.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A handler or index could not be registered on an informer.
    #[error("failed to start the {controller} controller: {source}")]
    Register {
        /// The controller's name.
        controller: String,
        /// Why the informer refused.
        #[source]
        source: informer::Error,
    },
    /// An informer the controller reads stopped (before it synced, or while the controller
    /// ran): its cache is no longer kept up to date.
    #[error(
        "failed to run the {controller} controller: the {informer} informer stopped; stop controllers before the factory"
    )]
    InformerStopped {
        /// The controller's name.
        controller: String,
        /// The informer's description.
        informer: String,
    },
    /// Reconciles still ran when the shutdown timeout passed; they were cancelled.
    #[error(
        "failed to stop the {controller} controller gracefully: {cancelled} reconciles still ran after {timeout:?} and were cancelled"
    )]
    ShutdownTimeout {
        /// The controller's name.
        controller: String,
        /// How many workers were cancelled.
        cancelled: usize,
        /// The timeout.
        timeout: Duration,
    },
}
