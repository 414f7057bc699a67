//! kube-controller-manager's core controllers, built on `informer-runtime`, running against
//! the in-memory API server of `informer-testserver`: a cluster in the test process, in which
//! Deployments make ReplicaSets; ReplicaSets, StatefulSets, DaemonSets and Jobs make pods;
//! CronJobs make Jobs; Services get Endpoints and EndpointSlices; token Secrets get tokens;
//! with the names, labels, annotations, status fields and conditions kube-controller-manager
//! writes.
//!
//! # Start a cluster, create a Deployment, wait for it to be Available
//!
//! [`TestCluster::start`] starts a [`TestServer`](informer_testserver::TestServer) with a
//! simulated kubelet of [`DEFAULT_NODES`] Ready nodes, and every controller against it, over
//! HTTP through a `kube::Client` like any other client. The kubelet schedules the pods the
//! controllers create, runs them and makes them Ready (Job pods run to completion), so a test
//! creates what its own controller would and waits, as against a cluster:
//!
//! ```
//! use std::time::Duration;
//!
//! use informer_testcluster::TestCluster;
//! use informer_testserver::wait::eventually_async;
//! use k8s_openapi::api::apps::v1::Deployment;
//! use kube::api::{Api, PostParams};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let cluster = TestCluster::start().await?;
//! let deployments: Api<Deployment> = Api::default_namespaced(cluster.client());
//!
//! let web: Deployment = serde_json::from_value(json!({
//!     "metadata": {"name": "web"},
//!     "spec": {
//!         "replicas": 2,
//!         "selector": {"matchLabels": {"app": "web"}},
//!         "template": {
//!             "metadata": {"labels": {"app": "web"}},
//!             "spec": {"containers": [{"name": "web", "image": "nginx"}]},
//!         },
//!     },
//! }))?;
//! deployments.create(&PostParams::default(), &web).await?;
//!
//! eventually_async("the rollout to complete", Duration::from_secs(20), async || {
//!     let Ok(web) = deployments.get("web").await else { return false };
//!     let conditions = web.status.and_then(|status| status.conditions).unwrap_or_default();
//!     conditions.iter().any(|c| c.type_.as_deref() == Some("Available") && c.status.as_deref() == Some("True"))
//!         && conditions.iter().any(|c| c.reason.as_deref() == Some("NewReplicaSetAvailable"))
//! })
//! .await?;
//!
//! let status = deployments.get("web").await?.status.unwrap_or_default();
//! assert_eq!(status.available_replicas, Some(2));
//! cluster.shutdown().await?;
//! # Ok(())
//! # }
//! ```
//!
//! The last condition is what `kubectl rollout status` waits for; `kubectl` works against
//! [`TestCluster::server`]'s URL too.
//!
//! # Choosing controllers, configuring the server
//!
//! [`TestCluster::builder`] runs every controller unless told otherwise
//! ([`TestClusterBuilder::without`], or [`Controllers`] given to
//! [`TestClusterBuilder::controllers`]), and starts the server from the
//! [`TestServerBuilder`](informer_testserver::TestServerBuilder) given to
//! [`TestClusterBuilder::server`] (its port, extra resource types, what the server simulates).
//! [`Controllers::start`] runs the controllers against any client, a real cluster's included.
//!
//! # The controllers
//!
//! | [`ControllerKind`] | what it does, as kube-controller-manager does |
//! |---|---|
//! | `ReplicaSet` | pods from the template (`generateName: <rs>-`, a controller owner reference with `blockOwnerDeletion`) up to `spec.replicas`, surplus pods deleted unscheduled, pending and not-ready first; orphans matching the selector adopted, pods no longer matching released; terminating and finished pods not counted; status `replicas`, `fullyLabeledReplicas`, `readyReplicas`, `availableReplicas` (after `minReadySeconds`), `observedGeneration` |
//! | `Deployment` | a ReplicaSet `<deployment>-<pod-template-hash>` per template, labelled with the hash and annotated with `deployment.kubernetes.io/revision`, `desired-replicas` and `max-replicas`; `RollingUpdate` within `maxSurge` (rounded up) and `maxUnavailable` (rounded down), `Recreate`; proportional scaling during a rollout; `revisionHistoryLimit`; `paused`; status counts and the `Available` and `Progressing` conditions with kube's reasons, `ProgressDeadlineExceeded` after `progressDeadlineSeconds` |
//! | `Job` | `NonIndexed` and `Indexed` pods (`batch.kubernetes.io/job-completion-index`) for `completions` and `parallelism`, labelled with the job's uid and name (`batch.kubernetes.io/controller-uid`, `batch.kubernetes.io/job-name`, `controller-uid`, `job-name`), held by the `batch.kubernetes.io/job-tracking` finalizer until counted; `backoffLimit` with an exponential delay before replacing failed pods ([`Controllers::job_pod_failure_backoff`]); `activeDeadlineSeconds`; `suspend` (the `Suspended` condition); status `active`, `ready`, `terminating`, `succeeded`, `failed`, `completedIndexes`, `startTime`, `completionTime`; `SuccessCriteriaMet` then `Complete`, `FailureTarget` then `Failed`; `ttlSecondsAfterFinished` |
//! | `Endpoints` | an Endpoints object per Service with a selector: ready pods in `addresses`, others in `notReadyAddresses` (all in `addresses` with `publishNotReadyAddresses`), target ports by number or container port name, subsets grouped by port set; Services without a selector (`default/kubernetes`) left alone; endpoints of deleted Services deleted |
//! | `EndpointSlice` | EndpointSlices per Service with a selector, at most 100 endpoints each, with `ready`, `serving` and `terminating` conditions, owned by the Service and labelled `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`; an empty placeholder slice when no pod backs the Service |
//! | `DaemonSet` | a pod per Node that fits the template's `nodeSelector` and whose `NoSchedule`/`NoExecute` taints it tolerates (with the tolerations kube adds to daemon pods), pinned to the node by required node affinity on `metadata.name`; pods on nodes that no longer fit deleted; `RollingUpdate` within `maxUnavailable`, `OnDelete`; status `desiredNumberScheduled`, `currentNumberScheduled`, `numberMisscheduled`, `numberReady`, `numberAvailable`, `numberUnavailable`, `updatedNumberScheduled` |
//! | `StatefulSet` | pods `<name>-<ordinal>` (from `ordinals.start`) labelled `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and `controller-revision-hash`, with the pod name as hostname and `serviceName` as subdomain, its claims `<template>-<pod>` from `volumeClaimTemplates`; `OrderedReady` creates each once the one before runs and is ready, `Parallel` all at once; removal from the highest ordinal down; `RollingUpdate` from the highest ordinal down above `partition`, `OnDelete`; status counts, `currentRevision`, `updateRevision` |
//! | `CronJob` | a Job `<cronjob>-<minutes since the epoch>` for the most recent schedule missed (within `startingDeadlineSeconds`), annotated `batch.kubernetes.io/cronjob-scheduled-timestamp`; `Allow`, `Forbid`, `Replace`; `suspend`; `successfulJobsHistoryLimit` and `failedJobsHistoryLimit`; status `active`, `lastScheduleTime`, `lastSuccessfulTime` |
//! | `ServiceAccountToken` | Secrets of type `kubernetes.io/service-account-token` naming a ServiceAccount get its uid annotation and `token` (a JWT with a legacy token's claims, unsigned), `namespace` and `ca.crt`; those naming a missing account are deleted |
//!
//! Pods run where the server's kubelet runs them: on the default server, every pod bound to a
//! simulated node runs and becomes Ready, and what a pod's containers do instead (never
//! ready, fail, crash-loop, complete) is set on the kubelet's handle
//! ([`TestServer::kubelet`](informer_testserver::TestServer::kubelet)). On a server started
//! without a kubelet ([`TestClusterBuilder::server`]) nothing runs them: a test sets their
//! status through the `status` subresource (phase, `Ready` condition, IP), and creates Nodes
//! for DaemonSets. A StatefulSet waits for each pod to be running and ready before the next.
//!
//! Each is a [`Controller`](informer_runtime::Controller) on the shared informers of one
//! [`Manager`](informer_runtime::Manager): its own type reconciled, its children owned, the
//! objects it reads watched. Reconciles read the caches and write through the manager's
//! client, so the next reconcile of an object waits until the caches have seen its writes
//! (what kube-controller-manager's expectations do); a reconcile that fails or panics is
//! retried with backoff and the others go on.
//!
//! # What differs from kube-controller-manager
//!
//! - The `pod-template-hash` is FNV-32a over the template's JSON encoding, rendered as kube
//!   renders it; kube hashes Go's `spew` dump of the template, so the value differs from a real
//!   cluster's for the same template (names have the same form, and a template change changes
//!   them).
//! - Jobs: no pod failure policy, success policy, `backoffLimitPerIndex` or
//!   `podReplacementPolicy`; orphan pods are not adopted.
//! - EndpointSlices have no topology hints, and are not packed as kube packs them.
//! - DaemonSets and StatefulSets make no ControllerRevisions (their revision label is this
//!   crate's template hash); StatefulSets keep their claims (no retention policy `Delete`);
//!   neither has `maxSurge`/`maxUnavailable` beyond what the table says.
//! - CronJob schedules are evaluated in UTC: `timeZone` and `TZ=` are not supported.
//! - Not implemented: the garbage collector (the server collects within delete requests), the
//!   node lifecycle, scheduling, namespaces' deletion (the server does it), HPA, PDB status.
//! - The crate builds against k8s-openapi's Kubernetes 1.37 types only, the newest of
//!   k8s-openapi 0.29 (the `latest` feature, which the binary or test crate using it selects):
//!   it reads the workloads' `spec` as the required field and `DeploymentCondition`'s fields as
//!   the optional ones they are there, which earlier versions' types declare otherwise.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod api;
mod clock;
mod cluster;
mod controllers;
mod cronjob;
mod daemonset;
mod deployment;
mod endpoints;
mod endpointslice;
mod hash;
mod job;
mod owner;
mod pod;
mod replicaset;
mod service;
mod statefulset;
mod token;

pub use cluster::{DEFAULT_NODES, Error, TestCluster, TestClusterBuilder};
pub use controllers::{ControllerKind, Controllers, Error as ControllersError, RunningControllers};
