//! The ReplicaSet controller: as many active pods as `spec.replicas` asks for, made from the
//! template and controlled by the replica set, orphans matching the selector adopted, and the
//! status counted from the pods (kube's `pkg/controller/replicaset`).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use futures::future::join_all;
use informer_runtime::{Action, Controller, Manager, ObjectKey, ScopedLister, scope};
use k8s_openapi::api::{
    apps::v1::{ReplicaSet, ReplicaSetStatus},
    core::v1::Pod,
};
use kube::{Api, ResourceExt, api::PostParams, core::Selector};
use serde_json::json;

use crate::{
    api::{self, count},
    owner::{self, Claim},
    pod,
};

/// The controller's name in logs.
pub(crate) const NAME: &str = "replicaset";

/// How many pods one reconcile creates or deletes at most (kube's `BurstReplicas`).
const BURST: usize = 500;

/// What fails a reconcile of a replica set.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The pod cache refused the question.
    #[error("failed to read the pod cache: {0}")]
    Cache(#[from] scope::Error),
    /// A pod write failed.
    #[error("failed to {action} pod of replica set {owner}: {source}")]
    Pod {
        /// What was done: create, delete, adopt, release.
        action: &'static str,
        /// The replica set.
        owner: String,
        /// The API's answer.
        source: kube::Error,
    },
    /// The status write failed.
    #[error("failed to update the status of replica set {owner}: {source}")]
    Status {
        /// The replica set.
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
    let replica_sets = factory.informer::<ReplicaSet>().lister();
    let controller = Controller::<ReplicaSet>::new(&factory)
        .name(NAME)
        .owns::<Pod>()
        .watches::<Pod, _>(move |pod| orphan_owners(&replica_sets, pod))
        .concurrency(2);
    let context = Arc::new(Context {
        client: manager.client(),
        pods: factory.informer::<Pod>().lister(),
    });
    manager.add_controller(controller, reconcile, api::retry, context);
}

/// The replica sets that may adopt `pod`: those of its namespace whose selector matches it,
/// when it has no controller.
fn orphan_owners(replica_sets: &ScopedLister<ReplicaSet>, pod: &Pod) -> Vec<ObjectKey> {
    if owner::controller_of(&pod.metadata).is_some() {
        return Vec::new();
    }
    let namespace = pod.namespace().unwrap_or_default();
    let candidates = replica_sets
        .by_namespace(&namespace)
        .list(&Selector::default())
        .unwrap_or_default();
    candidates
        .iter()
        .filter(|rs| {
            let selector = owner::selector_of(Some(&rs.spec.selector));
            selector.is_some_and(|selector| owner::matches(&selector, &pod.metadata))
        })
        .map(|rs| ObjectKey::new(&rs.namespace().unwrap_or_default(), &rs.name_any()))
        .collect()
}

async fn reconcile(rs: Arc<ReplicaSet>, context: Arc<Context>) -> Result<Action, Error> {
    let Some(selector) = owner::selector_of(Some(&rs.spec.selector)) else {
        return Ok(Action::await_change());
    };
    let pods = claim_pods(&rs, &selector, &context).await?;
    let active: Vec<Arc<Pod>> = pods.into_iter().filter(|pod| pod::is_active(pod)).collect();
    if rs.metadata.deletion_timestamp.is_none() {
        manage_replicas(&rs, &active, &context).await?;
    }
    let (status, wait) = calculate_status(&rs, &active);
    if !api::same(&rs.status.as_ref(), &Some(&status)) {
        let patch = json!({"status": status});
        let replica_sets: Api<ReplicaSet> =
            Api::namespaced(context.client.clone(), &rs.namespace().unwrap_or_default());
        api::merge_status(&replica_sets, &rs.name_any(), &patch)
            .await
            .map_err(|source| Error::Status {
                owner: rs.name_any(),
                source,
            })?;
    }
    Ok(wait.map_or_else(Action::await_change, Action::requeue))
}

/// The pods the replica set controls after adopting the matching orphans and releasing the
/// pods that no longer match (kube's `ClaimPods`).
async fn claim_pods(rs: &ReplicaSet, selector: &Selector, context: &Context) -> Result<Vec<Arc<Pod>>, Error> {
    let namespace = rs.namespace().unwrap_or_default();
    let uid = rs.uid().unwrap_or_default();
    let deleting = rs.metadata.deletion_timestamp.is_some();
    let pods_api: Api<Pod> = Api::namespaced(context.client.clone(), &namespace);
    let mut owned = Vec::new();
    for pod in context.pods.by_namespace(&namespace).list(&Selector::default())? {
        let pod_error = |action| {
            move |source| Error::Pod {
                action,
                owner: rs.name_any(),
                source,
            }
        };
        match owner::claim(&pod.metadata, &uid, selector, deleting) {
            Claim::Owned => owned.push(pod),
            Claim::Adopt => {
                let patch = owner::adopt_patch(&pod.metadata, owner::controller_reference(rs));
                let adopted = api::merge(&pods_api, &pod.name_any(), &patch)
                    .await
                    .map_err(pod_error("adopt"))?;
                owned.push(Arc::new(adopted));
            }
            Claim::Release => {
                let patch = owner::release_patch(&pod.metadata, &uid);
                api::merge(&pods_api, &pod.name_any(), &patch)
                    .await
                    .map_err(pod_error("release"))?;
            }
            Claim::Ignore => {}
        }
    }
    Ok(owned)
}

/// Creates or deletes pods so that `active` has `spec.replicas` pods.
async fn manage_replicas(rs: &ReplicaSet, active: &[Arc<Pod>], context: &Context) -> Result<(), Error> {
    let wanted = usize::try_from(desired_replicas(rs)).unwrap_or_default();
    let namespace = rs.namespace().unwrap_or_default();
    let pods_api: Api<Pod> = Api::namespaced(context.client.clone(), &namespace);
    let pod_error = |action| {
        move |source| Error::Pod {
            action,
            owner: rs.name_any(),
            source,
        }
    };
    if active.len() < wanted {
        let Some(template) = rs.spec.template.as_ref() else {
            return Ok(());
        };
        let count = (wanted - active.len()).min(BURST);
        let new_pod = pod::from_template(
            template,
            &namespace,
            pod::generate_name(&rs.name_any()),
            owner::controller_reference(rs),
            BTreeMap::new(),
        );
        tracing::debug!(replica_set = %rs.name_any(), count, "creating pods");
        api::slow_start(count, |_| async {
            pods_api.create(&PostParams::default(), &new_pod).await.map(drop)
        })
        .await
        .map_err(pod_error("create"))?;
    } else if active.len() > wanted {
        let mut doomed: Vec<&Arc<Pod>> = active.iter().collect();
        doomed.sort_by(|a, b| pod::deletion_order(a, b));
        doomed.truncate((active.len() - wanted).min(BURST));
        tracing::debug!(replica_set = %rs.name_any(), count = doomed.len(), "deleting pods");
        let deletes = doomed.iter().map(|pod| {
            let name = pod.name_any();
            let pods_api = &pods_api;
            async move { api::delete(pods_api, &name).await }
        });
        let results: Vec<kube::Result<()>> = join_all(deletes).await;
        results
            .into_iter()
            .collect::<kube::Result<Vec<()>>>()
            .map_err(pod_error("delete"))?;
    }
    Ok(())
}

/// `spec.replicas`, 1 when unset (the API's default).
fn desired_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

/// The status the active pods make, and when to look again for a pod that will become
/// available once it has been ready for `minReadySeconds` (kube's `calculateStatus`).
fn calculate_status(rs: &ReplicaSet, active: &[Arc<Pod>]) -> (ReplicaSetStatus, Option<Duration>) {
    let template_labels = rs
        .spec
        .template
        .as_ref()
        .and_then(|template| template.metadata.as_ref())
        .and_then(|meta| meta.labels.clone())
        .unwrap_or_default();
    let template_selector = owner::selector_from_map(&template_labels);
    let min_ready = rs.spec.min_ready_seconds.unwrap_or(0);
    let mut status = ReplicaSetStatus {
        replicas: count(active.len()),
        conditions: rs.status.as_ref().and_then(|status| status.conditions.clone()),
        observed_generation: rs.metadata.generation,
        ..ReplicaSetStatus::default()
    };
    let (mut fully_labeled, mut ready, mut available) = (0, 0, 0);
    let mut wait: Option<Duration> = None;
    for pod in active {
        fully_labeled += i32::from(owner::matches(&template_selector, &pod.metadata));
        ready += i32::from(pod::is_ready(pod));
        match pod::availability(pod, min_ready) {
            Ok(()) => available += 1,
            Err(Some(left)) => wait = Some(wait.map_or(left, |wait| wait.min(left))),
            Err(None) => {}
        }
    }
    status.fully_labeled_replicas = Some(fully_labeled);
    status.ready_replicas = Some(ready);
    status.available_replicas = Some(available);
    (status, wait)
}

#[cfg(test)]
mod tests;
