//! A controller divided among shards: each replica holds its own Lease in a ring, caches only
//! the ConfigMaps the sharder assigned to it, and stamps them with its name. The sharder
//! assigns new ConfigMaps on a consistent-hash ring of the live shards and moves them when a
//! shard joins (after the old shard lets go) or dies (after its Lease expired and the sharder
//! took it).
//!
//! The controller reconciles the ConfigMaps labelled [`SETTINGS`], and the ring holds exactly
//! those, in the namespaces labelled [`ENABLED_NAMESPACES`]: other ConfigMaps are never
//! labelled by the sharder, and no shard caches them.

use std::{sync::Arc, time::Duration};

use informer_runtime::{
    SharedInformerFactory,
    controller::{Action, Controller},
    manager::{self, Manager},
    scope::Scope,
    sharding::{self, ControllerRing, RingResource, Shard, Sharder},
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The annotation naming the shard that reconciled a ConfigMap last.
pub const HANDLED_BY: &str = "sharded.example.com/handled-by";

/// The ring's name: the shards' Leases carry it, and the assignment label is
/// `shard.alpha.sharding.timebertt.dev/config-stamper`.
pub const RING: &str = "config-stamper";

/// The label of the ConfigMaps the controller reconciles: its scope, and the ring's object
/// selector.
pub const SETTINGS: &str = "app.kubernetes.io/part-of=settings";

/// The label of the namespaces the ring holds: its namespace selector.
pub const ENABLED_NAMESPACES: &str = "config-stamper.example.com/enabled=true";

/// The shards' Lease durations.
#[derive(Debug, Clone, Copy)]
pub struct Durations {
    /// How long the sharder waits after a shard's last renewal before it treats it as gone.
    pub lease: Duration,
    /// How long a shard keeps reconciling without a successful renewal.
    pub renew_deadline: Duration,
    /// How often a shard renews.
    pub retry_period: Duration,
}

/// Errors of a shard or the sharder.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ring, shard or sharder configuration was refused.
    #[error("failed to configure sharding: {0}")]
    Sharding(#[from] sharding::Error),
    /// The controller's scope was refused.
    #[error("failed to scope the controller: {0}")]
    Scope(#[from] informer_runtime::scope::Error),
    /// The manager could not be set up or failed.
    #[error("failed to run the shard: {0}")]
    Manager(#[from] manager::Error),
    /// A write of a reconcile failed (or was refused: the shard's term had ended).
    #[error("failed to stamp a ConfigMap: {0}")]
    Stamp(#[from] kube::Error),
    /// The manager's task ended abnormally.
    #[error("failed to run the shard's manager: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// The ring: the ConfigMaps labelled [`SETTINGS`] in the namespaces labelled
/// [`ENABLED_NAMESPACES`], each assigned by its own name.
pub fn ring() -> Result<ControllerRing, Error> {
    Ok(ControllerRing::new(RING)?
        .resource(RingResource::of::<ConfigMap>().labels(SETTINGS)?)?
        .namespace_selector(ENABLED_NAMESPACES)?)
}

/// The sharder of [`ring`], a runnable of a manager of its own, running until `stop` fires
/// (it reads the shard Leases labelled for the ring in every namespace). Deployed with
/// several replicas, give that manager a
/// [`leader_election`](informer_runtime::manager::Builder::leader_election).
pub fn start_sharder(
    client: kube::Client,
    stop: CancellationToken,
) -> Result<JoinHandle<Result<(), Error>>, Error> {
    let sharder = Sharder::new(client.clone(), ring()?)?;
    let mut manager = Manager::builder(client).build()?;
    manager.add(sharder);
    Ok(tokio::spawn(async move {
        manager.run(stop.cancelled_owned()).await?;
        Ok(())
    }))
}

/// What a reconcile writes with: the manager's client, whose writes pass only while the
/// shard holds its Lease.
pub struct Context {
    client: kube::Client,
    shard: String,
}

/// One shard: a manager with the controller, holding the shard's Lease.
pub struct ShardReplica {
    name: String,
    factory: SharedInformerFactory,
    stop: CancellationToken,
    run: JoinHandle<Result<(), manager::Error>>,
}

impl ShardReplica {
    /// Starts shard `name` of the ring, with its Lease in `namespace`. Compared with an
    /// unsharded controller on a manager, the only difference is the `shard(..)` line: the
    /// controller's scope and the shard compose, so its cache holds the shard's ConfigMaps
    /// labelled [`SETTINGS`].
    pub fn start(
        client: kube::Client,
        namespace: &str,
        name: &str,
        durations: Durations,
    ) -> Result<Self, Error> {
        let shard = Shard::new(ring()?, name, namespace)?
            .lease_duration(durations.lease)
            .renew_deadline(durations.renew_deadline)
            .retry_period(durations.retry_period);
        let mut manager = Manager::builder(client)
            .shard(shard)
            .graceful_shutdown_timeout(Duration::from_secs(5))
            .build()?;
        let context = Arc::new(Context {
            client: manager.client(),
            shard: name.to_owned(),
        });
        let settings = Scope::<ConfigMap>::all().labels(SETTINGS)?;
        let controller = Controller::new_in(manager.factory(), &settings).name("config-stamper");
        manager.add_controller(
            controller,
            reconcile,
            |_, _: &Error, _| Action::requeue_with_backoff(),
            context,
        );
        let factory = manager.factory().clone();
        let stop = CancellationToken::new();
        let run = tokio::spawn(manager.run(stop.clone().cancelled_owned()));
        Ok(Self {
            name: name.to_owned(),
            factory,
            stop,
            run,
        })
    }

    /// The shard's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many ConfigMaps the shard's cache holds: only those assigned to it.
    pub fn cached(&self) -> usize {
        let Ok(settings) = Scope::<ConfigMap>::all().labels(SETTINGS) else {
            return 0;
        };
        self.factory
            .informer_in(&settings)
            .lister()
            .list_in_scope(&Default::default())
            .len()
    }

    /// Stops gracefully: reconciles finish, the Lease is released, so the sharder moves the
    /// shard's ConfigMaps at once.
    pub async fn stop(self) -> Result<(), Error> {
        self.stop.cancel();
        Ok(self.run.await??)
    }

    /// Stops as a crash would: the sharder waits for the Lease to expire, takes it, then moves
    /// the shard's ConfigMaps.
    pub async fn kill(self) {
        self.run.abort();
        let _ = self.run.await;
    }
}

/// Stamps the ConfigMap with the shard's name, unless it already carries it.
pub async fn reconcile(config_map: Arc<ConfigMap>, context: Arc<Context>) -> Result<Action, Error> {
    if handled_by(&config_map) == Some(context.shard.as_str()) {
        return Ok(Action::await_change());
    }
    let api: Api<ConfigMap> = Api::namespaced(
        context.client.clone(),
        config_map.metadata.namespace.as_deref().unwrap_or("default"),
    );
    let patch = serde_json::json!({"metadata": {"annotations": {HANDLED_BY: context.shard}}});
    let name = config_map.metadata.name.as_deref().unwrap_or_default();
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(Action::await_change())
}

/// The shard that reconciled `config_map` last, if any.
pub fn handled_by(config_map: &ConfigMap) -> Option<&str> {
    config_map
        .metadata
        .annotations
        .as_ref()?
        .get(HANDLED_BY)
        .map(String::as_str)
}

/// The shard `config_map` is assigned to, if any.
pub fn assigned_to(config_map: &ConfigMap) -> Option<&str> {
    let label = sharding::labels::shard_label(RING);
    config_map
        .metadata
        .labels
        .as_ref()?
        .get(&label)
        .map(String::as_str)
}
