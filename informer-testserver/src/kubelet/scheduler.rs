//! The minimal scheduler: which node a pod fits on, spreading pods over the nodes that fit, and
//! kube-scheduler's message when none does.
//!
//! A node fits when it is schedulable (`spec.unschedulable` is the taint
//! `node.kubernetes.io/unschedulable:NoSchedule`), the pod tolerates its `NoSchedule` and
//! `NoExecute` taints, its labels match the pod's `nodeSelector` and required node affinity,
//! it runs fewer pods than its `pods` allocatable, and its allocatable holds the pod's resource
//! requests beside those of the pods bound to it (`resources.rs`: CPU, memory, ephemeral
//! storage, huge pages and extended resources, as `NodeResourcesFit` counts them). Of the
//! nodes that fit, the one running the fewest pods wins (then the first by name).

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::resources::Resources;

/// The scheduler name a pod must name (or leave empty) to be scheduled here.
pub(crate) const SCHEDULER_NAME: &str = "default-scheduler";

const UNSCHEDULABLE: &str = "node(s) were unschedulable";
const TAINTED: &str = "node(s) had untolerated taint(s)";
const NOT_SELECTED: &str = "node(s) didn't match Pod's node affinity/selector";
const TOO_MANY_PODS: &str = "Too many pods";
const NO_VICTIMS: &str = "No preemption victims found for incoming pod";
const PREEMPTION_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";

/// What the pods bound to a node take of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeUsage {
    /// The pods that have not finished.
    pub(crate) pods: usize,
    /// What they request.
    pub(crate) requested: Resources,
}

/// Whether this scheduler is the one to schedule `pod`: not bound, not being deleted, no
/// scheduling gates, not finished, and naming the default scheduler.
pub(crate) fn wants_scheduling(pod: &Value) -> bool {
    let spec = &pod["spec"];
    spec["nodeName"].as_str().unwrap_or_default().is_empty()
        && spec["schedulerName"]
            .as_str()
            .is_none_or(|name| name.is_empty() || name == SCHEDULER_NAME)
        && !pod["metadata"]["deletionTimestamp"].is_string()
        && spec["schedulingGates"].as_array().is_none_or(Vec::is_empty)
        && !matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
}

/// The node `pod` goes to, or kube-scheduler's message telling why none fits. `usage` says
/// what the pods bound to each node take of it.
pub(crate) fn choose(
    pod: &Value,
    nodes: &[Value],
    usage: &HashMap<String, NodeUsage>,
) -> Result<String, String> {
    if nodes.is_empty() {
        return Err("no nodes available to schedule pods".to_string());
    }
    let requested = Resources::requested_by(pod)?;
    let idle = NodeUsage::default();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut preemption: BTreeMap<&str, usize> = BTreeMap::new();
    let mut best: Option<(usize, &str)> = None;
    for node in nodes {
        let name = node["metadata"]["name"].as_str().unwrap_or_default();
        let used = usage.get(name).unwrap_or(&idle);
        let Some(misfit) = misfit(pod, node, used, &requested) else {
            if best.is_none_or(|(fewest, _)| used.pods < fewest) {
                best = Some((used.pods, name));
            }
            continue;
        };
        for reason in misfit.reasons {
            *reasons.entry(reason).or_default() += 1;
        }
        // no pod here has a lower priority to evict: preemption finds no victim where
        // resources are short, and cannot help where the node itself refuses the pod
        let outcome = if misfit.resolvable {
            NO_VICTIMS
        } else {
            PREEMPTION_NOT_HELPFUL
        };
        *preemption.entry(outcome).or_default() += 1;
    }
    if let Some((_, name)) = best {
        return Ok(name.to_string());
    }
    let total = nodes.len();
    Err(format!(
        "0/{total} nodes are available: {}. preemption: 0/{total} nodes are available: {}.",
        counted(reasons.iter().map(|(reason, count)| (reason.as_str(), *count))),
        counted(preemption.into_iter()),
    ))
}

/// `count reason` for each reason, sorted as kube-scheduler sorts them (as strings).
fn counted<'r>(reasons: impl Iterator<Item = (&'r str, usize)>) -> String {
    let mut counted: Vec<String> = reasons
        .map(|(reason, count)| format!("{count} {reason}"))
        .collect();
    counted.sort();
    counted.join(", ")
}

/// Why a node does not fit a pod.
struct Misfit {
    /// kube-scheduler's reasons.
    reasons: Vec<String>,
    /// Whether evicting pods of the node could make room (resources short), or the node
    /// refuses the pod whatever runs on it.
    resolvable: bool,
}

/// Why `node` does not fit `pod` (which requests `requested`), as the first of kube-scheduler's
/// filters that fails says it; `None`: it fits.
fn misfit(pod: &Value, node: &Value, used: &NodeUsage, requested: &Resources) -> Option<Misfit> {
    if let Some(reason) = placement_misfit(pod, node) {
        return Some(Misfit {
            reasons: vec![reason.to_string()],
            resolvable: false,
        });
    }
    let capacity = node["status"]["allocatable"]["pods"]
        .as_str()
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(usize::MAX);
    let mut reasons = Vec::new();
    if used.pods >= capacity {
        reasons.push(TOO_MANY_PODS.to_string());
    }
    match Resources::read(&node["status"]["allocatable"]) {
        Ok(allocatable) => reasons.extend(allocatable.insufficient(&used.requested, requested)),
        Err(error) => reasons.push(error),
    }
    (!reasons.is_empty()).then_some(Misfit {
        reasons,
        resolvable: true,
    })
}

/// Why `node` cannot take `pod` whatever its resources: cordoned, tainted, not selected.
fn placement_misfit(pod: &Value, node: &Value) -> Option<&'static str> {
    let tolerations = pod["spec"]["tolerations"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if node["spec"]["unschedulable"].as_bool() == Some(true)
        && !tolerations
            .iter()
            .any(|t| tolerates(t, "node.kubernetes.io/unschedulable", "", "NoSchedule"))
    {
        return Some(UNSCHEDULABLE);
    }
    let untolerated = node["spec"]["taints"].as_array().is_some_and(|taints| {
        taints.iter().any(|taint| {
            let effect = taint["effect"].as_str().unwrap_or_default();
            matches!(effect, "NoSchedule" | "NoExecute")
                && !tolerations.iter().any(|t| {
                    tolerates(
                        t,
                        taint["key"].as_str().unwrap_or_default(),
                        taint["value"].as_str().unwrap_or_default(),
                        effect,
                    )
                })
        })
    });
    if untolerated {
        return Some(TAINTED);
    }
    if !selected(pod, node) {
        return Some(NOT_SELECTED);
    }
    None
}

/// Whether `toleration` tolerates the taint `key=value:effect`.
fn tolerates(toleration: &Value, key: &str, value: &str, effect: &str) -> bool {
    let t_effect = toleration["effect"].as_str().unwrap_or_default();
    if !t_effect.is_empty() && t_effect != effect {
        return false;
    }
    let t_key = toleration["key"].as_str().unwrap_or_default();
    if !t_key.is_empty() && t_key != key {
        return false;
    }
    match toleration["operator"].as_str().unwrap_or("Equal") {
        // An empty key with Exists tolerates everything.
        "Exists" => true,
        "Equal" | "" => !t_key.is_empty() && toleration["value"].as_str().unwrap_or_default() == value,
        _ => false,
    }
}

/// Whether the node's labels satisfy the pod's `nodeSelector` and required node affinity.
fn selected(pod: &Value, node: &Value) -> bool {
    let labels = &node["metadata"]["labels"];
    let selector_ok = pod["spec"]["nodeSelector"]
        .as_object()
        .is_none_or(|selector| selector.iter().all(|(k, v)| labels[k] == *v));
    if !selector_ok {
        return false;
    }
    let terms = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    match terms.as_array() {
        None => true,
        Some(terms) => terms.iter().any(|term| term_matches(term, node)),
    }
}

/// A node selector term: every expression on labels and fields holds (a term with none
/// matches nothing, as in kube-scheduler).
fn term_matches(term: &Value, node: &Value) -> bool {
    let labels = term["matchExpressions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let fields = term["matchFields"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if labels.is_empty() && fields.is_empty() {
        return false;
    }
    let name = node["metadata"]["name"].as_str();
    labels.iter().all(|e| {
        requirement(
            e,
            node["metadata"]["labels"][e["key"].as_str().unwrap_or_default()].as_str(),
        )
    }) && fields
        .iter()
        .all(|e| e["key"] == "metadata.name" && requirement(e, name))
}

/// One `NodeSelectorRequirement` on the value `actual` (`None`: no such label).
fn requirement(expression: &Value, actual: Option<&str>) -> bool {
    let values: Vec<&str> = expression["values"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let number = |s: &str| s.parse::<i64>().ok();
    match expression["operator"].as_str().unwrap_or_default() {
        "In" => actual.is_some_and(|a| values.contains(&a)),
        "NotIn" => actual.is_none_or(|a| !values.contains(&a)),
        "Exists" => actual.is_some(),
        "DoesNotExist" => actual.is_none(),
        "Gt" => {
            matches!((actual.and_then(number), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a > b)
        }
        "Lt" => {
            matches!((actual.and_then(number), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a < b)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(name: &str, extra: Value) -> Value {
        let mut node = json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"pods": "110", "cpu": "4", "memory": "16Gi"}}});
        if let (Some(node), Some(extra)) = (node.as_object_mut(), extra.as_object()) {
            node.extend(extra.clone());
        }
        node
    }

    /// Node `a` running `pods` pods that request `cpu` in all.
    fn on_a(pods: usize, cpu: &str) -> HashMap<String, NodeUsage> {
        let used = json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}});
        let requested = Resources::requested_by(&used).expect("requests");
        HashMap::from([("a".to_string(), NodeUsage { pods, requested })])
    }

    #[test]
    fn pods_go_to_the_least_busy_node_that_fits() {
        let nodes = [node("a", json!({})), node("b", json!({}))];
        let running = on_a(2, "0");
        assert_eq!(
            choose(&json!({"spec": {}}), &nodes, &running),
            Ok("b".to_string())
        );
        let pinned = json!({"spec": {"nodeSelector": {"kubernetes.io/hostname": "a"}}});
        assert_eq!(choose(&pinned, &nodes, &running), Ok("a".to_string()));
    }

    #[test]
    fn no_fit_gives_kube_schedulers_message() {
        let nodes = [
            node(
                "a",
                json!({"spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]}}),
            ),
            node("b", json!({"spec": {"unschedulable": true}})),
            node("c", json!({})),
        ];
        let pod = json!({"spec": {"nodeSelector": {"disk": "ssd"}}});
        assert_eq!(
            choose(&pod, &nodes, &HashMap::new()),
            Err("0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.".to_string())
        );
        let tolerant = json!({"spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}]}});
        assert_eq!(
            choose(&tolerant, &nodes[..1], &HashMap::new()),
            Ok("a".to_string())
        );
    }

    #[test]
    fn requests_must_fit_beside_what_a_node_runs() {
        let nodes = [
            node("a", json!({})),
            node("b", json!({"spec": {"unschedulable": true}})),
        ];
        let busy = |cpu: &str| on_a(1, cpu);
        let pod = json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "32Gi"}}}]}});
        assert_eq!(
            choose(&pod, &nodes, &busy("3500m")),
            Err("0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.".to_string())
        );
        let small =
            json!({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "500m"}}}]}});
        assert_eq!(choose(&small, &nodes, &busy("3500m")), Ok("a".to_string()));
        assert!(
            choose(&small, &nodes, &busy("3600m")).is_err(),
            "a limit stands for its request"
        );
        assert!(
            choose(&json!({"spec": {}}), &nodes[..1], &on_a(110, "0"))
                .is_err_and(|m| m.starts_with("0/1 nodes are available: 1 Too many pods."))
        );
        let bad = json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "two"}}}]}});
        assert!(choose(&bad, &nodes, &HashMap::new()).is_err_and(|m| m.contains("\"two\" of cpu")));
    }

    #[test]
    fn required_node_affinity_is_honoured() {
        let nodes = [node("a", json!({})), node("b", json!({}))];
        let pod = json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["b"]}]}]
        }}}}});
        assert_eq!(choose(&pod, &nodes, &HashMap::new()), Ok("b".to_string()));
    }
}
