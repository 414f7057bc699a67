//! The StatefulSet controller: pods `<name>-<ordinal>` with stable names, hostnames and
//! labels, created in order and each only once the one before runs and is ready
//! (`OrderedReady`), or all at once (`Parallel`); removed from the highest ordinal down;
//! updated from the highest ordinal down, one at a time, above `partition`; status counts and
//! revisions (kube's `pkg/controller/statefulset`).
//!
//! Each pod's claims are created from `volumeClaimTemplates` before it, named
//! `<template>-<pod>`, and mounted in its volume of the template's name; they stay when pods
//! and the set go (the default `Retain` policy).
//!
//! Not implemented: ControllerRevisions (a revision is named `<name>-<template hash>` after
//! this crate's hash, without the object), `persistentVolumeClaimRetentionPolicy`'s `Delete`,
//! `maxUnavailable`, and the adoption of orphan pods.

use std::{collections::BTreeMap, sync::Arc};

use informer_runtime::{Action, Controller, Manager, ScopedLister, scope};
use k8s_openapi::api::{
    apps::v1::{StatefulSet, StatefulSetStatus},
    core::v1::{PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, Volume},
};
use kube::{Api, ResourceExt, api::PostParams, core::Selector};
use serde_json::json;

use crate::{api, api::count, hash, owner, pod};

/// The controller's name in logs.
pub(crate) const NAME: &str = "statefulset";

/// The label of a pod's name.
pub(crate) const POD_NAME: &str = "statefulset.kubernetes.io/pod-name";
/// The label of a pod's ordinal.
const POD_INDEX: &str = "apps.kubernetes.io/pod-index";
/// The label of a pod's revision.
pub(crate) const REVISION_HASH: &str = "controller-revision-hash";

/// What fails a reconcile of a stateful set.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The pod cache refused the question.
    #[error("failed to read the pod cache: {0}")]
    Cache(#[from] scope::Error),
    /// A write failed.
    #[error("failed to {action} of stateful set {owner}: {source}")]
    Write {
        /// What was done.
        action: &'static str,
        /// The stateful set.
        owner: String,
        /// The API's answer.
        source: kube::Error,
    },
}

struct Context {
    client: kube::Client,
    pods: ScopedLister<Pod>,
}

/// Adds the controller to `manager`.
pub(crate) fn register(manager: &mut Manager) {
    let factory = manager.factory().clone();
    let controller = Controller::<StatefulSet>::new(&factory)
        .name(NAME)
        .owns::<Pod>()
        .concurrency(2);
    let context = Arc::new(Context {
        client: manager.client(),
        pods: factory.informer::<Pod>().lister(),
    });
    manager.add_controller(controller, reconcile, api::retry, context);
}

/// What one reconcile does next.
#[derive(Debug, PartialEq)]
enum Step {
    Create(i32),
    Delete(String),
    Wait,
}

async fn reconcile(sts: Arc<StatefulSet>, context: Arc<Context>) -> Result<Action, Error> {
    if owner::selector_of(Some(&sts.spec.selector)).is_none() || sts.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let uid = sts.uid().unwrap_or_default();
    let namespace = sts.namespace().unwrap_or_default();
    let mut pods: BTreeMap<i32, Arc<Pod>> = BTreeMap::new();
    for p in context.pods.by_namespace(&namespace).list(&Selector::default())? {
        let ordinal = ordinal(&sts.name_any(), &p.name_any());
        if let Some(ordinal) =
            ordinal.filter(|_| owner::controller_of(&p.metadata).is_some_and(|o| o.uid == uid))
        {
            pods.insert(ordinal, p);
        }
    }
    let update_revision = format!(
        "{}-{}",
        sts.name_any(),
        hash::template_hash(&sts.spec.template, collision_count(&sts))
    );
    let api: Api<Pod> = Api::namespaced(context.client.clone(), &namespace);
    let write_error = |action| {
        let owner = sts.name_any();
        move |source| Error::Write {
            action,
            owner,
            source,
        }
    };
    for step in steps(&sts, &pods, &update_revision) {
        match step {
            Step::Create(ordinal) => {
                create_claims(&sts, ordinal, &context.client)
                    .await
                    .map_err(write_error("create a claim"))?;
                let new_pod = stateful_pod(&sts, ordinal, &update_revision);
                api.create(&PostParams::default(), &new_pod)
                    .await
                    .map_err(write_error("create a pod"))?;
            }
            Step::Delete(name) => api::delete(&api, &name)
                .await
                .map_err(write_error("delete a pod"))?,
            Step::Wait => {}
        }
    }
    let status = status(&sts, &pods, &update_revision);
    if !api::same(&sts.status.as_ref(), &Some(&status)) {
        let sets: Api<StatefulSet> = Api::namespaced(context.client.clone(), &namespace);
        api::merge_status(&sets, &sts.name_any(), &json!({"status": status}))
            .await
            .map_err(write_error("update the status"))?;
    }
    Ok(Action::await_change())
}

fn collision_count(sts: &StatefulSet) -> Option<i32> {
    sts.status.as_ref().and_then(|status| status.collision_count)
}

/// The ordinal of the pod `name` of the stateful set `set`.
fn ordinal(set: &str, name: &str) -> Option<i32> {
    name.strip_prefix(set)?.strip_prefix('-')?.parse().ok()
}

fn running_and_ready(p: &Pod) -> bool {
    pod::phase(p) == "Running" && pod::is_ready(p) && p.metadata.deletion_timestamp.is_none()
}

fn revision_of(p: &Pod) -> Option<&str> {
    p.labels().get(REVISION_HASH).map(String::as_str)
}

/// kube's `updateStatefulSet`, as the steps of this reconcile: failed pods replaced, missing
/// ordinals created, surplus ordinals removed from the highest down, then one pod of an older
/// revision deleted from the highest ordinal down; `OrderedReady` stops at the first pod that
/// is not running and ready.
fn steps(sts: &StatefulSet, pods: &BTreeMap<i32, Arc<Pod>>, update_revision: &str) -> Vec<Step> {
    let ordered = sts.spec.pod_management_policy.as_deref() != Some("Parallel");
    let start = sts.spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0);
    let end = start + sts.spec.replicas.unwrap_or(1);
    let mut steps = Vec::new();
    for ordinal in start..end {
        let step = match pods.get(&ordinal) {
            None => Step::Create(ordinal),
            Some(p) if pod::phase(p) == "Failed" && p.metadata.deletion_timestamp.is_none() => {
                Step::Delete(p.name_any())
            }
            Some(p) if running_and_ready(p) => continue,
            Some(_) => Step::Wait,
        };
        let blocking = step != Step::Create(ordinal) || ordered;
        steps.push(step);
        if ordered && blocking {
            return steps;
        }
    }
    let condemned = pods.range(..start).chain(pods.range(end..)).rev();
    for (_, p) in condemned {
        steps.push(if p.metadata.deletion_timestamp.is_some() {
            Step::Wait
        } else {
            Step::Delete(p.name_any())
        });
        if ordered {
            return steps;
        }
    }
    if !steps.is_empty() {
        return steps;
    }
    rolling_update(sts, pods, start..end, update_revision)
        .into_iter()
        .collect()
}

/// The next pod of an older revision to delete, from the highest ordinal down to
/// `partition`, once every pod runs and is ready.
fn rolling_update(
    sts: &StatefulSet,
    pods: &BTreeMap<i32, Arc<Pod>>,
    range: std::ops::Range<i32>,
    update_revision: &str,
) -> Option<Step> {
    let strategy = sts.spec.update_strategy.as_ref();
    if strategy.and_then(|s| s.type_.as_deref()) == Some("OnDelete") {
        return None;
    }
    let partition = strategy
        .and_then(|s| s.rolling_update.as_ref())
        .and_then(|r| r.partition)
        .unwrap_or(0);
    let outdated = pods
        .range(range.start.max(range.start + partition)..range.end)
        .rev()
        .find(|(_, p)| revision_of(p) != Some(update_revision))?;
    let healthy = pods.range(range).all(|(_, p)| running_and_ready(p));
    Some(if healthy {
        Step::Delete(outdated.1.name_any())
    } else {
        Step::Wait
    })
}

/// The pod of `ordinal`: the template's pod named `<name>-<ordinal>`, with its hostname,
/// the service's subdomain and the stateful set's labels.
fn stateful_pod(sts: &StatefulSet, ordinal: i32, revision: &str) -> Pod {
    let name = format!("{}-{ordinal}", sts.name_any());
    let labels = BTreeMap::from([
        (POD_NAME.to_owned(), name.clone()),
        (POD_INDEX.to_owned(), ordinal.to_string()),
        (REVISION_HASH.to_owned(), revision.to_owned()),
    ]);
    let namespace = sts.namespace().unwrap_or_default();
    let mut new_pod = pod::from_template(
        &sts.spec.template,
        &namespace,
        String::new(),
        owner::controller_reference(sts),
        labels,
    );
    new_pod.metadata.generate_name = None;
    new_pod.metadata.name = Some(name.clone());
    let spec = new_pod.spec.get_or_insert_with(Default::default);
    spec.subdomain.clone_from(&sts.spec.service_name);
    let volumes = spec.volumes.get_or_insert_with(Vec::new);
    for claim in sts.spec.volume_claim_templates.iter().flatten() {
        let template = claim.name_any();
        volumes.retain(|volume| volume.name != template);
        volumes.push(Volume {
            name: template.clone(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: format!("{template}-{name}"),
                read_only: None,
            }),
            ..Volume::default()
        });
    }
    spec.hostname = Some(name);
    new_pod
}

/// Creates the claims of the pod of `ordinal` from `volumeClaimTemplates`, named
/// `<template>-<pod>` and labelled with the template's and the selector's labels; a claim that
/// exists already is kept (kube's `createPersistentVolumeClaims`).
async fn create_claims(sts: &StatefulSet, ordinal: i32, client: &kube::Client) -> kube::Result<()> {
    let namespace = sts.namespace().unwrap_or_default();
    let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &namespace);
    let pod_name = format!("{}-{ordinal}", sts.name_any());
    for template in sts.spec.volume_claim_templates.iter().flatten() {
        let mut claim = template.clone();
        claim.metadata.name = Some(format!("{}-{pod_name}", template.name_any()));
        claim.metadata.namespace = Some(namespace.clone());
        let labels = claim.metadata.labels.get_or_insert_with(BTreeMap::new);
        labels.extend(sts.spec.selector.match_labels.clone().unwrap_or_default());
        claim.status = None;
        match api.create(&PostParams::default(), &claim).await {
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            other => {
                other?;
            }
        }
    }
    Ok(())
}

/// kube's status of a stateful set, from its pods before this reconcile's writes: the
/// current revision becomes the update revision once every replica is updated and ready.
fn status(sts: &StatefulSet, pods: &BTreeMap<i32, Arc<Pod>>, update_revision: &str) -> StatefulSetStatus {
    let live: Vec<&Arc<Pod>> = pods
        .values()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    let min_ready = sts.spec.min_ready_seconds.unwrap_or(0);
    let ready = count(live.iter().filter(|p| running_and_ready(p)).count());
    let available = count(
        live.iter()
            .filter(|p| pod::availability(p, min_ready).is_ok())
            .count(),
    );
    let updated = count(
        live.iter()
            .filter(|p| revision_of(p) == Some(update_revision))
            .count(),
    );
    let previous = sts.status.as_ref().and_then(|s| s.current_revision.clone());
    let replicas = sts.spec.replicas.unwrap_or(1);
    let current_revision = match previous {
        Some(previous) if updated < replicas || ready < replicas => previous,
        _ => update_revision.to_owned(),
    };
    let current = count(
        live.iter()
            .filter(|p| revision_of(p) == Some(current_revision.as_str()))
            .count(),
    );
    StatefulSetStatus {
        replicas: count(live.len()),
        ready_replicas: Some(ready),
        available_replicas: Some(available),
        current_replicas: Some(current),
        updated_replicas: Some(updated),
        current_revision: Some(current_revision),
        update_revision: Some(update_revision.to_owned()),
        observed_generation: sts.metadata.generation,
        collision_count: collision_count(sts),
        conditions: sts.status.as_ref().and_then(|s| s.conditions.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_come_from_the_name_suffix() {
        assert_eq!(ordinal("web", "web-0"), Some(0));
        assert_eq!(ordinal("web", "web-12"), Some(12));
        assert_eq!(ordinal("web", "web-x"), None);
        assert_eq!(ordinal("web", "webapp-1"), None);
    }

    fn sts(parallel: bool, replicas: i32) -> StatefulSet {
        serde_json::from_value(json!({
            "metadata": {"name": "web"},
            "spec": {
                "replicas": replicas,
                "podManagementPolicy": if parallel { "Parallel" } else { "OrderedReady" },
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}},
            },
        }))
        .unwrap_or_default()
    }

    // kube: pkg/controller/statefulset/stateful_set_control_test.go, CreatesPods and
    // TestStatefulSetControlScaleUp's OrderedReady/Parallel cases.
    #[test]
    fn ordered_ready_creates_one_pod_at_a_time_and_parallel_all() {
        let none = BTreeMap::new();
        assert_eq!(steps(&sts(false, 3), &none, "r"), [Step::Create(0)]);
        assert_eq!(
            steps(&sts(true, 3), &none, "r"),
            [Step::Create(0), Step::Create(1), Step::Create(2)]
        );
        let mut pending = BTreeMap::new();
        pending.insert(0, Arc::new(stateful_pod(&sts(false, 3), 0, "r")));
        assert_eq!(steps(&sts(false, 3), &pending, "r"), [Step::Wait]);
    }
}
