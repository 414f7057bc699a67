//! The CronJob controller: a Job per scheduled time (the most recent one missed, within
//! `startingDeadlineSeconds`), named `<cronjob>-<minutes since the epoch>`, under the
//! `Allow`, `Forbid` and `Replace` concurrency policies, `suspend`, the history limits of
//! finished jobs, and status `active`, `lastScheduleTime`, `lastSuccessfulTime` (kube's
//! `pkg/controller/cronjob`). Schedules are standard five-field cron expressions (and
//! `@hourly`-style macros), parsed by `croner`, evaluated in UTC: `timeZone` and `TZ=`
//! prefixes are not supported.

use std::{sync::Arc, time::Duration};

use croner::Cron;
use informer_runtime::{Action, Controller, Manager, ScopedLister, scope};
use k8s_openapi::{
    api::{
        batch::v1::{CronJob, CronJobStatus, Job},
        core::v1::ObjectReference,
    },
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::{Timestamp, Zoned, tz::TimeZone},
};
use kube::{Api, ResourceExt, api::PostParams, core::Selector};
use serde_json::json;

use crate::{api, clock, owner};

/// The controller's name in logs.
pub(crate) const NAME: &str = "cronjob";

/// The annotation of a job's scheduled time.
pub(crate) const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// At most this many missed schedules are looked at (kube gives up after 100 too).
const MAX_MISSED: usize = 100;

/// What fails a reconcile of a cron job.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The job cache refused the question.
    #[error("failed to read the job cache: {0}")]
    Cache(#[from] scope::Error),
    /// A write failed.
    #[error("failed to {action} of cron job {owner}: {source}")]
    Write {
        /// What was done.
        action: &'static str,
        /// The cron job.
        owner: String,
        /// The API's answer.
        source: kube::Error,
    },
}

struct Context {
    client: kube::Client,
    jobs: ScopedLister<Job>,
}

/// Adds the controller to `manager`.
pub(crate) fn register(manager: &mut Manager) {
    let factory = manager.factory().clone();
    let controller = Controller::<CronJob>::new(&factory).name(NAME).owns::<Job>();
    let context = Arc::new(Context {
        client: manager.client(),
        jobs: factory.informer::<Job>().lister(),
    });
    manager.add_controller(controller, reconcile, api::retry, context);
}

async fn reconcile(cron_job: Arc<CronJob>, context: Arc<Context>) -> Result<Action, Error> {
    if cron_job.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let namespace = cron_job.namespace().unwrap_or_default();
    let uid = cron_job.uid().unwrap_or_default();
    let mut jobs: Vec<Arc<Job>> = context.jobs.by_namespace(&namespace).list(&Selector::default())?;
    jobs.retain(|job| owner::controller_of(&job.metadata).is_some_and(|o| o.uid == uid));
    let jobs_api: Api<Job> = Api::namespaced(context.client.clone(), &namespace);
    let write_error = |action| {
        let owner = cron_job.name_any();
        move |source| Error::Write {
            action,
            owner,
            source,
        }
    };
    let mut status = CronJobStatus {
        active: Some(
            jobs.iter()
                .filter(|job| finished(job).is_none())
                .map(|job| reference(job))
                .collect(),
        ),
        ..cron_job.status.clone().unwrap_or_default()
    };
    let succeeded = jobs.iter().filter(|job| finished(job) == Some(true));
    let last_success = succeeded
        .filter_map(|job| job.status.as_ref()?.completion_time.clone())
        .max_by_key(|t| t.0);
    status.last_successful_time = last_success.or(status.last_successful_time);
    for name in history_to_delete(&cron_job, &jobs) {
        api::delete(&jobs_api, &name)
            .await
            .map_err(write_error("delete an old job"))?;
    }
    let schedule = cron_job.spec.schedule.parse::<Cron>().ok();
    let next = match schedule.as_ref() {
        Some(schedule) if cron_job.spec.suspend != Some(true) => {
            run_due(&cron_job, schedule, &jobs, &mut status, &jobs_api)
                .await
                .map_err(write_error("create a job"))?;
            next_after(schedule, Timestamp::now())
        }
        _ => None,
    };
    if !api::same(&cron_job.status.as_ref(), &Some(&status)) {
        let cron_jobs: Api<CronJob> = Api::namespaced(context.client.clone(), &namespace);
        api::merge_status(&cron_jobs, &cron_job.name_any(), &json!({"status": status}))
            .await
            .map_err(write_error("update the status"))?;
    }
    Ok(next.map_or_else(Action::await_change, |at| {
        Action::requeue(until(at) + Duration::from_millis(100))
    }))
}

/// Starts the job of the most recent schedule missed, as the concurrency policy allows.
async fn run_due(
    cron_job: &CronJob,
    schedule: &Cron,
    jobs: &[Arc<Job>],
    status: &mut CronJobStatus,
    jobs_api: &Api<Job>,
) -> kube::Result<()> {
    let Some(scheduled) = most_recent_missed(cron_job, schedule) else {
        return Ok(());
    };
    let active: Vec<&Arc<Job>> = jobs.iter().filter(|job| finished(job).is_none()).collect();
    match cron_job.spec.concurrency_policy.as_deref() {
        Some("Forbid") if !active.is_empty() => return Ok(()),
        Some("Replace") => {
            for job in &active {
                api::delete(jobs_api, &job.name_any()).await?;
            }
            status.active = Some(Vec::new());
        }
        _ => {}
    }
    let job = job_for(cron_job, scheduled);
    let created = match jobs_api.create(&PostParams::default(), &job).await {
        Ok(created) => created,
        Err(kube::Error::Api(answer)) if answer.code == 409 => jobs_api.get(&job.name_any()).await?,
        Err(error) => return Err(error),
    };
    tracing::debug!(cron_job = %cron_job.name_any(), job = %created.name_any(), "started a scheduled job");
    status
        .active
        .get_or_insert_with(Vec::new)
        .push(reference(&created));
    status.last_schedule_time = Some(Time(scheduled));
    Ok(())
}

/// kube's `mostRecentScheduleTime`: the latest scheduled time after the last one run (or the
/// cron job's creation, or `startingDeadlineSeconds` ago if later) and not after now.
fn most_recent_missed(cron_job: &CronJob, schedule: &Cron) -> Option<Timestamp> {
    let created = cron_job.metadata.creation_timestamp.as_ref().map(|t| t.0);
    let last = cron_job
        .status
        .as_ref()
        .and_then(|s| s.last_schedule_time.as_ref())
        .map(|t| t.0);
    let mut earliest = last.or(created)?;
    let now = Timestamp::now();
    if let Some(deadline) = cron_job.spec.starting_deadline_seconds {
        let limit = now.checked_sub(clock::seconds(deadline)).unwrap_or(now);
        earliest = earliest.max(limit);
    }
    let mut found = None;
    let mut cursor = earliest;
    for _ in 0..MAX_MISSED {
        match next_after(schedule, cursor) {
            Some(at) if at <= now => {
                found = Some(at);
                cursor = at;
            }
            _ => break,
        }
    }
    found
}

/// The first scheduled time after `after`, in UTC.
fn next_after(schedule: &Cron, after: Timestamp) -> Option<Timestamp> {
    let zoned: Zoned = after.to_zoned(TimeZone::UTC);
    schedule
        .find_next_occurrence(&zoned, false)
        .ok()
        .map(|next| next.timestamp())
}

/// How long until `at`.
fn until(at: Timestamp) -> Duration {
    let millis = at.as_millisecond() - Timestamp::now().as_millisecond();
    Duration::from_millis(millis.max(0).unsigned_abs())
}

/// The job of `scheduled`: the job template, named `<cronjob>-<minutes since the epoch>`,
/// controlled by the cron job, annotated with its scheduled time.
fn job_for(cron_job: &CronJob, scheduled: Timestamp) -> Job {
    let template = &cron_job.spec.job_template;
    let mut metadata = template.metadata.clone().unwrap_or_default();
    metadata.name = Some(format!("{}-{}", cron_job.name_any(), scheduled.as_second() / 60));
    metadata.namespace = cron_job.namespace();
    metadata.owner_references = Some(vec![owner::controller_reference(cron_job)]);
    metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(SCHEDULED_TIMESTAMP.to_owned(), scheduled.to_string());
    Job {
        metadata,
        spec: template.spec.clone(),
        status: None,
    }
}

/// Whether the job finished: `Some(true)` complete, `Some(false)` failed.
fn finished(job: &Job) -> Option<bool> {
    let conditions = job.status.as_ref()?.conditions.as_deref()?;
    let holds = |type_: &str| conditions.iter().any(|c| c.type_ == type_ && c.status == "True");
    if holds("Complete") {
        Some(true)
    } else if holds("Failed") {
        Some(false)
    } else {
        None
    }
}

/// The finished jobs beyond `successfulJobsHistoryLimit` (3) and `failedJobsHistoryLimit`
/// (1), oldest first.
fn history_to_delete(cron_job: &CronJob, jobs: &[Arc<Job>]) -> Vec<String> {
    let mut doomed = Vec::new();
    for (outcome, limit) in [
        (true, cron_job.spec.successful_jobs_history_limit.unwrap_or(3)),
        (false, cron_job.spec.failed_jobs_history_limit.unwrap_or(1)),
    ] {
        let mut done: Vec<&Arc<Job>> = jobs.iter().filter(|job| finished(job) == Some(outcome)).collect();
        done.sort_by_key(|job| {
            job.status
                .as_ref()
                .and_then(|s| s.start_time.as_ref())
                .map(|t| t.0)
        });
        let excess = done.len().saturating_sub(usize::try_from(limit).unwrap_or(0));
        doomed.extend(done.iter().take(excess).map(|job| job.name_any()));
    }
    doomed
}

/// A reference to the job, as `status.active` lists it.
fn reference(job: &Job) -> ObjectReference {
    ObjectReference {
        api_version: Some("batch/v1".to_owned()),
        kind: Some("Job".to_owned()),
        name: Some(job.name_any()),
        namespace: job.namespace(),
        uid: job.uid(),
        resource_version: job.resource_version(),
        field_path: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cron_job(schedule: &str, created: Timestamp, deadline: Option<i64>) -> CronJob {
        let mut cron_job: CronJob = serde_json::from_value(json!({
            "metadata": {"name": "report"},
            "spec": {"schedule": schedule, "startingDeadlineSeconds": deadline, "jobTemplate": {}},
        }))
        .unwrap_or_default();
        cron_job.metadata.creation_timestamp = Some(Time(created));
        cron_job
    }

    fn ago(seconds: i64) -> Timestamp {
        Timestamp::now()
            .checked_sub(clock::seconds(seconds))
            .unwrap_or_else(|_| Timestamp::now())
    }

    // kube: pkg/controller/cronjob/utils_test.go, TestMostRecentScheduleTime: the latest
    // missed time, none before the first, none past the starting deadline.
    #[test]
    fn the_most_recent_missed_schedule_is_run() {
        let every_minute: Cron = "* * * * *".parse().expect("a valid schedule");
        let missed =
            most_recent_missed(&cron_job("* * * * *", ago(300), None), &every_minute).expect("a missed time");
        assert_eq!(missed.as_second() % 60, 0);
        assert!(missed <= Timestamp::now() && missed > ago(61));
        // starting 5 minutes ago with a deadline of 0 s: every missed time is too late
        assert!(most_recent_missed(&cron_job("* * * * *", ago(300), Some(0)), &every_minute).is_none());
    }

    #[test]
    fn job_names_carry_the_scheduled_minute() {
        let at = Timestamp::from_second(1_700_000_040).unwrap_or_else(|_| Timestamp::now());
        let job = job_for(&cron_job("* * * * *", at, None), at);
        assert_eq!(job.name_any(), "report-28333334");
        assert_eq!(job.annotations()[SCHEDULED_TIMESTAMP], "2023-11-14T22:14:00Z");
    }
}
