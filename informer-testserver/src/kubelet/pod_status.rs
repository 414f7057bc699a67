//! A pod's `status` as a kubelet writes it, from what the kubelet tracks of the pod: phase,
//! addresses, start time, QoS class, conditions and container statuses.

use serde_json::{Map, Value, json};

use super::tracker::{Container, Exit, PodTrack, Run};
use crate::defaults::qos_class;

/// The pod's new status: `old` with the fields the kubelet owns replaced. A condition keeps its
/// `lastTransitionTime` while its status stays the same.
pub(crate) fn render(pod: &Value, track: &PodTrack) -> Value {
    let old = &pod["status"];
    let mut status = old.as_object().cloned().unwrap_or_default();
    let phase = track.phase();
    status.insert("phase".into(), json!(phase));
    status.insert("hostIP".into(), json!(track.host_ip));
    status.insert("hostIPs".into(), json!([{"ip": track.host_ip}]));
    status.insert("podIP".into(), json!(track.pod_ip));
    status.insert("podIPs".into(), json!([{"ip": track.pod_ip}]));
    status.insert("startTime".into(), json!(track.start_time));
    status.insert("qosClass".into(), json!(qos_class(&pod["spec"])));
    status.insert("conditions".into(), conditions(old, track, phase));
    if !track.init.is_empty() {
        status.insert(
            "initContainerStatuses".into(),
            track.init.iter().map(container_status).collect(),
        );
    }
    status.insert(
        "containerStatuses".into(),
        track.containers.iter().map(container_status).collect(),
    );
    Value::Object(status)
}

fn conditions(old: &Value, track: &PodTrack, phase: &str) -> Value {
    let unready: Vec<&str> = track
        .containers
        .iter()
        .filter(|c| !c.ready)
        .map(|c| c.name.as_str())
        .collect();
    let uninitialized: Vec<&str> = track
        .init
        .iter()
        .filter(|c| !matches!(&c.run, Run::Terminated(e) if e.exit_code == 0))
        .map(|c| c.name.as_str())
        .collect();
    let list = |names: &[&str]| format!("[{}]", names.join(" "));
    let ready = if unready.is_empty() {
        (true, "", String::new())
    } else if phase == "Succeeded" || phase == "Failed" {
        (false, "PodCompleted", String::new())
    } else {
        (
            false,
            "ContainersNotReady",
            format!("containers with unready status: {}", list(&unready)),
        )
    };
    let initialized = if uninitialized.is_empty() {
        (true, "", String::new())
    } else {
        (
            false,
            "ContainersNotInitialized",
            format!("containers with incomplete status: {}", list(&uninitialized)),
        )
    };
    let sandbox_up = track.sandbox && phase != "Succeeded" && phase != "Failed";
    let wanted = [
        ("PodReadyToStartContainers", (sandbox_up, "", String::new())),
        ("Initialized", initialized.clone()),
        ("Ready", ready.clone()),
        ("ContainersReady", ready),
        ("PodScheduled", (true, "", String::new())),
    ];
    let previous = old["conditions"].as_array().cloned().unwrap_or_default();
    let now = super::tracker::timestamp();
    let mut out: Vec<Value> = wanted
        .iter()
        .map(|(kind, (ok, reason, message))| {
            let status = if *ok { "True" } else { "False" };
            let since = previous
                .iter()
                .find(|c| c["type"] == *kind && c["status"] == status)
                .and_then(|c| c["lastTransitionTime"].as_str())
                .map(str::to_string)
                .unwrap_or_else(|| now.clone());
            let mut condition = Map::new();
            condition.insert("type".into(), json!(kind));
            condition.insert("status".into(), json!(status));
            condition.insert("lastProbeTime".into(), Value::Null);
            condition.insert("lastTransitionTime".into(), json!(since));
            if !reason.is_empty() {
                condition.insert("reason".into(), json!(reason));
            }
            if !message.is_empty() {
                condition.insert("message".into(), json!(message));
            }
            Value::Object(condition)
        })
        .collect();
    // Conditions others wrote (readiness gates, disruption targets) stay.
    out.extend(
        previous
            .into_iter()
            .filter(|c| !wanted.iter().any(|(kind, _)| c["type"] == *kind)),
    );
    Value::Array(out)
}

fn container_status(container: &Container) -> Value {
    let state = match &container.run {
        Run::Waiting(reason) => json!({"waiting": {"reason": reason}}),
        Run::Running { started_at } => json!({"running": {"startedAt": started_at}}),
        Run::Terminated(exit) => json!({"terminated": terminated(exit)}),
    };
    let mut status = json!({
        "name": container.name,
        "state": state,
        "lastState": container.last.as_ref().map(|e| json!({"terminated": terminated(e)})).unwrap_or_else(|| json!({})),
        "ready": container.ready,
        "restartCount": container.restarts,
        "image": container.image,
        "started": matches!(container.run, Run::Running { .. }),
    });
    if let Some(id) = &container.container_id {
        status["imageID"] = json!(image_id(&container.image));
        status["containerID"] = json!(id);
    }
    status
}

fn terminated(exit: &Exit) -> Value {
    json!({
        "exitCode": exit.exit_code,
        "reason": exit.reason,
        "startedAt": exit.started_at,
        "finishedAt": exit.finished_at,
        "containerID": exit.container_id,
    })
}

/// A digest-pinned image reference, stable for the image's name.
fn image_id(image: &str) -> String {
    let repository = image.split(['@', ':']).next().unwrap_or(image);
    let full = if repository.contains('/') {
        repository.to_string()
    } else {
        format!("docker.io/library/{repository}")
    };
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in image.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{full}@sha256:{hash:016x}{hash:016x}{hash:016x}{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_ids_name_the_full_repository() {
        assert!(image_id("busybox:1.36").starts_with("docker.io/library/busybox@sha256:"));
        assert!(image_id("ghcr.io/a/b").starts_with("ghcr.io/a/b@sha256:"));
    }
}
