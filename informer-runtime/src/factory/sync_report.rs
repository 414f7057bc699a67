//! [`SyncReport`]: whether each informer of a factory synced, and why not.

use std::fmt;

/// Whether each started informer synced, from
/// [`SharedInformerFactory::wait_for_cache_sync`](super::SharedInformerFactory::wait_for_cache_sync).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncReport {
    /// One entry per started informer, in creation order.
    pub informers: Vec<InformerSync>,
}

/// The sync state of one informer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InformerSync {
    /// The Rust type of the informer's objects.
    pub type_name: &'static str,
    /// The informer's description: the resource, and the scope of a scoped informer
    /// (`configmaps (namespace source, labels replicate=true)`).
    pub description: String,
    /// Whether its cache synced (and the informer still keeps it up to date).
    pub synced: bool,
    /// Whether the informer stopped: the factory shut down, or it failed.
    pub stopped: bool,
    /// Why it stopped, if it failed (see [`SharedIndexInformer::failure`](crate::informer::SharedIndexInformer::failure)).
    pub failure: Option<String>,
    /// The last list or watch error, until a list succeeds (see
    /// [`SharedIndexInformer::last_error`](crate::informer::SharedIndexInformer::last_error)): why an informer that keeps retrying has not
    /// synced, such as a 404 for a custom resource whose CRD is not installed.
    pub last_error: Option<String>,
}

impl SyncReport {
    /// Whether every informer synced.
    pub fn all_synced(&self) -> bool {
        self.informers.iter().all(|i| i.synced)
    }

    /// Whether every started informer of `K` (its unscoped one and those of its scopes)
    /// synced; `None` if none was started.
    pub fn is_synced<K: 'static>(&self) -> Option<bool> {
        let name = std::any::type_name::<K>();
        let mut of_k = self.informers.iter().filter(|i| i.type_name == name).peekable();
        of_k.peek()?;
        Some(of_k.all(|i| i.synced))
    }
}

impl fmt::Display for SyncReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let synced = self.informers.iter().filter(|i| i.synced).count();
        write!(f, "{synced}/{} informers synced", self.informers.len())?;
        let describe = |i: &InformerSync| match (&i.failure, i.stopped, &i.last_error) {
            (Some(failure), _, _) => format!("{} (failed: {failure})", i.description),
            (None, true, _) => format!("{} (stopped)", i.description),
            (None, false, Some(error)) => format!("{} (retrying after: {error})", i.description),
            (None, false, None) => i.description.clone(),
        };
        let unsynced: Vec<String> = self
            .informers
            .iter()
            .filter(|i| !i.synced)
            .map(describe)
            .collect();
        if !unsynced.is_empty() {
            write!(f, "; not synced: {}", unsynced.join(", "))?;
        }
        Ok(())
    }
}
