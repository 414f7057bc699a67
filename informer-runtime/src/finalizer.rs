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
//! | not being deleted, without the finalizer | adds the finalizer, then runs `reconcile(FinalizerEvent::Apply(object))` on the object as the API server wrote it | [`FinalizerOutcome::Reconciled`] |
//! | not being deleted, with the finalizer | runs `reconcile(FinalizerEvent::Apply(object))` | [`FinalizerOutcome::Reconciled`] |
//! | being deleted, with the finalizer | runs `reconcile(FinalizerEvent::Cleanup(object))`, then removes the finalizer | [`FinalizerOutcome::Reconciled`] |
//! | being deleted, without the finalizer | runs nothing | [`FinalizerOutcome::Deleting`] |
//!
//! # Leaving the scope
//!
//! A controller that reconciles only some objects (a label selector on its watch, or
//! [predicates](crate::predicate)) must still clean up after an object that leaves that scope
//! while carrying its finalizer: nothing else removes the finalizer, so a later delete of the
//! object would wait forever. [`finalizer_where`] takes the scope as a test of the object
//! and adds these cases:
//!
//! | the object, out of scope | what [`finalizer_where`] does | returns |
//! |---|---|---|
//! | with the finalizer (deleted or not) | runs `reconcile(FinalizerEvent::Cleanup(object))`, then removes the finalizer | [`FinalizerOutcome::Reconciled`] |
//! | without the finalizer, not being deleted | runs nothing, adds nothing | [`FinalizerOutcome::NotSelected`] |
//! | without the finalizer, being deleted | runs nothing | [`FinalizerOutcome::Deleting`] |
//!
//! The cleanup is the same as for a deletion (tear down what the controller made for the
//! object); a cleanup that must tell the two apart reads `metadata.deletionTimestamp`. If the
//! object comes back into scope later, the next reconcile adds the finalizer again.
//!
//! For the controller to reconcile such objects at all, declare the finalizer on it
//! ([`Controller::finalizer`](crate::controller::Controller::finalizer)): events its
//! predicates reject still reconcile an object that is out of scope and carries the
//! finalizer, and an object that a label-selector-restricted informer reports deleted
//! (although it exists) is reconciled from its last known state. The scope test given here
//! must agree with the controller's: the predicate's [`matches`](crate::predicate::Predicate::matches),
//! or the watch's selector matched against the labels.
//!
//! Removing the finalizer from an object that no longer exists (404) counts as removed.
//!
//! `Apply` runs in the reconcile that added the finalizer, once the finalizer is stored: a
//! controller whose predicates pass only spec changes
//! ([`Predicate::generation_changed`](crate::predicate::Predicate::generation_changed)) never
//! sees the finalizer's own change, and would otherwise wait for the next spec change to run
//! `Apply`. Without such predicates, the change brings one more reconcile, which runs `Apply`
//! again (it is idempotent, as every reconcile is). On [`FinalizerOutcome::Deleting`] and
//! [`FinalizerOutcome::NotSelected`] a controller waits for the next change rather than
//! requeueing. [`FinalizerOutcome::unwrap_or_else`] turns the outcome into the controller's
//! own result type (`T`), whatever it is.
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
//!     // `Deleting` and `NotSelected`: wait for the change the API server sends next.
//!     Ok(outcome.unwrap_or_else(|| None))
//! }
//!
//! let api: Api<ConfigMap> = Api::namespaced(client, "default");
//! let first = reconcile(&api, Arc::new(api.get("settings").await?)).await?;
//! assert_eq!(first, Some(Duration::from_secs(300))); // the finalizer was added, then Apply ran
//! assert_eq!(api.get("settings").await?.metadata.finalizers, Some(vec!["example.com/cleanup".into()]));
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

/// What [`finalizer`] and [`finalizer_where`] did, beyond running the reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "an outcome tells whether the reconcile ran"]
pub enum FinalizerOutcome<T> {
    /// The reconcile ran (`Apply`, after adding the finalizer if the object lacked it, or
    /// `Cleanup` followed by removing the finalizer) and returned this value.
    Reconciled(T),
    /// The object is being deleted and no longer carries this finalizer (it was removed
    /// earlier, or never added); nothing ran.
    Deleting,
    /// The controller does not select the object ([`finalizer_where`]) and it does not
    /// carry the finalizer (any more); nothing ran.
    NotSelected,
}

impl<T> FinalizerOutcome<T> {
    /// The value the reconcile returned, if it ran.
    pub fn reconciled(self) -> Option<T> {
        match self {
            Self::Reconciled(value) => Some(value),
            Self::Deleting | Self::NotSelected => None,
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
/// cases. The same as [`finalizer_where`] with every object in scope.
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
    finalizer_where(api, finalizer_name, object, |_| true, reconcile).await
}

/// [`finalizer`] for a controller that reconciles only some objects: `selects` says whether
/// `object` is one of them. An object out of scope that carries the finalizer is cleaned up
/// ([`FinalizerEvent::Cleanup`]) and its finalizer removed, as if it were being deleted; one
/// without it is left alone ([`FinalizerOutcome::NotSelected`]). See
/// [Leaving the scope](self#leaving-the-scope).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::{convert::Infallible, sync::Arc};
///
/// use informer_runtime::{finalizer::{self, FinalizerEvent, FinalizerOutcome}, predicate::Predicate};
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::Api;
/// # let server = informer_testserver::TestServer::start().await?;
/// # let client = server.client()?;
/// # let mut cm = ConfigMap::default();
/// # cm.metadata.name = Some("settings".into());
/// # cm.metadata.namespace = Some("default".into());
/// # cm.metadata.finalizers = Some(vec!["example.com/copies".into()]);
/// # server.create_typed(&cm)?;
///
/// let replicated = Predicate::<ConfigMap>::labels("replicate=true")?;
/// let api: Api<ConfigMap> = Api::namespaced(client, "default");
/// let cm = Arc::new(api.get("settings").await?); // no `replicate` label, but the finalizer
/// let outcome = finalizer::finalizer_where(&api, "example.com/copies", cm, |cm| replicated.matches(cm), |event| async move {
///     match event {
///         FinalizerEvent::Apply(_) => Ok::<_, Infallible>("copied"),
///         FinalizerEvent::Cleanup(_) => Ok("copies deleted"),
///     }
/// })
/// .await?;
/// assert_eq!(outcome, FinalizerOutcome::Reconciled("copies deleted"));
/// assert!(api.get("settings").await?.metadata.finalizers.unwrap_or_default().is_empty());
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// As [`finalizer`].
pub async fn finalizer_where<K, T, E, F, Fut>(
    api: &Api<K>,
    finalizer_name: &str,
    object: Arc<K>,
    selects: impl FnOnce(&K) -> bool,
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
    let leaving = !deleting && !selects(&object);
    match (position, deleting || leaving) {
        (Some(_), false) => reconcile(FinalizerEvent::Apply(object))
            .await
            .map(FinalizerOutcome::Reconciled)
            .map_err(Error::ApplyFailed),
        (Some(index), true) => {
            let value = reconcile(FinalizerEvent::Cleanup(object))
                .await
                .map_err(Error::CleanupFailed)?;
            let patch = removal(finalizer_name, index);
            match api
                .patch::<()>(&name, &PatchParams::default(), &Patch::Json(patch))
                .await
            {
                Ok(_) => Ok(FinalizerOutcome::Reconciled(value)),
                // Gone, and its finalizer with it.
                Err(kube::Error::Api(status)) if status.code == 404 => {
                    Ok(FinalizerOutcome::Reconciled(value))
                }
                Err(error) => Err(Error::RemoveFinalizer(error)),
            }
        }
        (None, false) => {
            let patch = addition(object.meta().finalizers.as_deref(), finalizer_name);
            let added = api
                .patch::<()>(&name, &PatchParams::default(), &Patch::Json(patch))
                .await
                .map_err(Error::AddFinalizer)?;
            // Apply at once: predicates that pass spec changes only would filter out the
            // finalizer's own change, and Apply would wait for the next spec change.
            reconcile(FinalizerEvent::Apply(Arc::new(added)))
                .await
                .map(FinalizerOutcome::Reconciled)
                .map_err(Error::ApplyFailed)
        }
        (None, true) if leaving => Ok(FinalizerOutcome::NotSelected),
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
