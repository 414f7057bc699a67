//! The DaemonSet controller: one pod per node that fits the template (its `nodeSelector`, and
//! the node's `NoSchedule` and `NoExecute` taints against the template's tolerations and those
//! every daemon pod gets), pinned to its node with required node affinity on `metadata.name`
//! as kube does; pods on nodes that no longer fit deleted; `RollingUpdate` within
//! `maxUnavailable`; status counts (kube's `pkg/controller/daemon`).
//!
//! Not implemented: ControllerRevisions (the `controller-revision-hash` label is this crate's
//! template hash), `maxSurge`, `minReadySeconds`, node affinity of the template, and the
//! adoption of orphan pods.

use std::{collections::BTreeMap, sync::Arc};

use futures::future::join_all;
use informer_runtime::{
    Action, Controller, Manager, ObjectKey, Predicate, ScopedLister, controller::Watches, predicate::Event,
    scope,
};
use k8s_openapi::{
    api::{
        apps::v1::{DaemonSet, DaemonSetStatus},
        core::v1::{Node, NodeSelector, Pod, PodTemplateSpec, Taint, Toleration},
    },
    apimachinery::pkg::util::intstr::IntOrString,
};
use kube::{Api, ResourceExt, api::PostParams, core::Selector};
use serde_json::json;

use crate::{api, api::count, hash, owner, pod};

/// The controller's name in logs.
pub(crate) const NAME: &str = "daemonset";

/// The label of a daemon pod's template revision.
pub(crate) const REVISION_HASH: &str = "controller-revision-hash";
/// The label of the daemon set's generation a pod was made from.
const TEMPLATE_GENERATION: &str = "pod-template-generation";

/// The tolerations kube adds to every daemon pod (`AddOrUpdateDaemonPodTolerations`).
const DAEMON_TOLERATIONS: [(&str, &str); 6] = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
];

/// What fails a reconcile of a daemon set.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A cache refused the question.
    #[error("failed to read the cache: {0}")]
    Cache(#[from] scope::Error),
    /// A write failed.
    #[error("failed to {action} of daemon set {owner}: {source}")]
    Write {
        /// What was done.
        action: &'static str,
        /// The daemon set.
        owner: String,
        /// The API's answer.
        source: kube::Error,
    },
}

struct Context {
    client: kube::Client,
    pods: ScopedLister<Pod>,
    nodes: ScopedLister<Node>,
}

/// Adds the controller to `manager`.
pub(crate) fn register(manager: &mut Manager) {
    let factory = manager.factory().clone();
    let daemon_sets = factory.informer::<DaemonSet>().lister();
    let controller = Controller::<DaemonSet>::new(&factory)
        .name(NAME)
        .owns::<Pod>()
        .relation(
            Watches::new(move |_: &Node| every_daemon_set(&daemon_sets)).predicate(placement_changed()),
        );
    let context = Arc::new(Context {
        client: manager.client(),
        pods: factory.informer::<Pod>().lister(),
        nodes: factory.informer::<Node>().lister(),
    });
    manager.add_controller(controller, reconcile, api::retry, context);
}

/// Every daemon set: a node's change concerns them all.
fn every_daemon_set(daemon_sets: &ScopedLister<DaemonSet>) -> Vec<ObjectKey> {
    let all = daemon_sets.list(&Selector::default()).unwrap_or_default();
    all.iter()
        .map(|ds| ObjectKey::new(&ds.namespace().unwrap_or_default(), &ds.name_any()))
        .collect()
}

/// Node events that can change where daemon pods belong: creations, deletions, and updates of
/// labels or taints (not the status a kubelet reports).
fn placement_changed() -> Predicate<Node> {
    Predicate::labels_changed().or(Predicate::new("taints changed", |event| match event {
        Event::Update { old, new } => {
            let taints = |node: &Node| node.spec.as_ref().and_then(|spec| spec.taints.clone());
            taints(old) != taints(new)
        }
        _ => true,
    }))
}

/// A node and the daemon set's pods on it.
struct Placement {
    node: String,
    should_run: bool,
    pods: Vec<Arc<Pod>>,
}

async fn reconcile(ds: Arc<DaemonSet>, context: Arc<Context>) -> Result<Action, Error> {
    if owner::selector_of(Some(&ds.spec.selector)).is_none() || ds.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let revision = hash::template_hash(
        &ds.spec.template,
        ds.status.as_ref().and_then(|s| s.collision_count),
    );
    let placements = placements(&ds, &context)?;
    let api: Api<Pod> = Api::namespaced(context.client.clone(), &ds.namespace().unwrap_or_default());
    let (mut create, mut delete) = (Vec::new(), Vec::new());
    for placement in &placements {
        plan_node(placement, &mut create, &mut delete);
    }
    delete.extend(rolling_update(&ds, &placements, &revision));
    let name = ds.name_any();
    let write_error = |action| {
        let owner = name.clone();
        move |source| Error::Write {
            action,
            owner,
            source,
        }
    };
    let deletes = delete.iter().map(|pod| api::delete(&api, pod));
    join_all(deletes)
        .await
        .into_iter()
        .collect::<kube::Result<Vec<()>>>()
        .map_err(write_error("delete pods"))?;
    api::slow_start(create.len(), |i| {
        let new_pod = daemon_pod(&ds, &create[i], &revision);
        let api = &api;
        async move { api.create(&PostParams::default(), &new_pod).await.map(drop) }
    })
    .await
    .map_err(write_error("create pods"))?;
    let status = status(&ds, &placements, &revision);
    if !api::same(&ds.status.as_ref(), &Some(&status)) {
        let daemon_sets: Api<DaemonSet> =
            Api::namespaced(context.client.clone(), &ds.namespace().unwrap_or_default());
        api::merge_status(&daemon_sets, &ds.name_any(), &json!({"status": status}))
            .await
            .map_err(write_error("update the status"))?;
    }
    Ok(Action::await_change())
}

/// Every node with whether the daemon set should run there and its pods there (by
/// `spec.nodeName`, or the node its affinity pins it to), failed and deleted pods aside.
fn placements(ds: &DaemonSet, context: &Context) -> Result<Vec<Placement>, Error> {
    let uid = ds.uid().unwrap_or_default();
    let namespace = ds.namespace().unwrap_or_default();
    let mut by_node: BTreeMap<String, Vec<Arc<Pod>>> = BTreeMap::new();
    for p in context.pods.by_namespace(&namespace).list(&Selector::default())? {
        let ours = owner::controller_of(&p.metadata).is_some_and(|o| o.uid == uid);
        if let Some(node) = target_node(&p).filter(|_| ours && pod::is_active(&p)) {
            by_node.entry(node).or_default().push(p);
        }
    }
    let nodes = context.nodes.list(&Selector::default())?;
    Ok(nodes
        .iter()
        .map(|node| Placement {
            node: node.name_any(),
            should_run: fits(node, &ds.spec.template),
            pods: by_node.remove(&node.name_any()).unwrap_or_default(),
        })
        .collect())
}

/// Pods to create on, and delete from, the node.
fn plan_node(placement: &Placement, create: &mut Vec<String>, delete: &mut Vec<String>) {
    let mut pods: Vec<&Arc<Pod>> = placement.pods.iter().collect();
    pods.sort_by_key(|p| p.metadata.creation_timestamp.as_ref().map(|t| t.0));
    match (placement.should_run, pods.split_first()) {
        (true, None) => create.push(placement.node.clone()),
        (true, Some((_, extra))) => delete.extend(extra.iter().map(|p| p.name_any())),
        (false, _) => delete.extend(pods.iter().map(|p| p.name_any())),
    }
}

/// The pods of an older template to delete now: the unavailable ones, and available ones
/// while fewer than `maxUnavailable` (1 by default) pods are unavailable.
fn rolling_update(ds: &DaemonSet, placements: &[Placement], revision: &str) -> Vec<String> {
    let strategy = ds.spec.update_strategy.as_ref();
    if strategy.and_then(|s| s.type_.as_deref()) == Some("OnDelete") {
        return Vec::new();
    }
    let desired = count(placements.iter().filter(|p| p.should_run).count());
    let max_unavailable = strategy
        .and_then(|s| s.rolling_update.as_ref())
        .and_then(|r| r.max_unavailable.as_ref())
        .map_or(1, |value| scaled(value, desired))
        .max(1);
    let running: Vec<&Arc<Pod>> = placements
        .iter()
        .filter(|p| p.should_run)
        .filter_map(|p| p.pods.first())
        .collect();
    let mut unavailable = desired - count(running.iter().filter(|p| pod::is_ready(p)).count());
    let mut doomed = Vec::new();
    for p in running
        .iter()
        .filter(|p| p.labels().get(REVISION_HASH).map(String::as_str) != Some(revision))
    {
        if !pod::is_ready(p) {
            doomed.push(p.name_any());
        } else if unavailable < max_unavailable {
            doomed.push(p.name_any());
            unavailable += 1;
        }
    }
    doomed
}

fn scaled(value: &IntOrString, total: i32) -> i32 {
    match value {
        IntOrString::Int(value) => *value,
        IntOrString::String(text) => {
            let percent: i32 = text.trim_end_matches('%').parse().unwrap_or(0);
            (percent * total + 99) / 100
        }
    }
}

/// kube's `NodeShouldRunDaemonPod`: the node has the labels of the template's
/// `nodeSelector`, and every `NoSchedule` or `NoExecute` taint of the node is tolerated.
fn fits(node: &Node, template: &PodTemplateSpec) -> bool {
    let spec = template.spec.as_ref();
    let selector = spec.and_then(|s| s.node_selector.as_ref());
    let labels = node.labels();
    let selected =
        selector.is_none_or(|selector| selector.iter().all(|(key, value)| labels.get(key) == Some(value)));
    let tolerations = tolerations(template);
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    let tolerated = taints
        .iter()
        .filter(|taint| matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute"))
        .all(|taint| tolerations.iter().any(|toleration| tolerates(toleration, taint)));
    selected && tolerated
}

/// The template's tolerations and those every daemon pod gets.
fn tolerations(template: &PodTemplateSpec) -> Vec<Toleration> {
    let mut tolerations = template
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.clone())
        .unwrap_or_default();
    for (key, effect) in DAEMON_TOLERATIONS {
        let present = tolerations
            .iter()
            .any(|t| t.key.as_deref() == Some(key) && t.effect.as_deref() == Some(effect));
        if !present {
            tolerations.push(Toleration {
                key: Some(key.to_owned()),
                operator: Some("Exists".to_owned()),
                effect: Some(effect.to_owned()),
                ..Toleration::default()
            });
        }
    }
    tolerations
}

/// kube's `ToleratesTaint`.
fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration
        .effect
        .as_deref()
        .is_none_or(|effect| effect.is_empty() || effect == taint.effect);
    let key = toleration.key.as_deref().unwrap_or_default();
    if !effect || (!key.is_empty() && key != taint.key) {
        return false;
    }
    match toleration.operator.as_deref() {
        Some("Exists") => true,
        _ => {
            !key.is_empty()
                && toleration.value.as_deref().unwrap_or_default()
                    == taint.value.as_deref().unwrap_or_default()
        }
    }
}

/// The node a daemon pod runs on: `spec.nodeName`, or the `metadata.name` its required node
/// affinity names (kube's `GetTargetNodeName`).
fn target_node(p: &Pod) -> Option<String> {
    let spec = p.spec.as_ref()?;
    if let Some(node) = spec.node_name.clone().filter(|n| !n.is_empty()) {
        return Some(node);
    }
    let required = spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?;
    required
        .node_selector_terms
        .iter()
        .flat_map(|term| term.match_fields.as_deref().unwrap_or_default())
        .find(|field| field.key == "metadata.name" && field.operator == "In")
        .and_then(|field| field.values.as_ref()?.first().cloned())
}

/// The daemon pod for `node`: the template's pod with the revision labels, the daemon
/// tolerations, and required node affinity to the node alone.
fn daemon_pod(ds: &DaemonSet, node: &str, revision: &str) -> Pod {
    let labels = BTreeMap::from([
        (REVISION_HASH.to_owned(), revision.to_owned()),
        (
            TEMPLATE_GENERATION.to_owned(),
            ds.metadata.generation.unwrap_or(0).to_string(),
        ),
    ]);
    let namespace = ds.namespace().unwrap_or_default();
    let mut new_pod = pod::from_template(
        &ds.spec.template,
        &namespace,
        pod::generate_name(&ds.name_any()),
        owner::controller_reference(ds),
        labels,
    );
    let spec = new_pod.spec.get_or_insert_with(Default::default);
    spec.tolerations = Some(tolerations(&ds.spec.template));
    let pin: NodeSelector = serde_json::from_value(json!({
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}],
    }))
    .unwrap_or_default();
    let affinity = spec.affinity.get_or_insert_with(Default::default);
    affinity
        .node_affinity
        .get_or_insert_with(Default::default)
        .required_during_scheduling_ignored_during_execution = Some(pin);
    new_pod
}

/// The counts of kube's `updateDaemonSetStatus`, from the pods before this reconcile's writes.
fn status(ds: &DaemonSet, placements: &[Placement], revision: &str) -> DaemonSetStatus {
    let running: Vec<&Arc<Pod>> = placements
        .iter()
        .filter(|p| p.should_run)
        .filter_map(|p| p.pods.first())
        .collect();
    let desired = count(placements.iter().filter(|p| p.should_run).count());
    let ready = count(running.iter().filter(|p| pod::is_ready(p)).count());
    let updated = running
        .iter()
        .filter(|p| p.labels().get(REVISION_HASH).map(String::as_str) == Some(revision));
    DaemonSetStatus {
        desired_number_scheduled: desired,
        current_number_scheduled: count(running.len()),
        number_misscheduled: count(
            placements
                .iter()
                .filter(|p| !p.should_run && !p.pods.is_empty())
                .count(),
        ),
        number_ready: ready,
        number_available: Some(ready),
        number_unavailable: Some(desired - ready),
        updated_number_scheduled: Some(count(updated.count())),
        observed_generation: ds.metadata.generation,
        collision_count: ds.status.as_ref().and_then(|s| s.collision_count),
        conditions: ds.status.as_ref().and_then(|s| s.conditions.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: effect.into(),
            time_added: None,
        }
    }

    fn toleration(
        key: Option<&str>,
        operator: &str,
        value: Option<&str>,
        effect: Option<&str>,
    ) -> Toleration {
        Toleration {
            key: key.map(Into::into),
            operator: Some(operator.into()),
            value: value.map(Into::into),
            effect: effect.map(Into::into),
            toleration_seconds: None,
        }
    }

    // kube: staging/src/k8s.io/api/core/v1/toleration_test.go, TestTolerationToleratesTaint.
    #[test]
    fn tolerations_match_taints_as_kube_does() {
        let dedicated = taint("dedicated", Some("gpu"), "NoSchedule");
        assert!(tolerates(
            &toleration(Some("dedicated"), "Equal", Some("gpu"), Some("NoSchedule")),
            &dedicated
        ));
        assert!(!tolerates(
            &toleration(Some("dedicated"), "Equal", Some("cpu"), Some("NoSchedule")),
            &dedicated
        ));
        assert!(tolerates(
            &toleration(Some("dedicated"), "Exists", None, None),
            &dedicated
        ));
        assert!(!tolerates(
            &toleration(Some("dedicated"), "Exists", None, Some("NoExecute")),
            &dedicated
        ));
        assert!(tolerates(&toleration(None, "Exists", None, None), &dedicated));
    }

    #[test]
    fn daemon_pods_tolerate_node_conditions_and_are_pinned() {
        let template: PodTemplateSpec =
            serde_json::from_value(json!({"spec": {"containers": []}})).unwrap_or_default();
        let node = Node {
            spec: Some(k8s_openapi::api::core::v1::NodeSpec {
                taints: Some(vec![taint(
                    "node.kubernetes.io/unschedulable",
                    None,
                    "NoSchedule",
                )]),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(fits(&node, &template));
        let ds = DaemonSet {
            spec: k8s_openapi::api::apps::v1::DaemonSetSpec {
                template,
                ..Default::default()
            },
            ..Default::default()
        };
        let pinned = daemon_pod(&ds, "node-1", "abc");
        assert_eq!(target_node(&pinned).as_deref(), Some("node-1"));
        assert_eq!(
            pinned.labels().get(REVISION_HASH).map(String::as_str),
            Some("abc")
        );
    }
}
