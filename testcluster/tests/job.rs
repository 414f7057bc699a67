//! The Job controller over HTTP: completion, failure, indexes, deadlines, time to live.

mod support;

use k8s_openapi::api::{batch::v1::Job, core::v1::Pod};
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams},
};
use serde_json::{Value, json};
use support::{Kubelet, TestResult, wait_for};

fn job(name: &str, spec: Value) -> Job {
    let mut spec = spec;
    spec["template"] = json!({
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "task"}]},
    });
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).expect("a valid job")
}

async fn job_pods(client: &kube::Client, name: &str) -> Vec<Pod> {
    let api: Api<Pod> = Api::default_namespaced(client.clone());
    let selector = format!("batch.kubernetes.io/job-name={name}");
    let mut pods = api
        .list(&ListParams::default().labels(&selector))
        .await
        .expect("pods")
        .items;
    pods.sort_by_key(|pod| pod.metadata.creation_timestamp.as_ref().map(|t| t.0));
    pods
}

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

fn conditions(job: &Job) -> Vec<(String, String, Option<String>)> {
    let conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    conditions
        .into_iter()
        .map(|c| (c.type_, c.status, c.reason))
        .collect()
}

fn has(job: &Job, type_: &str) -> bool {
    conditions(job).iter().any(|(t, s, _)| t == type_ && s == "True")
}

/// Runs every pod of the job that is still `Pending`, then ends it with `succeeded`.
async fn finish_pending(client: &kube::Client, name: &str, succeeded: bool) -> usize {
    let kubelet = Kubelet::new(client, "default");
    let mut finished = 0;
    for pod in job_pods(client, name).await {
        if phase(&pod) == "Pending" && pod.metadata.deletion_timestamp.is_none() {
            kubelet.finish(&pod.name_any(), succeeded).await;
            finished += 1;
        }
    }
    finished
}

// kube: pkg/controller/job/job_controller_test.go, TestControllerSyncJob's "job finish" and
// "WQ job finishing" cases, and test/integration/job's TestNonParallelJob, over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_completes_when_its_pods_succeed() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Job> = Api::default_namespaced(client.clone());
    let created = api
        .create(
            &PostParams::default(),
            &job("pi", json!({"completions": 3, "parallelism": 2})),
        )
        .await?;
    let uid = created.uid().unwrap_or_default();

    wait_for("two pods", async || job_pods(&client, "pi").await.len() == 2).await;
    for pod in job_pods(&client, "pi").await {
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("pi-"));
        for (key, value) in [
            ("batch.kubernetes.io/controller-uid", &uid),
            ("controller-uid", &uid),
        ] {
            assert_eq!(pod.labels().get(key), Some(value));
        }
        assert_eq!(pod.labels().get("job-name").map(String::as_str), Some("pi"));
        assert!(
            pod.finalizers()
                .iter()
                .any(|f| f == "batch.kubernetes.io/job-tracking")
        );
        let owner = &pod.owner_references()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.controller, owner.block_owner_deletion),
            ("Job", Some(true), Some(true))
        );
    }
    wait_for("active 2", async || {
        api.get("pi").await.expect("job").status.and_then(|s| s.active) == Some(2)
    })
    .await;

    assert_eq!(finish_pending(&client, "pi", true).await, 2);
    wait_for("a third pod", async || job_pods(&client, "pi").await.len() == 3).await;
    wait_for("succeeded 2", async || {
        api.get("pi").await.expect("job").status.and_then(|s| s.succeeded) == Some(2)
    })
    .await;
    finish_pending(&client, "pi", true).await;
    wait_for("the job complete", async || {
        has(&api.get("pi").await.expect("job"), "Complete")
    })
    .await;

    let done = api.get("pi").await?;
    let status = done.status.clone().unwrap_or_default();
    assert_eq!(
        (
            status.succeeded,
            status.failed.unwrap_or(0),
            status.active.unwrap_or(0)
        ),
        (Some(3), 0, 0)
    );
    assert!(status.start_time.is_some() && status.completion_time.is_some());
    let types: Vec<String> = conditions(&done).into_iter().map(|(t, _, _)| t).collect();
    assert_eq!(types, ["SuccessCriteriaMet", "Complete"]);
    assert_eq!(conditions(&done)[1].2.as_deref(), Some("CompletionsReached"));
    for pod in job_pods(&client, "pi").await {
        assert!(
            pod.finalizers().is_empty(),
            "the finalizer of {} was removed",
            pod.name_any()
        );
    }
    cluster.shutdown().await?;
    Ok(())
}

// kube: job_controller_test.go, TestControllerSyncJob's "too many job failures" case: more
// failures than backoffLimit fail the job, FailureTarget first; a failed pod is replaced
// after the backoff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_fails_past_its_backoff_limit() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Job> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &job("flaky", json!({"backoffLimit": 1})))
        .await?;

    wait_for("a pod", async || job_pods(&client, "flaky").await.len() == 1).await;
    finish_pending(&client, "flaky", false).await;
    wait_for("a replacement after the backoff", async || {
        job_pods(&client, "flaky").await.len() == 2
    })
    .await;
    wait_for("failed 1", async || {
        api.get("flaky").await.expect("job").status.and_then(|s| s.failed) == Some(1)
    })
    .await;
    assert!(!has(&api.get("flaky").await?, "Failed"));
    finish_pending(&client, "flaky", false).await;
    wait_for("the job failed", async || {
        has(&api.get("flaky").await.expect("job"), "Failed")
    })
    .await;

    let failed = api.get("flaky").await?;
    let found = conditions(&failed);
    assert_eq!(found[0].0, "FailureTarget");
    assert_eq!(
        found[1],
        (
            "Failed".to_owned(),
            "True".to_owned(),
            Some("BackoffLimitExceeded".to_owned())
        )
    );
    assert_eq!(failed.status.and_then(|s| s.failed), Some(2));
    assert_eq!(
        job_pods(&client, "flaky").await.len(),
        2,
        "no pod after the failure"
    );
    cluster.shutdown().await?;
    Ok(())
}

// kube: job_controller_test.go, TestControllerSyncJob's indexed cases: one pod per index,
// completedIndexes as intervals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_indexed_job_runs_one_pod_per_index() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Job> = Api::default_namespaced(client.clone());
    let spec = json!({"completions": 3, "parallelism": 3, "completionMode": "Indexed"});
    api.create(&PostParams::default(), &job("shards", spec)).await?;

    wait_for("three pods", async || {
        job_pods(&client, "shards").await.len() == 3
    })
    .await;
    let mut indexes: Vec<String> = job_pods(&client, "shards")
        .await
        .iter()
        .map(|pod| {
            let annotation = pod
                .annotations()
                .get("batch.kubernetes.io/job-completion-index")
                .cloned();
            assert_eq!(
                annotation.as_ref(),
                pod.labels().get("batch.kubernetes.io/job-completion-index")
            );
            let index = annotation.unwrap_or_default();
            assert!(pod.metadata.generate_name.as_deref() == Some(&format!("shards-{index}-")));
            index
        })
        .collect();
    indexes.sort();
    assert_eq!(indexes, ["0", "1", "2"]);

    finish_pending(&client, "shards", true).await;
    wait_for("the job complete", async || {
        has(&api.get("shards").await.expect("job"), "Complete")
    })
    .await;
    let status = api.get("shards").await?.status.unwrap_or_default();
    assert_eq!(status.completed_indexes.as_deref(), Some("0-2"));
    assert_eq!(status.succeeded, Some(3));
    cluster.shutdown().await?;
    Ok(())
}

// kube: job_controller_test.go, TestSyncJobPastDeadline: past activeDeadlineSeconds the
// active pods are removed and the job fails with DeadlineExceeded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_past_its_active_deadline_fails() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Job> = Api::default_namespaced(client.clone());
    api.create(
        &PostParams::default(),
        &job("slow", json!({"activeDeadlineSeconds": 1})),
    )
    .await?;
    wait_for("a pod", async || job_pods(&client, "slow").await.len() == 1).await;
    let kubelet = Kubelet::new(&client, "default");
    kubelet
        .run(&job_pods(&client, "slow").await[0].name_any(), true)
        .await;

    wait_for("the job failed", async || {
        has(&api.get("slow").await.expect("job"), "Failed")
    })
    .await;
    let failed = api.get("slow").await?;
    assert!(
        conditions(&failed)
            .iter()
            .any(|(t, _, r)| t == "Failed" && r.as_deref() == Some("DeadlineExceeded"))
    );
    wait_for("the pod gone", async || {
        job_pods(&client, "slow").await.is_empty()
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}

// kube's ttlafterfinished controller (pkg/controller/ttlafterfinished): a finished job with
// ttlSecondsAfterFinished 0 is deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_job_is_deleted_after_its_ttl() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Job> = Api::default_namespaced(client.clone());
    api.create(
        &PostParams::default(),
        &job("once", json!({"ttlSecondsAfterFinished": 0})),
    )
    .await?;
    wait_for("a pod", async || job_pods(&client, "once").await.len() == 1).await;
    finish_pending(&client, "once", true).await;
    wait_for("the job deleted", async || {
        api.get_opt("once").await.expect("a get").is_none()
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}

// kube: job_controller_test.go, TestControllerSyncJob's "suspending a job with
// satisfied expectations" and "resuming a suspended job" cases.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspended_job_runs_no_pods_until_resumed() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<Job> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &job("later", json!({"suspend": true})))
        .await?;
    let suspended = |job: &Job| {
        conditions(job)
            .iter()
            .any(|(t, s, r)| t == "Suspended" && s == "True" && r.as_deref() == Some("JobSuspended"))
    };
    wait_for("the Suspended condition", async || {
        suspended(&api.get("later").await.expect("job"))
    })
    .await;
    assert!(job_pods(&client, "later").await.is_empty());
    assert!(
        api.get("later")
            .await?
            .status
            .and_then(|s| s.start_time)
            .is_none()
    );

    let resume = json!({"spec": {"suspend": false}});
    api.patch(
        "later",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&resume),
    )
    .await?;
    wait_for("a pod", async || job_pods(&client, "later").await.len() == 1).await;
    wait_for("resumed", async || {
        let resumed = api.get("later").await.expect("job");
        let condition = conditions(&resumed)
            .into_iter()
            .find(|(t, _, _)| t == "Suspended");
        condition
            == Some((
                "Suspended".to_owned(),
                "False".to_owned(),
                Some("JobResumed".to_owned()),
            ))
            && resumed.status.and_then(|s| s.start_time).is_some()
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}
