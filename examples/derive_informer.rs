//! `#[derive(Informer)]` in both forms: beside `CustomResource` (`Foo`) and standalone on a type
//! with kube's `Resource` derive (`Settings`, a view of config maps).
//!
//! It starts the embedded test API server, registers the `Foo` CRD (`Foo::crd()`), seeds a few
//! objects, prints the handlers' events and the listers' answers, and exits.
//!
//! ```text
//! cargo run -p informer-examples --example derive_informer
//! ```

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use informer_runtime::{Informer, factory::SharedInformerFactory, informer::handler::EventHandlerFuncs};
use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, CustomResource, CustomResourceExt, Resource, api::ObjectMeta, core::Selector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The spec of a `Foo` (`example.com/v1`, namespaced): `FooInformer`, `FooLister` and
/// `FooNamespaceLister` come from `Informer`.
#[derive(CustomResource, Informer, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
pub struct FooSpec {
    /// A size.
    pub size: u32,
}

/// Config maps, as far as this example cares: `ConfigMapInformer` and friends.
#[derive(Resource, Informer, Serialize, Deserialize, Clone, Debug)]
#[resource(inherit = ConfigMap)]
#[informer(group = "", version = "v1", kind = "ConfigMap", namespaced)]
pub struct Settings {
    /// The metadata.
    pub metadata: ObjectMeta,
    /// The data.
    pub data: Option<BTreeMap<String, String>>,
}

fn foo(namespace: &str, name: &str, size: u32) -> Foo {
    let mut object = Foo::new(name, FooSpec { size });
    object.metadata.namespace = Some(namespace.into());
    object
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let server = TestServer::start().await?;
    println!("embedded API server at {}", server.url());
    server.create_typed(&Foo::crd())?;
    // as on a cluster, objects go into namespaces that exist
    server.create_namespace("shop")?;
    server.create_namespace("lab")?;
    server.create_typed(&foo("shop", "small", 1))?;
    server.create_typed(&foo("lab", "large", 9))?;
    let client = server.client()?;
    ConfigMapInformer::verify_resource()?;

    let factory = SharedInformerFactory::new(client.clone());
    let foos = FooInformer::new(&factory);
    let settings = ConfigMapInformer::new(&factory);
    foos.informer().add_event_handler(
        EventHandlerFuncs::new()
            .added(|object: Arc<Foo>, initial| {
                println!(
                    "foo added{}: {:?}",
                    if initial { " (initial list)" } else { "" },
                    object.metadata.name
                )
            })
            .updated(|_old, new: Arc<Foo>| {
                println!("foo updated: {:?} size {}", new.metadata.name, new.spec.size)
            })
            .deleted(|deleted| println!("foo deleted: {}", deleted.key())),
    )?;
    settings
        .informer()
        .add_event_handler(EventHandlerFuncs::new().added(|settings: Arc<Settings>, _| {
            println!(
                "config map added: {:?} {:?}",
                settings.metadata.name, settings.data
            )
        }))?;
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(Duration::from_secs(10)).await;
    println!("caches synced: {report}");

    let foo_api: Api<Foo> = Api::namespaced(client.clone(), "shop");
    foo_api
        .create(&Default::default(), &foo("shop", "medium", 5))
        .await?;
    let maps: Api<ConfigMap> = Api::namespaced(client, "shop");
    let map = ConfigMap {
        metadata: ObjectMeta {
            name: Some("prices".into()),
            ..ObjectMeta::default()
        },
        data: Some([("tea".to_owned(), "3".to_owned())].into()),
        ..ConfigMap::default()
    };
    maps.create(&Default::default(), &map).await?;
    foo_api.delete("small", &Default::default()).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;

    let all = Selector::default();
    let lister = foos.lister();
    let mut names: Vec<String> = lister
        .list(&all)
        .iter()
        .filter_map(|object| object.metadata.name.clone())
        .collect();
    names.sort();
    println!("foos everywhere: {names:?}");
    println!("foos in shop: {}", lister.foos("shop").list(&all).len());
    println!(
        "shop/medium size: {:?}",
        lister.foos("shop").get("medium").map(|object| object.spec.size)
    );
    println!(
        "config map shop/prices: {:?}",
        settings
            .lister()
            .config_maps("shop")
            .get("prices")
            .and_then(|s| s.data.clone())
    );
    factory.shutdown().await;
    Ok(())
}
