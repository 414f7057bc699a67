//! kube-rs 5: `kube::runtime::Controller<Pod>` on `Api::<Pod>::all`, default watcher config.
//!
//! The sync phase ends when the controller's store holds the initial list (it is ready then);
//! kube-rs holds reconciles until then too. The controller's stream is
//! driven by one task, as an application does.

use std::{
    convert::Infallible,
    sync::Arc,
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    runtime::{
        Controller,
        controller::{Action, Config},
        reflector::Store,
        watcher,
    },
};
use tokio_util::sync::CancellationToken;

use super::{Measured, PHASE_TIMEOUT, STOP_TIMEOUT, Tally};
use crate::cpu::Mark;

/// How often the store is checked for the initial list.
const POLL: Duration = Duration::from_millis(1);

/// Syncs every pod and reconciles each once with at most `concurrency` reconciles at once.
pub(crate) async fn run(client: kube::Client, objects: usize, concurrency: u16) -> Measured {
    let tally = Tally::new(objects);
    let start = Mark::now(None);
    let shutdown = CancellationToken::new();
    let controller = Controller::new(Api::<Pod>::all(client), watcher::Config::default())
        .with_config(Config::default().concurrency(concurrency))
        .graceful_shutdown_on(shutdown.clone().cancelled_owned());
    let store = controller.store();
    let running = tokio::spawn(
        controller
            .run(reconcile, error_policy, Arc::clone(&tally))
            .for_each(|_| std::future::ready(())),
    );
    let synced = wait_for_list(&store, objects).await.then(|| Mark::now(None));
    let complete = synced.is_some() && tally.wait_complete(PHASE_TIMEOUT).await;
    let done = Mark::now(None);
    shutdown.cancel();
    let stopped = tokio::time::timeout(STOP_TIMEOUT, running).await;
    let mut measured = Measured::new(&tally, start, synced, complete.then_some(done));
    match stopped {
        Ok(Ok(())) => {}
        Ok(Err(err)) => measured.note(format!("the controller's task failed: {err}")),
        Err(_) => measured.note(format!("the controller did not stop within {STOP_TIMEOUT:?}")),
    }
    measured
}

/// Whether the store got the initial list of `objects` pods within [`PHASE_TIMEOUT`],
/// checked every [`POLL`].
///
/// `Store::wait_until_ready` wakes one waiter only (its `DelayedInit` keeps a single waker),
/// and the controller's runner already waits on it: a second waiter would take the wake-up
/// from it, or lose its own. The store's writer puts the whole initial list in at once when
/// the list ends, so its length tells the same moment.
async fn wait_for_list(store: &Store<Pod>, objects: usize) -> bool {
    let deadline = Instant::now() + PHASE_TIMEOUT;
    while store.len() < objects {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
    true
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
