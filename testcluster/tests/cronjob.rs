//! The CronJob controller over HTTP, with the Job controller: a missed schedule starts a job.

mod support;

use k8s_openapi::api::batch::v1::{CronJob, Job};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;
use support::{Kubelet, TestResult, pods, wait_for};

// kube: pkg/controller/cronjob/cronjob_controllerv2_test.go, TestControllerV2SyncCronJob's
// "never ran, is time" and "prev ran but done, is time" cases: the most recent missed time
// starts a job, which the Job controller runs; once it completes, the cron job records the
// success and the history limit removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missed_schedule_starts_a_job() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let api: Api<CronJob> = Api::default_namespaced(client.clone());
    let cron_job: CronJob = serde_json::from_value(json!({
        "metadata": {"name": "report"},
        "spec": {
            "schedule": "* * * * *",
            "suspend": true,
            "successfulJobsHistoryLimit": 0,
            "jobTemplate": {
                "metadata": {"labels": {"app": "report"}},
                "spec": {"template": {
                    "metadata": {"labels": {"app": "report"}},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "report"}]},
                }},
            },
        },
    }))?;
    api.create(&PostParams::default(), &cron_job).await?;
    // the last run was two minutes ago: the minute since then is due when it resumes
    let two_minutes_ago = k8s_openapi::jiff::Timestamp::now().as_second() / 60 * 60 - 120;
    let last = k8s_openapi::jiff::Timestamp::from_second(two_minutes_ago)?.to_string();
    api.patch_status(
        "report",
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": {"lastScheduleTime": last}})),
    )
    .await?;
    api.patch(
        "report",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"suspend": false}})),
    )
    .await?;

    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    wait_for("a job", async || {
        !jobs
            .list(&ListParams::default())
            .await
            .expect("jobs")
            .items
            .is_empty()
    })
    .await;
    let job = jobs.list(&ListParams::default()).await?.items.remove(0);
    let minutes: i64 = job
        .name_any()
        .strip_prefix("report-")
        .and_then(|m| m.parse().ok())
        .expect("report-<minutes>");
    assert!(minutes * 60 > two_minutes_ago, "the most recent missed minute");
    assert!(
        job.annotations()
            .contains_key("batch.kubernetes.io/cronjob-scheduled-timestamp")
    );
    assert_eq!(job.owner_references()[0].kind, "CronJob");
    wait_for("the job active", async || {
        let status = api
            .get("report")
            .await
            .expect("the cron job")
            .status
            .unwrap_or_default();
        status
            .active
            .unwrap_or_default()
            .iter()
            .any(|r| r.name.as_deref() == Some(job.name_any().as_str()))
    })
    .await;

    wait_for("the job's pod", async || {
        pods(&client, "default", "app=report").await.len() == 1
    })
    .await;
    let kubelet = Kubelet::new(&client, "default");
    kubelet
        .finish(&pods(&client, "default", "app=report").await[0].name_any(), true)
        .await;
    wait_for("the success recorded", async || {
        let status = api
            .get("report")
            .await
            .expect("the cron job")
            .status
            .unwrap_or_default();
        status.last_successful_time.is_some() && status.active.unwrap_or_default().is_empty()
    })
    .await;
    wait_for("the finished job removed (history limit 0)", async || {
        jobs.get_opt(&job.name_any()).await.expect("a get").is_none()
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}
