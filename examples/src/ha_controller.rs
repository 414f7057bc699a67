//! A controller run by several replicas on a [`Manager`]: every replica keeps its informers
//! running (a warm cache), the leader of a Lease runs the controller, and another takes over
//! when it stops.
//!
//! The controller stamps each ConfigMap with the term of the leader that handled it last
//! ([`HANDLED_BY`]). The manager's client sends a write only while the term it is made in is
//! current, so two replicas never write in overlapping terms. A new leader's controller
//! registers its handlers on informers that have been synced all along: the replay of their
//! caches reconciles every object at once, without a relist.

use std::{sync::Arc, time::Duration};

use informer_runtime::{
    controller::{Action, Controller, RunContext},
    leader_election::{Config, LeaderElector},
    manager::{self, Manager},
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
    /// The manager could not be set up or failed.
    #[error("failed to run the replica: {0}")]
    Manager(#[from] manager::Error),
    /// A write of a reconcile failed (or was refused: the term had ended).
    #[error("failed to stamp a ConfigMap: {0}")]
    Stamp(#[from] kube::Error),
    /// The manager's task ended abnormally (it panicked or was cancelled).
    #[error("failed to run the replica's manager: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// A replica or a reconcile without a leadership term, which a manager with an election
    /// never makes.
    #[error("failed to stamp a ConfigMap: there is no leadership term")]
    NoTerm,
}

/// What a reconcile writes with: the manager's client, whose writes pass only while the term
/// they are made in is current.
pub struct Context {
    client: kube::Client,
}

/// One replica: a manager with the controller and an election.
pub struct Replica {
    identity: String,
    elector: LeaderElector,
    stop: CancellationToken,
    run: JoinHandle<Result<(), manager::Error>>,
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
        let election = Config::new(LEASE_NAME, namespace, identity)
            .lease_duration(durations.lease)
            .renew_deadline(durations.renew_deadline)
            .retry_period(durations.retry_period)
            .release_on_cancel(true);
        let mut manager = Manager::builder(client)
            .leader_election(election)
            .graceful_shutdown_timeout(Duration::from_secs(5))
            .build()?;
        let context = Arc::new(Context {
            client: manager.client(),
        });
        let controller = Controller::<ConfigMap>::new(manager.factory()).name("config-stamper");
        manager.add_controller(controller, reconcile, error_policy, context);
        let elector = manager.elector().cloned().ok_or(Error::NoTerm)?;
        let stop = CancellationToken::new();
        let run = tokio::spawn(manager.run(stop.clone().cancelled_owned()));
        Ok(Self {
            identity: identity.to_owned(),
            elector,
            stop,
            run,
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
        Ok(self.run.await??)
    }

    /// Stops as a crash would: nothing is released, the others wait for the lease to expire.
    pub async fn kill(self) {
        self.run.abort();
        let _ = self.run.await;
    }
}

/// Stamps the ConfigMap with the current term, if it leads and the stamp differs.
pub async fn reconcile(config_map: Arc<ConfigMap>, context: Arc<Context>) -> Result<Action, Error> {
    let run = RunContext::current().ok_or(Error::NoTerm)?;
    let stamp = run.leadership().ok_or(Error::NoTerm)?.term().to_string();
    if handled_by(&config_map) == Some(stamp.as_str()) {
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
