//! Ours: `informer_runtime::controller::Controller<Pod>` on a factory's shared informer.
//!
//! The sync phase ends when the pod informer has synced (`SharedIndexInformer::wait_for_sync`);
//! the controller starts its workers once its own handler has seen the initial list, which
//! the reconcile phase includes.

use std::{convert::Infallible, sync::Arc};

use informer_runtime::{
    SharedInformerFactory,
    controller::{Action, Controller},
};
use k8s_openapi::api::core::v1::Pod;
use tokio_util::sync::CancellationToken;

use super::{Measured, PHASE_TIMEOUT, STOP_TIMEOUT, Tally};
use crate::cpu::Mark;

/// Syncs every pod and reconciles each once with `concurrency` workers, on the priority queue
/// or (`priority_queue` false) the FIFO one.
pub(crate) async fn run(
    client: kube::Client,
    objects: usize,
    concurrency: usize,
    priority_queue: bool,
) -> Measured {
    let tally = Tally::new(objects);
    let start = Mark::now(None);
    let factory = SharedInformerFactory::new(client);
    let informer = factory.unscoped_informer::<Pod>();
    let shutdown = CancellationToken::new();
    let controller = Controller::<Pod>::new(&factory)
        .concurrency(concurrency)
        .priorities(priority_queue)
        .graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let stats = controller.stats();
    let running = tokio::spawn(controller.run(reconcile, error_policy, Arc::clone(&tally)));
    let synced = tokio::time::timeout(PHASE_TIMEOUT, informer.wait_for_sync())
        .await
        .unwrap_or(false)
        .then(|| Mark::now(None));
    let complete = synced.is_some() && tally.wait_complete(PHASE_TIMEOUT).await;
    let done = Mark::now(None);
    shutdown.cancel();
    let stopped = tokio::time::timeout(STOP_TIMEOUT, running).await;
    factory.shutdown().await;
    let mut measured = Measured::new(&tally, start, synced, complete.then_some(done));
    if stats.reconciles() != tally.reconciles() {
        measured.note(format!(
            "the controller counted {} reconciles, the reconcile function {}",
            stats.reconciles(),
            tally.reconciles()
        ));
    }
    match stopped {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(err))) => measured.note(format!("the controller failed: {err}")),
        Ok(Err(err)) => measured.note(format!("the controller's task failed: {err}")),
        Err(_) => measured.note(format!("the controller did not stop within {STOP_TIMEOUT:?}")),
    }
    measured
}

/// The no-op reconcile: counts the pod and waits for a change.
async fn reconcile(pod: Arc<Pod>, tally: Arc<Tally>) -> Result<Action, Infallible> {
    tally.reconciled(&pod);
    Ok(Action::await_change())
}

/// Never called: the reconcile cannot fail.
fn error_policy(_: Arc<Pod>, never: &Infallible, _: Arc<Tally>) -> Action {
    match *never {}
}
