//! The workers: take a key, reconcile the object the cache holds for it, and requeue it as
//! the reconcile (or the error policy) asks. Panics are caught here.

use std::{fmt, future::Future, panic::AssertUnwindSafe, sync::Arc, time::Instant};

use futures::FutureExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{
    Action, ReconcileScope,
    own_writes::OwnWrites,
    relation::ControllerQueue,
    stats::{Counters, ReconcileOutcome},
};
use crate::{
    key::ObjectKey,
    scope::ScopedLister,
    user_panic::{catch, panic_message},
};

/// How soon a worker looks again at a leadership that was not current.
const NOT_CURRENT_RETRY: std::time::Duration = std::time::Duration::from_millis(10);

/// What every worker of one controller shares.
pub(crate) struct Worker<K, Ctx, R, P> {
    pub(crate) controller: String,
    /// The cache of the controller's objects (of its scope).
    pub(crate) cache: ScopedLister<K>,
    pub(crate) queue: ControllerQueue,
    pub(crate) counters: Arc<Counters>,
    pub(crate) reconcile: Arc<R>,
    pub(crate) error_policy: Arc<P>,
    pub(crate) context: Arc<Ctx>,
    /// The run the reconciles belong to; no reconcile starts once it may no longer act.
    pub(crate) scope: ReconcileScope,
    /// Holds a key back until the caches have seen its last reconcile's writes; `None` when
    /// the controller does not wait for its own writes.
    pub(crate) own_writes: Option<Arc<OwnWrites>>,
}

/// Calls `done` for a key when dropped: after its reconcile, whatever happened in it.
struct Done<'a> {
    queue: &'a ControllerQueue,
    key: &'a ObjectKey,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.queue.done(self.key);
    }
}

/// Counts a reconcile as running while it lives, also when a shutdown cancels it.
struct Active<'a>(&'a Counters);

impl<'a> Active<'a> {
    fn start(counters: &'a Counters) -> Self {
        counters.active(true);
        Self(counters)
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.0.active(false);
    }
}

impl<K, Ctx, R, P, Fut, E> Worker<K, Ctx, R, P>
where
    K: kube::Resource + Send + Sync + 'static,
    Ctx: Send + Sync + 'static,
    R: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: fmt::Display + Send + 'static,
    P: Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
{
    /// Processes keys until the queue shuts down, `stop` fires or the scope's leadership ends.
    /// A reconcile that started runs to its end (its scope's token tells it to hurry): `stop`
    /// only keeps the next one from starting.
    pub(crate) async fn run(self: Arc<Self>, stop: CancellationToken) {
        loop {
            let key = tokio::select! {
                biased;
                () = stop.cancelled() => return,
                key = self.queue.get() => key,
            };
            let Some(key) = key else { return };
            let _done = Done {
                queue: &self.queue,
                key: &key,
            };
            if stop.is_cancelled() {
                return;
            }
            if !self.scope.may_act() {
                // The renew deadline passed and the elector has not ended the term yet (or
                // renews late): start nothing, keep the key, and look again shortly.
                tracing::debug!(controller = %self.controller, object = %key, "not reconciled yet: the leadership is not current");
                self.queue.add(key.clone());
                drop(_done);
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(NOT_CURRENT_RETRY) => continue,
                }
            }
            if let Some(own_writes) = &self.own_writes
                && !own_writes.admit(&key)
            {
                // The guard puts the key back once the caches have caught up (or it gave up).
                continue;
            }
            self.process(&key).await;
        }
    }

    /// Reconciles the object of `key`, if the cache still holds it, and requeues the key.
    async fn process(&self, key: &ObjectKey) {
        let Some(object) = self.cache.cached(key) else {
            // Deleted: nothing to reconcile. Cleanup belongs in a finalizer, which keeps the
            // object (with a deletion timestamp) until the reconcile removes it.
            self.counters
                .skipped_missing
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::debug!(controller = %self.controller, object = %key, "not reconciled: the object is no longer in the cache");
            self.queue.forget(key);
            return;
        };
        let active = Active::start(&self.counters);
        let started = Instant::now();
        let (outcome, action) = self.reconcile(key, object).await;
        drop(active);
        self.counters.reconciled(outcome, started.elapsed());
        self.requeue(key, action);
    }

    /// Runs the reconcile (and the error policy on an error) in its scope, catching panics;
    /// with the guard of the controller's own writes, in a scope of its own whose writes the
    /// guard records.
    async fn reconcile(&self, key: &ObjectKey, object: Arc<K>) -> (ReconcileOutcome, Action) {
        let Some(own_writes) = &self.own_writes else {
            return self
                .scope
                .clone()
                .enter(self.reconcile_in_scope(key, object))
                .await;
        };
        let (scope, writes) = self.scope.for_reconcile(key.clone());
        let result = scope.enter(self.reconcile_in_scope(key, object)).await;
        own_writes.record(key, writes.take());
        result
    }

    async fn reconcile_in_scope(&self, key: &ObjectKey, object: Arc<K>) -> (ReconcileOutcome, Action) {
        let span = tracing::info_span!("reconcile", controller = %self.controller, object = %key);
        let called = catch(|| (self.reconcile)(Arc::clone(&object), Arc::clone(&self.context)));
        let result = match called {
            Ok(future) => AssertUnwindSafe(future.instrument(span))
                .catch_unwind()
                .await
                .map_err(|payload| panic_message(payload.as_ref())),
            Err(message) => Err(message),
        };
        match result {
            Ok(Ok(action)) => (ReconcileOutcome::Success, action),
            Ok(Err(error)) => {
                tracing::warn!(controller = %self.controller, object = %key, %error, "failed to reconcile; the error policy decides when to retry");
                let policy = catch(|| (self.error_policy)(object, &error, Arc::clone(&self.context)));
                match policy {
                    Ok(action) => (ReconcileOutcome::Error, action),
                    Err(message) => {
                        self.report_panic(key, "error policy", &message);
                        (ReconcileOutcome::Panic, Action::requeue_with_backoff())
                    }
                }
            }
            Err(message) => {
                self.report_panic(key, "reconcile", &message);
                (ReconcileOutcome::Panic, Action::requeue_with_backoff())
            }
        }
    }

    fn report_panic(&self, key: &ObjectKey, function: &str, message: &str) {
        tracing::error!(
            controller = %self.controller,
            object = %key,
            function,
            panic = message,
            "user code panicked; the key is retried with backoff and the worker goes on"
        );
    }

    /// Puts `key` back as `action` asks.
    fn requeue(&self, key: &ObjectKey, action: Action) {
        if action.is_backoff() {
            self.queue.add_rate_limited(key.clone());
            return;
        }
        self.queue.forget(key);
        if let Some(delay) = action.requeue_after() {
            self.queue.add_after(key.clone(), delay);
        }
    }
}
