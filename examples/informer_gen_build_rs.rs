//! Typed informers generated at build time: `build.rs` runs `informer_gen::Config` on a crate
//! of custom resource types (`sample-crds`), and the generated factory gives
//! `informers.example().v1().foos()` (`example.com`'s accessor, pinned in `build.rs`) and
//! `informers.for_resource(&gvr)`.
//!
//! It runs against the embedded API server, prints what the informers see, and exits.
//!
//! ```text
//! cargo run -p informer-examples --example informer_gen_build_rs
//! ```

use std::{sync::Arc, time::Duration};

use informer_examples::sample_informers::Informers;
use informer_runtime::SharedInformerFactory;
use informer_runtime::informer::handler::EventHandlerFuncs;
use informer_testserver::TestServer;
use kube::{
    CustomResourceExt,
    core::{GroupVersionResource, Selector, crd::merge_crds},
};
use sample_crds::{
    v1::{Bar, BarSpec, Foo, FooSpec},
    v2,
};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn new_foo(namespace: &str, name: &str, size: u32) -> Foo {
    let mut object = Foo::new(name, FooSpec { size });
    object.metadata.namespace = Some(namespace.into());
    object
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let server = TestServer::start().await?;
    server.create_typed(&merge_crds(vec![Foo::crd(), v2::Foo::crd()], "v1")?)?;
    server.create_typed(&Bar::crd())?;
    // as on a cluster, objects go into namespaces that exist
    server.create_namespace("shop")?;
    server.create_namespace("blog")?;
    server.create_typed(&new_foo("shop", "small", 1))?;
    server.create_typed(&new_foo("blog", "large", 9))?;
    server.create_typed(&Bar::new(
        "blue",
        BarSpec {
            colour: "blue".into(),
        },
    ))?;

    // The runtime's factory owns one shared informer per resource type; the generated
    // `Informers` is its typed view.
    let factory = SharedInformerFactory::new(server.client()?);
    let informers = Informers::new(&factory);
    let foos = informers.example().v1().foos();
    foos.informer()
        .add_event_handler(EventHandlerFuncs::new().added(|object: Arc<Foo>, initial| {
            let name = object.metadata.name.as_deref().unwrap_or("");
            println!(
                "foo {name} (size {}) added{}",
                object.spec.size,
                if initial { " by the initial list" } else { "" }
            );
        }))?;
    let bars = informers.example().v1().bars();
    // Informers are created on first request: request every one before `start` (an informer
    // requested later needs another `start`).
    bars.informer();
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(Duration::from_secs(10)).await;
    println!("{report}");

    // Typed listers: namespaced resources through `foos(namespace)`, cluster-scoped by name.
    println!(
        "foo shop/small: {:?}",
        foos.lister().foos("shop").get("small").map(|f| f.spec.size)
    );
    println!(
        "bar blue: {:?}",
        bars.lister().get("blue").map(|b| b.spec.colour.clone())
    );

    // Generic code reaches the same informers through their group, version and resource.
    let gvr = GroupVersionResource::gvr("example.com", "v1", "foos");
    let generic = informers.for_resource(&gvr)?;
    println!(
        "for_resource({gvr:?}): {} objects",
        generic.lister().list(&Selector::default()).len()
    );
    let unknown = GroupVersionResource::gvr("example.com", "v9", "foos");
    if let Err(err) = informers.for_resource(&unknown) {
        println!("for_resource of an unknown resource: {err}");
    }

    server.create_typed(&new_foo("shop", "medium", 4))?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    factory.shutdown().await;
    server.shutdown().await;
    Ok(())
}
