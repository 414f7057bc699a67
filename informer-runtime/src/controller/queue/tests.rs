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
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::ObjectMeta;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::{
    ObjectKey,
    controller::{Action, Controller, Watches},
    factory::SharedInformerFactory,
    workqueue::Priority,
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

/// Runs `controller` with a context whose first reconcile waits for its gate, until that first
/// reconcile is running: the context, the shutdown token and the run.
async fn run_holding_the_first(
    controller: Controller<ConfigMap>,
) -> Result<
    (
        Arc<Context>,
        CancellationToken,
        tokio::task::JoinHandle<crate::controller::Result<()>>,
    ),
    Box<dyn std::error::Error>,
> {
    let context = Context::holding_the_first();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(
        controller
            .graceful_shutdown_on(shutdown.clone().cancelled_owned())
            .run(
                record_holding_the_first,
                |_, _, _| Action::await_change(),
                Arc::clone(&context),
            ),
    );
    eventually("the first listed object is being reconciled", WAIT, || {
        context.len() == 1
    })
    .await?;
    Ok((context, shutdown, run))
}

/// Where the live change `live` lands among the reconciles when it is made while the first
/// listed object is being reconciled and the rest of the list waits.
async fn position_of_a_live_change(priorities: bool) -> Result<usize, Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for i in 0..LISTED {
        server.create_typed(&config_map(&format!("listed-{i:03}")))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let controller = Controller::<ConfigMap>::new(&factory).priorities(priorities);
    let stats = controller.stats();
    let (context, shutdown, run) = run_holding_the_first(controller).await?;
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
    let controller = Controller::<ConfigMap>::new(&factory).reconcile_on(trigger);
    let stats = controller.stats();
    let (context, shutdown, run) = run_holding_the_first(controller).await?;
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

/// The order in which a live change of `live` (queued first, at `Priority::NORMAL`) and the
/// object `listed-049` named by a watched Secret's change (queued second, at the relation's
/// `priority`) are reconciled after the running one.
async fn order_after_a_watched_change_at(
    priority: Priority,
) -> Result<(usize, usize), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    for i in 0..50 {
        server.create_typed(&config_map(&format!("listed-{i:03}")))?;
    }
    let factory = SharedInformerFactory::new(server.client()?);
    let controller = Controller::<ConfigMap>::new(&factory)
        .relation(Watches::new(|_: &Secret| [ObjectKey::new("default", "listed-049")]).priority(priority));
    let stats = controller.stats();
    let (context, shutdown, run) = run_holding_the_first(controller).await?;
    server.create_typed(&config_map("live"))?;
    eventually("the live change is queued", WAIT, || stats.queue_depth() == 50).await?;
    let secret = Secret {
        metadata: config_map("wakes-listed-049").metadata,
        ..Secret::default()
    };
    server.create_typed(&secret)?;
    let secret_handled = || {
        factory
            .unscoped_informer::<Secret>()
            .stats()
            .handlers
            .iter()
            .all(|handler| handler.handled >= 1)
    };
    eventually("the secret's change is mapped", WAIT, secret_handled).await?;
    context.gate.notify_one();
    eventually("everything reconciled", WAIT, || context.len() == 51).await?;
    shutdown.cancel();
    run.await??;
    factory.shutdown().await;
    let position = |name| context.position_of(name).unwrap_or(usize::MAX);
    Ok((position("live"), position("listed-049")))
}

/// A watch relation's `priority` is the priority its live changes enqueue at: `HIGH` goes
/// ahead of a live change queued before it, `NORMAL` (the default) behind it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relations_priority_orders_its_changes_among_live_ones() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(order_after_a_watched_change_at(Priority::HIGH).await?, (2, 1));
    assert_eq!(order_after_a_watched_change_at(Priority::NORMAL).await?, (1, 2));
    Ok(())
}
