//! The workers: take a key, reconcile the object the cache holds for it, and requeue it as
//! the reconcile (or the error policy) asks. Panics are caught here.

use super::functions::{ErrorPolicyFn, ReconcileFn};
use std::{
    panic::AssertUnwindSafe,
    sync::{Arc, atomic::Ordering},
    time::Instant,
};

use futures::FutureExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{
    Action, RunContext,
    gate::{Gated, Verdict},
    out_of_scope::OutOfScope,
    own_writes::OwnWrites,
    queue::ControllerQueue,
    stats::{Counters, ReconcileOutcome},
};
use crate::{
    factory::TypedResource,
    key::ObjectKey,
    scope::ScopedLister,
    user_panic::{catch, panic_message},
    workqueue::{AddOptions, Priority},
};

/// How soon a worker looks again at a leadership that was not current.
const NOT_CURRENT_RETRY: std::time::Duration = std::time::Duration::from_millis(10);

/// What every worker of one controller shares.
pub(crate) struct Worker<K, Ctx, R, P> {
    pub(crate) controller: String,
    /// The cache of the controller's objects (of its scope).
    pub(crate) cache: ScopedLister<K>,
    /// Objects out of the cache that still carry the controller's finalizer.
    pub(crate) out_of_scope: Option<Arc<OutOfScope>>,
    /// Reads the current state of such objects.
    pub(crate) client: kube::Client,
    pub(crate) queue: ControllerQueue,
    pub(crate) counters: Arc<Counters>,
    pub(crate) reconcile: Arc<R>,
    pub(crate) error_policy: Arc<P>,
    pub(crate) context: Arc<Ctx>,
    /// The run the reconciles belong to; no reconcile starts once it may no longer act.
    pub(crate) scope: RunContext,
    /// Holds a key back until the caches have seen its last reconcile's writes; `None` when
    /// the controller does not wait for its own writes.
    pub(crate) own_writes: Option<Arc<OwnWrites>>,
    /// The shard a sharded controller runs in.
    pub(crate) gate: Option<Arc<Gated>>,
}

/// What a worker found for a key.
enum Found<K> {
    /// The object to reconcile.
    Object(Arc<K>),
    /// No object to reconcile.
    Missing,
    /// An object that left the cache could not be read (retried with backoff).
    Unreadable,
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

impl<K, Ctx, R, P> Worker<K, Ctx, R, P>
where
    K: TypedResource,
    Ctx: Send + Sync + 'static,
    R: ReconcileFn<K, Ctx>,
    P: ErrorPolicyFn<K, Ctx, R::Error>,
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
            let Some((key, priority)) = key else { return };
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
                self.queue
                    .add_with_options(key.clone(), AddOptions::default().priority(priority));
                drop(_done);
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(NOT_CURRENT_RETRY) => continue,
                }
            }
            if let Some(own_writes) = &self.own_writes
                && !own_writes.admit(&key, priority)
            {
                // The guard puts the key back once the caches have caught up (or it gave up).
                continue;
            }
            let _working = self.gate.as_ref().map(|gate| gate.working_on(&key));
            self.process(&key, priority).await;
        }
    }

    /// Reconciles the object of `key`, if the cache still holds it (or it left the cache with
    /// the controller's finalizer), and requeues the key at `priority`.
    async fn process(&self, key: &ObjectKey, priority: Priority) {
        let object = match self.find(key).await {
            Found::Object(object) => object,
            Found::Missing => {
                // Deleted: nothing to reconcile. Cleanup belongs in a finalizer, which keeps
                // the object (with a deletion timestamp) until the reconcile removes it.
                self.counters.skipped_missing.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(controller = %self.controller, object = %key, "not reconciled: the object is no longer in the cache");
                self.queue.forget(key);
                return;
            }
            Found::Unreadable => {
                self.queue.add_with_options(
                    key.clone(),
                    AddOptions::default().rate_limited(true).priority(priority),
                );
                return;
            }
        };
        if !self.assigned_here(key, object.as_ref(), priority).await {
            return;
        }
        let active = Active::start(&self.counters);
        let started = Instant::now();
        let (outcome, action) = self.reconcile(key, object).await;
        drop(active);
        self.counters.reconciled(outcome, started.elapsed());
        if outcome == ReconcileOutcome::Success
            && let Some(out_of_scope) = &self.out_of_scope
        {
            out_of_scope.forget(key);
        }
        self.requeue(key, action, priority);
    }

    /// Whether a sharded controller reconciles `object`: it is assigned to this shard. A
    /// drained object is handed over instead, an object of another shard left alone.
    async fn assigned_here(&self, key: &ObjectKey, object: &K, priority: Priority) -> bool {
        let Some(gate) = &self.gate else {
            return true;
        };
        match gate.judge(&self.client, object).await {
            Verdict::Reconcile => return true,
            Verdict::Later(delay) => {
                tracing::debug!(controller = %self.controller, object = %key, ?delay, "not reconciled yet: its shard cannot tell yet whether it is still its own");
                self.queue
                    .add_with_options(key.clone(), AddOptions::default().after(delay).priority(priority));
                return false;
            }
            Verdict::NotAssigned => {
                self.counters.not_assigned.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(controller = %self.controller, object = %key, "not reconciled: assigned to another shard");
            }
            Verdict::HandedOver(Ok(())) => {
                self.counters.drains_acknowledged.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(controller = %self.controller, object = %key, "drained: handed over to the sharder");
            }
            Verdict::HandedOver(Err(kube::Error::Api(status)))
                if status.code == 409 || status.code == 404 =>
            {
                // changed or gone since it was cached: its next event decides again
                tracing::debug!(controller = %self.controller, object = %key, code = status.code, "drain not acknowledged: the object changed since it was read");
            }
            Verdict::HandedOver(Err(error)) => {
                tracing::warn!(controller = %self.controller, object = %key, %error, "failed to acknowledge a drain; retrying with backoff");
                self.queue.add_with_options(
                    key.clone(),
                    AddOptions::default().rate_limited(true).priority(priority),
                );
                return false;
            }
        }
        self.queue.forget(key);
        if let Some(out_of_scope) = &self.out_of_scope {
            out_of_scope.forget(key);
        }
        false
    }

    /// The cached object of `key`; for an object that left the cache with the controller's
    /// finalizer, its current state from the API server.
    async fn find(&self, key: &ObjectKey) -> Found<K> {
        if let Some(object) = self.cache.cached(key) {
            return Found::Object(object);
        }
        let Some(out_of_scope) = self.out_of_scope.as_ref().filter(|tracked| tracked.contains(key)) else {
            return Found::Missing;
        };
        match out_of_scope.fetch::<K>(self.client.clone(), key).await {
            Ok(Some(object)) if out_of_scope.carries_finalizer(object.as_ref()) => Found::Object(object),
            Ok(_) => {
                out_of_scope.forget(key);
                Found::Missing
            }
            Err(error) => {
                tracing::warn!(controller = %self.controller, object = %key, %error, "failed to read an object that left the cache with the controller's finalizer; retrying with backoff");
                Found::Unreadable
            }
        }
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
        let called = catch(|| {
            self.reconcile
                .reconcile(Arc::clone(&object), Arc::clone(&self.context))
        });
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
                let policy = catch(|| {
                    self.error_policy
                        .decide(object, &error, Arc::clone(&self.context))
                });
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

    /// Puts `key` back as `action` asks, at the priority it was taken at (as
    /// controller-runtime does: a retry of an object of the initial list stays behind live
    /// changes).
    fn requeue(&self, key: &ObjectKey, action: Action, priority: Priority) {
        if action.is_backoff() {
            self.queue.add_with_options(
                key.clone(),
                AddOptions::default().rate_limited(true).priority(priority),
            );
            return;
        }
        self.queue.forget(key);
        if let Some(delay) = action.requeue_after() {
            self.queue
                .add_with_options(key.clone(), AddOptions::default().after(delay).priority(priority));
        }
    }
}
