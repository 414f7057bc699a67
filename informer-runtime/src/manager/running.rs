//! [`Manager::run`]: start the informers, the probes, the runnables on every replica and the
//! election; run the leader's runnables once per term; stop it all in order.

use std::{
    future::Future,
    panic::AssertUnwindSafe,
    sync::{Arc, OnceLock},
};

use futures::FutureExt;
use tokio::{sync::mpsc, task::JoinSet};
use tokio_util::{sync::CancellationToken, task::AbortOnDropHandle};

use super::{
    error::{Error, Result},
    probes,
    runnable::Runnable,
    state::{RunState, RunStates},
};
use crate::{
    controller::RunContext,
    factory::{SharedInformerFactory, ShutdownGuard},
    leader_election::{LeaderElector, Leadership},
    sharding::Shard,
    user_panic::{catch, panic_message},
};

/// A runnable and its index in the states.
pub(super) type Entry = (usize, Arc<dyn Runnable>);

/// Where runnables and the election report failures.
type Failures = mpsc::UnboundedSender<Error>;

/// What a run needs of the manager.
pub(super) struct Parts {
    pub(super) factory: SharedInformerFactory,
    pub(super) elector: Option<LeaderElector>,
    /// The shard whose Lease the election holds, and the client its term fence lists with.
    pub(super) shard: Option<(Shard, kube::Client)>,
    pub(super) runnables: Vec<Entry>,
    pub(super) listener: Option<std::net::TcpListener>,
    pub(super) probes: probes::Probes,
    /// Set when the election stops with an error (the probes report it).
    pub(super) election_stopped: Arc<OnceLock<String>>,
    pub(super) graceful_shutdown_timeout: std::time::Duration,
    pub(super) states: RunStates,
}

pub(super) async fn run(mut manager: Parts, shutdown: impl Future<Output = ()> + Send) -> Result<()> {
    let stop = CancellationToken::new();
    let election_stopped = Arc::clone(&manager.election_stopped);
    let probe_stop = CancellationToken::new();
    let _abandoned = Abandoned {
        tokens: vec![stop.clone(), probe_stop.clone()],
        _informers: manager.factory.shutdown_guard(),
    };
    let probe_task = match manager.listener.take() {
        Some(listener) => Some(serve_probes(
            listener,
            std::mem::take(&mut manager.probes),
            probe_stop.clone(),
        )?),
        None => None,
    };
    manager.factory.start();
    let (failed, mut failures) = mpsc::unbounded_channel();
    let (leader, every): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut manager.runnables)
        .into_iter()
        .partition(|(_, runnable)| runnable.needs_leader_election());
    let mut tasks = JoinSet::new();
    for entry in every {
        let (states, failed, context) = (
            manager.states.clone(),
            failed.clone(),
            RunContext::new(stop.child_token(), None),
        );
        tasks.spawn(async move { run_once(&entry, context, &states, &failed).await });
    }
    let election_stop = CancellationToken::new();
    let election = manager.elector.clone().map(|elector| {
        AbortOnDropHandle::new(tokio::spawn(campaign(
            elector,
            manager.factory.clone(),
            election_stop.clone(),
            election_stopped,
            failed.clone(),
        )))
    });
    tasks.spawn(lead(Lead {
        runnables: leader,
        shard: manager.shard.take(),
        elector: manager.elector.clone(),
        factory: manager.factory.clone(),
        stop: stop.clone(),
        states: manager.states.clone(),
        failed,
    }));
    let first_error = tokio::select! {
        () = shutdown => None,
        Some(error) = failures.recv() => Some(error),
    };
    if let Some(error) = &first_error {
        tracing::error!(%error, "stopping the manager: a runnable failed");
    } else {
        tracing::info!("stopping the manager: shutdown requested");
    }
    stop.cancel();
    let drained = drain(tasks, &manager).await;
    election_stop.cancel();
    if let Some(election) = election {
        let _ = election.await;
    }
    manager.factory.shutdown().await;
    probe_stop.cancel();
    if let Some(probe_task) = probe_task {
        let _ = probe_task.await;
    }
    while let Ok(later) = failures.try_recv() {
        tracing::error!(error = %later, "a runnable failed while the manager stopped");
    }
    match first_error {
        Some(error) => Err(error),
        None => drained,
    }
}

fn serve_probes(
    listener: std::net::TcpListener,
    probes: probes::Probes,
    stop: CancellationToken,
) -> Result<AbortOnDropHandle<()>> {
    let address = listener.local_addr().map_err(|source| Error::Listen {
        address: ([0, 0, 0, 0], 0).into(),
        source,
    })?;
    let listener =
        tokio::net::TcpListener::from_std(listener).map_err(|source| Error::Listen { address, source })?;
    tracing::info!(%address, "serving /healthz, /readyz and /metrics");
    Ok(AbortOnDropHandle::new(tokio::spawn(probes::serve(
        listener,
        Arc::new(probes),
        stop,
    ))))
}

/// Stops what a run started when the run is dropped before its end (its task aborted, as in
/// a crash): the runnables, the probes and the informers stop, and the lease is not released
/// (the election's task is aborted with the run). The runnables' tasks are aborted with their
/// join sets; a sharder's own informers stop with its term. After a graceful stop, it finds
/// everything stopped already.
struct Abandoned {
    tokens: Vec<CancellationToken>,
    /// Shuts the factory down unless the run did.
    _informers: ShutdownGuard,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        self.tokens.iter().for_each(CancellationToken::cancel);
    }
}

/// Waits for every task up to the graceful shutdown timeout; cancels what is left.
async fn drain(mut tasks: JoinSet<()>, manager: &Parts) -> Result<()> {
    let timeout = manager.graceful_shutdown_timeout;
    let finished = tokio::time::timeout(timeout, async {
        while let Some(joined) = tasks.join_next().await {
            if let Err(error) = joined {
                tracing::error!(%error, "a runnable's task failed");
            }
        }
    })
    .await;
    if finished.is_ok() {
        return Ok(());
    }
    let runnables = manager.states.running();
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    tracing::warn!(
        ?runnables,
        ?timeout,
        "runnables still ran at the graceful shutdown timeout; cancelled them"
    );
    Err(Error::ShutdownTimeout { runnables, timeout })
}

/// Campaigns once the caches synced (a replica that cannot fill its caches never leads),
/// until `stop`; reports an election that stops with an error.
async fn campaign(
    elector: LeaderElector,
    factory: SharedInformerFactory,
    stop: CancellationToken,
    stopped: Arc<OnceLock<String>>,
    failed: Failures,
) {
    factory.wait_for_cache_sync_until(stop.cancelled()).await;
    if stop.is_cancelled() {
        return;
    }
    tracing::info!(lease = %elector.config().lease(), "caches synced; campaigning for leadership");
    if let Err(error) = elector.run(stop).await {
        let _ = stopped.set(error.to_string());
        let _ = failed.send(Error::Election(error));
    }
}

/// What runs the leader's runnables.
struct Lead {
    runnables: Vec<Entry>,
    /// The shard whose Lease the election holds, and the client its term fence lists with.
    shard: Option<(Shard, kube::Client)>,
    elector: Option<LeaderElector>,
    factory: SharedInformerFactory,
    stop: CancellationToken,
    states: RunStates,
    failed: Failures,
}

/// Runs the leader runnables once per term (once, without an election) until `stop`.
async fn lead(lead: Lead) {
    if lead.runnables.is_empty() {
        return;
    }
    lead.factory
        .wait_for_cache_sync_until(lead.stop.cancelled())
        .await;
    let Some(elector) = lead.elector.clone() else {
        lead.term(lead.stop.child_token(), None).await;
        return;
    };
    loop {
        let leadership = tokio::select! {
            () = lead.stop.cancelled() => return,
            leadership = elector.leading() => leadership,
        };
        // An election that stopped reports its error itself.
        let Ok(leadership) = leadership else { return };
        tracing::info!(term = %leadership.term(), runnables = lead.runnables.len(), "leading: starting the leader's runnables");
        let term_stop = lead.stop.child_token();
        let ends = AbortOnDropHandle::new(tokio::spawn(cancel_at_end(leadership.clone(), term_stop.clone())));
        let _fence = lead.fence(&leadership, &term_stop);
        lead.term(term_stop.clone(), Some(leadership.clone())).await;
        tokio::select! {
            () = lead.stop.cancelled() => {}
            () = leadership.lost() => {}
        }
        term_stop.cancel();
        let _ = ends.await;
        if lead.stop.is_cancelled() {
            return;
        }
        tracing::info!(term = %leadership.term(), "the term ended and the leader's runnables stopped; campaigning again");
    }
}

impl Lead {
    /// On a sharded manager, fences the term `leadership` began before its runnables start
    /// (see `Shard::begin_term_fence`): the list of the shard's objects runs in a task until it
    /// answers or the term ends (`stop`), or the handle is dropped.
    fn fence(&self, leadership: &Leadership, stop: &CancellationToken) -> Option<AbortOnDropHandle<()>> {
        let (shard, client) = self.shard.as_ref()?;
        if !shard.begin_term_fence(leadership.taken_over_version()) {
            return None;
        }
        let listing = shard.list_for_term(client.clone(), stop.clone());
        Some(AbortOnDropHandle::new(tokio::spawn(listing)))
    }

    /// Runs every leader runnable with `stop` until they all returned.
    async fn term(&self, stop: CancellationToken, leadership: Option<Leadership>) {
        let mut runs = JoinSet::new();
        for entry in &self.runnables {
            let entry = entry.clone();
            let (states, failed) = (self.states.clone(), self.failed.clone());
            let context = RunContext::new(stop.clone(), leadership.clone());
            runs.spawn(async move { run_once(&entry, context, &states, &failed).await });
        }
        while runs.join_next().await.is_some() {}
    }
}

/// Cancels `stop` when `leadership` ends (or `stop` is cancelled otherwise).
async fn cancel_at_end(leadership: Leadership, stop: CancellationToken) {
    tokio::select! {
        () = leadership.lost() => stop.cancel(),
        () = stop.cancelled() => {}
    }
}

/// One run of a runnable, its panics caught; a failure is reported to the manager.
async fn run_once(entry: &Entry, context: RunContext, states: &RunStates, failed: &Failures) {
    let (index, runnable) = entry;
    let name = runnable.name().to_owned();
    states.set(*index, RunState::Running);
    let result = match catch(|| runnable.run(context)) {
        Ok(run) => AssertUnwindSafe(run)
            .catch_unwind()
            .await
            .unwrap_or_else(|payload| Err(format!("panicked: {}", panic_message(payload.as_ref())).into())),
        Err(message) => Err(format!("panicked: {message}").into()),
    };
    match result {
        Ok(()) => {
            tracing::debug!(runnable = %name, "finished");
            states.set(*index, RunState::Finished);
        }
        Err(source) => {
            tracing::error!(runnable = %name, error = %source, "failed");
            states.set(*index, RunState::Failed(source.to_string()));
            let _ = failed.send(Error::Runnable {
                runnable: name,
                source,
            });
        }
    }
}
