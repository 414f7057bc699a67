//! The manager against the test API server over HTTP: controllers on the leader only, a
//! standby taking over, a lost term stopping reconciles and refusing their writes, probes,
//! failing runnables and the graceful shutdown deadline.

use std::{
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use informer_testserver::{Failure, TestServer, wait::eventually};
use k8s_openapi::api::{coordination::v1::Lease, core::v1::ConfigMap};
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::controller::{Action, RunContext};

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

const HANDLED_BY: &str = "test.example.com/handled-by";
const WAIT: Duration = Duration::from_secs(10);

fn election(identity: &str) -> leader_election::Config {
    leader_election::Config::new("manager-test", "default", identity)
        .lease_duration(Duration::from_millis(800))
        .renew_deadline(Duration::from_millis(500))
        .retry_period(Duration::from_millis(100))
        .release_on_cancel(true)
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn handled_by(server: &TestServer, name: &str) -> Option<String> {
    let value = server.get("v1", "ConfigMap", Some("default"), name).ok()?;
    value["metadata"]["annotations"][HANDLED_BY]
        .as_str()
        .map(str::to_owned)
}

/// What the stamping reconcile writes with.
struct Stamper {
    client: kube::Client,
    identity: String,
    reconciles: AtomicUsize,
}

/// Stamps the config map with the identity of the replica that reconciled it, again and
/// again while it leads.
async fn stamp(
    config_map: Arc<ConfigMap>,
    stamper: Arc<Stamper>,
) -> std::result::Result<Action, kube::Error> {
    stamper.reconciles.fetch_add(1, Ordering::SeqCst);
    let api: Api<ConfigMap> = Api::namespaced(stamper.client.clone(), "default");
    let patch = serde_json::json!({"metadata": {"annotations": {HANDLED_BY: stamper.identity}}});
    let name = config_map.metadata.name.as_deref().unwrap_or_default();
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(Action::requeue(Duration::from_millis(50)))
}

fn retry(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<Stamper>) -> Action {
    Action::requeue(Duration::from_millis(50))
}

/// A started manager: the stamper of its controller, its run and its elector.
type Started = (
    Arc<Stamper>,
    tokio::task::JoinHandle<Result<()>>,
    Option<LeaderElector>,
);

/// A manager of one stamping controller, started; returns its stamper and the handle of its
/// run, stopped with `shutdown`.
fn start_stamper(
    server: &TestServer,
    identity: &str,
    shutdown: &CancellationToken,
) -> std::result::Result<Started, Box<dyn std::error::Error>> {
    let mut manager = Manager::builder(server.named_client(identity)?)
        .leader_election(election(identity))
        .build()?;
    let stamper = Arc::new(Stamper {
        client: manager.client(),
        identity: identity.into(),
        reconciles: AtomicUsize::new(0),
    });
    let controller = Controller::<ConfigMap>::new(manager.factory());
    manager.add_controller(controller, stamp, retry, Arc::clone(&stamper));
    let elector = manager.elector().cloned();
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    Ok((stamper, run, elector))
}

/// A GET of `path` on the probe listener: the status and the body.
pub(super) async fn probe(address: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect(address).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: manager\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let status = response
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_election_controllers_run_and_probes_answer() -> TestResult {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("a"))?;
    let mut manager = Manager::builder(server.client()?)
        .probe_address(([127, 0, 0, 1], 0).into())
        .build()?;
    let address = manager.probe_address().ok_or("no probe address")?;
    let stamper = Arc::new(Stamper {
        client: manager.client(),
        identity: "only".into(),
        reconciles: AtomicUsize::new(0),
    });
    manager.add_controller(
        Controller::<ConfigMap>::new(manager.factory()),
        stamp,
        retry,
        Arc::clone(&stamper),
    );
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    eventually("the controller stamped a", WAIT, || {
        handled_by(&server, "a").as_deref() == Some("only")
    })
    .await?;

    assert_eq!(probe(address, "/healthz").await?, (200, "ok".into()));
    let (status, body) = probe(address, "/readyz?verbose").await?;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("[+]informers-synced ok") && body.contains("[+]runnables ok"),
        "{body}"
    );
    assert_eq!(probe(address, "/readyz/informers-synced").await?.0, 200);
    assert_eq!(probe(address, "/readyz/no-such-check").await?.0, 404);
    assert_eq!(probe(address, "/nothing").await?.0, 404);
    let (status, metrics) = probe(address, "/metrics").await?;
    if cfg!(feature = "metrics") {
        assert_eq!(status, 200);
        assert!(
            metrics.contains("controller_runtime_reconcile_total"),
            "{metrics}"
        );
        assert!(
            metrics.contains("configmaps"),
            "the factory's informers are in: {metrics}"
        );
    } else {
        assert_eq!(status, 404, "{metrics}");
    }

    shutdown.cancel();
    run.await??;
    assert!(stamper.reconciles.load(Ordering::SeqCst) >= 1);
    assert!(
        probe(address, "/healthz").await.is_err(),
        "the listener closes at shutdown"
    );
    server.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_reconciles_and_a_standby_takes_over_on_release() -> TestResult {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("a"))?;
    let (stop_a, stop_b) = (CancellationToken::new(), CancellationToken::new());
    let (a, run_a, elector_a) = start_stamper(&server, "a", &stop_a)?;
    let elector_a = elector_a.ok_or("no elector")?;
    eventually("a leads", WAIT, || elector_a.is_leader()).await?;
    let (b, run_b, elector_b) = start_stamper(&server, "b", &stop_b)?;
    let elector_b = elector_b.ok_or("no elector")?;
    eventually("the leader a stamped a", WAIT, || {
        handled_by(&server, "a").as_deref() == Some("a")
    })
    .await?;
    // b is a warm standby: its cache synced, it reconciles nothing, its writes are refused
    eventually("b sees a lead", WAIT, || {
        elector_b.leader().as_deref() == Some("a")
    })
    .await?;
    assert_eq!(b.reconciles.load(Ordering::SeqCst), 0);
    let refused = Api::<ConfigMap>::namespaced(b.client.clone(), "default")
        .create(&kube::api::PostParams::default(), &config_map("from-b"))
        .await
        .expect_err("a standby's write is refused");
    assert_eq!(
        WriteRefused::of(&refused).map(|r| r.reason.clone()),
        Some(RefusalReason::NotLeading),
        "{refused}"
    );
    assert!(
        server.get("v1", "ConfigMap", Some("default"), "from-b").is_err(),
        "nothing was sent"
    );

    stop_a.cancel();
    run_a.await??;
    eventually("b took over and stamped a", WAIT, || {
        handled_by(&server, "a").as_deref() == Some("b")
    })
    .await?;
    assert!(a.reconciles.load(Ordering::SeqCst) >= 1);
    stop_b.cancel();
    run_b.await??;
    server.shutdown().await;
    Ok(())
}

/// What the blocking reconcile saw after its term ended.
#[derive(Default)]
struct Observed {
    token_cancelled: bool,
    write: Option<std::result::Result<(), String>>,
}

struct Blocker {
    client: kube::Client,
    started: tokio::sync::Notify,
    release: tokio::sync::Notify,
    reconciles: AtomicUsize,
    observed: Mutex<Observed>,
}

/// The first reconcile waits to be released, then writes; later ones only count.
async fn block_then_write(
    config_map: Arc<ConfigMap>,
    blocker: Arc<Blocker>,
) -> std::result::Result<Action, kube::Error> {
    if blocker.reconciles.fetch_add(1, Ordering::SeqCst) > 0 {
        return Ok(Action::await_change());
    }
    blocker.started.notify_one();
    blocker.release.notified().await;
    let token = RunContext::current()
        .map(|run| run.stop_token())
        .ok_or_else(|| kube::Error::Service("no reconcile scope".into()))?;
    let api: Api<ConfigMap> = Api::namespaced(blocker.client.clone(), "default");
    let patch = serde_json::json!({"metadata": {"annotations": {HANDLED_BY: "late"}}});
    let name = config_map.metadata.name.as_deref().unwrap_or_default();
    let written = api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await;
    let mut observed = blocker
        .observed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    observed.token_cancelled = token.is_cancelled();
    observed.write = Some(written.map(drop).map_err(|error| match WriteRefused::of(&error) {
        Some(refused) => format!("refused: {}", refused.reason),
        None => error.to_string(),
    }));
    Ok(Action::await_change())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_term_stops_reconciles_and_refuses_their_writes() -> TestResult {
    let server = TestServer::start().await?;
    server.create_typed(&config_map("a"))?;
    let mut manager = Manager::builder(server.named_client("a")?)
        .leader_election(election("a"))
        .build()?;
    let blocker = Arc::new(Blocker {
        client: manager.client(),
        started: tokio::sync::Notify::new(),
        release: tokio::sync::Notify::new(),
        reconciles: AtomicUsize::new(0),
        observed: Mutex::default(),
    });
    let factory = manager.factory().clone();
    manager.add_controller(
        Controller::<ConfigMap>::new(&factory).graceful_shutdown_timeout(Duration::from_secs(5)),
        block_then_write,
        |_, _, _| Action::await_change(),
        Arc::clone(&blocker),
    );
    let elector = manager.elector().cloned().ok_or("no elector")?;
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    tokio::time::timeout(WAIT, blocker.started.notified()).await?;

    // Another holder takes the lease for an hour: this replica's term ends at its next renewal.
    let leases: Api<Lease> = Api::namespaced(server.client()?, "default");
    let patch = serde_json::json!({"spec": {"holderIdentity": "intruder", "leaseDurationSeconds": 3600}});
    leases
        .patch("manager-test", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    eventually("the term ended", WAIT, || !elector.is_leader()).await?;
    // The controller stopped: its handler is gone from the informer, so no reconcile can start.
    eventually("the controller's handlers were removed", WAIT, || {
        factory
            .stats()
            .iter()
            .all(|informer| informer.handlers.is_empty())
    })
    .await?;

    blocker.release.notify_one();
    eventually("the blocked reconcile tried its write", WAIT, || {
        blocker
            .observed
            .lock()
            .is_ok_and(|observed| observed.write.is_some())
    })
    .await?;
    {
        let observed = blocker.observed.lock().map_err(|_| "poisoned")?;
        assert!(
            observed.token_cancelled,
            "the in-flight reconcile sees its token cancelled"
        );
        let write = observed.write.clone().ok_or("no write")?;
        assert!(
            write
                .as_ref()
                .is_err_and(|error| error.starts_with("refused: term 0 of a ended")),
            "{write:?}"
        );
    }
    assert_eq!(handled_by(&server, "a"), None, "the late write was never sent");
    server.update_typed(&{
        let mut touched = config_map("a");
        touched.data = Some([("touched".to_owned(), "yes".to_owned())].into());
        touched
    })?;
    shutdown.cancel();
    run.await??;
    assert_eq!(
        blocker.reconciles.load(Ordering::SeqCst),
        1,
        "no reconcile after the term ended"
    );
    server.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_failing_runnable_stops_the_manager_with_its_error() -> TestResult {
    let server = TestServer::start().await?;
    let mut manager = Manager::builder(server.client()?).build()?;
    let patient_stopped = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::clone(&patient_stopped);
    manager
        .add(
            runnable_fn("patient", move |context: RunContext| {
                let stopped = Arc::clone(&stopped);
                async move {
                    context.stop_token().cancelled().await;
                    stopped.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                }
            })
            .on_every_replica(),
        )
        .add(runnable_fn("broken", |_| async {
            Err("the disk is full".into())
        }));
    let error = manager
        .run(std::future::pending())
        .await
        .expect_err("the runnable failed");
    assert!(
        matches!(&error, Error::Runnable { runnable, source } if runnable == "broken" && source.to_string() == "the disk is full"),
        "{error}"
    );
    assert_eq!(
        patient_stopped.load(Ordering::SeqCst),
        1,
        "the other runnables were stopped gracefully"
    );
    server.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_panicking_runnable_is_reported_as_an_error() -> TestResult {
    let server = TestServer::start().await?;
    let mut manager = Manager::builder(server.client()?).build()?;
    manager.add(runnable_fn("panicky", |_| async { panic!("out of cheese") }).on_every_replica());
    let error = manager
        .run(std::future::pending())
        .await
        .expect_err("the runnable panicked");
    assert!(
        error.to_string().contains("panicky") && error.to_string().contains("out of cheese"),
        "{error}"
    );
    server.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn runnables_that_ignore_the_stop_are_cancelled_at_the_deadline() -> TestResult {
    let server = TestServer::start().await?;
    let mut manager = Manager::builder(server.client()?)
        .graceful_shutdown_timeout(Duration::from_millis(100))
        .build()?;
    manager.add(runnable_fn("stubborn", |_| std::future::pending()).on_every_replica());
    let error = manager
        .run(tokio::time::sleep(Duration::from_millis(50)))
        .await
        .expect_err("cancelled");
    assert!(
        matches!(&error, Error::ShutdownTimeout { runnables, .. } if runnables == &["stubborn".to_owned()]),
        "{error}"
    );
    server.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsynced_cache_fails_readiness_and_keeps_the_replica_from_campaigning() -> TestResult {
    let server = TestServer::start().await?;
    server.fail_next(
        Failure::new(403)
            .times(usize::MAX)
            .verb("list")
            .resource("configmaps"),
    );
    let manager = Manager::builder(server.client()?)
        .leader_election(election("a"))
        .probe_address(([127, 0, 0, 1], 0).into())
        .build()?;
    let address = manager.probe_address().ok_or("no probe address")?;
    manager.factory().unscoped_informer::<ConfigMap>();
    let elector = manager.elector().cloned().ok_or("no elector")?;
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
    eventually("the informer retried its list", WAIT, || {
        server.request_count("list", "configmaps") >= 2
    })
    .await?;
    let (status, body) = probe(address, "/readyz").await?;
    assert_eq!(status, 500, "{body}");
    assert!(
        body.contains("[-]informers-synced failed: caches not synced yet: configmaps"),
        "{body}"
    );
    assert_eq!(probe(address, "/healthz").await?.0, 200, "alive, only not ready");
    if cfg!(feature = "metrics") {
        let (_, metrics) = probe(address, "/metrics").await?;
        let status = metrics
            .lines()
            .find(|line| line.starts_with("leader_election_master_status{"));
        assert!(
            status.is_some_and(|line| line.ends_with(" 0")),
            "a standby: {metrics}"
        );
    }
    assert!(
        !elector.is_leader() && server.request_count("get", "leases") == 0,
        "no campaign before the caches synced"
    );
    shutdown.cancel();
    run.await??;
    server.shutdown().await;
    Ok(())
}

/// The manager's encoding and skipped fields reach the factory it builds; beside a factory of
/// the caller's they are refused, since that factory was built with its own.
#[tokio::test]
async fn the_factory_options_of_a_manager_reach_its_factory_or_are_refused() -> TestResult {
    use crate::source::{Encoding, FieldPath};

    let server = TestServer::start().await?;
    let client = server.client()?;
    let manager = Manager::builder(client.clone())
        .encoding(Encoding::Json)
        .skip_fields([FieldPath::managed_fields()])
        .build()?;
    let seen = Arc::new(Mutex::new(None));
    let record = Arc::clone(&seen);
    manager.factory().informer_for::<ConfigMap>(move |context| {
        *record.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((context.encoding(), context.skip_fields().to_vec()));
        crate::SharedIndexInformer::new(
            crate::source::KubeListerWatcher::new(Api::<ConfigMap>::all(context.client().clone())),
            crate::informer::Config::default(),
        )
    })?;
    assert_eq!(
        seen.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take(),
        Some((Encoding::Json, vec![FieldPath::managed_fields()]))
    );

    for (builder, option) in [
        (
            Manager::builder(client.clone()).encoding(Encoding::Json),
            "encoding",
        ),
        (Manager::builder(client.clone()).skip_fields([]), "skip_fields"),
    ] {
        let given = builder
            .factory(crate::SharedInformerFactory::new(client.clone()))
            .build();
        assert!(
            matches!(given, Err(Error::FactoryOptions { option: o }) if o == option),
            "{option}: {:?}",
            given.err()
        );
    }
    Ok(())
}
