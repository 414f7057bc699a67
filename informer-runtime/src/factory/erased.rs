//! [`ErasedInformer`]: an informer as the factory starts, waits for and reports it, whatever
//! its type; and the task that runs one.

use std::sync::Arc;

use futures::{FutureExt, future::BoxFuture};
use kube::Resource;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::{
    informer::{InformerStats, SharedIndexInformer},
    lister::GenericLister,
};

/// The parts of an informer a factory needs without knowing its type.
pub(super) trait ErasedInformer: Send + Sync {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()>;
    fn wait_for_sync(&self) -> BoxFuture<'static, bool>;
    fn has_synced(&self) -> bool;
    fn is_stopped(&self) -> bool;
    fn failure(&self) -> Option<String>;
    fn last_error(&self) -> Option<String>;
    fn description(&self) -> String;
    fn generic_lister(&self) -> GenericLister;
    fn stats(&self) -> InformerStats;
}

impl<K: Resource + Clone + Serialize + Send + Sync + 'static> ErasedInformer for SharedIndexInformer<K> {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()> {
        let informer = self.clone();
        async move { informer.run(cancel).await }.boxed()
    }

    fn wait_for_sync(&self) -> BoxFuture<'static, bool> {
        let informer = self.clone();
        async move { informer.wait_for_sync().await }.boxed()
    }

    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }

    fn is_stopped(&self) -> bool {
        SharedIndexInformer::is_stopped(self)
    }

    fn failure(&self) -> Option<String> {
        SharedIndexInformer::failure(self)
    }

    fn last_error(&self) -> Option<String> {
        SharedIndexInformer::last_error(self)
    }

    fn description(&self) -> String {
        SharedIndexInformer::description(self).to_owned()
    }

    fn generic_lister(&self) -> GenericLister {
        GenericLister::new(self.store())
    }

    fn stats(&self) -> InformerStats {
        SharedIndexInformer::stats(self)
    }
}

/// The task of one informer: its run, and an error if it ends while the factory still runs
/// (its cache is then no longer kept up to date; the stats and sync reports say so too).
pub(super) fn watch_informer_task(
    informer: &Arc<dyn ErasedInformer>,
    cancel: &CancellationToken,
) -> BoxFuture<'static, ()> {
    let run = informer.run(cancel.child_token());
    let (informer, cancel) = (Arc::clone(informer), cancel.clone());
    async move {
        run.await;
        // An informer already run by its owner returns at once here without stopping.
        if !cancel.is_cancelled() && informer.is_stopped() {
            tracing::error!(
                informer = %informer.description(),
                failure = informer.failure().as_deref().unwrap_or("none recorded"),
                "an informer stopped while its factory runs; its cache is no longer kept up to date"
            );
        }
    }
    .boxed()
}
