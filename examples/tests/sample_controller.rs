//! The sample controller converges against the embedded API server.

// The sample-controller's resource is really called `Foo`.
#![allow(clippy::disallowed_names)]

use std::{sync::Arc, time::Duration};

use informer_examples::sample_controller::{Controller, Foo, FooSpec, wait_until};
use informer_runtime::factory::SharedInformerFactory;
use informer_testserver::TestServer;
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Event};
use kube::{
    Api, CustomResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_controller_converges() {
    let server = TestServer::start().await.expect("server");
    server.create_typed(&Foo::crd()).expect("CRD registered");
    let client = server.client().expect("client");
    let factory = SharedInformerFactory::new(client.clone());
    let controller = Arc::new(Controller::new(&factory).expect("handlers added"));
    factory.start();
    assert!(factory.wait_for_cache_sync_timeout(WAIT).await.all_synced());
    let cancel = CancellationToken::new();
    let workers = tokio::spawn(Arc::clone(&controller).run(2, cancel.clone()));

    let foos: Api<Foo> = Api::namespaced(client.clone(), "shop");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "shop");
    let deployment = async || deployments.get_opt("web").await.ok().flatten();
    let replicas = |d: &Option<Deployment>| d.as_ref().and_then(|d| d.spec.replicas);

    // A new Foo gets its Deployment, owned by it, with the requested replicas.
    let spec = FooSpec {
        deployment_name: "web".into(),
        replicas: Some(2),
    };
    let foo = foos
        .create(&PostParams::default(), &Foo::new("web-foo", spec))
        .await
        .expect("created");
    assert!(
        wait_until(WAIT, async || replicas(&deployment().await) == Some(2)).await,
        "deployment created"
    );
    let created = deployment().await.expect("exists");
    let owner = &created.metadata.owner_references.as_ref().expect("owned")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Foo", "web-foo", Some(true))
    );
    assert_eq!(owner.uid, foo.metadata.uid.clone().unwrap_or_default());

    // The Deployment's available replicas reach the Foo's status.
    let status = serde_json::json!({"status": {"availableReplicas": 2, "replicas": 2}});
    deployments
        .patch_status("web", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    assert!(
        wait_until(WAIT, async || {
            foos.get("web-foo")
                .await
                .ok()
                .and_then(|f| f.status)
                .map(|s| s.available_replicas)
                == Some(2)
        })
        .await,
        "foo status updated"
    );

    // Scaling the Foo scales the Deployment.
    let mut scaled = foos.get("web-foo").await.expect("get");
    scaled.spec.replicas = Some(5);
    foos.replace("web-foo", &PostParams::default(), &scaled)
        .await
        .expect("updated");
    assert!(
        wait_until(WAIT, async || replicas(&deployment().await) == Some(5)).await,
        "deployment scaled"
    );

    // A deleted Deployment is recreated, and an event says so.
    deployments
        .delete("web", &Default::default())
        .await
        .expect("deleted");
    assert!(
        wait_until(WAIT, async || {
            deployment()
                .await
                .is_some_and(|d| d.metadata.uid != created.metadata.uid)
        })
        .await,
        "deployment recreated"
    );
    let events: Api<Event> = Api::namespaced(client.clone(), "shop");
    let reasons: Vec<String> = events
        .list(&ListParams::default())
        .await
        .expect("events")
        .items
        .into_iter()
        .filter_map(|e| e.reason)
        .collect();
    assert!(reasons.iter().any(|r| r == "Recreated"), "{reasons:?}");
    assert!(reasons.iter().any(|r| r == "Synced"), "{reasons:?}");

    // A Deployment the Foo does not own is left alone, with a warning event.
    let stranger = Deployment {
        metadata: kube::api::ObjectMeta {
            name: Some("taken".into()),
            ..Default::default()
        },
        ..Deployment::default()
    };
    deployments
        .create(&PostParams::default(), &stranger)
        .await
        .expect("created");
    let spec = FooSpec {
        deployment_name: "taken".into(),
        replicas: Some(1),
    };
    foos.create(&PostParams::default(), &Foo::new("greedy", spec))
        .await
        .expect("created");
    assert!(
        wait_until(WAIT, async || {
            let list = events
                .list(&ListParams::default())
                .await
                .map(|l| l.items)
                .unwrap_or_default();
            list.iter()
                .any(|e| e.reason.as_deref() == Some("ErrResourceExists"))
        })
        .await,
        "warning event"
    );
    assert_eq!(
        replicas(&deployments.get_opt("taken").await.ok().flatten()),
        None,
        "not touched"
    );

    cancel.cancel();
    workers.await.expect("workers stop");
    factory.shutdown().await;
    server.shutdown().await;
}
