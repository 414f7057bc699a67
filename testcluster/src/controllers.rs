//! Which controllers run, and running them on a manager against any API server.

use std::{collections::BTreeSet, fmt, time::Duration};

use informer_runtime::{Manager, manager};
use tokio::{sync::oneshot, task::JoinHandle};

use crate::{cronjob, daemonset, deployment, endpoints, endpointslice, job, replicaset, statefulset, token};

/// A controller of kube-controller-manager that this crate implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ControllerKind {
    /// Pods for ReplicaSets.
    ReplicaSet,
    /// ReplicaSets for Deployments, with rolling updates.
    Deployment,
    /// Pods for Jobs, counted to completion or failure.
    Job,
    /// Endpoints of Services with a selector.
    Endpoints,
    /// EndpointSlices of Services with a selector.
    EndpointSlice,
    /// A pod per fitting node for DaemonSets.
    DaemonSet,
    /// Ordered, stably named pods for StatefulSets.
    StatefulSet,
    /// Jobs on a schedule for CronJobs.
    CronJob,
    /// Tokens in service account token Secrets.
    ServiceAccountToken,
}

impl ControllerKind {
    /// Every kind, in the order they are started.
    pub const ALL: [Self; 9] = [
        Self::ReplicaSet,
        Self::Deployment,
        Self::Job,
        Self::Endpoints,
        Self::EndpointSlice,
        Self::DaemonSet,
        Self::StatefulSet,
        Self::CronJob,
        Self::ServiceAccountToken,
    ];

    /// The controller's name in logs (kube-controller-manager's, without `-controller`).
    pub fn name(self) -> &'static str {
        match self {
            Self::ReplicaSet => replicaset::NAME,
            Self::Deployment => deployment::NAME,
            Self::Job => job::NAME,
            Self::Endpoints => endpoints::NAME,
            Self::EndpointSlice => endpointslice::NAME,
            Self::DaemonSet => daemonset::NAME,
            Self::StatefulSet => statefulset::NAME,
            Self::CronJob => cronjob::NAME,
            Self::ServiceAccountToken => token::NAME,
        }
    }
}

impl fmt::Display for ControllerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What fails starting or stopping the controllers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The manager could not be built or ended with an error.
    #[error("failed to run the controllers: {0}")]
    Manager(#[from] manager::Error),
    /// The manager's task panicked or was cancelled.
    #[error("failed to stop the controllers: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// The controllers to run, and their settings: a builder.
///
/// ```
/// use informer_testcluster::{ControllerKind, Controllers};
///
/// let only_workloads = Controllers::none().with(ControllerKind::ReplicaSet);
/// assert!(only_workloads.runs(ControllerKind::ReplicaSet));
/// assert!(!Controllers::all().without(ControllerKind::ReplicaSet).runs(ControllerKind::ReplicaSet));
/// ```
#[derive(Debug, Clone)]
pub struct Controllers {
    kinds: BTreeSet<ControllerKind>,
    job_backoff: Duration,
}

impl Default for Controllers {
    fn default() -> Self {
        Self::all()
    }
}

impl Controllers {
    /// Every controller.
    pub fn all() -> Self {
        Self {
            kinds: ControllerKind::ALL.into_iter().collect(),
            job_backoff: job::DEFAULT_BACKOFF,
        }
    }

    /// No controller; add them with [`with`](Self::with).
    pub fn none() -> Self {
        Self {
            kinds: BTreeSet::new(),
            ..Self::all()
        }
    }

    /// Runs `kind` too.
    pub fn with(mut self, kind: ControllerKind) -> Self {
        self.kinds.insert(kind);
        self
    }

    /// Does not run `kind`.
    pub fn without(mut self, kind: ControllerKind) -> Self {
        self.kinds.remove(&kind);
        self
    }

    /// Whether `kind` runs.
    pub fn runs(&self, kind: ControllerKind) -> bool {
        self.kinds.contains(&kind)
    }

    /// The delay before a Job replaces its first failed pod, doubled for each further failure
    /// up to ten minutes (10 s by default, kube-controller-manager's; tests shorten it).
    pub fn job_pod_failure_backoff(mut self, delay: Duration) -> Self {
        self.job_backoff = delay;
        self
    }

    /// Starts the controllers on a [`Manager`] of `client`, in a task of the current Tokio
    /// runtime: they run until [`RunningControllers::shutdown`].
    ///
    /// # Errors
    ///
    /// [`Error::Manager`] if the manager cannot be built.
    pub fn start(self, client: kube::Client) -> Result<RunningControllers, Error> {
        let mut manager = Manager::builder(client)
            .graceful_shutdown_timeout(Duration::from_secs(5))
            .build()?;
        for kind in &self.kinds {
            match kind {
                ControllerKind::ReplicaSet => replicaset::register(&mut manager),
                ControllerKind::Deployment => deployment::register(&mut manager),
                ControllerKind::Job => job::register(&mut manager, self.job_backoff),
                ControllerKind::Endpoints => endpoints::register(&mut manager),
                ControllerKind::EndpointSlice => endpointslice::register(&mut manager),
                ControllerKind::DaemonSet => daemonset::register(&mut manager),
                ControllerKind::StatefulSet => statefulset::register(&mut manager),
                ControllerKind::CronJob => cronjob::register(&mut manager),
                ControllerKind::ServiceAccountToken => token::register(&mut manager),
            }
        }
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(manager.run(async move {
            let _ = stopped.await;
        }));
        Ok(RunningControllers {
            kinds: self.kinds,
            stop,
            task,
        })
    }
}

/// Controllers running in a task: stop them with [`shutdown`](Self::shutdown) (dropping the
/// handle stops them too, without waiting).
#[derive(Debug)]
pub struct RunningControllers {
    kinds: BTreeSet<ControllerKind>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<manager::Result<()>>,
}

impl RunningControllers {
    /// The controllers that run.
    pub fn kinds(&self) -> impl Iterator<Item = ControllerKind> + '_ {
        self.kinds.iter().copied()
    }

    /// Stops the controllers (running reconciles finish) and their informers.
    ///
    /// # Errors
    ///
    /// What the manager ended with.
    pub async fn shutdown(self) -> Result<(), Error> {
        let _ = self.stop.send(());
        Ok(self.task.await??)
    }
}
