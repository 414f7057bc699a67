//! The Deployment controller: a replica set per pod template, named
//! `<deployment>-<pod-template-hash>`, scaled by the `RollingUpdate` or `Recreate` strategy,
//! with revisions, history cleanup, pausing, and the status and conditions `kubectl rollout
//! status` reads (kube's `pkg/controller/deployment`).
//!
//! A deployment scaled in the middle of a rollout (or while paused) scales its active replica
//! sets in proportion, as kube's `scale` does.

mod rollout;
mod status;
mod sync;

use std::{collections::BTreeMap, sync::Arc};

use informer_runtime::{Action, Controller, Manager, ObjectKey, ScopedLister, scope};
use k8s_openapi::api::{
    apps::v1::{Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet, ReplicaSetSpec},
    core::v1::{Pod, PodTemplateSpec},
};
use kube::{Api, ResourceExt, api::PostParams, core::Selector};
use serde_json::json;

use crate::{
    api, hash,
    owner::{self, Claim},
    pod,
};

/// The controller's name in logs.
pub(crate) const NAME: &str = "deployment";

/// The revision of a deployment and of its replica sets.
pub(crate) const REVISION: &str = "deployment.kubernetes.io/revision";
/// The deployment's `spec.replicas` when the replica set was last scaled.
pub(crate) const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
/// `spec.replicas` plus `maxSurge` when the replica set was last scaled.
pub(crate) const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
/// The label that tells the pods of one template from those of another.
pub(crate) const POD_TEMPLATE_HASH: &str = "pod-template-hash";

/// The deployment annotations not copied to its replica sets.
const NOT_COPIED: [&str; 5] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    "deployment.kubernetes.io/revision-history",
    DESIRED_REPLICAS,
    MAX_REPLICAS,
];

/// What fails a reconcile of a deployment.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A cache refused the question.
    #[error("failed to read the cache: {0}")]
    Cache(#[from] scope::Error),
    /// A replica set write failed.
    #[error("failed to {action} replica set {name}: {source}")]
    ReplicaSet {
        /// What was done: create, scale, adopt, release, delete, annotate.
        action: &'static str,
        /// The replica set.
        name: String,
        /// The API's answer.
        source: kube::Error,
    },
    /// A write of the deployment failed.
    #[error("failed to {action} deployment {name}: {source}")]
    Deployment {
        /// What was written: the revision annotation, the status.
        action: &'static str,
        /// The deployment.
        name: String,
        /// The API's answer.
        source: kube::Error,
    },
    /// The new replica set's name is taken by another replica set.
    #[error(
        "failed to create replica set {name}: another replica set has the name; the collision count was raised"
    )]
    Collision {
        /// The name taken.
        name: String,
    },
}

struct Context {
    client: kube::Client,
    replica_sets: ScopedLister<ReplicaSet>,
    pods: ScopedLister<Pod>,
}

/// Adds the controller to `manager`.
pub(crate) fn register(manager: &mut Manager) {
    let factory = manager.factory().clone();
    let deployments = factory.informer::<Deployment>().lister();
    let replica_sets = factory.informer::<ReplicaSet>().lister();
    let orphans = deployments.clone();
    let recreates = (deployments, replica_sets.clone());
    let controller = Controller::<Deployment>::new(&factory)
        .name(NAME)
        .owns::<ReplicaSet>()
        .watches::<ReplicaSet, _>(move |rs| orphan_owners(&orphans, rs))
        .watches::<Pod, _>(move |pod| recreate_owner(&recreates.0, &recreates.1, pod))
        .concurrency(2);
    let context = Arc::new(Context {
        client: manager.client(),
        replica_sets,
        pods: factory.informer::<Pod>().lister(),
    });
    manager.add_controller(controller, reconcile, api::retry, context);
}

/// The deployments that may adopt the orphan `rs`.
fn orphan_owners(deployments: &ScopedLister<Deployment>, rs: &ReplicaSet) -> Vec<ObjectKey> {
    if owner::controller_of(&rs.metadata).is_some() {
        return Vec::new();
    }
    let namespace = rs.namespace().unwrap_or_default();
    let candidates = deployments
        .by_namespace(&namespace)
        .list(&Selector::default())
        .unwrap_or_default();
    candidates
        .iter()
        .filter(|d| {
            owner::selector_of(Some(&d.spec.selector)).is_some_and(|s| owner::matches(&s, &rs.metadata))
        })
        .map(|d| ObjectKey::new(&namespace, &d.name_any()))
        .collect()
}

/// The `Recreate` deployment whose replica set controls `pod`: it waits for old pods to go.
fn recreate_owner(
    deployments: &ScopedLister<Deployment>,
    replica_sets: &ScopedLister<ReplicaSet>,
    pod: &Pod,
) -> Vec<ObjectKey> {
    let namespace = pod.namespace().unwrap_or_default();
    let owner_named = |meta, kind: &str| {
        owner::controller_of(meta)
            .filter(|o| o.kind == kind)
            .map(|o| o.name.clone())
    };
    let Some(rs) = owner_named(&pod.metadata, "ReplicaSet")
        .and_then(|name| replica_sets.by_namespace(&namespace).get(&name).ok().flatten())
    else {
        return Vec::new();
    };
    owner_named(&rs.metadata, "Deployment")
        .and_then(|name| deployments.by_namespace(&namespace).get(&name).ok().flatten())
        .filter(|d| rollout::is_recreate(d))
        .map(|d| ObjectKey::new(&namespace, &d.name_any()))
        .into_iter()
        .collect()
}

async fn reconcile(deployment: Arc<Deployment>, context: Arc<Context>) -> Result<Action, Error> {
    let Some(selector) = owner::selector_of(Some(&deployment.spec.selector)) else {
        return Ok(Action::await_change());
    };
    let all = claim_replica_sets(&deployment, &selector, &context).await?;
    let conditions = deployment
        .status
        .as_ref()
        .and_then(|status| status.conditions.clone());
    let mut sync = Sync::new(&deployment, &context, all, conditions);
    if deployment.metadata.deletion_timestamp.is_none() {
        sync.check_paused_conditions();
        if deployment.spec.paused == Some(true) {
            sync.paused().await?;
        } else if sync.is_scaling_event() {
            sync.scale_event().await?;
        } else if rollout::is_recreate(&deployment) {
            sync.recreate().await?;
        } else {
            sync.rolling().await?;
        }
    }
    sync.write_status().await
}

/// The replica sets the deployment controls after adoption and release, oldest first.
async fn claim_replica_sets(
    d: &Deployment,
    selector: &Selector,
    context: &Context,
) -> Result<Vec<Arc<ReplicaSet>>, Error> {
    let namespace = d.namespace().unwrap_or_default();
    let uid = d.uid().unwrap_or_default();
    let rs_api: Api<ReplicaSet> = Api::namespaced(context.client.clone(), &namespace);
    let deleting = d.metadata.deletion_timestamp.is_some();
    let mut owned = Vec::new();
    for rs in context
        .replica_sets
        .by_namespace(&namespace)
        .list(&Selector::default())?
    {
        let name = rs.name_any();
        let rs_error = |action| {
            let name = name.clone();
            move |source| Error::ReplicaSet { action, name, source }
        };
        match owner::claim(&rs.metadata, &uid, selector, deleting) {
            Claim::Owned => owned.push(rs),
            Claim::Adopt => {
                let patch = owner::adopt_patch(&rs.metadata, owner::controller_reference(d));
                owned.push(Arc::new(
                    api::merge(&rs_api, &rs.name_any(), &patch)
                        .await
                        .map_err(rs_error("adopt"))?,
                ));
            }
            Claim::Release => {
                let patch = owner::release_patch(&rs.metadata, &uid);
                api::merge(&rs_api, &rs.name_any(), &patch)
                    .await
                    .map_err(rs_error("release"))?;
            }
            Claim::Ignore => {}
        }
    }
    owned.sort_by(|a, b| {
        let created = |rs: &ReplicaSet| rs.metadata.creation_timestamp.as_ref().map(|t| t.0);
        created(a)
            .cmp(&created(b))
            .then_with(|| a.name_any().cmp(&b.name_any()))
    });
    Ok(owned)
}

/// One reconcile of a deployment: its replica sets as they are after this reconcile's writes,
/// and the conditions it sets.
struct Sync<'a> {
    deployment: &'a Deployment,
    context: &'a Context,
    rs_api: Api<ReplicaSet>,
    /// Every replica set the deployment controls, oldest first.
    all: Vec<Arc<ReplicaSet>>,
    /// The index in `all` of the replica set of the current template.
    new: Option<usize>,
    conditions: Option<Vec<DeploymentCondition>>,
}

impl<'a> Sync<'a> {
    fn new(
        deployment: &'a Deployment,
        context: &'a Context,
        all: Vec<Arc<ReplicaSet>>,
        conditions: Option<Vec<DeploymentCondition>>,
    ) -> Self {
        let new = all
            .iter()
            .position(|rs| same_template(rs, &deployment.spec.template));
        let rs_api = Api::namespaced(
            context.client.clone(),
            &deployment.namespace().unwrap_or_default(),
        );
        Self {
            deployment,
            context,
            rs_api,
            all,
            new,
            conditions,
        }
    }

    fn new_rs(&self) -> Option<&Arc<ReplicaSet>> {
        self.new.map(|index| &self.all[index])
    }

    /// The old replica sets with their indexes in `all`, oldest first.
    fn old(&self) -> Vec<(usize, Arc<ReplicaSet>)> {
        let old = self
            .all
            .iter()
            .enumerate()
            .filter(|(index, _)| Some(*index) != self.new);
        old.map(|(index, rs)| (index, Arc::clone(rs))).collect()
    }

    fn set_condition(&mut self, condition: DeploymentCondition) {
        let mut status = DeploymentStatus {
            conditions: self.conditions.take(),
            ..DeploymentStatus::default()
        };
        status::set(&mut status, condition);
        self.conditions = status.conditions;
    }

    /// kube's `checkPausedConditions`: `Progressing` says paused or resumed.
    fn check_paused_conditions(&mut self) {
        let status = DeploymentStatus {
            conditions: self.conditions.clone(),
            ..DeploymentStatus::default()
        };
        let reason = status::get(&status, status::PROGRESSING).and_then(|c| c.reason.clone());
        if reason.as_deref() == Some(status::DEADLINE_EXCEEDED) {
            return;
        }
        let paused_before = reason.as_deref() == Some(status::PAUSED);
        match (self.deployment.spec.paused == Some(true), paused_before) {
            (true, false) => self.set_condition(status::condition(
                status::PROGRESSING,
                "Unknown",
                status::PAUSED,
                "Deployment is paused".into(),
            )),
            (false, true) => self.set_condition(status::condition(
                status::PROGRESSING,
                "Unknown",
                status::RESUMED,
                "Deployment is resumed".into(),
            )),
            _ => {}
        }
    }
}

/// Whether `rs` was made from `template` (kube's `EqualIgnoreHash`).
fn same_template(rs: &ReplicaSet, template: &PodTemplateSpec) -> bool {
    let Some(rs_template) = rs.spec.template.as_ref() else {
        return false;
    };
    let mut rs_template = rs_template.clone();
    if let Some(labels) = rs_template
        .metadata
        .as_mut()
        .and_then(|meta| meta.labels.as_mut())
    {
        labels.remove(POD_TEMPLATE_HASH);
    }
    api::same(&rs_template, template)
}

/// The revision annotation of `rs` as a number, 0 without one.
fn revision(rs: &ReplicaSet) -> i64 {
    rs.annotations()
        .get(REVISION)
        .and_then(|value| value.parse().ok())
        .unwrap_or(0)
}

/// The replica set of the deployment's template, with the hash label, `replicas` and
/// `revision`.
fn new_replica_set(
    deployment: &Deployment,
    collision_count: Option<i32>,
    replicas: i32,
    revision: i64,
) -> ReplicaSet {
    let hash = hash::template_hash(&deployment.spec.template, collision_count);
    let mut template = deployment.spec.template.clone();
    let meta = template.metadata.get_or_insert_with(Default::default);
    meta.labels
        .get_or_insert_with(BTreeMap::new)
        .insert(POD_TEMPLATE_HASH.into(), hash.clone());
    let labels = meta.labels.clone();
    let mut selector = deployment.spec.selector.clone();
    selector
        .match_labels
        .get_or_insert_with(BTreeMap::new)
        .insert(POD_TEMPLATE_HASH.into(), hash.clone());
    let mut annotations: BTreeMap<String, String> = deployment
        .annotations()
        .iter()
        .filter(|(key, _)| !NOT_COPIED.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    annotations.insert(REVISION.into(), revision.to_string());
    annotations.extend(replica_annotations(deployment));
    ReplicaSet {
        metadata: kube::api::ObjectMeta {
            name: Some(format!("{}-{hash}", deployment.name_any())),
            namespace: deployment.namespace(),
            labels,
            annotations: Some(annotations),
            owner_references: Some(vec![owner::controller_reference(deployment)]),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            min_ready_seconds: deployment.spec.min_ready_seconds,
            selector,
            template: Some(template),
        },
        status: None,
    }
}

/// The `desired-replicas` and `max-replicas` annotations a scaled replica set carries.
fn replica_annotations(deployment: &Deployment) -> [(String, String); 2] {
    let desired = rollout::replicas(deployment);
    [
        (DESIRED_REPLICAS.to_owned(), desired.to_string()),
        (
            MAX_REPLICAS.to_owned(),
            (desired + rollout::max_surge(deployment)).to_string(),
        ),
    ]
}

/// Whether a pod of one of `old` (by uid) has not finished yet.
fn old_pods_running(
    context: &Context,
    namespace: &str,
    old: &[(usize, Arc<ReplicaSet>)],
) -> Result<bool, Error> {
    if old
        .iter()
        .any(|(_, rs)| rs.status.as_ref().is_some_and(|status| status.replicas > 0))
    {
        return Ok(true);
    }
    let uids: Vec<String> = old.iter().filter_map(|(_, rs)| rs.uid()).collect();
    let pods = context.pods.by_namespace(namespace).list(&Selector::default())?;
    Ok(pods.iter().any(|p| {
        let controlled = owner::controller_of(&p.metadata).is_some_and(|o| uids.contains(&o.uid));
        controlled && !matches!(pod::phase(p), "Succeeded" | "Failed")
    }))
}

/// Creates `rs`; `Ok(None)` when its name is taken by a replica set of another template.
async fn create_replica_set(rs_api: &Api<ReplicaSet>, rs: &ReplicaSet) -> Result<Option<ReplicaSet>, Error> {
    let name = rs.name_any();
    match rs_api.create(&PostParams::default(), rs).await {
        Ok(created) => Ok(Some(created)),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
        Err(source) => Err(Error::ReplicaSet {
            action: "create",
            name,
            source,
        }),
    }
}

/// A merge patch of the deployment's revision annotation.
fn revision_patch(revision: i64) -> serde_json::Value {
    json!({"metadata": {"annotations": {REVISION: revision.to_string()}}})
}

#[cfg(test)]
mod tests;
