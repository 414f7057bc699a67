//! A controller run by several replicas: every replica keeps its informers running (a warm
//! cache), one of them leads a Lease and runs the controller, and another takes over when it
//! stops.
//!
//! The controller stamps each ConfigMap with the term of the leader that handled it last
//! ([`HANDLED_BY`]). A reconcile acts only while its leadership
//! [`is_current`](Leadership::is_current), so two replicas never write in overlapping terms.
//! A new leader's controller registers its handlers on informers that have been synced all
//! along: the replay of their caches reconciles every object at once, without a relist.

use std::{sync::Arc, time::Duration};

use informer_runtime::{
    controller::{Action, Controller},
    factory::SharedInformerFactory,
    leader_election::{self, Config, LeaderElector, Leadership},
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The annotation naming the leader's term that last handled a ConfigMap
/// (`term <transitions> of <identity>`).
pub const HANDLED_BY: &str = "ha.example.com/handled-by";

/// The Lease the replicas compete for, in the namespace of the ConfigMaps.
pub const LEASE_NAME: &str = "config-stamper";

/// The election's durations, shared by every replica.
#[derive(Debug, Clone, Copy)]
pub struct Durations {
    /// How long followers wait for a silent leader before taking over.
    pub lease: Duration,
    /// How long the leader keeps acting without a successful renewal.
    pub renew_deadline: Duration,
    /// How often the lease is read or renewed.
    pub retry_period: Duration,
}

/// Errors of a replica.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The election could not be set up.
    #[error("failed to elect a leader: {0}")]
    Election(#[from] leader_election::Error),
    /// The controller stopped with an error.
    #[error("failed to run the controller: {0}")]
    Controller(#[from] informer_runtime::controller::Error),
    /// A write of a reconcile failed.
    #[error("failed to stamp a ConfigMap: {0}")]
    Stamp(#[from] kube::Error),
}

/// What a reconcile acts with: the client and the leadership it acts under.
pub struct Context {
    client: kube::Client,
    leadership: Leadership,
}

/// One replica: its informers, its elector and, while it leads, its controller.
pub struct Replica {
    identity: String,
    elector: LeaderElector,
    factory: SharedInformerFactory,
    stop: CancellationToken,
    election: JoinHandle<Result<(), leader_election::Error>>,
    leading: JoinHandle<Result<(), Error>>,
}

impl Replica {
    /// Starts a replica named `identity` competing for [`LEASE_NAME`] in `namespace`: its
    /// informers sync at once, its controller runs whenever it leads.
    pub async fn start(
        client: kube::Client,
        namespace: &str,
        identity: &str,
        durations: Durations,
    ) -> Result<Self, Error> {
        let config = Config::new(LEASE_NAME, namespace, identity)
            .lease_duration(durations.lease)
            .renew_deadline(durations.renew_deadline)
            .retry_period(durations.retry_period)
            .release_on_cancel(true);
        let elector = LeaderElector::new(client.clone(), config)?;
        let factory = SharedInformerFactory::new(client);
        factory.informer::<ConfigMap>();
        factory.start();
        factory.wait_for_cache_sync().await;
        let stop = CancellationToken::new();
        let election = tokio::spawn({
            let (elector, stop) = (elector.clone(), stop.clone());
            async move { elector.run(stop).await }
        });
        let leading = tokio::spawn(lead(elector.clone(), factory.clone()));
        Ok(Self {
            identity: identity.to_owned(),
            elector,
            factory,
            stop,
            election,
            leading,
        })
    }

    /// The replica's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The identity of the leader this replica last saw, if any.
    pub fn leader(&self) -> Option<String> {
        self.elector.leader()
    }

    /// Whether this replica leads now.
    pub fn is_leader(&self) -> bool {
        self.elector.is_leader()
    }

    /// Stops gracefully: the controller drains, the lease is released (the next replica takes
    /// over at its next attempt), then the informers stop.
    pub async fn stop(self) -> Result<(), Error> {
        self.stop.cancel();
        let election = self.election.await;
        let leading = self.leading.await;
        self.factory.shutdown().await;
        election.unwrap_or(Ok(()))?;
        leading.unwrap_or(Ok(()))
    }

    /// Stops as a crash would: nothing is released, the others wait for the lease to expire.
    pub async fn kill(self) {
        self.election.abort();
        self.leading.abort();
        self.factory.shutdown().await;
    }
}

/// Runs the controller during each term this replica leads, until the election ends.
async fn lead(elector: LeaderElector, factory: SharedInformerFactory) -> Result<(), Error> {
    while let Ok(leadership) = elector.leading().await {
        tracing::info!("{} began", leadership.term());
        let controller = Controller::<ConfigMap>::new(&factory)
            .name("config-stamper")
            .graceful_shutdown_on(leadership.token())
            .shutdown_timeout(Duration::from_secs(5));
        let context = Arc::new(Context {
            client: factory.client().clone(),
            leadership,
        });
        controller.run(reconcile, error_policy, context).await?;
    }
    Ok(())
}

/// Stamps the ConfigMap with the current term, if it leads and the stamp differs.
pub async fn reconcile(config_map: Arc<ConfigMap>, context: Arc<Context>) -> Result<Action, Error> {
    let stamp = context.leadership.term().to_string();
    if handled_by(&config_map) == Some(stamp.as_str()) {
        return Ok(Action::await_change());
    }
    if !context.leadership.is_current() {
        // The term is over: the next leader's first pass handles this object.
        return Ok(Action::await_change());
    }
    let namespace = config_map.metadata.namespace.as_deref().unwrap_or_default();
    let name = config_map.metadata.name.as_deref().unwrap_or_default();
    let api: Api<ConfigMap> = Api::namespaced(context.client.clone(), namespace);
    let patch = serde_json::json!({"metadata": {"annotations": {HANDLED_BY: stamp}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(Action::await_change())
}

/// Retries failed writes with backoff.
pub fn error_policy(_: Arc<ConfigMap>, _: &Error, _: Arc<Context>) -> Action {
    Action::requeue_with_backoff()
}

/// The term that last handled a ConfigMap, from its [`HANDLED_BY`] annotation.
pub fn handled_by(config_map: &ConfigMap) -> Option<&str> {
    let annotations = config_map.metadata.annotations.as_ref()?;
    annotations.get(HANDLED_BY).map(String::as_str)
}
