//! [`ShutdownGuard`]: shuts a factory down when dropped, for code that may be dropped before it
//! shuts its factory down itself (an aborted task, a future a `select!` let go of).

use super::SharedInformerFactory;

/// Shuts a [`SharedInformerFactory`] down when dropped, unless it was shut down already (see
/// [`SharedInformerFactory::shutdown_guard`]).
#[must_use = "the factory is shut down when the guard is dropped"]
pub struct ShutdownGuard {
    factory: SharedInformerFactory,
}

impl std::fmt::Debug for ShutdownGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShutdownGuard")
            .field("factory", &self.factory)
            .finish()
    }
}

impl ShutdownGuard {
    pub(super) fn new(factory: SharedInformerFactory) -> Self {
        Self { factory }
    }
}

impl Drop for ShutdownGuard {
    fn drop(&mut self) {
        self.factory.shutdown_in_background();
    }
}

#[cfg(test)]
mod tests {
    use std::{sync::Arc, time::Duration};

    use k8s_openapi::api::core::v1::Pod;

    use super::*;
    use crate::{
        informer::{self, SharedIndexInformer},
        testing::FakeControllerSource,
    };

    /// A factory (whose client is never used) with a started informer of a fake source.
    fn started() -> (SharedInformerFactory, SharedIndexInformer<Pod>) {
        let url = "http://127.0.0.1:9".parse().expect("url");
        let client = kube::Client::try_from(kube::Config::new(url)).expect("client");
        let factory = SharedInformerFactory::new(client);
        let informer = factory
            .informer_for(|_| {
                SharedIndexInformer::from_arc(
                    Arc::new(FakeControllerSource::<Pod>::new()),
                    informer::Config::default(),
                )
            })
            .expect("the first pod informer");
        factory.start();
        (factory, informer)
    }

    /// Waits (on the wall clock, with no runtime needed) until `informer` stopped.
    fn stops(informer: &SharedIndexInformer<Pod>) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !informer.is_stopped() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        informer.is_stopped()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_aborted_task_that_held_the_guard_stops_the_informers() {
        let (informer_tx, informer_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let (factory, informer) = started();
            let _shutdown = factory.shutdown_guard();
            assert!(informer.wait_for_sync().await);
            let _ = informer_tx.send(informer);
            std::future::pending::<()>().await;
        });
        let informer = informer_rx.await.expect("the task started its informer");
        assert!(!informer.is_stopped());
        task.abort();
        assert!(task.await.is_err_and(|error| error.is_cancelled()));
        let stopped = tokio::task::spawn_blocking(move || stops(&informer))
            .await
            .expect("waited");
        assert!(stopped, "the informer stopped with the task that held the guard");
    }

    #[test]
    fn a_guard_dropped_outside_any_runtime_stops_the_informers() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let (guard, informer) = runtime.block_on(async {
            let (factory, informer) = started();
            assert!(informer.wait_for_sync().await);
            (factory.shutdown_guard(), informer)
        });
        assert!(!informer.is_stopped());
        // the runtime that started the informers runs on: only the guard stops them
        drop(guard);
        assert!(
            stops(&informer),
            "the informer stopped once the guard was dropped"
        );
        drop(runtime);
    }
}
