//! A thread of its own for a factory's informers: a current-thread runtime on which the
//! informers, and the client they use, run.
//!
//! An informer hands every event between its HTTP connection, its decoding and its cache; on
//! one thread those hand-offs cost no wake-ups, and objects are freed where they were
//! allocated. See `SharedInformerFactory::builder_on_own_thread`.

use std::sync::{Mutex, PoisonError};

use tokio::{runtime::Handle, sync::oneshot};
use tokio_util::sync::CancellationToken;

/// The thread and its runtime; stopped by [`InformerThread::stop`] or on drop.
#[derive(Debug)]
pub(crate) struct InformerThread {
    handle: Handle,
    stop: CancellationToken,
    exited: Mutex<Option<oneshot::Receiver<()>>>,
}

impl InformerThread {
    /// Starts the thread and its runtime.
    pub(crate) fn start() -> std::io::Result<Self> {
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
                // every task still on the runtime (a client's connections) is dropped here
                drop(runtime);
                let _ = exit.send(());
            })?;
        Ok(Self {
            handle,
            stop,
            exited: Mutex::new(Some(exited)),
        })
    }

    /// The runtime's handle: what is spawned on it runs on the thread.
    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Stops the runtime and waits until the thread dropped it.
    pub(crate) async fn stop(&self) {
        self.stop.cancel();
        let exited = self.exited.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(exited) = exited {
            // An error only means the thread is already gone.
            let _ = exited.await;
        }
    }
}

impl Drop for InformerThread {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_what_is_spawned_on_its_own_thread_and_stops() {
        let thread = InformerThread::start().expect("started");
        let name = thread
            .handle()
            .spawn(async { std::thread::current().name().map(str::to_owned) })
            .await
            .expect("ran");
        assert_eq!(name.as_deref(), Some("informers"));
        thread.stop().await;
        let after = thread.handle().spawn(async {}).await;
        assert!(after.is_err(), "nothing runs once stopped");
    }
}
