//! What each runnable is doing, for the probes and the shutdown report.

use std::sync::{Arc, Mutex, PoisonError};

/// The state of one runnable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunState {
    /// Not running: waiting for the caches or for this replica to lead.
    Waiting,
    /// Running now.
    Running,
    /// Its last run returned `Ok`.
    Finished,
    /// Its last run failed (the manager stops).
    Failed(String),
}

/// The states of every runnable, in the order they were added.
#[derive(Debug, Default, Clone)]
pub(crate) struct RunStates(Arc<Mutex<Vec<(String, RunState)>>>);

impl RunStates {
    /// Adds a runnable; returns its index.
    pub(crate) fn add(&self, name: &str) -> usize {
        let mut states = self.lock();
        states.push((name.to_owned(), RunState::Waiting));
        states.len() - 1
    }

    pub(crate) fn set(&self, index: usize, state: RunState) {
        if let Some(entry) = self.lock().get_mut(index) {
            entry.1 = state;
        }
    }

    /// The names of runnables running now.
    pub(crate) fn running(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, state)| *state == RunState::Running)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The first failure, as `name: reason`.
    pub(crate) fn failure(&self) -> Option<String> {
        self.lock().iter().find_map(|(name, state)| match state {
            RunState::Failed(reason) => Some(format!("{name}: {reason}")),
            _ => None,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, RunState)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
