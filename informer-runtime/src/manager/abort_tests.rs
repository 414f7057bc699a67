//! A manager whose run is dropped (its task aborted, as in a crash) stops everything it
//! started: over HTTP, the API server sees no request from it afterwards, neither from the
//! manager's own informers, elector and runnables nor from the informers of a sharder it runs.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use informer_testserver::{
    TestServer,
    wait::{eventually, eventually_async},
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::{
    controller::Action,
    sharding::{ControllerRing, RingResource, Sharder, labels::shard_label},
};

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

const RING: &str = "configmaps";
const WAIT: Duration = Duration::from_secs(10);
/// How long the server is watched for requests of the aborted managers. Alive, both send
/// requests well within it after the server closed their connections (the shard renews its
/// Lease every 100 ms; informers watch again within their backoff); the test checks that first.
const QUIET: Duration = Duration::from_secs(2);
const CLIENTS: [&str; 2] = ["shard-a", "sharder"];

fn ring() -> std::result::Result<ControllerRing, crate::sharding::Error> {
    ControllerRing::new(RING)?.resource(RingResource::of::<ConfigMap>())
}

async fn reconcile(_: Arc<ConfigMap>, _: Arc<()>) -> std::result::Result<Action, kube::Error> {
    Ok(Action::await_change())
}

/// A sharded manager of a ConfigMap controller, running as `shard-a`.
fn shard_manager(server: &TestServer) -> std::result::Result<Manager, Box<dyn std::error::Error>> {
    let shard = Shard::new(ring()?, "shard-a", "default")?
        .lease_duration(Duration::from_millis(800))
        .renew_deadline(Duration::from_millis(500))
        .retry_period(Duration::from_millis(100));
    let mut manager = Manager::builder(server.named_client("shard-a")?)
        .shard(shard)
        .build()?;
    let controller = Controller::<ConfigMap>::new(manager.factory());
    manager.add_controller(
        controller,
        reconcile,
        |_, _, _| Action::requeue(Duration::from_millis(50)),
        Arc::new(()),
    );
    Ok(manager)
}

/// A manager running the ring's sharder, as `sharder`.
fn sharder_manager(server: &TestServer) -> std::result::Result<Manager, Box<dyn std::error::Error>> {
    let mut manager = Manager::builder(server.named_client("sharder")?).build()?;
    manager.add(Sharder::new(manager.client(), ring()?)?);
    Ok(manager)
}

/// How many requests each of [`CLIENTS`] sent so far.
fn sent(server: &TestServer) -> BTreeMap<&'static str, usize> {
    let requests = server.requests();
    CLIENTS
        .into_iter()
        .map(|client| {
            let count = requests
                .iter()
                .filter(|request| request.client.as_deref() == Some(client))
                .count();
            (client, count)
        })
        .collect()
}

/// Closes every connection, then waits up to [`QUIET`] for each of [`CLIENTS`] to send a
/// request: `Ok` if all did.
async fn all_send_again(server: &TestServer) -> std::result::Result<(), String> {
    let before = sent(server);
    server.restart();
    let waited = eventually("both managers to send requests again", QUIET, || {
        let now = sent(server);
        CLIENTS.iter().all(|client| now[client] > before[client])
    })
    .await;
    waited.map_err(|error| format!("{error}: sent {:?}, before {before:?}", sent(server)))
}

/// Closes every connection, then watches the requests for [`QUIET`]: `Ok` if none of
/// [`CLIENTS`] sent one, `Err` naming the first one sent otherwise. Absence is only seen over
/// time: the window is the one [`all_send_again`] saw both managers answer within.
async fn none_sends_again(server: &TestServer) -> std::result::Result<(), String> {
    let before = server.requests().len();
    let late = || {
        server.requests().into_iter().skip(before).find(|request| {
            request
                .client
                .as_deref()
                .is_some_and(|client| CLIENTS.contains(&client))
        })
    };
    server.restart();
    let seen = eventually("a request of an aborted manager", QUIET, || late().is_some()).await;
    match (seen, late()) {
        (Ok(()), Some(request)) => Err(format!(
            "{} sent {} {}?{} after its manager's task was aborted",
            request.client.as_deref().unwrap_or_default(),
            request.verb,
            request.resource,
            request.query
        )),
        _ => Ok(()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborted_managers_send_no_more_requests_from_informers_elector_runnables_or_sharder() -> TestResult {
    let server = TestServer::start().await?;
    let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    for name in ["one", "two", "three"] {
        let object = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &object).await?;
    }
    // Never cancelled: the runs end only by being aborted.
    let never = CancellationToken::new();
    let shard = tokio::spawn(shard_manager(&server)?.run(never.clone().cancelled_owned()));
    let sharder = tokio::spawn(sharder_manager(&server)?.run(never.clone().cancelled_owned()));
    eventually_async(
        "the sharder to assign every config map to shard-a",
        WAIT,
        async || {
            let objects = api.list(&Default::default()).await.map(|list| list.items);
            objects.is_ok_and(|objects| {
                objects.iter().all(|object| {
                    let labels = object.metadata.labels.clone().unwrap_or_default();
                    labels.get(&shard_label(RING)).map(String::as_str) == Some("shard-a")
                })
            })
        },
    )
    .await?;
    eventually("the shard's and the sharder's informers to watch", WAIT, || {
        server.watch_count() >= 3
    })
    .await?;
    all_send_again(&server).await?;

    shard.abort();
    sharder.abort();
    for (name, run) in [("shard-a", shard), ("sharder", sharder)] {
        let joined = run.await;
        assert!(
            joined.as_ref().is_err_and(tokio::task::JoinError::is_cancelled),
            "{name}'s run ended by its abort, not by itself: {joined:?}"
        );
    }
    let open = eventually("every watch of the aborted managers to close", WAIT, || {
        server.watch_count() == 0
    })
    .await;
    assert!(
        open.is_ok(),
        "{open:?}: {} watches are still open",
        server.watch_count()
    );
    none_sends_again(&server).await?;
    Ok(())
}
