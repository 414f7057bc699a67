//! The sample controller converges against the embedded API server.

// The sample-controller's resource is really called `Foo`.
#![allow(clippy::disallowed_names)]

use std::time::Duration;

use informer_examples::sample_controller::{self, Foo, FooSpec};
use informer_testserver::{TestServer, wait::eventually_async};
use k8s_openapi::api::{apps::v1::Deployment, events::v1::Event};
use kube::{
    Api, CustomResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_controller_converges() {
    let running = Running::start().await;
    let created = new_foo_gets_its_deployment(&running).await;
    deployment_status_reaches_foo(&running).await;
    scaling_foo_scales_deployment(&running).await;
    deleted_deployment_is_recreated(&running, &created).await;
    foreign_deployment_is_left_alone(&running).await;
    running.stop().await;
}

/// The embedded server with the Foo CRD, and the controller's informers synced and its workers
/// running; APIs for the objects of namespace `shop`.
struct Running {
    server: TestServer,
    shutdown: CancellationToken,
    manager: JoinHandle<informer_runtime::manager::Result<()>>,
    foos: Api<Foo>,
    deployments: Api<Deployment>,
    events: Api<Event>,
}

impl Running {
    async fn start() -> Self {
        let server = TestServer::start().await.expect("server");
        server.create_typed(&Foo::crd()).expect("CRD registered");
        server.create_namespace("shop").expect("namespace shop");
        let client = server.client().expect("client");
        let manager = sample_controller::manager(client.clone(), None).expect("a manager within the runtime");
        let shutdown = CancellationToken::new();
        let manager = tokio::spawn(manager.run(shutdown.clone().cancelled_owned()));
        Self {
            server,
            shutdown,
            manager,
            foos: Api::namespaced(client.clone(), "shop"),
            deployments: Api::namespaced(client.clone(), "shop"),
            events: Api::namespaced(client, "shop"),
        }
    }

    /// The Deployment `web`, if it exists.
    async fn deployment(&self) -> Option<Deployment> {
        self.deployments.get_opt("web").await.ok().flatten()
    }

    /// Whether the Deployment `web` exists with `want` replicas.
    async fn deployment_replicas_are(&self, want: i32) -> bool {
        replicas(&self.deployment().await) == Some(want)
    }

    /// The reasons of every event.
    async fn event_reasons(&self) -> Vec<String> {
        self.events
            .list(&ListParams::default())
            .await
            .expect("events")
            .items
            .into_iter()
            .filter_map(|e| e.reason)
            .collect()
    }

    async fn stop(self) {
        self.shutdown.cancel();
        self.manager
            .await
            .expect("the manager's task ends")
            .expect("the manager stops gracefully");
        self.server.shutdown().await;
    }
}

fn replicas(deployment: &Option<Deployment>) -> Option<i32> {
    deployment.as_ref().and_then(|d| d.spec.replicas)
}

/// A new Foo gets its Deployment, owned by it, with the requested replicas.
async fn new_foo_gets_its_deployment(running: &Running) -> Deployment {
    let spec = FooSpec {
        deployment_name: "web".into(),
        replicas: Some(2),
    };
    let foo = running
        .foos
        .create(&PostParams::default(), &Foo::new("web-foo", spec))
        .await
        .expect("created");
    eventually_async("deployment created", WAIT, async || {
        running.deployment_replicas_are(2).await
    })
    .await
    .expect("the controller acts in time");
    let created = running.deployment().await.expect("exists");
    let owner = &created.metadata.owner_references.as_ref().expect("owned")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Foo", "web-foo", Some(true))
    );
    assert_eq!(owner.uid, foo.metadata.uid.clone().unwrap_or_default());
    created
}

/// The Deployment's available replicas reach the Foo's status.
async fn deployment_status_reaches_foo(running: &Running) {
    let status = serde_json::json!({"status": {"availableReplicas": 2, "replicas": 2}});
    running
        .deployments
        .patch_status("web", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    eventually_async("foo status updated", WAIT, async || {
        running
            .foos
            .get("web-foo")
            .await
            .ok()
            .and_then(|f| f.status)
            .map(|s| s.available_replicas)
            == Some(2)
    })
    .await
    .expect("the controller acts in time");
}

/// Scaling the Foo scales the Deployment.
async fn scaling_foo_scales_deployment(running: &Running) {
    // a patch, not a replace: the controller writes the Foo's status meanwhile
    let scale = serde_json::json!({"spec": {"replicas": 5}});
    running
        .foos
        .patch("web-foo", &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .expect("updated");
    eventually_async("deployment scaled", WAIT, async || {
        running.deployment_replicas_are(5).await
    })
    .await
    .expect("the controller acts in time");
}

/// A deleted Deployment is recreated, and an event says so.
async fn deleted_deployment_is_recreated(running: &Running, created: &Deployment) {
    running
        .deployments
        .delete("web", &Default::default())
        .await
        .expect("deleted");
    eventually_async("deployment recreated", WAIT, async || {
        running
            .deployment()
            .await
            .is_some_and(|d| d.metadata.uid != created.metadata.uid)
    })
    .await
    .expect("the controller acts in time");
    // the controller records its event after it recreated the Deployment: wait for it too
    let recorded = eventually_async("a Recreated event", WAIT, async || {
        running.event_reasons().await.iter().any(|r| r == "Recreated")
    })
    .await;
    let reasons = running.event_reasons().await;
    assert!(recorded.is_ok(), "{reasons:?}");
    assert!(reasons.iter().any(|r| r == "Synced"), "{reasons:?}");
}

/// A Deployment the Foo does not own is left alone, with a warning event.
async fn foreign_deployment_is_left_alone(running: &Running) {
    let stranger = Deployment {
        metadata: kube::api::ObjectMeta {
            name: Some("taken".into()),
            ..Default::default()
        },
        ..Deployment::default()
    };
    let created = running
        .deployments
        .create(&PostParams::default(), &stranger)
        .await
        .expect("created");
    let spec = FooSpec {
        deployment_name: "taken".into(),
        replicas: Some(3),
    };
    running
        .foos
        .create(&PostParams::default(), &Foo::new("greedy", spec))
        .await
        .expect("created");
    eventually_async("warning event", WAIT, async || {
        let list = running
            .events
            .list(&ListParams::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default();
        list.iter()
            .any(|e| e.reason.as_deref() == Some("ErrResourceExists"))
    })
    .await
    .expect("the controller acts in time");
    let now = running.deployments.get_opt("taken").await.ok().flatten();
    assert_eq!(replicas(&now), Some(1), "not scaled to the Foo's 3");
    assert_eq!(
        now.and_then(|d| d.metadata.resource_version),
        created.metadata.resource_version,
        "not touched"
    );
}
