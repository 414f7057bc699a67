//! The columns of workloads: pods, pod templates, the controllers that run pods (deployments,
//! replica sets, stateful sets, daemon sets, replication controllers, jobs, cron jobs), their
//! revisions, scales, autoscalers and disruption budgets.

use serde_json::{Value, json};

use super::cells::{
    Column, age_column, builtin, containers, go_bool, human_duration, int, items, label_selector, labels,
    name_column, seconds, selector_string, since, template_containers, text,
};
use super::pod::pod_columns;

/// The columns of a workload kind; `None` for other kinds.
pub(crate) fn columns(group: &str, plural: &str) -> Option<Vec<Column>> {
    let columns = match (group, plural) {
        ("", "pods") => pod_columns(),
        ("", "podtemplates") => vec![
            name_column(),
            builtin("Containers", "string", 0, |o| {
                containers(&o["template"]["spec"]["containers"], "name")
            }),
            builtin("Images", "string", 0, |o| {
                containers(&o["template"]["spec"]["containers"], "image")
            }),
            builtin("Pod Labels", "string", 0, |o| {
                labels(&o["template"]["metadata"]["labels"])
            }),
        ],
        ("apps", "deployments") => vec![
            name_column(),
            builtin("Ready", "string", 0, |o| ready_of_desired(o, "readyReplicas")),
            builtin("Up-to-date", "string", 0, |o| {
                int(&o["status"]["updatedReplicas"])
            }),
            builtin("Available", "string", 0, |o| {
                int(&o["status"]["availableReplicas"])
            }),
            age_column(),
            builtin("Containers", "string", 1, |o| template_containers(o, "name")),
            builtin("Images", "string", 1, |o| template_containers(o, "image")),
            builtin("Selector", "string", 1, |o| {
                json!(selector_string(&o["spec"]["selector"]))
            }),
        ],
        ("apps", "replicasets") => replicas_columns(|o| label_selector(&o["spec"]["selector"])),
        ("", "replicationcontrollers") => replicas_columns(|o| labels(&o["spec"]["selector"])),
        ("apps", "statefulsets") => vec![
            name_column(),
            builtin("Ready", "string", 0, |o| ready_of_desired(o, "readyReplicas")),
            age_column(),
            builtin("Containers", "string", 1, |o| template_containers(o, "name")),
            builtin("Images", "string", 1, |o| template_containers(o, "image")),
        ],
        ("apps", "daemonsets") => daemon_set_columns(),
        ("apps", "controllerrevisions") => vec![
            name_column(),
            builtin("Controller", "string", 0, controller_of),
            builtin("Revision", "string", 0, |o| int(&o["revision"])),
            age_column(),
        ],
        ("batch", "jobs") => job_columns(),
        ("batch", "cronjobs") => cron_job_columns(),
        ("autoscaling", "horizontalpodautoscalers") => vec![
            name_column(),
            builtin("Reference", "string", 0, |o| {
                let target = &o["spec"]["scaleTargetRef"];
                json!(format!(
                    "{}/{}",
                    target["kind"].as_str().unwrap_or_default(),
                    target["name"].as_str().unwrap_or_default()
                ))
            }),
            builtin("Targets", "string", 0, super::autoscaling::targets),
            builtin("MinPods", "string", 0, |o| {
                match o["spec"]["minReplicas"].as_i64() {
                    Some(min) => json!(min.to_string()),
                    None => json!("<unset>"),
                }
            }),
            builtin("MaxPods", "string", 0, |o| int(&o["spec"]["maxReplicas"])),
            builtin("Replicas", "string", 0, |o| int(&o["status"]["currentReplicas"])),
            age_column(),
        ],
        ("policy", "poddisruptionbudgets") => vec![
            name_column(),
            builtin("Min Available", "string", 0, |o| {
                int_or_string(&o["spec"]["minAvailable"])
            }),
            builtin("Max Unavailable", "string", 0, |o| {
                int_or_string(&o["spec"]["maxUnavailable"])
            }),
            builtin("Allowed Disruptions", "integer", 0, |o| {
                int(&o["status"]["disruptionsAllowed"])
            }),
            age_column(),
        ],
        ("autoscaling", "scale") => vec![
            Column {
                format: "",
                ..name_column()
            },
            builtin("Desired", "integer", 0, |o| int(&o["spec"]["replicas"])),
            builtin("Available", "integer", 0, |o| int(&o["status"]["replicas"])),
            age_column(),
        ],
        _ => return None,
    };
    Some(columns)
}

/// `ready/desired`, the desired count defaulting to 1 as kube-apiserver defaults it.
fn ready_of_desired(object: &Value, ready: &str) -> Value {
    let ready = object["status"][ready].as_i64().unwrap_or(0);
    let desired = desired(object);
    json!(format!("{ready}/{desired}"))
}

fn desired(object: &Value) -> i64 {
    object["spec"]["replicas"].as_i64().unwrap_or(1)
}

/// Replica sets' and replication controllers' columns; they differ in how the selector reads.
fn replicas_columns(selector: fn(&Value) -> Value) -> Vec<Column> {
    vec![
        name_column(),
        builtin("Desired", "integer", 0, |o| json!(desired(o))),
        builtin("Current", "integer", 0, |o| int(&o["status"]["replicas"])),
        builtin("Ready", "integer", 0, |o| int(&o["status"]["readyReplicas"])),
        age_column(),
        builtin("Containers", "string", 1, |o| template_containers(o, "name")),
        builtin("Images", "string", 1, |o| template_containers(o, "image")),
        builtin("Selector", "string", 1, selector),
    ]
}

fn daemon_set_columns() -> Vec<Column> {
    vec![
        name_column(),
        builtin("Desired", "integer", 0, |o| {
            int(&o["status"]["desiredNumberScheduled"])
        }),
        builtin("Current", "integer", 0, |o| {
            int(&o["status"]["currentNumberScheduled"])
        }),
        builtin("Ready", "integer", 0, |o| int(&o["status"]["numberReady"])),
        builtin("Up-to-date", "integer", 0, |o| {
            int(&o["status"]["updatedNumberScheduled"])
        }),
        builtin("Available", "integer", 0, |o| {
            int(&o["status"]["numberAvailable"])
        }),
        builtin("Node Selector", "string", 0, |o| {
            labels(&o["spec"]["template"]["spec"]["nodeSelector"])
        }),
        age_column(),
        builtin("Containers", "string", 1, |o| template_containers(o, "name")),
        builtin("Images", "string", 1, |o| template_containers(o, "image")),
        builtin("Selector", "string", 1, |o| {
            label_selector(&o["spec"]["selector"])
        }),
    ]
}

fn job_columns() -> Vec<Column> {
    vec![
        name_column(),
        builtin("Status", "string", 0, job_status),
        builtin("Completions", "string", 0, job_completions),
        builtin("Duration", "string", 0, |o| {
            let status = &o["status"];
            match (seconds(&status["startTime"]), seconds(&status["completionTime"])) {
                (None, _) => json!(""),
                (Some(_), None) => since(&status["startTime"]),
                (Some(start), Some(end)) => json!(human_duration(end - start)),
            }
        }),
        age_column(),
        builtin("Containers", "string", 1, |o| template_containers(o, "name")),
        builtin("Images", "string", 1, |o| template_containers(o, "image")),
        builtin("Selector", "string", 1, |o| {
            label_selector(&o["spec"]["selector"])
        }),
    ]
}

/// The first condition of `kind` is true.
fn has_condition(object: &Value, kind: &str) -> bool {
    items(&object["status"]["conditions"])
        .find(|c| c["type"] == kind)
        .is_some_and(|c| c["status"] == "True")
}

fn job_status(job: &Value) -> Value {
    let status = if has_condition(job, "Complete") {
        "Complete"
    } else if has_condition(job, "Failed") {
        "Failed"
    } else if job["metadata"]["deletionTimestamp"].is_string() {
        "Terminating"
    } else if has_condition(job, "Suspended") {
        "Suspended"
    } else if has_condition(job, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    json!(status)
}

fn job_completions(job: &Value) -> Value {
    let succeeded = job["status"]["succeeded"].as_i64().unwrap_or(0);
    if let Some(completions) = job["spec"]["completions"].as_i64() {
        return json!(format!("{succeeded}/{completions}"));
    }
    match job["spec"]["parallelism"].as_i64().unwrap_or(0) {
        parallelism if parallelism > 1 => json!(format!("{succeeded}/1 of {parallelism}")),
        _ => json!(format!("{succeeded}/1")),
    }
}

fn cron_job_columns() -> Vec<Column> {
    vec![
        name_column(),
        builtin("Schedule", "string", 0, |o| text(&o["spec"]["schedule"], "")),
        builtin("Timezone", "string", 0, |o| {
            text(&o["spec"]["timeZone"], "<none>")
        }),
        // kube-apiserver defaults `suspend` to false
        builtin("Suspend", "boolean", 0, |o| {
            go_bool(o["spec"]["suspend"].as_bool().unwrap_or(false))
        }),
        builtin("Active", "integer", 0, |o| {
            json!(items(&o["status"]["active"]).count())
        }),
        builtin(
            "Last Schedule",
            "string",
            0,
            |o| match o["status"]["lastScheduleTime"] {
                Value::Null => json!("<none>"),
                ref time => since(time),
            },
        ),
        age_column(),
        builtin("Containers", "string", 1, |o| {
            containers(&job_template_spec(o)["template"]["spec"]["containers"], "name")
        }),
        builtin("Images", "string", 1, |o| {
            containers(&job_template_spec(o)["template"]["spec"]["containers"], "image")
        }),
        builtin("Selector", "string", 1, |o| {
            label_selector(&job_template_spec(o)["selector"])
        }),
    ]
}

fn job_template_spec(cron_job: &Value) -> &Value {
    &cron_job["spec"]["jobTemplate"]["spec"]
}

/// A controller revision's controller: `kind.group/name` (lowercase kind), `<none>` without one.
fn controller_of(object: &Value) -> Value {
    let controller = items(&object["metadata"]["ownerReferences"]).find(|r| r["controller"] == true);
    let Some(controller) = controller else {
        return json!("<none>");
    };
    let api_version = controller["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let kind = controller["kind"].as_str().unwrap_or_default().to_lowercase();
    let name = controller["name"].as_str().unwrap_or_default();
    json!(match (kind.is_empty(), group.is_empty()) {
        (true, true) => name.to_owned(),
        (_, true) => format!("{kind}/{name}"),
        _ => format!("{kind}.{group}/{name}"),
    })
}

/// An int-or-string as Go writes it; `N/A` when absent.
fn int_or_string(value: &Value) -> Value {
    match value {
        Value::Number(n) => json!(n.to_string()),
        Value::String(s) => json!(s),
        _ => json!("N/A"),
    }
}
