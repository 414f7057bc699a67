//! A job that has not finished: its success or failure decided, its pods created, replaced
//! after a backoff, or deleted; and the end of a finished job's time to live.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use futures::future::join_all;
use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::Time};
use kube::{
    ResourceExt,
    api::{DeleteParams, PostParams},
};
use serde_json::json;

use super::{
    COMPLETION_INDEX, CONTROLLER_UID, Error, JOB_NAME, MAX_BACKOFF, Sync, TRACKING_FINALIZER, add_condition,
    condition, has_condition, has_finalizer, index_of, indexes, is_failed, is_indexed,
};
use crate::{api, api::count, clock, owner, pod};

/// Why a job fails: reason and message of its `FailureTarget` and `Failed` conditions.
type Failure = (&'static str, &'static str);

impl Sync<'_> {
    /// Decides success or failure; a job that has decided removes its active pods and then
    /// finishes, one that has not gets its pods. When to look again, if at all.
    pub(super) async fn run(&mut self) -> Result<Option<Duration>, Error> {
        let active: Vec<Arc<Pod>> = self.pods.iter().filter(|p| pod::is_active(p)).cloned().collect();
        let suspended = self.job.spec.as_ref().and_then(|spec| spec.suspend) == Some(true);
        self.set_suspended(suspended);
        if suspended {
            self.delete_pods(&active).await?;
            return Ok(None);
        }
        self.status.start_time.get_or_insert_with(clock::now);
        if !has_condition(&self.status, "FailureTarget") && !has_condition(&self.status, "SuccessCriteriaMet")
        {
            if let Some((reason, message)) = self.failure() {
                add_condition(&mut self.status, "FailureTarget", reason, message);
            } else if self.succeeded_enough(active.len()) {
                add_condition(
                    &mut self.status,
                    "SuccessCriteriaMet",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                );
            }
        }
        if has_condition(&self.status, "FailureTarget") || has_condition(&self.status, "SuccessCriteriaMet") {
            self.delete_pods(&active).await?;
            self.finish_when_released(active.is_empty());
            return Ok(None);
        }
        let backoff = self.manage_pods(&active).await?;
        Ok([backoff, self.deadline_left()].into_iter().flatten().min())
    }

    fn spec_value(&self, field: fn(&k8s_openapi::api::batch::v1::JobSpec) -> Option<i32>) -> Option<i32> {
        self.job.spec.as_ref().and_then(field)
    }

    /// kube's handling of `suspend`: a suspended job has a `Suspended` condition (reason
    /// `JobSuspended`) and no start time, and its active pods go; resumed, the condition turns
    /// `False` (`JobResumed`) and the job starts anew.
    fn set_suspended(&mut self, suspended: bool) {
        let conditions = self.status.conditions.get_or_insert_with(Vec::new);
        let current = conditions.iter_mut().find(|c| c.type_ == "Suspended");
        let (status, reason, message) = if suspended {
            ("True", "JobSuspended", "Job suspended")
        } else {
            ("False", "JobResumed", "Job resumed")
        };
        match current {
            Some(condition) if condition.status == status => return,
            Some(condition) => {
                condition.status = status.to_owned();
                condition.reason = Some(reason.to_owned());
                condition.message = Some(message.to_owned());
                condition.last_probe_time = Some(clock::now());
                condition.last_transition_time = Some(clock::now());
            }
            None if suspended => add_condition(&mut self.status, "Suspended", reason, message),
            None => return,
        }
        if suspended {
            self.status.start_time = None;
        }
    }

    /// kube's `pastBackoffLimitOnFailure` and `pastActiveDeadline`.
    fn failure(&self) -> Option<Failure> {
        let backoff_limit = self.spec_value(|spec| spec.backoff_limit).unwrap_or(6);
        if self.status.failed.unwrap_or(0) > backoff_limit {
            return Some((
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            ));
        }
        let deadline_passed = self.active_deadline().is_some() && self.deadline_left().is_none();
        deadline_passed.then_some((
            "DeadlineExceeded",
            "Job was active longer than specified deadline",
        ))
    }

    fn active_deadline(&self) -> Option<Duration> {
        let seconds = self.job.spec.as_ref()?.active_deadline_seconds?;
        Some(clock::seconds(seconds))
    }

    /// How long until `activeDeadlineSeconds` has passed; `None` without a deadline or once
    /// it has passed.
    fn deadline_left(&self) -> Option<Duration> {
        clock::remaining(self.status.start_time.as_ref()?, self.active_deadline()?)
    }

    fn succeeded_enough(&self, active: usize) -> bool {
        let succeeded = self.status.succeeded.unwrap_or(0);
        match self.spec_value(|spec| spec.completions) {
            Some(completions) if is_indexed(self.job) => {
                count(indexes::parse(self.status.completed_indexes.as_deref()).len()) >= completions
            }
            Some(completions) => succeeded >= completions,
            None => succeeded > 0 && active == 0,
        }
    }

    /// Adds `Failed` or `Complete` once no pod is active and every finished pod was counted.
    fn finish_when_released(&mut self, no_active: bool) {
        let held = self
            .pods
            .iter()
            .any(|p| has_finalizer(p) && !p.uid().is_some_and(|uid| self.released.contains(&uid)));
        if !no_active || held {
            return;
        }
        if let Some(target) = condition(&self.status, "FailureTarget").cloned() {
            let (reason, message) = (
                target.reason.unwrap_or_default(),
                target.message.unwrap_or_default(),
            );
            add_condition(&mut self.status, "Failed", &reason, &message);
        } else {
            add_condition(
                &mut self.status,
                "Complete",
                "CompletionsReached",
                "Reached expected number of succeeded pods",
            );
            self.status.completion_time = Some(clock::now());
        }
    }

    /// Creates the missing pods (after the backoff of earlier failures) and deletes the
    /// surplus; how long the backoff still holds creations back.
    async fn manage_pods(&self, active: &[Arc<Pod>]) -> Result<Option<Duration>, Error> {
        let parallelism = usize::try_from(self.spec_value(|spec| spec.parallelism).unwrap_or(1)).unwrap_or(0);
        let (to_create, surplus) = if is_indexed(self.job) {
            self.indexed_plan(active, parallelism)
        } else {
            self.non_indexed_plan(active, parallelism)
        };
        self.delete_pods(&surplus).await?;
        if to_create.is_empty() {
            return Ok(None);
        }
        if let Some(left) = self.backoff_left() {
            return Ok(Some(left));
        }
        let new_pods: Vec<Pod> = to_create.into_iter().map(|index| self.new_pod(index)).collect();
        let pods_api = &self.pods_api;
        api::slow_start(new_pods.len(), |i| {
            let new_pod = &new_pods[i];
            async move { pods_api.create(&PostParams::default(), new_pod).await.map(drop) }
        })
        .await
        .map_err(|source| Error::Pod {
            action: "create",
            job: self.job_name(),
            source,
        })?;
        Ok(None)
    }

    /// `NonIndexed`: as many pods as completions are left, at most `parallelism`; none more
    /// once one succeeded without `completions` (a work queue).
    fn non_indexed_plan(&self, active: &[Arc<Pod>], parallelism: usize) -> (Vec<Option<i32>>, Vec<Arc<Pod>>) {
        let succeeded = usize::try_from(self.status.succeeded.unwrap_or(0)).unwrap_or(0);
        let wanted = match self.spec_value(|spec| spec.completions) {
            Some(completions) => usize::try_from(completions)
                .unwrap_or(0)
                .saturating_sub(succeeded)
                .min(parallelism),
            None if succeeded > 0 => active.len(),
            None => parallelism,
        };
        let create = vec![None; wanted.saturating_sub(active.len())];
        (create, surplus(active, wanted))
    }

    /// `Indexed`: a pod per index neither completed nor running, lowest first, at most
    /// `parallelism` at once; pods of completed, duplicate or out-of-range indexes go.
    fn indexed_plan(&self, active: &[Arc<Pod>], parallelism: usize) -> (Vec<Option<i32>>, Vec<Arc<Pod>>) {
        let completions = self.spec_value(|spec| spec.completions).unwrap_or(0);
        let completed = indexes::parse(self.status.completed_indexes.as_deref());
        let mut running = std::collections::BTreeSet::new();
        let (mut keep, mut extra) = (Vec::new(), Vec::new());
        for pod in active {
            match index_of(pod) {
                Some(index)
                    if index < completions && !completed.contains(&index) && running.insert(index) =>
                {
                    keep.push(Arc::clone(pod))
                }
                _ => extra.push(Arc::clone(pod)),
            }
        }
        extra.extend(surplus(&keep, parallelism));
        let room = parallelism.saturating_sub(keep.len().min(parallelism));
        let missing = (0..completions).filter(|i| !completed.contains(i) && !running.contains(i));
        (missing.take(room).map(Some).collect(), extra)
    }

    /// How long the backoff after the latest failure still lasts: `backoff * 2^(failures-1)`,
    /// at most [`MAX_BACKOFF`].
    fn backoff_left(&self) -> Option<Duration> {
        let failures = u32::try_from(self.status.failed.unwrap_or(0))
            .ok()
            .filter(|f| *f > 0)?;
        let delay = self
            .context
            .backoff
            .saturating_mul(2_u32.saturating_pow(failures - 1))
            .min(MAX_BACKOFF);
        let last = self
            .pods
            .iter()
            .filter(|p| is_failed(p))
            .filter_map(|p| finished_at(p))
            .max_by_key(|t| t.0)?;
        clock::remaining(&last, delay)
    }

    /// A pod of the job's template, with the job's labels and tracking finalizer.
    fn new_pod(&self, index: Option<i32>) -> Pod {
        let (name, uid) = (self.job_name(), self.job.uid().unwrap_or_default());
        let mut labels = BTreeMap::from([
            (CONTROLLER_UID.to_owned(), uid.clone()),
            (JOB_NAME.to_owned(), name.clone()),
            ("controller-uid".to_owned(), uid),
            ("job-name".to_owned(), name.clone()),
        ]);
        let prefix = match index {
            Some(index) => {
                labels.insert(COMPLETION_INDEX.to_owned(), index.to_string());
                pod::generate_name(&format!("{name}-{index}"))
            }
            None => pod::generate_name(&name),
        };
        let template = self
            .job
            .spec
            .as_ref()
            .map(|spec| &spec.template)
            .cloned()
            .unwrap_or_default();
        let namespace = self.job.namespace().unwrap_or_default();
        let mut new_pod = pod::from_template(
            &template,
            &namespace,
            prefix,
            owner::controller_reference(self.job),
            labels,
        );
        new_pod
            .metadata
            .finalizers
            .get_or_insert_with(Vec::new)
            .push(TRACKING_FINALIZER.to_owned());
        if let Some(index) = index {
            new_pod
                .metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(COMPLETION_INDEX.to_owned(), index.to_string());
        }
        new_pod
    }

    async fn delete_pods(&self, pods: &[Arc<Pod>]) -> Result<(), Error> {
        let deletes = pods
            .iter()
            .map(|pod| async move { api::delete(&self.pods_api, &pod.name_any()).await });
        let results: Vec<kube::Result<()>> = join_all(deletes).await;
        results
            .into_iter()
            .collect::<kube::Result<Vec<()>>>()
            .map(drop)
            .map_err(|source| Error::Pod {
                action: "delete",
                job: self.job_name(),
                source,
            })
    }

    /// kube's `ttlafterfinished` controller: a finished job is deleted (with its pods, in the
    /// foreground) `ttlSecondsAfterFinished` after it finished. When to look again.
    pub(super) async fn expire(&self) -> Result<Option<Duration>, Error> {
        let Some(ttl) = self
            .job
            .spec
            .as_ref()
            .and_then(|spec| spec.ttl_seconds_after_finished)
        else {
            return Ok(None);
        };
        let finished = condition(&self.status, "Complete").or_else(|| condition(&self.status, "Failed"));
        let Some(since) = finished.and_then(|c| c.last_transition_time.as_ref()) else {
            return Ok(None);
        };
        if let Some(left) = clock::remaining(since, clock::seconds(i64::from(ttl))) {
            return Ok(Some(left));
        }
        match self
            .jobs_api
            .delete(&self.job_name(), &DeleteParams::foreground())
            .await
        {
            Ok(_) => Ok(None),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(source) => Err(Error::Job {
                action: "delete the expired",
                job: self.job_name(),
                source,
            }),
        }
    }

    /// Writes the status with the counts of the pods, when it changed.
    pub(super) async fn write_status(&mut self) -> Result<(), Error> {
        let active = self.pods.iter().filter(|p| pod::is_active(p));
        self.status.active = Some(count(active.clone().count()));
        self.status.ready = Some(count(active.filter(|p| pod::is_ready(p)).count()));
        let terminating = self.pods.iter().filter(|p| {
            p.metadata.deletion_timestamp.is_some() && !matches!(pod::phase(p), "Succeeded" | "Failed")
        });
        self.status.terminating = Some(count(terminating.count()));
        if api::same(&self.job.status.as_ref(), &Some(&self.status)) {
            return Ok(());
        }
        let mut status = serde_json::to_value(&self.status).unwrap_or_default();
        // a merge patch keeps lists it does not name: clear the recorded uids explicitly
        status["uncountedTerminatedPods"] = json!({"succeeded": null, "failed": null});
        if self.status.start_time.is_none() {
            // suspended: the start time goes
            status["startTime"] = serde_json::Value::Null;
        }
        api::merge_status(&self.jobs_api, &self.job_name(), &json!({"status": status}))
            .await
            .map(drop)
            .map_err(|source| Error::Job {
                action: "update the status of",
                job: self.job_name(),
                source,
            })
    }
}

/// The pods of `active` beyond `wanted`, in kube's deletion order.
fn surplus(active: &[Arc<Pod>], wanted: usize) -> Vec<Arc<Pod>> {
    let mut doomed: Vec<Arc<Pod>> = active.to_vec();
    doomed.sort_by(|a, b| pod::deletion_order(a, b));
    doomed.truncate(active.len().saturating_sub(wanted));
    doomed
}

/// When the pod finished: its containers' latest end, else the last change of its `Ready`
/// condition, else its deletion.
fn finished_at(pod: &Pod) -> Option<Time> {
    let status = pod.status.as_ref();
    let containers = status
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    let ended = containers
        .iter()
        .filter_map(|c| c.state.as_ref()?.terminated.as_ref()?.finished_at.clone());
    let ready = status
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .filter(|c| c.type_ == "Ready")
        .filter_map(|c| c.last_transition_time.clone());
    ended
        .chain(ready)
        .chain(pod.metadata.deletion_timestamp.clone())
        .max_by_key(|t| t.0)
}
