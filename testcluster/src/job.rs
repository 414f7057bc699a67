//! The Job controller: pods for `completions` and `parallelism` (`NonIndexed` and `Indexed`),
//! each finished pod counted once through the `batch.kubernetes.io/job-tracking` finalizer,
//! `backoffLimit` with an exponential delay before replacing failed pods,
//! `activeDeadlineSeconds`, the `SuccessCriteriaMet`/`Complete` and `FailureTarget`/`Failed`
//! conditions of Kubernetes 1.31 and later, and `ttlSecondsAfterFinished` (kube's
//! `pkg/controller/job` and `pkg/controller/ttlafterfinished`).
//!
//! `suspend` deletes the active pods and sets the `Suspended` condition. Not implemented: pod
//! failure policies, success policies, `backoffLimitPerIndex`,
//! `podReplacementPolicy`, and the adoption of orphan pods (a job's pods are those it created).

mod indexes;

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use futures::future::join_all;
use informer_runtime::{Action, Controller, Manager, ScopedLister, scope};
use k8s_openapi::api::{
    batch::v1::{Job, JobCondition, JobStatus, UncountedTerminatedPods},
    core::v1::Pod,
};
use kube::{Api, ResourceExt, core::Selector};
use serde_json::json;

use crate::{api, api::count, clock, owner, pod};

/// The controller's name in logs.
pub(crate) const NAME: &str = "job";

/// The delay before the first failed pod is replaced (kube's `DefaultJobPodFailureBackOff`).
pub(crate) const DEFAULT_BACKOFF: Duration = Duration::from_secs(10);
/// The longest delay before a failed pod is replaced (kube's `MaxJobPodFailureBackOff`).
const MAX_BACKOFF: Duration = Duration::from_secs(600);

/// The finalizer that keeps a pod until the job counted it.
pub(crate) const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// The labels a job's pods carry: the job's uid and name, under both names.
pub(crate) const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
/// See [`CONTROLLER_UID`].
pub(crate) const JOB_NAME: &str = "batch.kubernetes.io/job-name";
/// The index of a pod of an `Indexed` job (annotation and label).
pub(crate) const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// What fails a reconcile of a job.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The pod cache refused the question.
    #[error("failed to read the pod cache: {0}")]
    Cache(#[from] scope::Error),
    /// A pod write failed.
    #[error("failed to {action} pod of job {job}: {source}")]
    Pod {
        /// What was done: create, delete, remove the finalizer of.
        action: &'static str,
        /// The job.
        job: String,
        /// The API's answer.
        source: kube::Error,
    },
    /// A write of the job failed.
    #[error("failed to {action} job {job}: {source}")]
    Job {
        /// What was written: the status, or the deletion after its time to live.
        action: &'static str,
        /// The job.
        job: String,
        /// The API's answer.
        source: kube::Error,
    },
}

struct Context {
    client: kube::Client,
    pods: ScopedLister<Pod>,
    backoff: Duration,
}

/// Adds the controller to `manager`; failed pods are replaced after `backoff`, doubled per
/// failure.
pub(crate) fn register(manager: &mut Manager, backoff: Duration) {
    let factory = manager.factory().clone();
    let controller = Controller::<Job>::new(&factory)
        .name(NAME)
        .owns::<Pod>()
        .concurrency(2);
    let context = Arc::new(Context {
        client: manager.client(),
        pods: factory.informer::<Pod>().lister(),
        backoff,
    });
    manager.add_controller(controller, reconcile, api::retry, context);
}

/// The parts of a reconcile: the job, its APIs, its pods.
struct Sync<'a> {
    job: &'a Job,
    context: &'a Context,
    pods_api: Api<Pod>,
    jobs_api: Api<Job>,
    pods: Vec<Arc<Pod>>,
    status: JobStatus,
    /// The uids of the pods whose finalizer this reconcile removed.
    released: BTreeSet<String>,
}

async fn reconcile(job: Arc<Job>, context: Arc<Context>) -> Result<Action, Error> {
    let namespace = job.namespace().unwrap_or_default();
    let uid = job.uid().unwrap_or_default();
    let pods: Vec<Arc<Pod>> = context.pods.by_namespace(&namespace).list(&Selector::default())?;
    let pods = pods
        .into_iter()
        .filter(|p| owner::controller_of(&p.metadata).is_some_and(|o| o.uid == uid))
        .collect();
    let mut sync = Sync {
        job: &job,
        context: &context,
        pods_api: Api::namespaced(context.client.clone(), &namespace),
        jobs_api: Api::namespaced(context.client.clone(), &namespace),
        pods,
        status: job.status.clone().unwrap_or_default(),
        released: BTreeSet::new(),
    };
    if job.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    sync.count_finished_pods().await?;
    let wait = if is_finished(&sync.status) {
        sync.expire().await?
    } else {
        sync.run().await?
    };
    sync.write_status().await?;
    Ok(wait.map_or_else(Action::await_change, Action::requeue))
}

/// Whether the job has a `Complete` or `Failed` condition.
fn is_finished(status: &JobStatus) -> bool {
    has_condition(status, "Complete") || has_condition(status, "Failed")
}

fn has_condition(status: &JobStatus, type_: &str) -> bool {
    condition(status, type_).is_some()
}

fn condition<'a>(status: &'a JobStatus, type_: &str) -> Option<&'a JobCondition> {
    let conditions = status.conditions.as_deref()?;
    conditions.iter().find(|c| c.type_ == type_ && c.status == "True")
}

fn add_condition(status: &mut JobStatus, type_: &str, reason: &str, message: &str) {
    if has_condition(status, type_) {
        return;
    }
    status.conditions.get_or_insert_with(Vec::new).push(JobCondition {
        type_: type_.to_owned(),
        status: "True".to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_probe_time: Some(clock::now()),
        last_transition_time: Some(clock::now()),
    });
}

fn has_finalizer(pod: &Pod) -> bool {
    pod.finalizers().iter().any(|f| f == TRACKING_FINALIZER)
}

/// kube's `isPodFailed`: failed, or deleted before it succeeded.
fn is_failed(pod: &Pod) -> bool {
    pod::phase(pod) == "Failed"
        || (pod.metadata.deletion_timestamp.is_some() && pod::phase(pod) != "Succeeded")
}

fn is_terminal(pod: &Pod) -> bool {
    pod::phase(pod) == "Succeeded" || is_failed(pod)
}

/// The completion index of a pod of an `Indexed` job.
fn index_of(pod: &Pod) -> Option<i32> {
    pod.annotations().get(COMPLETION_INDEX)?.parse().ok()
}

fn is_indexed(job: &Job) -> bool {
    job.spec.as_ref().and_then(|spec| spec.completion_mode.as_deref()) == Some("Indexed")
}

impl Sync<'_> {
    fn job_name(&self) -> String {
        self.job.name_any()
    }

    /// kube's `trackJobStatusAndRemoveFinalizers`: finished pods are first recorded in
    /// `uncountedTerminatedPods` (written before their finalizer goes, so no pod is counted
    /// twice or lost), then released, then counted.
    async fn count_finished_pods(&mut self) -> Result<(), Error> {
        let mut uncounted = self.status.uncounted_terminated_pods.take().unwrap_or_default();
        let (succeeded, failed) = (
            uncounted.succeeded.get_or_insert_with(Vec::new),
            uncounted.failed.get_or_insert_with(Vec::new),
        );
        let mut recorded = false;
        for pod in self.pods.iter().filter(|p| has_finalizer(p) && is_terminal(p)) {
            let uid = pod.uid().unwrap_or_default();
            if !succeeded.contains(&uid) && !failed.contains(&uid) {
                if pod::phase(pod) == "Succeeded" {
                    succeeded.push(uid)
                } else {
                    failed.push(uid)
                }
                recorded = true;
            }
        }
        if recorded {
            let patch = json!({"status": {"uncountedTerminatedPods": uncounted}});
            api::merge_status(&self.jobs_api, &self.job_name(), &patch)
                .await
                .map_err(|source| Error::Job {
                    action: "update the status of",
                    job: self.job_name(),
                    source,
                })?;
        }
        self.release(&uncounted).await?;
        self.move_to_counts(&uncounted);
        Ok(())
    }

    /// Removes the tracking finalizer from the pods of `uncounted`.
    async fn release(&mut self, uncounted: &UncountedTerminatedPods) -> Result<(), Error> {
        let uids: BTreeSet<&String> = uncounted
            .succeeded
            .iter()
            .chain(&uncounted.failed)
            .flatten()
            .collect();
        let held: Vec<Arc<Pod>> = self
            .pods
            .iter()
            .filter(|p| has_finalizer(p) && p.uid().is_some_and(|u| uids.contains(&u)))
            .cloned()
            .collect();
        let pods_api = &self.pods_api;
        let removals = held.iter().map(|pod| async move {
            let finalizers: Vec<&String> = pod
                .finalizers()
                .iter()
                .filter(|f| *f != TRACKING_FINALIZER)
                .collect();
            let patch = json!({"metadata": {"finalizers": finalizers}});
            match api::merge(pods_api, &pod.name_any(), &patch).await {
                Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
                other => other.map(drop),
            }
        });
        let results: Vec<kube::Result<()>> = join_all(removals).await;
        results
            .into_iter()
            .collect::<kube::Result<Vec<()>>>()
            .map_err(|source| Error::Pod {
                action: "remove the finalizer of",
                job: self.job_name(),
                source,
            })?;
        self.released.extend(held.iter().filter_map(|pod| pod.uid()));
        Ok(())
    }

    /// Adds the pods of `uncounted` (all released now) to `succeeded` and `failed`, and the
    /// indexes of the succeeded ones to `completedIndexes`.
    fn move_to_counts(&mut self, uncounted: &UncountedTerminatedPods) {
        let succeeded = uncounted.succeeded.as_deref().unwrap_or_default();
        let failed = uncounted.failed.as_deref().unwrap_or_default();
        self.status.succeeded = Some(self.status.succeeded.unwrap_or(0) + count(succeeded.len()));
        self.status.failed = Some(self.status.failed.unwrap_or(0) + count(failed.len()));
        if is_indexed(self.job) {
            let mut completed = indexes::parse(self.status.completed_indexes.as_deref());
            let by_uid = |uid: &String| {
                self.pods
                    .iter()
                    .find(|p| p.uid().as_ref() == Some(uid))
                    .and_then(|p| index_of(p))
            };
            completed.extend(succeeded.iter().filter_map(by_uid));
            self.status.completed_indexes = Some(indexes::format(&completed));
        }
        self.status.uncounted_terminated_pods = Some(UncountedTerminatedPods::default());
    }
}

mod run;

#[cfg(test)]
mod tests;
