//! A pod's columns: readiness, the status kubectl shows (`Running`, `Init:0/1`,
//! `CrashLoopBackOff`, `Terminating`, ...), restarts and when the last one was, and the wide
//! IP, node, nominated node and readiness gates.

use serde_json::{Value, json};

use super::cells::{Column, age_column, ago, builtin, items, name_column, seconds, text};

pub(crate) fn pod_columns() -> Vec<Column> {
    vec![
        name_column(),
        builtin("Ready", "string", 0, |o| json!(summary(o).ready)),
        builtin("Status", "string", 0, |o| json!(summary(o).reason)),
        builtin("Restarts", "string", 0, |o| json!(summary(o).restarts)),
        age_column(),
        builtin("IP", "string", 1, |o| {
            let first = &o["status"]["podIPs"][0]["ip"];
            text(
                if first.is_string() {
                    first
                } else {
                    &o["status"]["podIP"]
                },
                "<none>",
            )
        }),
        builtin("Node", "string", 1, |o| text(&o["spec"]["nodeName"], "<none>")),
        builtin("Nominated Node", "string", 1, |o| {
            text(&o["status"]["nominatedNodeName"], "<none>")
        }),
        builtin("Readiness Gates", "string", 1, readiness_gates),
    ]
}

/// What the printer derives from a pod's container statuses.
struct Summary {
    ready: String,
    reason: String,
    restarts: String,
}

/// Restarts counted so far and when the last one ended (seconds since the epoch).
#[derive(Default, Clone, Copy)]
struct Restarts {
    count: i64,
    last: Option<i64>,
}

impl Restarts {
    fn add(&mut self, status: &Value) {
        self.count += status["restartCount"].as_i64().unwrap_or(0);
        let finished = seconds(&status["lastState"]["terminated"]["finishedAt"]);
        if finished > self.last {
            self.last = finished;
        }
    }
}

fn restartable(pod: &Value, name: &Value) -> bool {
    items(&pod["spec"]["initContainers"]).any(|c| c["name"] == *name && c["restartPolicy"] == "Always")
}

fn condition_true(pod: &Value, kind: &str) -> bool {
    items(&pod["status"]["conditions"])
        .find(|c| c["type"] == kind)
        .is_some_and(|c| c["status"] == "True")
}

/// A terminated state's reason, or `prefix` + its signal or exit code.
fn terminated_reason(terminated: &Value, prefix: &str) -> String {
    if let Some(reason) = terminated["reason"].as_str().filter(|r| !r.is_empty()) {
        return format!("{prefix}{reason}");
    }
    match terminated["signal"].as_i64().filter(|s| *s != 0) {
        Some(signal) => format!("{prefix}Signal:{signal}"),
        None => format!(
            "{prefix}ExitCode:{}",
            terminated["exitCode"].as_i64().unwrap_or(0)
        ),
    }
}

fn summary(pod: &Value) -> Summary {
    let status = &pod["status"];
    let phase = status["phase"].as_str().unwrap_or_default();
    let mut reason = text(&status["reason"], phase)
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if items(&status["conditions"]).any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated") {
        reason = "SchedulingGated".into();
    }
    let init_specs = items(&pod["spec"]["initContainers"]).count();
    let mut total = items(&pod["spec"]["containers"]).count();
    total += items(&pod["spec"]["initContainers"])
        .filter(|c| c["restartPolicy"] == "Always")
        .count();
    let mut ready = 0;
    let (mut all, mut sidecars) = (Restarts::default(), Restarts::default());
    let mut initializing = false;
    for (i, container) in items(&status["initContainerStatuses"]).enumerate() {
        all.add(container);
        let is_sidecar = restartable(pod, &container["name"]);
        if is_sidecar {
            sidecars.add(container);
        }
        let terminated = &container["state"]["terminated"];
        let waiting_reason = container["state"]["waiting"]["reason"]
            .as_str()
            .unwrap_or_default();
        if terminated.is_object() && terminated["exitCode"].as_i64().unwrap_or(0) == 0 {
            continue;
        }
        if is_sidecar && container["started"] == true {
            ready += usize::from(container["ready"] == true);
            continue;
        }
        reason = if terminated.is_object() {
            terminated_reason(terminated, "Init:")
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{init_specs}")
        };
        initializing = true;
        break;
    }
    let mut restarts = all;
    if !initializing || condition_true(pod, "Initialized") {
        restarts = sidecars;
        let mut running = false;
        let statuses: Vec<&Value> = items(&status["containerStatuses"]).collect();
        for container in statuses.into_iter().rev() {
            restarts.add(container);
            let state = &container["state"];
            let waiting = state["waiting"]["reason"].as_str().unwrap_or_default();
            let terminated = &state["terminated"];
            if !waiting.is_empty() {
                reason = waiting.to_owned();
            } else if terminated.is_object() {
                reason = terminated_reason(terminated, "");
            } else if container["ready"] == true && state["running"].is_object() {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            reason = if condition_true(pod, "Ready") {
                "Running"
            } else {
                "NotReady"
            }
            .into();
        }
    }
    let deleting = pod["metadata"]["deletionTimestamp"].is_string();
    if deleting && status["reason"] == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".into();
    }
    let restarts = match restarts.last {
        Some(last) if restarts.count != 0 => format!("{} ({} ago)", restarts.count, ago(last)),
        _ => restarts.count.to_string(),
    };
    Summary {
        ready: format!("{ready}/{total}"),
        reason,
        restarts,
    }
}

/// `true/all` of the pod's readiness gates, `<none>` without any.
fn readiness_gates(pod: &Value) -> Value {
    let gates: Vec<&Value> = items(&pod["spec"]["readinessGates"]).collect();
    if gates.is_empty() {
        return json!("<none>");
    }
    let met = gates
        .iter()
        .filter(|gate| {
            items(&pod["status"]["conditions"])
                .find(|c| c["type"] == gate["conditionType"])
                .is_some_and(|c| c["status"] == "True")
        })
        .count();
    json!(format!("{met}/{}", gates.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_of(pod: &Value) -> (String, String, String) {
        let summary = summary(pod);
        (summary.ready, summary.reason, summary.restarts)
    }

    // cases of kubernetes' TestPrintPod (printers_test.go)
    #[test]
    fn pod_status_reads_as_kubectl_prints_it() {
        let waiting = json!({
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 3, "state": {"running": {}}},
                {"name": "b", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
            ]},
        });
        assert_eq!(
            status_of(&waiting),
            ("1/2".into(), "CrashLoopBackOff".into(), "3".into())
        );
        let initializing = json!({
            "spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}]},
            "status": {"phase": "Pending",
                "initContainerStatuses": [{"name": "i", "ready": false, "restartCount": 0, "state": {"running": {}}}],
                "containerStatuses": [{"name": "a", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}]},
        });
        assert_eq!(status_of(&initializing).1, "Init:0/1");
        let failed_exit = json!({
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 2}}},
            ]},
        });
        assert_eq!(status_of(&failed_exit).1, "ExitCode:2");
        let deleting = json!({
            "metadata": {"deletionTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running"},
        });
        assert_eq!(status_of(&deleting).1, "Terminating");
        let restarted = json!({
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}},
                 "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2020-01-01T00:00:00Z"}}},
            ]},
        });
        let restarts = status_of(&restarted).2;
        assert!(
            restarts.starts_with("2 (") && restarts.ends_with(" ago)"),
            "{restarts}"
        );
    }

    #[test]
    fn readiness_gates_count_the_true_conditions() {
        let pod = json!({
            "spec": {"readinessGates": [{"conditionType": "a"}, {"conditionType": "b"}]},
            "status": {"conditions": [{"type": "a", "status": "True"}, {"type": "b", "status": "False"}]},
        });
        assert_eq!(readiness_gates(&pod), "1/2");
    }
}
