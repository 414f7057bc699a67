//! The reconcile function and the error policy as the runner holds them: one name each for
//! the bounds [`Controller::run`](super::Controller::run) puts on them.

use std::{fmt, future::Future, sync::Arc};

use super::Action;

/// A reconcile function: `Fn(Arc<K>, Arc<Ctx>) -> impl Future<Output = Result<Action, E>>`.
pub(crate) trait ReconcileFn<K, Ctx>: Send + Sync + 'static {
    /// What a failed reconcile returns.
    type Error: fmt::Display + Send + 'static;
    /// The reconcile of one object.
    type Future: Future<Output = Result<Action, Self::Error>> + Send + 'static;

    /// Starts the reconcile of `object`.
    fn reconcile(&self, object: Arc<K>, context: Arc<Ctx>) -> Self::Future;
}

impl<K, Ctx, F, Fut, E> ReconcileFn<K, Ctx> for F
where
    F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: fmt::Display + Send + 'static,
{
    type Error = E;
    type Future = Fut;

    fn reconcile(&self, object: Arc<K>, context: Arc<Ctx>) -> Fut {
        self(object, context)
    }
}

/// An error policy: `Fn(Arc<K>, &E, Arc<Ctx>) -> Action`.
pub(crate) trait ErrorPolicyFn<K, Ctx, E>: Send + Sync + 'static {
    /// What to do after the reconcile of `object` failed with `error`.
    fn decide(&self, object: Arc<K>, error: &E, context: Arc<Ctx>) -> Action;
}

impl<K, Ctx, E, F> ErrorPolicyFn<K, Ctx, E> for F
where
    F: Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
{
    fn decide(&self, object: Arc<K>, error: &E, context: Arc<Ctx>) -> Action {
        self(object, error, context)
    }
}
