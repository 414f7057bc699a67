//! A controller divided among three shards and a sharder, on kubernetes-controller-sharding's
//! protocol: each shard holds its own Lease, caches only the ConfigMaps assigned to it and
//! stamps them with its name.
//!
//! Everything runs in this process against the embedded API server. The ring holds the
//! ConfigMaps labelled `app.kubernetes.io/part-of=settings` in the namespaces labelled
//! `config-stamper.example.com/enabled=true` (the controller's scope is the same label): a
//! ConfigMap without the label, and one in a namespace the ring does not select, stay
//! unassigned. The example prints the
//! assignment of 100 ConfigMaps, then a fourth shard joins (the sharder drains the objects that
//! move, the old shards let go, the new one takes them), then a shard is killed (its Lease
//! expires, the sharder takes it and moves its objects), with the moves and how long each
//! took.
//!
//! ```text
//! cargo run -p informer-examples --example sharded_controller
//! ```

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use informer_examples::sharded_controller::{
    Durations, ENABLED_NAMESPACES, SETTINGS, ShardReplica, assigned_to, handled_by, start_sharder,
};
use informer_runtime::sharding::hash_ring::{HashRing, hash_key_for_object};
use informer_testserver::{TestServer, wait::eventually_async};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use tokio_util::sync::CancellationToken;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Short durations for the demo; client-go's defaults are 15 s, 10 s and 2 s.
const DURATIONS: Durations = Durations {
    lease: Duration::from_secs(1),
    renew_deadline: Duration::from_millis(700),
    retry_period: Duration::from_millis(100),
};

const CONFIG_MAPS: usize = 100;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let server = TestServer::start().await?;
    let (key, value) = ENABLED_NAMESPACES.split_once('=').ok_or("a label")?;
    let enable = serde_json::json!({"metadata": {"labels": {key: value}}});
    Api::<Namespace>::all(server.client()?)
        .patch("default", &PatchParams::default(), &Patch::Merge(&enable))
        .await?;
    server.create_namespace("elsewhere")?;
    let config_maps: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
    for i in 0..CONFIG_MAPS {
        config_maps
            .create(&PostParams::default(), &config_map(&format!("settings-{i:03}")))
            .await?;
    }
    // outside the ring: no `part-of=settings` label, or a namespace the ring does not select
    let mut unlabelled = config_map("unrelated");
    unlabelled.metadata.labels = None;
    config_maps.create(&PostParams::default(), &unlabelled).await?;
    let elsewhere: Api<ConfigMap> = Api::namespaced(server.client()?, "elsewhere");
    elsewhere
        .create(
            &PostParams::default(),
            &ConfigMap {
                metadata: ObjectMeta {
                    namespace: Some("elsewhere".into()),
                    ..config_map("settings-elsewhere").metadata
                },
                ..ConfigMap::default()
            },
        )
        .await?;
    let stop_sharder = CancellationToken::new();
    let sharder = start_sharder(server.named_client("sharder")?, stop_sharder.clone())?;
    let mut shards = Vec::new();
    for name in ["shard-0", "shard-1", "shard-2"] {
        shards.push(ShardReplica::start(
            server.named_client(name)?,
            "default",
            name,
            DURATIONS,
        )?);
    }
    let since = Instant::now();
    let first = settled(&config_maps, &shards).await?;
    println!(
        "assigned {CONFIG_MAPS} config maps to 3 shards in {:.2} s:",
        since.elapsed().as_secs_f64()
    );
    print_assignment(&first, &shards);
    let outside = [
        config_maps.get("unrelated").await?,
        elsewhere.get("settings-elsewhere").await?,
    ];
    if outside.iter().any(|cm| assigned_to(cm).is_some()) {
        return Err("a ConfigMap outside the ring was assigned".into());
    }
    println!(
        "default/unrelated (no settings label) and elsewhere/settings-elsewhere (namespace not selected) stay unassigned"
    );

    let (assigned, stamped) = new_object_latency(&config_maps, "settings-new").await?;
    println!(
        "a new config map was assigned after {:.1} ms and reconciled by its shard after {:.1} ms (no webhook: the sharder's watch)",
        assigned.as_secs_f64() * 1e3,
        stamped.as_secs_f64() * 1e3
    );

    println!("shard-3 joins: the sharder drains what moves to it; the old shards let go first");
    let since = Instant::now();
    shards.push(ShardReplica::start(
        server.named_client("shard-3")?,
        "default",
        "shard-3",
        DURATIONS,
    )?);
    let joined = settled(&config_maps, &shards).await?;
    println!("rebalanced in {:.2} s:", since.elapsed().as_secs_f64());
    print_moves(&first, &joined);
    print_assignment(&joined, &shards);

    let killed = shards.remove(1);
    println!(
        "killing {} (no release: its Lease must expire and be taken by the sharder)",
        killed.name()
    );
    let since = Instant::now();
    killed.kill().await;
    let after_kill = settled(&config_maps, &shards).await?;
    println!(
        "its config maps moved after {:.2} s:",
        since.elapsed().as_secs_f64()
    );
    print_moves(&joined, &after_kill);
    print_assignment(&after_kill, &shards);

    for shard in shards {
        shard.stop().await?;
    }
    stop_sharder.cancel();
    sharder.await??;
    server.shutdown().await;
    Ok(())
}

/// Waits until every ConfigMap is on the shard the ring of `shards` gives it (the sharder's
/// consistent hash of `group/Kind/namespace/name`), stamped by it, and each shard caches
/// exactly its own; returns the assignment by name.
async fn settled(
    config_maps: &Api<ConfigMap>,
    shards: &[ShardReplica],
) -> Result<BTreeMap<String, String>, BoxError> {
    let ring = HashRing::new(shards.iter().map(ShardReplica::name));
    let desired = |cm: &ConfigMap| {
        let name = cm.metadata.name.as_deref().unwrap_or_default();
        ring.lookup(&hash_key_for_object("", "ConfigMap", Some("default"), name))
            .map(str::to_owned)
    };
    let mut assignment = BTreeMap::new();
    eventually_async(
        "every config map settled on a live shard",
        Duration::from_secs(30),
        async || {
            let Ok(list) = config_maps.list(&ListParams::default().labels(SETTINGS)).await else {
                return false;
            };
            assignment = list
                .items
                .iter()
                .filter_map(|cm| Some((cm.metadata.name.clone()?, assigned_to(cm)?.to_owned())))
                .collect();
            let all_stamped = list.items.iter().all(|cm| {
                let shard = assigned_to(cm);
                shard.is_some() && shard == desired(cm).as_deref() && handled_by(cm) == shard
            });
            let cached: usize = shards.iter().map(ShardReplica::cached).sum();
            all_stamped && cached == list.items.len()
        },
    )
    .await?;
    Ok(assignment)
}

/// Creates `name` and measures how long until the sharder labelled it, and until its shard
/// stamped it.
async fn new_object_latency(
    config_maps: &Api<ConfigMap>,
    name: &str,
) -> Result<(Duration, Duration), BoxError> {
    let created = Instant::now();
    config_maps
        .create(&PostParams::default(), &config_map(name))
        .await?;
    let mut assigned = None;
    let deadline = created + Duration::from_secs(10);
    while Instant::now() < deadline {
        let current = config_maps.get(name).await?;
        if assigned.is_none() && assigned_to(&current).is_some() {
            assigned = Some(created.elapsed());
        }
        if handled_by(&current).is_some() {
            let stamped = created.elapsed();
            return Ok((assigned.unwrap_or(stamped), stamped));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Err(format!("{name} was not assigned and reconciled within 10 s").into())
}

fn print_assignment(assignment: &BTreeMap<String, String>, shards: &[ShardReplica]) {
    for shard in shards {
        let owned = assignment.values().filter(|owner| *owner == shard.name()).count();
        println!(
            "  {}: {owned} config maps, {} cached",
            shard.name(),
            shard.cached()
        );
    }
}

fn print_moves(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) {
    let mut routes: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (name, to) in after {
        if let Some(from) = before.get(name).filter(|from| *from != to) {
            *routes.entry((from.clone(), to.clone())).or_default() += 1;
        }
    }
    let moved: usize = routes.values().sum();
    let routes: Vec<String> = routes
        .iter()
        .map(|((from, to), count)| format!("{from} -> {to}: {count}"))
        .collect();
    println!("  {moved} moved ({})", routes.join(", "));
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            labels: SETTINGS
                .split_once('=')
                .map(|(key, value)| [(key.to_owned(), value.to_owned())].into()),
            ..ObjectMeta::default()
        },
        data: Some([("greeting".to_owned(), "hello".to_owned())].into()),
        ..ConfigMap::default()
    }
}
