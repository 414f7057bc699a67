//! The defaults of Jobs and CronJobs, and the selector and labels a new Job gets.

use serde_json::{Map, Value, json};

use super::fields::{default, is_unset, items, object, set_object};
use super::pod::template;

/// The label kube-apiserver selects a Job's pods by: the Job's uid.
const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
/// The label naming a pod's Job.
const JOB_NAME: &str = "batch.kubernetes.io/job-name";

/// A Job: one completion and one pod at a time when neither is set, six retries, not indexed,
/// not suspended, pods replaced once terminated; its labels are its template's when it has
/// none.
pub(super) fn job(job: &mut Value) {
    let template_labels = job["spec"]["template"]["metadata"]["labels"].clone();
    if template_labels.is_object()
        && job["metadata"]["labels"].as_object().is_none_or(Map::is_empty)
        && let Some(meta) = object(job, "metadata")
    {
        meta["labels"] = template_labels;
    }
    if let Some(spec) = object(job, "spec") {
        job_spec(spec);
    }
}

/// The spec of a Job.
fn job_spec(spec: &mut Value) {
    if is_unset(spec, "completions") && is_unset(spec, "parallelism") {
        default(spec, "completions", || json!(1));
    }
    default(spec, "parallelism", || json!(1));
    let per_index = !is_unset(spec, "backoffLimitPerIndex");
    default(spec, "backoffLimit", || {
        json!(if per_index { i32::MAX } else { 6 })
    });
    default(spec, "completionMode", || json!("NonIndexed"));
    default(spec, "suspend", || json!(false));
    default(spec, "manualSelector", || json!(false));
    let failure_policy = set_object(spec, "podFailurePolicy").is_some();
    if let Some(policy) = set_object(spec, "podFailurePolicy") {
        for rule in items(policy, "rules") {
            for pattern in items(rule, "onPodConditions") {
                default(pattern, "status", || json!("True"));
            }
        }
    }
    let replacement = if failure_policy {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    default(spec, "podReplacementPolicy", || json!(replacement));
    if let Some(pod) = object(spec, "template") {
        template(pod);
    }
}

/// What a new Job gets once it has its uid (kube's job strategy): unless `manualSelector`,
/// a selector on its uid, and the labels it selects (and the legacy `controller-uid` and
/// `job-name`) on its pod template.
pub(super) fn new_job(job: &mut Value) {
    let uid = job["metadata"]["uid"].clone();
    let name = job["metadata"]["name"].clone();
    let Some(spec) = object(job, "spec") else {
        return;
    };
    if spec["manualSelector"] == true {
        return;
    }
    default(
        spec,
        "selector",
        || json!({"matchLabels": {CONTROLLER_UID: uid.clone()}}),
    );
    let Some(labels) = object(spec, "template")
        .and_then(|t| object(t, "metadata"))
        .and_then(|m| object(m, "labels"))
    else {
        return;
    };
    for (label, value) in [
        (CONTROLLER_UID, &uid),
        (JOB_NAME, &name),
        ("controller-uid", &uid),
        ("job-name", &name),
    ] {
        default(labels, label, || value.clone());
    }
    // kube-apiserver defaults the stored Job again when it reads it: a Job without labels
    // then takes its template's, the generated ones included.
    let labels = labels.clone();
    if job["metadata"]["labels"].as_object().is_none_or(Map::is_empty)
        && let Some(meta) = object(job, "metadata")
    {
        meta["labels"] = labels;
    }
}

/// A CronJob: concurrent runs allowed, not suspended, three successful and one failed Job
/// kept; its Job template's pod template defaults (the Job's own defaults come when a Job is
/// created from it).
pub(super) fn cron_job(cron_job: &mut Value) {
    let Some(spec) = object(cron_job, "spec") else {
        return;
    };
    default(spec, "concurrencyPolicy", || json!("Allow"));
    default(spec, "suspend", || json!(false));
    default(spec, "successfulJobsHistoryLimit", || json!(3));
    default(spec, "failedJobsHistoryLimit", || json!(1));
    if let Some(pod) = object(spec, "jobTemplate")
        .and_then(|t| object(t, "spec"))
        .and_then(|s| object(s, "template"))
    {
        template(pod);
    }
}
