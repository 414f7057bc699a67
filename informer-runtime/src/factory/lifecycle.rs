//! Starting, waiting for, reporting and stopping a factory's informers.

use std::{
    future::Future,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use super::{
    Entry, InformerRuntime, InformerSync, SharedInformerFactory, ShutdownGuard, SyncReport,
    erased::{ErasedInformer, watch_informer_task},
};

use super::thread::InformerThread;
use crate::informer::InformerStats;

impl SharedInformerFactory {
    /// Starts every informer not started yet, each in a task of its own on the factory's
    /// thread (started by the first call; see [`SharedInformerFactory`]); returns at once.
    /// Informers requested after the first call start as they are requested (client-go's
    /// factory waits for another `Start`; controller-runtime's cache starts them, as here).
    /// Does nothing after `shutdown`. Must be called within a tokio runtime with
    /// [`InformerRuntime::Caller`], or if the thread cannot be started (the informers then run on
    /// the caller's runtime).
    pub fn start(&self) {
        let mut state = self.lock();
        if state.shutting_down {
            return;
        }
        state.start_requested = true;
        for entry in state.informers.values_mut().filter(|e| !e.started) {
            self.start_entry(entry);
        }
    }

    /// Starts the informer of `entry`; called with the state locked. Without the factory's
    /// thread and outside a tokio runtime it cannot: the informer waits for the next `start`.
    pub(super) fn start_entry(&self, entry: &mut Entry) {
        let run = watch_informer_task(&entry.erased, &self.inner.cancel);
        match self.informers_thread() {
            Some(thread) => drop(self.inner.tasks.spawn_on(run, thread.handle())),
            None => match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(self.inner.tasks.spawn_on(run, &runtime)),
                Err(_) => {
                    tracing::warn!(
                        informer = entry.type_name,
                        "an informer requested outside a tokio runtime, on a factory that runs its informers on the caller's runtime, cannot start; call start() again from within the runtime"
                    );
                    return;
                }
            },
        }
        entry.started = true;
    }

    /// The thread the informers run on, started on first use; `None` to run them on the
    /// caller's runtime (asked for, or the thread could not be started). Called with the state
    /// locked, so only one thread is ever started.
    pub(super) fn informers_thread(&self) -> Option<&InformerThread> {
        if self.inner.options.runtime == InformerRuntime::Caller {
            return None;
        }
        if let Some(thread) = self.inner.thread.get() {
            return Some(thread);
        }
        let caller = tokio::runtime::Handle::try_current().ok();
        match InformerThread::start_beside(caller.as_ref()) {
            Ok(thread) => Some(self.inner.thread.get_or_init(|| thread)),
            Err(err) => {
                tracing::warn!(error = %err, "failed to start the informers' thread; the informers run on the caller's runtime");
                None
            }
        }
    }

    pub(super) fn started(&self) -> Vec<(&'static str, Arc<dyn ErasedInformer>)> {
        let state = self.lock();
        state
            .order
            .iter()
            .filter_map(|t| state.informers.get(t))
            .filter(|e| e.started)
            .map(|e| (e.type_name, Arc::clone(&e.erased)))
            .collect()
    }

    /// A snapshot of every informer's activity, in creation order (for metrics and debugging).
    pub fn stats(&self) -> Vec<InformerStats> {
        let state = self.lock();
        state
            .order
            .iter()
            .filter_map(|t| state.informers.get(t))
            .map(|e| e.erased.stats())
            .collect()
    }

    /// Waits until every started informer synced or stopped, or the factory shuts down.
    pub async fn wait_for_cache_sync(&self) -> SyncReport {
        self.wait_for_cache_sync_until(std::future::pending()).await
    }

    /// Waits until every started informer synced, at most `timeout`.
    pub async fn wait_for_cache_sync_timeout(&self, timeout: Duration) -> SyncReport {
        self.wait_for_cache_sync_until(tokio::time::sleep(timeout)).await
    }

    /// Waits until every started informer synced or stopped, `until` completes, or the
    /// factory shuts down; reports each informer's state. Informers requested but never
    /// started are not waited for.
    pub async fn wait_for_cache_sync_until(&self, until: impl Future<Output = ()>) -> SyncReport {
        let informers = self.started();
        let all_synced = futures::future::join_all(informers.iter().map(|(_, i)| i.wait_for_sync()));
        tokio::select! {
            _ = all_synced => {}
            () = until => {}
            () = self.inner.cancel.cancelled() => {}
        }
        SyncReport {
            informers: informers
                .iter()
                .map(|(type_name, i)| InformerSync {
                    type_name,
                    description: i.description(),
                    synced: i.has_synced(),
                    stopped: i.is_stopped(),
                    failure: i.failure(),
                    last_error: i.last_error(),
                })
                .collect(),
        }
    }

    /// Stops every informer and waits until all their tasks and handler threads finished.
    /// Later `start` calls do nothing. Safe to call more than once, also concurrently.
    pub async fn shutdown(&self) {
        self.lock().shutting_down = true;
        self.inner.cancel.cancel();
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
        if let Some(thread) = self.inner.thread.get() {
            thread.stop().await;
        }
        self.inner.shut_down.store(true, Ordering::Release);
    }

    /// A guard that [shuts the factory down](Self::shutdown) when dropped, unless it was shut
    /// down already: for code that starts a factory and may be dropped before it shuts the
    /// factory down itself, such as a task that can be aborted. Without one, the informers run
    /// on until `shutdown` or until the runtime that started them shuts down, as tasks would
    /// (see [where the informers run](Self#where-the-informers-run)). Dropping the guard stops
    /// the informers at once (later [`start`](Self::start) calls do nothing) and finishes the
    /// shutdown in a task on the current runtime; outside a runtime, it stops the informers'
    /// thread.
    ///
    /// ```no_run
    /// # async fn example(client: kube::Client) {
    /// use informer_runtime::SharedInformerFactory;
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// let task = tokio::spawn(async move {
    ///     let factory = SharedInformerFactory::new(client);
    ///     let _shutdown = factory.shutdown_guard();
    ///     let pods = factory.unscoped_informer::<Pod>();
    ///     factory.start();
    ///     factory.wait_for_cache_sync().await;
    ///     // ... uses `pods` until the task is aborted
    ///     # let _ = pods;
    ///     std::future::pending::<()>().await;
    /// });
    /// task.abort(); // the informer of pods stops with it
    /// # }
    /// ```
    pub fn shutdown_guard(&self) -> ShutdownGuard {
        let factory = self.clone();
        ShutdownGuard::new(move || factory.shutdown_in_background())
    }

    /// Stops every informer at once, and finishes [`shutdown`](Self::shutdown) in a task of
    /// the current runtime (outside a runtime: stops the informers' thread); does nothing once
    /// `shutdown` has finished.
    pub(super) fn shutdown_in_background(&self) {
        if self.inner.shut_down.load(Ordering::Acquire) {
            return;
        }
        self.lock().shutting_down = true;
        self.inner.cancel.cancel();
        self.inner.tasks.close();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let factory = self.clone();
                drop(runtime.spawn(async move { factory.shutdown().await }));
            }
            Err(_) => {
                if let Some(thread) = self.inner.thread.get() {
                    thread.stop_now();
                }
            }
        }
    }
}
