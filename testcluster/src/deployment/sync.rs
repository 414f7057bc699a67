//! The strategies of one reconcile of a deployment: rolling update, recreate, paused; the new
//! replica set found or created; replica sets scaled; old ones cleaned up; the status written.

use std::sync::Arc;

use informer_runtime::Action;
use k8s_openapi::api::apps::v1::{DeploymentStatus, ReplicaSet};
use kube::{Api, ResourceExt};
use serde_json::json;

use super::{
    Error, MAX_REPLICAS, REVISION, Sync, create_replica_set, new_replica_set, old_pods_running,
    replica_annotations, revision, revision_patch, rollout, status,
};
use crate::api;

impl Sync<'_> {
    /// kube's `rolloutRolling`: the new replica set up within `maxSurge`, then the old ones
    /// down within `maxUnavailable`, then the history cleaned once complete.
    pub(super) async fn rolling(&mut self) -> Result<(), Error> {
        self.find_or_create_new(true).await?;
        if self.scale_new_rolling().await? || self.scale_down_old().await? {
            return Ok(());
        }
        self.cleanup_if_complete().await
    }

    /// kube's `rolloutRecreate`: the old replica sets to zero, and once their pods are gone
    /// the new one to `spec.replicas`.
    pub(super) async fn recreate(&mut self) -> Result<(), Error> {
        self.find_or_create_new(false).await?;
        let mut scaled = false;
        for (index, rs) in self.old() {
            if rollout::rs_replicas(&rs) > 0 {
                self.scale(index, 0).await?;
                scaled = true;
            }
        }
        let namespace = self.deployment.namespace().unwrap_or_default();
        if scaled || old_pods_running(self.context, &namespace, &self.old())? {
            return Ok(());
        }
        self.find_or_create_new(true).await?;
        if let Some(index) = self.new {
            self.scale(index, rollout::replicas(self.deployment)).await?;
        }
        self.cleanup_if_complete().await
    }

    /// kube's `sync` for a paused deployment: scaled, history cleaned, no rollout.
    pub(super) async fn paused(&mut self) -> Result<(), Error> {
        self.find_or_create_new(false).await?;
        self.scale_to_size().await?;
        self.cleanup().await
    }

    /// kube's `isScalingEvent`: an active replica set was scaled for another size of the
    /// deployment than `spec.replicas`.
    pub(super) fn is_scaling_event(&self) -> bool {
        let desired = rollout::replicas(self.deployment).to_string();
        self.all
            .iter()
            .filter(|rs| rollout::rs_replicas(rs) > 0)
            .any(|rs| {
                rs.annotations()
                    .get(super::DESIRED_REPLICAS)
                    .is_some_and(|annotated| *annotated != desired)
            })
    }

    /// kube's `sync` for a scaling event: the replica sets scaled, no rollout.
    pub(super) async fn scale_event(&mut self) -> Result<(), Error> {
        self.find_or_create_new(false).await?;
        self.scale_to_size().await
    }

    /// kube's `scale`: the one active (or latest) replica set to `spec.replicas`; the old ones
    /// to zero once the new one is saturated; otherwise every active one in proportion.
    async fn scale_to_size(&mut self) -> Result<(), Error> {
        let desired = rollout::replicas(self.deployment);
        let active: Vec<usize> = (0..self.all.len())
            .filter(|i| rollout::rs_replicas(&self.all[*i]) > 0)
            .collect();
        let only = match active.as_slice() {
            [] => self.new.or_else(|| self.old().last().map(|(index, _)| *index)),
            [one] => Some(*one),
            _ => None,
        };
        if let Some(index) = only {
            self.scale(index, desired).await?;
            return Ok(());
        }
        if self.is_saturated() {
            let new = self.new;
            for index in active.into_iter().filter(|i| Some(*i) != new) {
                self.scale(index, 0).await?;
            }
            return Ok(());
        }
        if rollout::is_recreate(self.deployment) {
            return Ok(());
        }
        let sets: Vec<&ReplicaSet> = active.iter().map(|i| self.all[*i].as_ref()).collect();
        let sizes = rollout::proportional_sizes(self.deployment, &sets);
        for (index, size) in active.into_iter().zip(sizes) {
            self.scale(index, size).await?;
        }
        Ok(())
    }

    /// kube's `IsSaturated`: the new replica set has all the deployment's replicas, available.
    fn is_saturated(&self) -> bool {
        let desired = rollout::replicas(self.deployment);
        self.new_rs().is_some_and(|rs| {
            let annotated = rs
                .annotations()
                .get(super::DESIRED_REPLICAS)
                .and_then(|v| v.parse::<i32>().ok());
            rollout::rs_replicas(rs) == desired
                && annotated == Some(desired)
                && rollout::rs_available(rs) == desired
        })
    }

    /// kube's `getNewReplicaSet`: the replica set of the current template, its revision
    /// brought up to date; created (with `create`) when there is none.
    async fn find_or_create_new(&mut self, create: bool) -> Result<(), Error> {
        let max_old = self.old().iter().map(|(_, rs)| revision(rs)).max().unwrap_or(0);
        let new_revision = max_old + 1;
        if let Some(index) = self.new {
            self.update_new_revision(index, new_revision).await?;
            if status_of(&self.conditions, status::PROGRESSING).is_none() {
                let message = format!("Found new replica set {:?}", self.all[index].name_any());
                self.set_condition(status::condition(
                    status::PROGRESSING,
                    "True",
                    status::FOUND_NEW_RS,
                    message,
                ));
            }
        } else if create {
            self.create_new(new_revision).await?;
        }
        Ok(())
    }

    async fn update_new_revision(&mut self, index: usize, new_revision: i64) -> Result<(), Error> {
        let rs = Arc::clone(&self.all[index]);
        let min_ready_differs =
            rs.spec.min_ready_seconds.unwrap_or(0) != self.deployment.spec.min_ready_seconds.unwrap_or(0);
        if revision(&rs) < new_revision || min_ready_differs {
            let patch = json!({
                "metadata": {"annotations": {REVISION: new_revision.to_string()}},
                "spec": {"minReadySeconds": self.deployment.spec.min_ready_seconds.unwrap_or(0)},
            });
            let updated = api::merge(&self.rs_api, &rs.name_any(), &patch)
                .await
                .map_err(|source| Error::ReplicaSet {
                    action: "annotate",
                    name: rs.name_any(),
                    source,
                })?;
            self.all[index] = Arc::new(updated);
        }
        self.set_deployment_revision(revision(&self.all[index])).await
    }

    async fn create_new(&mut self, new_revision: i64) -> Result<(), Error> {
        let all_replicas: i32 = self.all.iter().map(|rs| rollout::rs_replicas(rs)).sum();
        let replicas = rollout::new_rs_replicas(self.deployment, 0, all_replicas);
        let collision_count = self
            .deployment
            .status
            .as_ref()
            .and_then(|status| status.collision_count);
        let rs = new_replica_set(self.deployment, collision_count, replicas, new_revision);
        let Some(created) = create_replica_set(&self.rs_api, &rs).await? else {
            return self.raise_collision_count(rs.name_any(), collision_count).await;
        };
        tracing::debug!(deployment = %self.deployment.name_any(), replica_set = %created.name_any(), "created new replica set");
        let message = format!("Created new replica set {:?}", created.name_any());
        self.set_condition(status::condition(
            status::PROGRESSING,
            "True",
            status::NEW_RS_CREATED,
            message,
        ));
        self.all.push(Arc::new(created));
        self.new = Some(self.all.len() - 1);
        self.set_deployment_revision(new_revision).await
    }

    /// Another replica set holds the new one's name: the next hash mixes in a higher count.
    async fn raise_collision_count(&self, name: String, count: Option<i32>) -> Result<(), Error> {
        let patch = json!({"status": {"collisionCount": count.unwrap_or(0) + 1}});
        self.write_deployment_status(&patch).await?;
        Err(Error::Collision { name })
    }

    async fn set_deployment_revision(&self, revision: i64) -> Result<(), Error> {
        let current = self.deployment.annotations().get(REVISION);
        if current.map(String::as_str) == Some(revision.to_string().as_str()) {
            return Ok(());
        }
        let api: Api<k8s_openapi::api::apps::v1::Deployment> = self.deployment_api();
        api::merge(&api, &self.deployment.name_any(), &revision_patch(revision))
            .await
            .map(drop)
            .map_err(|source| Error::Deployment {
                action: "annotate",
                name: self.deployment.name_any(),
                source,
            })
    }

    /// kube's `reconcileNewReplicaSet`: whether the new replica set was scaled.
    async fn scale_new_rolling(&mut self) -> Result<bool, Error> {
        let Some(index) = self.new else {
            return Ok(false);
        };
        let current = rollout::rs_replicas(&self.all[index]);
        let desired = rollout::replicas(self.deployment);
        let target = if current >= desired {
            desired
        } else {
            let all_replicas: i32 = self.all.iter().map(|rs| rollout::rs_replicas(rs)).sum();
            rollout::new_rs_replicas(self.deployment, current, all_replicas)
        };
        self.scale(index, target).await
    }

    /// kube's `reconcileOldReplicaSets`: whether an old replica set was scaled down.
    async fn scale_down_old(&mut self) -> Result<bool, Error> {
        let old = self.old();
        let old_sets: Vec<&ReplicaSet> = old.iter().map(|(_, rs)| rs.as_ref()).collect();
        let new = self.new_rs().map(Arc::clone);
        let targets = rollout::scale_down_old(self.deployment, new.as_deref(), &old_sets);
        let mut scaled = false;
        for ((index, rs), target) in old.iter().zip(targets) {
            if target != rollout::rs_replicas(rs) {
                scaled |= self.scale(*index, target).await?;
            }
        }
        Ok(scaled)
    }

    /// Sets the replicas of `all[index]` and its replica annotations; whether it wrote.
    async fn scale(&mut self, index: usize, replicas: i32) -> Result<bool, Error> {
        let rs = Arc::clone(&self.all[index]);
        let annotations = replica_annotations(self.deployment);
        let annotated = annotations
            .iter()
            .all(|(key, value)| rs.annotations().get(key) == Some(value));
        if rollout::rs_replicas(&rs) == replicas && annotated {
            return Ok(false);
        }
        let [(desired_key, desired), (_, max)] = annotations;
        let patch = json!({
            "metadata": {"annotations": {desired_key: desired, MAX_REPLICAS: max}},
            "spec": {"replicas": replicas},
        });
        tracing::debug!(replica_set = %rs.name_any(), replicas, "scaling replica set");
        let scaled = api::merge(&self.rs_api, &rs.name_any(), &patch)
            .await
            .map_err(|source| Error::ReplicaSet {
                action: "scale",
                name: rs.name_any(),
                source,
            })?;
        self.all[index] = Arc::new(scaled);
        Ok(true)
    }

    async fn cleanup_if_complete(&self) -> Result<(), Error> {
        if status::is_complete(self.deployment, &self.status()) {
            self.cleanup().await?;
        }
        Ok(())
    }

    /// kube's `cleanupDeployment`: the oldest scaled-down replica sets beyond
    /// `revisionHistoryLimit` (10 by default) are deleted.
    async fn cleanup(&self) -> Result<(), Error> {
        let limit = usize::try_from(self.deployment.spec.revision_history_limit.unwrap_or(10)).unwrap_or(0);
        let mut cleanable: Vec<Arc<ReplicaSet>> = self
            .old()
            .into_iter()
            .map(|(_, rs)| rs)
            .filter(|rs| rs.metadata.deletion_timestamp.is_none())
            .collect();
        let Some(excess) = cleanable.len().checked_sub(limit).filter(|excess| *excess > 0) else {
            return Ok(());
        };
        cleanable.sort_by_key(|rs| revision(rs));
        for rs in cleanable.iter().take(excess) {
            let settled = rs
                .status
                .as_ref()
                .is_some_and(|s| s.replicas == 0 && s.observed_generation >= rs.metadata.generation);
            if rollout::rs_replicas(rs) != 0 || !settled {
                continue;
            }
            tracing::debug!(replica_set = %rs.name_any(), "deleting old replica set");
            api::delete(&self.rs_api, &rs.name_any())
                .await
                .map_err(|source| Error::ReplicaSet {
                    action: "delete",
                    name: rs.name_any(),
                    source,
                })?;
        }
        Ok(())
    }

    /// The status the replica sets make now, with the conditions of this reconcile.
    fn status(&self) -> DeploymentStatus {
        let all: Vec<&ReplicaSet> = self.all.iter().map(AsRef::as_ref).collect();
        let mut status = status::calculate(
            self.deployment,
            &all,
            self.new_rs().map(AsRef::as_ref),
            self.conditions.clone(),
        );
        status::set_progressing(self.deployment, self.new_rs().map(AsRef::as_ref), &mut status);
        status
    }

    /// Writes the status when it changed; requeues to time the rollout out.
    pub(super) async fn write_status(&self) -> Result<Action, Error> {
        let status = self.status();
        if !api::same(&self.deployment.status.as_ref(), &Some(&status)) {
            self.write_deployment_status(&json!({"status": status})).await?;
        }
        Ok(status::deadline_check(self.deployment, &status)
            .map_or_else(Action::await_change, Action::requeue))
    }

    async fn write_deployment_status(&self, patch: &serde_json::Value) -> Result<(), Error> {
        api::merge_status(&self.deployment_api(), &self.deployment.name_any(), patch)
            .await
            .map(drop)
            .map_err(|source| Error::Deployment {
                action: "update the status of",
                name: self.deployment.name_any(),
                source,
            })
    }

    fn deployment_api(&self) -> Api<k8s_openapi::api::apps::v1::Deployment> {
        Api::namespaced(
            self.context.client.clone(),
            &self.deployment.namespace().unwrap_or_default(),
        )
    }
}

/// The condition of `type_` among `conditions`.
fn status_of<'c>(
    conditions: &'c Option<Vec<k8s_openapi::api::apps::v1::DeploymentCondition>>,
    type_: &str,
) -> Option<&'c k8s_openapi::api::apps::v1::DeploymentCondition> {
    conditions
        .as_deref()?
        .iter()
        .find(|condition| condition.type_.as_deref() == Some(type_))
}
