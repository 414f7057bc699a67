//! Finalizers: make sure a controller cleans up before the API server deletes an object.
//!
//! A finalizer is a string in an object's `metadata.finalizers`. While the list is not empty,
//! a delete request only marks the object (it gets a `metadata.deletionTimestamp`); the object
//! stays readable until every finalizer is removed. A controller that owns external state (a
//! cloud resource, a row in a database, a file) adds its finalizer before creating that state,
//! and removes it only after tearing the state down, so the deletion cannot race the cleanup.
//!
//! [`finalizer`] wraps one reconcile of one object and decides what to run:
//!
//! | the object | what [`finalizer`] does | returns |
//! |---|---|---|
//! | not being deleted, without the finalizer | adds the finalizer, runs nothing | [`FinalizerOutcome::FinalizerAdded`] |
//! | not being deleted, with the finalizer | runs `reconcile(FinalizerEvent::Apply(object))` | [`FinalizerOutcome::Reconciled`] |
//! | being deleted, with the finalizer | runs `reconcile(FinalizerEvent::Cleanup(object))`, then removes the finalizer | [`FinalizerOutcome::Reconciled`] |
//! | being deleted, without the finalizer | runs nothing | [`FinalizerOutcome::Deleting`] |
//!
//! Adding the finalizer changes the object, so its informer delivers the change and the next
//! reconcile runs `Apply`: on [`FinalizerOutcome::FinalizerAdded`] and [`FinalizerOutcome::Deleting`] a
//! controller waits for the next change rather than requeueing. [`FinalizerOutcome::unwrap_or_else`]
//! turns the outcome into the controller's own result type (`T`), whatever it is.
//!
//! Both patches are JSON patches guarded by a `test` operation: adding tests that the list is
//! still the one the object was read with, removing tests that the entry at the index about to
//! be removed is still this finalizer. When someone changed the list in between, the API server
//! rejects the patch (422) and [`finalizer`] fails with [`Error::AddFinalizer`] or
//! [`Error::RemoveFinalizer`]; the object keeps its list untouched and the next reconcile,
//! which sees the newer object, tries again. A failed cleanup keeps the finalizer, so the
//! cleanup is retried until it succeeds.
//!
//! Cleanup can run more than once for the same deletion (a crash between the cleanup and the
//! removal, a removal that conflicted): it must be idempotent.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::{sync::Arc, time::Duration};
//!
//! use informer_runtime::finalizer::{self, FinalizerEvent, FinalizerOutcome};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! # let server = informer_testserver::TestServer::start().await?;
//! # let client = server.client()?;
//! # let mut cm = ConfigMap::default();
//! # cm.metadata.name = Some("settings".into());
//! # cm.metadata.namespace = Some("default".into());
//! # server.create_typed(&cm)?;
//!
//! #[derive(Debug, thiserror::Error)]
//! #[error("the backend refused")]
//! struct BackendError;
//!
//! /// What the reconcile tells its runner: requeue after a delay, or wait for a change.
//! type Requeue = Option<Duration>;
//!
//! async fn reconcile(
//!     api: &Api<ConfigMap>,
//!     cm: Arc<ConfigMap>,
//! ) -> Result<Requeue, finalizer::Error<BackendError>> {
//!     let outcome = finalizer::finalizer(api, "example.com/cleanup", cm, |event| async move {
//!         match event {
//!             FinalizerEvent::Apply(_cm) => Ok::<_, BackendError>(Some(Duration::from_secs(300))),
//!             FinalizerEvent::Cleanup(_cm) => Ok(None),
//!         }
//!     })
//!     .await?;
//!     // `FinalizerAdded` and `Deleting`: wait for the change the API server sends next.
//!     Ok(outcome.unwrap_or_else(|| None))
//! }
//!
//! let api: Api<ConfigMap> = Api::namespaced(client, "default");
//! let first = reconcile(&api, Arc::new(api.get("settings").await?)).await?;
//! assert_eq!(first, None); // the finalizer was added
//! let second = reconcile(&api, Arc::new(api.get("settings").await?)).await?;
//! assert_eq!(second, Some(Duration::from_secs(300))); // Apply ran
//! # Ok(())
//! # }
//! ```

use std::{fmt::Debug, future::Future, sync::Arc};

use json_patch::{
    PatchOperation, RemoveOperation, TestOperation,
    jsonptr::{PointerBuf, Token},
};
use kube::{
    Api, Resource, ResourceExt,
    api::{Patch, PatchParams},
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What [`finalizer`] asks the reconcile to do with the object.
#[derive(Debug)]
pub enum FinalizerEvent<K> {
    /// The object exists and is not being deleted, and carries the finalizer: bring the world in
    /// line with it.
    Apply(Arc<K>),
    /// The object is being deleted and still carries the finalizer: tear down what the
    /// controller created for it. The finalizer is removed when this succeeds.
    Cleanup(Arc<K>),
}

/// What [`finalizer`] did, beyond running the reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "an outcome tells whether the reconcile ran"]
pub enum FinalizerOutcome<T> {
    /// The reconcile ran (`Apply`, or `Cleanup` followed by removing the finalizer) and
    /// returned this value.
    Reconciled(T),
    /// The object lacked the finalizer, which is now added; nothing else ran. The change
    /// brings another reconcile, which runs `Apply`.
    FinalizerAdded,
    /// The object is being deleted and no longer carries this finalizer (it was removed
    /// earlier, or never added); nothing ran.
    Deleting,
}

impl<T> FinalizerOutcome<T> {
    /// The value the reconcile returned, if it ran.
    pub fn reconciled(self) -> Option<T> {
        match self {
            Self::Reconciled(value) => Some(value),
            Self::FinalizerAdded | Self::Deleting => None,
        }
    }

    /// The value the reconcile returned, or `otherwise()` when it did not run (typically the
    /// controller's "wait for the next change").
    pub fn unwrap_or_else(self, otherwise: impl FnOnce() -> T) -> T {
        self.reconciled().unwrap_or_else(otherwise)
    }
}

/// Failures of [`finalizer`].
#[derive(Debug, thiserror::Error)]
pub enum Error<E>
where
    E: std::error::Error + 'static,
{
    /// The reconcile failed on [`FinalizerEvent::Apply`].
    #[error("failed to apply the object")]
    ApplyFailed(#[source] E),
    /// The reconcile failed on [`FinalizerEvent::Cleanup`]; the finalizer stays.
    #[error("failed to clean up the object")]
    CleanupFailed(#[source] E),
    /// The patch adding the finalizer failed (422 when the finalizer list changed since the
    /// object was read).
    #[error("failed to add the finalizer")]
    AddFinalizer(#[source] kube::Error),
    /// The patch removing the finalizer failed (422 when the finalizer list changed since the
    /// object was read); the cleanup ran.
    #[error("failed to remove the finalizer")]
    RemoveFinalizer(#[source] kube::Error),
    /// The object has no `metadata.name`, so it cannot be patched.
    #[error("failed to patch the object: it has no name")]
    UnnamedObject,
}

/// Runs `reconcile` for `object` behind the finalizer `finalizer_name`: adds the finalizer
/// first, runs [`FinalizerEvent::Apply`] while the object lives and [`FinalizerEvent::Cleanup`] when it is being
/// deleted, then removes the finalizer. See the [module documentation](self) for the table of
/// cases.
///
/// `api` must address the object (a namespaced `Api` in the object's namespace, or a
/// cluster-wide `Api` for a cluster-scoped type). The finalizer name should be qualified by a
/// domain the controller owns (`example.com/cleanup`).
///
/// # Errors
///
/// [`Error::ApplyFailed`] and [`Error::CleanupFailed`] carry the reconcile's error;
/// [`Error::AddFinalizer`] and [`Error::RemoveFinalizer`] the API server's;
/// [`Error::UnnamedObject`] when the object has no name.
pub async fn finalizer<K, T, E, F, Fut>(
    api: &Api<K>,
    finalizer_name: &str,
    object: Arc<K>,
    reconcile: F,
) -> Result<FinalizerOutcome<T>, Error<E>>
where
    K: Resource + Clone + DeserializeOwned + Debug,
    E: std::error::Error + 'static,
    F: FnOnce(FinalizerEvent<K>) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let Some(name) = object.meta().name.clone() else {
        return Err(Error::UnnamedObject);
    };
    let position = object.finalizers().iter().position(|f| f == finalizer_name);
    let deleting = object.meta().deletion_timestamp.is_some();
    match (position, deleting) {
        (Some(_), false) => reconcile(FinalizerEvent::Apply(object))
            .await
            .map(FinalizerOutcome::Reconciled)
            .map_err(Error::ApplyFailed),
        (Some(index), true) => {
            let value = reconcile(FinalizerEvent::Cleanup(object))
                .await
                .map_err(Error::CleanupFailed)?;
            let patch = removal(finalizer_name, index);
            api.patch::<()>(&name, &PatchParams::default(), &Patch::Json(patch))
                .await
                .map_err(Error::RemoveFinalizer)?;
            Ok(FinalizerOutcome::Reconciled(value))
        }
        (None, false) => {
            let patch = addition(object.meta().finalizers.as_deref(), finalizer_name);
            api.patch::<()>(&name, &PatchParams::default(), &Patch::Json(patch))
                .await
                .map_err(Error::AddFinalizer)?;
            Ok(FinalizerOutcome::FinalizerAdded)
        }
        (None, true) => Ok(FinalizerOutcome::Deleting),
    }
}

fn finalizers_path() -> PointerBuf {
    PointerBuf::from_tokens(["metadata", "finalizers"])
}

/// A JSON patch appending `finalizer_name` to `current`, valid only while the list is still
/// `current` (absent when `None`).
fn addition(current: Option<&[String]>, finalizer_name: &str) -> json_patch::Patch {
    let (expected, path, value) = match current {
        None => (
            Value::Null,
            finalizers_path(),
            Value::from(vec![finalizer_name.to_string()]),
        ),
        Some(list) => {
            let mut path = finalizers_path();
            path.push_back("-");
            (Value::from(list.to_vec()), path, Value::from(finalizer_name))
        }
    };
    json_patch::Patch(vec![
        PatchOperation::Test(TestOperation {
            path: finalizers_path(),
            value: expected,
        }),
        PatchOperation::Add(json_patch::AddOperation { path, value }),
    ])
}

/// A JSON patch removing the entry at `index`, valid only while that entry is `finalizer_name`.
fn removal(finalizer_name: &str, index: usize) -> json_patch::Patch {
    let mut path = finalizers_path();
    path.push_back(Token::from(index));
    json_patch::Patch(vec![
        PatchOperation::Test(TestOperation {
            path: path.clone(),
            value: Value::from(finalizer_name),
        }),
        PatchOperation::Remove(RemoveOperation { path }),
    ])
}

#[cfg(test)]
mod tests;
