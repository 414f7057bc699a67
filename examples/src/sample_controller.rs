//! A port of Kubernetes' sample-controller: a `Foo` custom resource asks for a Deployment with
//! a number of replicas; the controller creates and scales that Deployment, owns it, recreates
//! it when it is deleted, and reports the available replicas in the Foo's status.
//!
//! The pieces: a [`Manager`] whose factory has informers for Foo and Deployment; a
//! [`Controller`](informer_runtime::controller::Controller) of Foos that owns Deployments (a
//! Deployment's changes reconcile its owning Foo); a reconcile function that reads listers,
//! never the API server, and writes back through the manager's client; and Events that say
//! what it did. With leader election, only the leader reconciles and writes.

// The sample-controller's resource is really called `Foo`.
#![allow(clippy::disallowed_names)]

use std::{sync::Arc, time::Duration};

use informer_runtime::{
    ObjectKey,
    controller::{self, Action},
    events::{self, EventRecorder, EventType, NewEvent, Reporter},
    factory::SharedInformerFactory,
    key::ObjectKeyExt,
    leader_election,
    lister::Lister,
    manager::{self, Manager},
};
use k8s_openapi::{
    api::{
        apps::v1::{Deployment, DeploymentSpec},
        core::v1::{Container, PodSpec, PodTemplateSpec},
    },
    apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference},
};
use kube::{
    Api, Client, CustomResource, Resource,
    api::{ObjectMeta, Patch, PatchParams, PostParams},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The name of this controller, in events and field managers.
pub const CONTROLLER_NAME: &str = "sample-controller";

/// A Foo asks for a Deployment named `deployment_name` with `replicas` replicas.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    namespaced
)]
#[kube(status = "FooStatus")]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The Deployment to manage.
    pub deployment_name: String,
    /// Its desired replicas (1 when unset).
    pub replicas: Option<i32>,
}

/// What the controller observed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// The Deployment's available replicas.
    pub available_replicas: i32,
}

/// A failed reconciliation of one Foo.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Deployment named by the Foo exists and belongs to something else.
    #[error("failed to reconcile {foo}: deployment {deployment} already exists and is not managed by it")]
    NotOwned {
        /// The Foo.
        foo: String,
        /// The Deployment.
        deployment: String,
    },
    /// A request to the API server failed.
    #[error("failed to reconcile {foo}: {source}")]
    Api {
        /// The Foo.
        foo: String,
        /// The cause.
        #[source]
        source: kube::Error,
    },
}

/// What every reconcile reads and writes with: listers over the shared caches and a client.
pub struct Context {
    client: Client,
    deployments: Lister<Deployment>,
    recorder: EventRecorder,
}

/// The Foo that controls `deployment`, if any.
fn owning_foo(deployment: &Deployment) -> Option<ObjectKey> {
    let owner = deployment
        .metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))?;
    (owner.kind == Foo::kind(&()) && owner.api_version == Foo::api_version(&())).then(|| {
        ObjectKey::new(
            deployment.metadata.namespace.as_deref().unwrap_or_default(),
            &owner.name,
        )
    })
}

/// The controller of Foos on `factory`'s shared informers: a change of a Foo, or of a
/// Deployment a Foo controls, reconciles that Foo. Run it with [`reconcile`], [`error_policy`]
/// and a [`context`].
pub fn controller(factory: &SharedInformerFactory) -> controller::Controller<Foo> {
    controller::Controller::<Foo>::new(factory)
        .name(CONTROLLER_NAME)
        .owns::<Deployment>()
}

/// The context of the controller's reconciles: `factory`'s caches, and `client` for writes and
/// events. Call it within a tokio runtime (its event recorder publishes from a task).
pub fn context(client: Client, factory: &SharedInformerFactory) -> Result<Arc<Context>, events::Error> {
    let reporter = Reporter {
        controller: CONTROLLER_NAME.into(),
        instance: std::env::var("POD_NAME").ok(),
    };
    Ok(Arc::new(Context {
        deployments: factory.unscoped_informer::<Deployment>().lister(),
        recorder: EventRecorder::new(client.clone(), reporter)?,
        client,
    }))
}

/// The controller could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The manager refused its configuration.
    #[error("failed to set up the sample controller: {0}")]
    Manager(#[from] manager::Error),
    /// The event recorder could not start.
    #[error("failed to set up the sample controller: {0}")]
    Events(#[from] events::Error),
}

/// A manager running the controller (two reconciles at once) on `client`, with leader
/// election if `election` is given; run it with [`Manager::run`].
pub fn manager(client: Client, election: Option<leader_election::Config>) -> Result<Manager, SetupError> {
    let builder = Manager::builder(client);
    let builder = match election {
        Some(election) => builder.leader_election(election),
        None => builder,
    };
    let mut manager = builder.build()?;
    let context = context(manager.client(), manager.factory())?;
    let controller = controller(manager.factory()).concurrency(2);
    manager.add_controller(controller, reconcile, error_policy, context);
    Ok(manager)
}

/// What to do after a failed reconcile: a Deployment owned by something else needs a person,
/// so look again in five minutes; API errors are retried with backoff.
pub fn error_policy(_foo: Arc<Foo>, error: &Error, _context: Arc<Context>) -> Action {
    match error {
        Error::NotOwned { .. } => Action::requeue(Duration::from_secs(300)),
        Error::Api { .. } => Action::requeue_with_backoff(),
    }
}

/// Brings the Deployment of one Foo in line with its spec, and the Foo's status in line with
/// the Deployment.
pub async fn reconcile(foo: Arc<Foo>, context: Arc<Context>) -> Result<Action, Error> {
    let key = foo.object_key();
    let api_error = |source| Error::Api {
        foo: key.to_string(),
        source,
    };
    let name = &foo.spec.deployment_name;
    if name.is_empty() {
        tracing::warn!(%key, "spec.deploymentName is empty");
        return Ok(Action::await_change());
    }
    let deployments: Api<Deployment> =
        Api::namespaced(context.client.clone(), key.namespace().unwrap_or_default());
    let deployment = match context
        .deployments
        .by_namespace(key.namespace().unwrap_or_default())
        .get(name)
    {
        Some(existing) => existing,
        None => {
            let created = deployments
                .create(&PostParams::default(), &new_deployment(&foo))
                .await;
            let created = created.map_err(api_error)?;
            if foo.status.is_some() {
                // It existed before: someone deleted it.
                let message = format!("Deployment {name} was deleted and recreated");
                context.record_event(&foo, EventType::Normal, "Recreated", message);
            }
            Arc::new(created)
        }
    };
    if owning_foo(&deployment).as_ref() != Some(&key) {
        let message = format!("Resource {name} already exists and is not managed by Foo");
        context.record_event(&foo, EventType::Warning, "ErrResourceExists", message);
        return Err(Error::NotOwned {
            foo: key.to_string(),
            deployment: name.clone(),
        });
    }
    let desired = foo.spec.replicas.unwrap_or(1);
    let deployment = if deployment.spec.replicas == Some(desired) {
        deployment
    } else {
        let patch = serde_json::json!({"spec": {"replicas": desired}});
        let patched = deployments
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(api_error)?;
        Arc::new(patched)
    };
    let available = deployment
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    if foo.status.as_ref().map(|s| s.available_replicas) != Some(available) {
        let foos: Api<Foo> = Api::namespaced(context.client.clone(), key.namespace().unwrap_or_default());
        let status = serde_json::json!({"status": {"availableReplicas": available}});
        foos.patch_status(key.name(), &PatchParams::default(), &Patch::Merge(&status))
            .await
            .map_err(api_error)?;
        context.record_event(
            &foo,
            EventType::Normal,
            "Synced",
            "Foo synced successfully".into(),
        );
    }
    Ok(Action::await_change())
}

impl Context {
    /// Records an event about `foo` (returns at once; see [`EventRecorder`]).
    fn record_event(&self, foo: &Foo, type_: EventType, reason: &str, note: String) {
        let event = NewEvent {
            type_,
            reason: reason.into(),
            note: Some(note),
            action: "Reconcile".into(),
            secondary: None,
        };
        self.recorder.record(foo, event);
    }
}

/// The Deployment a Foo asks for, owned by it.
fn new_deployment(foo: &Foo) -> Deployment {
    let labels = std::collections::BTreeMap::from([
        ("app".to_owned(), "nginx".to_owned()),
        (
            "controller".to_owned(),
            foo.metadata.name.clone().unwrap_or_default(),
        ),
    ]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.metadata.namespace.clone(),
            owner_references: Some(vec![OwnerReference {
                api_version: Foo::api_version(&()).into_owned(),
                kind: Foo::kind(&()).into_owned(),
                name: foo.metadata.name.clone().unwrap_or_default(),
                uid: foo.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(foo.spec.replicas.unwrap_or(1)),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".into(),
                        image: Some("nginx:latest".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}
