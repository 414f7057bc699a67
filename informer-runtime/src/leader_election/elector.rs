//! The elector: campaigns for the lease, renews it while leading, releases it on cancel, and
//! campaigns again after losing it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::error::{Error, Result};
use super::leadership::{Leadership, Term};
use super::lease_lock::{self, LeaseLock};
use super::stats::{Counters, LeaderElectionStats};
use super::{JITTER_FACTOR, config::Config};
use crate::deadline::{FAR_FUTURE, saturating_deadline};

/// Competes with the other replicas for one Lease and tells this replica when it leads.
///
/// [`run`](Self::run) drives the election until its token is cancelled; the other methods
/// watch it from anywhere (the elector is a cheap handle: clones share the election).
///
/// # Re-campaigning
///
/// Unlike client-go's `RunOrDie`, which returns once leadership is lost, `run` campaigns again
/// after a loss: the lost [`Leadership`]'s token is cancelled first, and a later acquisition
/// is a new [`Leadership`] with a new [`Term`]. A controller gated on the token stops when its
/// term ends and starts again when [`leading`](Self::leading) resolves again, without
/// restarting the process (its informers, warm on every replica, keep running). Callers that
/// prefer client-go's exit-on-loss cancel the run when the first leadership's token is
/// cancelled.
///
/// # Requests
///
/// Each attempt reads the lease and, to acquire or renew, replaces it with the resourceVersion
/// it read; a 409 means another replica won that round. Each attempt is bounded by half the
/// renew deadline (and, when renewing, by the time left until the deadline), so a hung request
/// cannot keep the leader leading past its deadline. Failed attempts (5xx, timeouts, 409s) are
/// logged with `tracing` and retried after the retry period; they are counted in
/// [`stats`](Self::stats).
#[derive(Clone)]
pub struct LeaderElector {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("config", &self.inner.config)
            .field("leader", &self.leader())
            .field("is_leader", &self.is_leader())
            .finish_non_exhaustive()
    }
}

struct Inner {
    config: Config,
    lock: LeaseLock,
    state: watch::Sender<State>,
    leader: watch::Sender<Option<String>>,
    running: AtomicBool,
    counters: Counters,
}

#[derive(Debug, Clone)]
enum State {
    /// `run` has not been called.
    Idle,
    /// Running, not leading.
    Campaigning,
    /// Running and leading.
    Leading(Leadership),
    /// `run` ended.
    Stopped,
}

/// What this replica last saw of the lease.
#[derive(Debug, Default)]
pub(crate) struct Observation {
    /// The spec last read or written.
    pub(crate) spec: Option<LeaseSpec>,
    /// When the spec last changed, on this replica's monotonic clock.
    pub(crate) changed_at: Option<Instant>,
    /// The lease last read or written (its resourceVersion guards the next write).
    pub(crate) lease: Option<Lease>,
}

/// The result of one successful round of try-acquire-or-renew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// This replica holds the lease: it acquired or renewed it with a request sent at
    /// `sent_at`.
    Holding {
        sent_at: Instant,
        term: Term,
        /// The resourceVersion of the Lease as written, when this write took the Lease over:
        /// created it, or took it from another holder or from none (not when this replica's
        /// identity held it already).
        taken_over_at: Option<String>,
    },
    /// Another replica holds the lease and it has not expired.
    HeldByOther { holder: String },
    /// This replica was leading but the lease names another holder, or is gone.
    Lost { holder: String },
}

/// Why a term ended.
enum Ended {
    Cancelled,
    DeadlinePassed,
    TakenOver { holder: String },
}

impl LeaderElector {
    /// An elector for the lease of `config`, validated (see [`Config::validate`]). It does
    /// nothing until [`run`](Self::run).
    pub fn new(client: kube::Client, config: Config) -> Result<Self> {
        config.validate()?;
        let lock = LeaseLock::new(
            client,
            &config.namespace,
            &config.lease_name,
            config.labels.clone(),
        );
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                lock,
                state: watch::Sender::new(State::Idle),
                leader: watch::Sender::new(None),
                running: AtomicBool::new(false),
                counters: Counters::default(),
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Campaigns for the lease, leads while it holds it, campaigns again after losing it,
    /// until `cancel` is cancelled (see the [type's docs](Self) on re-campaigning). On cancel,
    /// the current leadership's token is cancelled and, with
    /// [`release_on_cancel`](Config::release_on_cancel), the lease is released. Dropping the
    /// future cancels the leadership's token too, without releasing.
    ///
    /// Errors: [`Error::AlreadyRunning`] if another `run` of this elector is active. Failures
    /// of lease requests are retried, not returned.
    pub async fn run(&self, cancel: CancellationToken) -> Result<()> {
        let config = &self.inner.config;
        if self.inner.running.swap(true, Ordering::AcqRel) {
            return Err(Error::AlreadyRunning {
                lease: config.lease(),
            });
        }
        let _running = RunGuard(&self.inner);
        let span = tracing::info_span!(
            "leader_election",
            name = %config.name,
            lease = %config.lease(),
            identity = %config.identity,
        );
        self.campaign(cancel).instrument(span).await;
        Ok(())
    }

    /// Waits until this replica leads and returns its [`Leadership`]; at once if it leads
    /// now. A leadership that has just ended is never returned. Before [`run`](Self::run) is
    /// called, it waits for it.
    ///
    /// Errors: [`Error::Stopped`] once the run ended.
    pub async fn leading(&self) -> Result<Leadership> {
        let mut state = self.inner.state.subscribe();
        loop {
            match &*state.borrow_and_update() {
                State::Leading(leadership) if leadership.is_current() => return Ok(leadership.clone()),
                State::Stopped => {
                    return Err(Error::Stopped {
                        lease: self.inner.config.lease(),
                    });
                }
                // a leadership that just ended: the state turns to campaigning next
                State::Idle | State::Campaigning | State::Leading(_) => {}
            }
            if state.changed().await.is_err() {
                return Err(Error::Stopped {
                    lease: self.inner.config.lease(),
                });
            }
        }
    }

    /// The current leadership, if this replica leads.
    pub fn leadership(&self) -> Option<Leadership> {
        match &*self.inner.state.borrow() {
            State::Leading(leadership) if leadership.is_current() => Some(leadership.clone()),
            _ => None,
        }
    }

    /// Whether this replica leads now (see [`Leadership::is_current`]).
    pub fn is_leader(&self) -> bool {
        self.leadership().is_some()
    }

    /// The holder of the lease as this replica last observed it (`None`: nobody, or not read
    /// yet).
    pub fn leader(&self) -> Option<String> {
        self.inner.leader.borrow().clone()
    }

    /// A receiver of the lease's holder, changed each time this replica observes a new
    /// holder (client-go's `OnNewLeader`):
    ///
    /// ```no_run
    /// # async fn f(elector: informer_runtime::leader_election::LeaderElector) {
    /// let mut leader = elector.watch_leader();
    /// while leader.changed().await.is_ok() {
    ///     let holder = leader.borrow_and_update().clone();
    ///     tracing::info!(?holder, "new leader");
    /// }
    /// # }
    /// ```
    pub fn watch_leader(&self) -> watch::Receiver<Option<String>> {
        self.inner.leader.subscribe()
    }

    /// Counters of acquisitions, renewals, failures and observed transitions.
    pub fn stats(&self) -> LeaderElectionStats {
        self.inner.counters.snapshot()
    }

    async fn campaign(&self, cancel: CancellationToken) {
        self.inner.state.send_replace(State::Campaigning);
        let mut observation = Observation::default();
        while let Some(leadership) = self.acquire(&mut observation, &cancel).await {
            self.lead(&mut observation, leadership, &cancel).await;
            if cancel.is_cancelled() {
                break;
            }
            tracing::info!("campaigning again");
        }
    }

    /// Tries to acquire every retry period (with jitter) until it succeeds (`Some`) or
    /// `cancel` is cancelled (`None`).
    async fn acquire(&self, observation: &mut Observation, cancel: &CancellationToken) -> Option<Leadership> {
        let config = &self.inner.config;
        tracing::info!("campaigning for the lease");
        loop {
            let attempt = tokio::select! {
                biased;
                _ = cancel.cancelled() => return None,
                attempt = self.attempt(observation, None, config.renew_deadline / 2, "acquire") => attempt,
            };
            match attempt {
                Ok(Attempt::Holding {
                    sent_at,
                    term,
                    taken_over_at,
                }) => {
                    let leadership =
                        Leadership::new(term, saturating_deadline(sent_at, config.renew_deadline));
                    return Some(leadership.taken_over_at(taken_over_at));
                }
                Ok(Attempt::HeldByOther { holder } | Attempt::Lost { holder }) => {
                    tracing::debug!(%holder, "the lease is held by another replica");
                }
                Err(error) if error.is_conflict() => {
                    tracing::debug!(error = %error, "another replica wrote the lease first");
                }
                Err(error) => {
                    self.inner.counters.failed_acquisitions.bump();
                    tracing::warn!(
                        error = &error as &dyn std::error::Error,
                        status = error.status_code(),
                        "failed to acquire the lease"
                    );
                }
            }
            let wait = saturating_deadline(Instant::now(), jittered(config.retry_period));
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return None,
                _ = tokio::time::sleep_until(wait) => {}
            }
        }
    }

    /// Leads until the leadership ends, then cancels its token (and releases the lease if
    /// cancelled and configured to).
    async fn lead(&self, observation: &mut Observation, leadership: Leadership, cancel: &CancellationToken) {
        let _end = EndOnDrop(leadership.clone());
        let counters = &self.inner.counters;
        counters.acquisitions.bump();
        self.inner.state.send_replace(State::Leading(leadership.clone()));
        tracing::info!(term = %leadership.term(), "started leading");
        let ended = self.renew(observation, &leadership, cancel).await;
        leadership.end();
        self.inner.state.send_replace(State::Campaigning);
        match ended {
            Ended::Cancelled => {
                tracing::info!(term = %leadership.term(), "stopped leading: cancelled");
                if self.inner.config.release_on_cancel {
                    self.release(observation).await;
                }
            }
            Ended::DeadlinePassed => {
                counters.leadership_lost.bump();
                tracing::warn!(
                    term = %leadership.term(),
                    renew_deadline = ?self.inner.config.renew_deadline,
                    "stopped leading: failed to renew the lease within the renew deadline"
                );
            }
            Ended::TakenOver { holder } => {
                counters.leadership_lost.bump();
                tracing::warn!(
                    term = %leadership.term(),
                    %holder,
                    "stopped leading: the lease is held by another replica"
                );
            }
        }
    }

    /// Renews every retry period; retries failed renewals until the renew deadline.
    async fn renew(
        &self,
        observation: &mut Observation,
        leadership: &Leadership,
        cancel: &CancellationToken,
    ) -> Ended {
        let config = &self.inner.config;
        let counters = &self.inner.counters;
        loop {
            let next = saturating_deadline(Instant::now(), config.retry_period);
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Ended::Cancelled,
                _ = tokio::time::sleep_until(next.min(leadership.valid_until())) => {}
            }
            loop {
                let now = Instant::now();
                let deadline = leadership.valid_until();
                if now >= deadline {
                    return Ended::DeadlinePassed;
                }
                let timeout = (deadline - now).min(config.renew_deadline / 2);
                let attempt = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Ended::Cancelled,
                    attempt = self.attempt(observation, Some(leadership.term()), timeout, "renew") => attempt,
                };
                match attempt {
                    Ok(Attempt::Holding { sent_at, .. }) => {
                        leadership.extend(saturating_deadline(sent_at, config.renew_deadline));
                        counters.renewals.bump();
                        tracing::trace!("renewed the lease");
                        break;
                    }
                    Ok(Attempt::HeldByOther { holder } | Attempt::Lost { holder }) => {
                        return Ended::TakenOver { holder };
                    }
                    Err(error) => {
                        counters.failed_renewals.bump();
                        tracing::warn!(
                            error = &error as &dyn std::error::Error,
                            status = error.status_code(),
                            "failed to renew the lease"
                        );
                    }
                }
                let retry = saturating_deadline(Instant::now(), config.retry_period);
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Ended::Cancelled,
                    _ = tokio::time::sleep_until(retry.min(leadership.valid_until())) => {}
                }
            }
        }
    }

    /// One try-acquire-or-renew, bounded by `timeout`.
    async fn attempt(
        &self,
        observation: &mut Observation,
        leading: Option<&Term>,
        timeout: Duration,
        action: &'static str,
    ) -> Result<Attempt> {
        let deadline = saturating_deadline(Instant::now(), timeout);
        tokio::time::timeout_at(deadline, self.try_acquire_or_renew(observation, leading))
            .await
            .unwrap_or_else(|_| {
                Err(Error::Timeout {
                    action,
                    lease: self.inner.config.lease(),
                    timeout,
                })
            })
    }

    /// client-go's `tryAcquireOrRenew`: reads the lease (creating it if absent); gives up if
    /// another replica holds it and it has not expired by this replica's clock; otherwise
    /// writes this replica as the holder. `leading` is the current term when renewing.
    pub(crate) async fn try_acquire_or_renew(
        &self,
        observation: &mut Observation,
        leading: Option<&Term>,
    ) -> Result<Attempt> {
        let config = &self.inner.config;
        let me = config.identity.as_str();
        let Some(lease) = self.inner.lock.get().await? else {
            if leading.is_some() {
                return Ok(Attempt::Lost {
                    holder: String::new(),
                });
            }
            let now = lease_lock::now();
            let spec = LeaseSpec {
                holder_identity: Some(me.to_string()),
                lease_duration_seconds: Some(config.lease_duration_seconds()),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                lease_transitions: Some(0),
                ..LeaseSpec::default()
            };
            let sent_at = Instant::now();
            let created = self.inner.lock.create(spec).await?;
            self.observe(observation, &created);
            return Ok(Attempt::Holding {
                taken_over_at: created.metadata.resource_version.clone(),
                sent_at,
                term: Term {
                    transitions: 0,
                    holder: me.to_string(),
                },
            });
        };
        self.observe(observation, &lease);
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = lease_lock::holder(&spec);
        if leading.is_some() && holder != me {
            return Ok(Attempt::Lost {
                holder: holder.to_string(),
            });
        }
        if !holder.is_empty() && holder != me {
            let changed_at = observation.changed_at.unwrap_or_else(Instant::now);
            if Instant::now() < saturating_deadline(changed_at, held_for(&spec, config)) {
                return Ok(Attempt::HeldByOther {
                    holder: holder.to_string(),
                });
            }
        }
        // a write that takes the Lease over from another holder, or from none
        let taken_over = leading.is_none() && holder != me;
        let now = lease_lock::now();
        let renewed = match leading {
            // the term goes on: same acquire time and transitions
            Some(term) => LeaseSpec {
                holder_identity: Some(me.to_string()),
                lease_duration_seconds: Some(config.lease_duration_seconds()),
                renew_time: Some(now),
                lease_transitions: Some(term.transitions),
                ..spec
            },
            // a new term, even if the lease still names this replica (it stopped leading, or
            // restarted): every term gets its own transitions number
            None => LeaseSpec {
                holder_identity: Some(me.to_string()),
                lease_duration_seconds: Some(config.lease_duration_seconds()),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                lease_transitions: Some(spec.lease_transitions.unwrap_or(0).saturating_add(1)),
                ..spec
            },
        };
        let transitions = renewed.lease_transitions.unwrap_or(0);
        let sent_at = Instant::now();
        let written = self.inner.lock.update(&lease, renewed, "update").await?;
        self.observe(observation, &written);
        Ok(Attempt::Holding {
            taken_over_at: taken_over
                .then(|| written.metadata.resource_version.clone())
                .flatten(),
            sent_at,
            term: Term {
                transitions,
                holder: me.to_string(),
            },
        })
    }

    /// Gives the lease up, if the last version this replica wrote is still the current one,
    /// writing the record client-go's `LeaderElector.release` writes: an empty holder
    /// (`holderIdentity: ""`), a lease duration of 1 s, acquire and renew time now, the lease
    /// transitions kept, and no preferred holder or strategy.
    pub(crate) async fn release(&self, observation: &mut Observation) {
        let config = &self.inner.config;
        let Some(lease) = observation.lease.clone() else {
            return;
        };
        let spec = lease.spec.clone().unwrap_or_default();
        if lease_lock::holder(&spec) != config.identity {
            tracing::debug!("not releasing the lease: this replica does not hold it");
            return;
        }
        let now = lease_lock::now();
        let released = LeaseSpec {
            holder_identity: Some(String::new()),
            lease_duration_seconds: Some(1),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            lease_transitions: Some(spec.lease_transitions.unwrap_or(0)),
            // client-go writes the whole spec from its record: `preferredHolder` and
            // `strategy` are left out
            ..LeaseSpec::default()
        };
        let timeout = config.renew_deadline / 2;
        let deadline = saturating_deadline(Instant::now(), timeout);
        match tokio::time::timeout_at(deadline, self.inner.lock.update(&lease, released, "release")).await {
            Ok(Ok(written)) => {
                self.observe(observation, &written);
                self.inner.counters.releases.bump();
                tracing::info!("released the lease");
            }
            Ok(Err(error)) if error.is_conflict() => {
                tracing::info!("not releasing the lease: it changed since this replica last wrote it");
            }
            Ok(Err(error)) => {
                tracing::warn!(
                    error = &error as &dyn std::error::Error,
                    status = error.status_code(),
                    "failed to release the lease"
                );
            }
            Err(_) => tracing::warn!(?timeout, "failed to release the lease: no answer in time"),
        }
    }

    /// Records what was read or written: a changed spec restarts the expiry clock, a new
    /// holder is published.
    fn observe(&self, observation: &mut Observation, lease: &Lease) {
        let spec = lease.spec.clone().unwrap_or_default();
        if observation.spec.as_ref() != Some(&spec) {
            let before = observation
                .spec
                .as_ref()
                .map(lease_lock::holder)
                .unwrap_or_default();
            let holder = lease_lock::holder(&spec);
            if !holder.is_empty() && holder != before {
                self.inner.counters.transitions_observed.bump();
            }
            let leader = (!holder.is_empty()).then(|| holder.to_string());
            self.inner.leader.send_if_modified(|current| {
                let changed = *current != leader;
                *current = leader;
                changed
            });
            observation.spec = Some(spec);
            observation.changed_at = Some(Instant::now());
        }
        observation.lease = Some(lease.clone());
    }
}

/// Marks the run ended, even if its future is dropped.
struct RunGuard<'a>(&'a Inner);

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.state.send_replace(State::Stopped);
        self.0.running.store(false, Ordering::Release);
    }
}

/// Ends a leadership when the future leading it is dropped.
struct EndOnDrop(Leadership);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// `period` stretched by a random factor in `[1, 1 + JITTER_FACTOR)`, saturating.
fn jittered(period: Duration) -> Duration {
    let factor = 1.0 + fastrand::f64() * JITTER_FACTOR;
    Duration::try_from_secs_f64(period.as_secs_f64() * factor)
        .unwrap_or(FAR_FUTURE)
        .min(FAR_FUTURE)
}

/// How long the holder named in `spec` holds the lease from its last change: the
/// `leaseDurationSeconds` it wrote (as client-go reads it: a sharder that takes a shard's
/// lease writes twice the shard's duration), or this replica's own lease duration if the
/// lease names none.
fn held_for(spec: &LeaseSpec, config: &Config) -> Duration {
    spec.lease_duration_seconds
        .and_then(|seconds| u64::try_from(seconds).ok())
        .filter(|seconds| *seconds > 0)
        .map_or(config.lease_duration, Duration::from_secs)
}
