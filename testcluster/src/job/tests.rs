use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::JobSpec;

use super::*;

fn job(completions: Option<i32>, parallelism: i32, indexed: bool) -> Job {
    Job {
        spec: Some(JobSpec {
            completions,
            parallelism: Some(parallelism),
            completion_mode: indexed.then(|| "Indexed".to_owned()),
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

fn pod(phase: &str, finalizer: bool, index: Option<i32>) -> Arc<Pod> {
    let mut pod: Pod = serde_json::from_value(json!({"status": {"phase": phase}})).unwrap_or_default();
    pod.metadata.uid = Some(format!("{phase}-{index:?}-{finalizer}"));
    if finalizer {
        pod.metadata.finalizers = Some(vec![TRACKING_FINALIZER.to_owned()]);
    }
    if let Some(index) = index {
        pod.metadata.annotations = Some(BTreeMap::from([(COMPLETION_INDEX.to_owned(), index.to_string())]));
    }
    Arc::new(pod)
}

// kube's isPodFailed (pkg/controller/job/job_controller.go): a pod deleted before it
// succeeded counts as failed.
#[test]
fn deleted_pods_that_did_not_succeed_count_as_failed() {
    assert!(is_failed(&pod("Failed", true, None)));
    assert!(!is_failed(&pod("Running", true, None)));
    let mut deleted = (*pod("Running", true, None)).clone();
    deleted.metadata.deletion_timestamp = Some(clock::now());
    assert!(is_failed(&deleted));
    let mut succeeded = (*pod("Succeeded", true, None)).clone();
    succeeded.metadata.deletion_timestamp = Some(clock::now());
    assert!(!is_failed(&succeeded));
}

#[test]
fn conditions_are_added_once() {
    let mut status = JobStatus::default();
    add_condition(&mut status, "FailureTarget", "BackoffLimitExceeded", "m");
    add_condition(&mut status, "FailureTarget", "DeadlineExceeded", "m");
    assert_eq!(status.conditions.as_ref().map(Vec::len), Some(1));
    assert!(!is_finished(&status));
    add_condition(&mut status, "Failed", "BackoffLimitExceeded", "m");
    assert!(is_finished(&status));
}

#[test]
fn indexed_jobs_are_recognised() {
    assert!(is_indexed(&job(Some(3), 1, true)));
    assert!(!is_indexed(&job(Some(3), 1, false)));
    assert_eq!(index_of(&pod("Running", true, Some(2))), Some(2));
}
