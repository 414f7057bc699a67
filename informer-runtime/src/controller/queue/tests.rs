//! A live change made while a controller works through its initial list, over HTTP against
//! the embedded API server: with the priority queue it is reconciled next, with the FIFO queue
//! after the whole list.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use informer_testserver::{TestServer, wait::eventually};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::{
    controller::{Action, Controller},
    factory::SharedInformerFactory,
};

const WAIT: Duration = Duration::from_secs(20);
const LISTED: usize = 200;

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), "1".to_owned())])),
        ..ConfigMap::default()
    }
}

#[derive(Default)]
struct Context {
    reconciled: Mutex<Vec<String>>,
    /// Holds the first reconcile until the live change is queued.
    gate: Notify,
    first: AtomicBool,
}

impl Context {
    /// A context whose first reconcile waits for the gate.
    fn holding_the_first() -> Arc<Self> {
        Arc::new(Self {
            first: AtomicBool::new(true),
            ..Self::default()
        })
    }

    fn position_of(&self, name: &str) -> Option<usize> {
        self.reconciled
            .lock()
            .expect("log")
            .iter()
            .position(|n| n == name)
    }

    fn len(&self) -> usize {
        self.reconciled.lock().expect("log").len()
    }
}

/// Logs each reconciled name; the first reconcile waits for the gate.
async fn record_holding_the_first(
    cm: Arc<ConfigMap>,
    context: Arc<Context>,
) -> Result<Action, std::convert::Infallible> {
    let name = cm.metadata.name.clone().unwrap_or_default();
    context.reconciled.lock().expect("log").push(name);
    if context.first.swap(false, Ordering::SeqCst) {
        context.gate.notified().await;
    }
    Ok(Action::await_change())
}

/// Where the live change `live` lands among the reconciles when it is made while the first
/// listed object is being reconciled and the rest of the list waits.
async fn position_of_a_live_change(priority_queue: bool) -> Result<usize, Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for i in 0..LISTED {
        server.create_typed(&config_map(&format!("listed-{i:03}")))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let controller = Controller::<ConfigMap>::new(&factory).priority_queue(priority_queue);
    let stats = controller.stats();
    let context = Context::holding_the_first();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.graceful_shutdown_on(shutdown.clone()).run(
        record_holding_the_first,
        |_, _, _| Action::await_change(),
        Arc::clone(&context),
    ));
    eventually("the first listed object is being reconciled", WAIT, || {
        context.len() == 1
    })
    .await?;
    server.create_typed(&config_map("live"))?;
    eventually("the live change is queued behind the list", WAIT, || {
        stats.queue_depth() == LISTED
    })
    .await?;
    context.gate.notify_one();
    eventually("everything reconciled", WAIT, || context.len() == LISTED + 1).await?;
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(context.position_of("live").unwrap_or(usize::MAX))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_change_is_reconciled_before_the_rest_of_the_initial_list()
-> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(
        position_of_a_live_change(true).await?,
        1,
        "next after the running reconcile"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_fifo_queue_a_live_change_waits_for_the_whole_initial_list()
-> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(
        position_of_a_live_change(false).await?,
        LISTED,
        "after every listed object"
    );
    Ok(())
}

/// A request at `Priority::HIGH` for a listed object still waiting raises it ahead of the
/// rest of the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_high_priority_request_jumps_the_initial_list() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for i in 0..50 {
        server.create_typed(&config_map(&format!("listed-{i:03}")))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let (requests, trigger) = futures::channel::mpsc::unbounded();
    let controller = Controller::<ConfigMap>::new(&factory).reconcile_on_with_priority(trigger);
    let stats = controller.stats();
    let context = Context::holding_the_first();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.graceful_shutdown_on(shutdown.clone()).run(
        record_holding_the_first,
        |_, _, _| Action::await_change(),
        Arc::clone(&context),
    ));
    eventually("the first listed object is being reconciled", WAIT, || {
        context.len() == 1
    })
    .await?;
    assert_eq!(stats.queue_depth(), 49);
    requests.unbounded_send((
        crate::ObjectKey::new("default", "listed-049"),
        crate::workqueue::Priority::HIGH,
    ))?;
    // The request is in the queue once the trigger task forwarded it; the depth does not
    // change (the key was queued already), so give the task a moment by sending a marker
    // request for an unknown object, which is queued after it.
    requests.unbounded_send((
        crate::ObjectKey::new("default", "marker"),
        crate::workqueue::Priority::LOW,
    ))?;
    eventually("both requests forwarded", WAIT, || stats.queue_depth() == 50).await?;
    context.gate.notify_one();
    eventually("everything reconciled", WAIT, || context.len() == 50).await?;
    assert_eq!(
        context.position_of("listed-049"),
        Some(1),
        "raised ahead of the list"
    );
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    Ok(())
}
