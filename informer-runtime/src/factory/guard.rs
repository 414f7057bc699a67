//! [`ShutdownGuard`]: shuts a factory down when dropped, for code that may be dropped before it
//! shuts its factory down itself (an aborted task, a future a `select!` let go of).

/// Shuts a [`SharedInformerFactory`](super::SharedInformerFactory) down when dropped, unless it
/// was shut down already (see
/// [`SharedInformerFactory::shutdown_guard`](super::SharedInformerFactory::shutdown_guard)).
#[must_use = "the factory is shut down when the guard is dropped"]
pub struct ShutdownGuard {
    /// Shuts the factory down in the background.
    shutdown: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl std::fmt::Debug for ShutdownGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShutdownGuard").finish_non_exhaustive()
    }
}

impl ShutdownGuard {
    /// A guard that calls `shutdown` when dropped.
    pub(super) fn new(shutdown: impl FnOnce() + Send + Sync + 'static) -> Self {
        Self {
            shutdown: Some(Box::new(shutdown)),
        }
    }
}

impl Drop for ShutdownGuard {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            shutdown();
        }
    }
}
