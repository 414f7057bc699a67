//! A controller with three replicas and leader election on a Lease: one leads and reconciles,
//! the others keep warm caches and take over when it dies or steps down.
//!
//! By default the three replicas run in this process against the embedded API server: the
//! example kills the leader, then stops the next one gracefully, and prints who leads and how
//! long each failover took. On a cluster, run one replica per pod:
//! `--cluster --identity "$POD_NAME"` uses your kubeconfig and runs until Ctrl-C.
//!
//! ```text
//! cargo run -p informer-examples --example ha_controller
//! ```

use std::time::{Duration, Instant};

use informer_examples::ha_controller::{Durations, Replica, handled_by};
use informer_testserver::{
    TestServer,
    wait::{eventually, eventually_async},
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client,
    api::{ListParams, ObjectMeta, PostParams},
};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Short durations for the demo; client-go's defaults are 15 s, 10 s and 2 s.
const DURATIONS: Durations = Durations {
    lease: Duration::from_millis(1000),
    renew_deadline: Duration::from_millis(700),
    retry_period: Duration::from_millis(100),
};

const CONFIG_MAPS: usize = 5;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|arg| arg == "--cluster") {
        let identity = args
            .iter()
            .position(|arg| arg == "--identity")
            .and_then(|i| args.get(i + 1))
            .ok_or("--cluster needs --identity <unique name of this replica>")?;
        return on_cluster(identity).await;
    }
    let server = TestServer::start().await?;
    let config_maps: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    for i in 0..CONFIG_MAPS {
        config_maps
            .create(&PostParams::default(), &config_map(&format!("settings-{i}")))
            .await?;
    }
    let mut replicas = Vec::new();
    for identity in ["r0", "r1", "r2"] {
        let client = server.named_client(identity)?;
        replicas.push(Replica::start(client, "default", identity, DURATIONS).await?);
    }

    let first = leader(&replicas).await.ok_or("nobody took the lease")?;
    report(&config_maps, &replicas[first], "leads first").await?;

    let killed = replicas.remove(first);
    println!(
        "killing {} (no release: the others wait for the lease to expire)",
        killed.identity()
    );
    let since = Instant::now();
    killed.kill().await;
    let second = leader(&replicas).await.ok_or("nobody took over")?;
    let took = since.elapsed();
    let what = format!("took over after {:.2} s", took.as_secs_f64());
    report(&config_maps, &replicas[second], &what).await?;

    config_maps
        .create(&PostParams::default(), &config_map("settings-new"))
        .await?;
    let stopped = replicas.remove(second);
    println!(
        "stopping {} gracefully (it releases the lease)",
        stopped.identity()
    );
    let since = Instant::now();
    stopped.stop().await?;
    let third = leader(&replicas).await.ok_or("nobody took over")?;
    let took = since.elapsed();
    let what = format!("took over after {:.2} s", took.as_secs_f64());
    report(&config_maps, &replicas[third], &what).await?;

    for replica in replicas {
        replica.stop().await?;
    }
    server.shutdown().await;
    Ok(())
}

/// Waits for one of `replicas` to lead and returns its position.
async fn leader(replicas: &[Replica]) -> Option<usize> {
    let deadline = DURATIONS.lease * 10;
    let found = eventually("a leader", deadline, || replicas.iter().any(Replica::is_leader)).await;
    found
        .ok()
        .and_then(|()| replicas.iter().position(Replica::is_leader))
}

/// Prints what the new leader did: its term's stamp on every ConfigMap, including those it
/// never saw change while it was a follower.
async fn report(config_maps: &Api<ConfigMap>, leader: &Replica, what: &str) -> Result<(), BoxError> {
    let stamp = format!("of {}", leader.identity());
    let all_stamped = eventually_async("every config map stamped", Duration::from_secs(10), async || {
        let Ok(list) = config_maps.list(&ListParams::default()).await else {
            return false;
        };
        list.items
            .iter()
            .all(|cm| handled_by(cm).is_some_and(|by| by.ends_with(&stamp)))
    })
    .await
    .is_ok();
    let list = config_maps.list(&ListParams::default()).await?;
    let term = list.items.first().and_then(handled_by).unwrap_or("no term");
    println!(
        "{} {what}: {term}; all {} config maps stamped on its first pass: {all_stamped}",
        leader.identity(),
        list.items.len(),
    );
    Ok(())
}

/// One replica against the cluster of the kubeconfig, until Ctrl-C.
async fn on_cluster(identity: &str) -> Result<(), BoxError> {
    let client = Client::try_default().await?;
    let namespace = client.default_namespace().to_owned();
    let durations = Durations {
        lease: Duration::from_secs(15),
        renew_deadline: Duration::from_secs(10),
        retry_period: Duration::from_secs(2),
    };
    let replica = Replica::start(client, &namespace, identity, durations).await?;
    println!("{identity} is running in {namespace}; Ctrl-C to stop");
    tokio::signal::ctrl_c().await?;
    replica.stop().await?;
    Ok(())
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some([("level".to_owned(), "info".to_owned())].into()),
        ..ConfigMap::default()
    }
}
