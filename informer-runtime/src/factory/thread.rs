//! A thread of its own for a factory's informers: a current-thread runtime on which the
//! informers (and, for `SharedInformerFactory::builder_on_own_thread`, the client they use)
//! run.
//!
//! An informer hands every event between its HTTP connection, its decoding, its cache and its
//! handlers. On a multi-thread runtime each hand-off may wake another worker thread, and the
//! objects decoded on one thread are freed on another; on a thread of their own the informers
//! hand events over without waking anything, and free replaced objects where they were
//! decoded. Measured with `informer-bench` (2 cores, 3 handlers): half the CPU per event of the
//! same informers on the caller's multi-thread runtime.

use std::sync::{Mutex, PoisonError};

use tokio::{runtime::Handle, sync::oneshot};
use tokio_util::sync::CancellationToken;

/// What ends the thread besides [`InformerThread::stop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifetime {
    /// Dropping the handle stops the thread (its runtime holds a client made for it).
    Handle,
    /// The thread outlives its handle, as tasks on the caller's runtime would: it stops when
    /// that runtime shuts down, or on [`InformerThread::stop`].
    CallerRuntime,
}

/// The thread and its runtime; stopped by [`InformerThread::stop`], and on drop or with the
/// caller's runtime depending on how it was started.
#[derive(Debug)]
pub(crate) struct InformerThread {
    handle: Handle,
    stop: CancellationToken,
    exited: Mutex<Option<oneshot::Receiver<()>>>,
    lifetime: Lifetime,
}

impl InformerThread {
    /// Starts the thread and its runtime; dropping the returned handle stops them.
    pub(crate) fn start() -> std::io::Result<Self> {
        Self::spawn(Lifetime::Handle)
    }

    /// Starts the thread and its runtime for informers started from `caller` (the runtime
    /// `start` was called on, if any): the thread runs until [`stop`](Self::stop) or until
    /// `caller` shuts down, whether or not the handle is kept, as the informers' tasks would
    /// on `caller` itself.
    pub(crate) fn start_beside(caller: Option<&Handle>) -> std::io::Result<Self> {
        let thread = Self::spawn(Lifetime::CallerRuntime)?;
        if let Some(caller) = caller {
            let stop = thread.stop.clone();
            // dropped when `caller` shuts down, which stops the thread
            drop(caller.spawn(async move {
                let _stop_with_caller = stop.clone().drop_guard();
                stop.cancelled().await;
            }));
        }
        Ok(thread)
    }

    fn spawn(lifetime: Lifetime) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let stop = CancellationToken::new();
        let (exit, exited) = oneshot::channel();
        let stopped = stop.clone();
        std::thread::Builder::new()
            .name("informers".into())
            .spawn(move || {
                runtime.block_on(stopped.cancelled());
                // every task still on the runtime (informers, a client's connections) is
                // dropped here
                drop(runtime);
                let _ = exit.send(());
            })?;
        Ok(Self {
            handle,
            stop,
            exited: Mutex::new(Some(exited)),
            lifetime,
        })
    }

    /// The runtime's handle: what is spawned on it runs on the thread.
    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Stops the runtime without waiting for the thread: every task still on it is dropped.
    pub(crate) fn stop_now(&self) {
        self.stop.cancel();
    }

    /// Stops the runtime and waits until the thread dropped it.
    pub(crate) async fn stop(&self) {
        self.stop_now();
        let exited = self.exited.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(exited) = exited {
            // An error only means the thread is already gone.
            let _ = exited.await;
        }
    }
}

impl Drop for InformerThread {
    fn drop(&mut self) {
        if self.lifetime == Lifetime::Handle {
            self.stop.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    async fn thread_name(thread: &InformerThread) -> Option<String> {
        thread
            .handle()
            .spawn(async { std::thread::current().name().map(str::to_owned) })
            .await
            .expect("ran")
    }

    #[tokio::test]
    async fn runs_what_is_spawned_on_its_own_thread_and_stops() {
        let thread = InformerThread::start().expect("started");
        assert_eq!(thread_name(&thread).await.as_deref(), Some("informers"));
        thread.stop().await;
        let after = thread.handle().spawn(async {}).await;
        assert!(after.is_err(), "nothing runs once stopped");
    }

    #[tokio::test]
    async fn a_thread_started_with_its_handle_stops_when_the_handle_is_dropped() {
        let thread = InformerThread::start().expect("started");
        let handle = thread.handle().clone();
        drop(thread);
        let ran = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                if handle.spawn(async {}).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        assert!(ran.is_ok(), "the thread's runtime shut down");
    }

    #[test]
    fn a_thread_beside_a_runtime_outlives_its_handle_and_stops_with_that_runtime() {
        let caller = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let thread = InformerThread::start_beside(Some(caller.handle())).expect("started");
        let handle = thread.handle().clone();
        drop(thread);
        let still_runs = caller.block_on(async { handle.spawn(async { 7 }).await });
        assert_eq!(
            still_runs.ok(),
            Some(7),
            "dropping the handle does not stop the thread"
        );

        drop(caller);
        let stopped = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(5), async {
                    loop {
                        if handle.spawn(async {}).await.is_err() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                })
                .await
            });
        assert!(stopped.is_ok(), "the thread stopped with the caller's runtime");
    }
}
