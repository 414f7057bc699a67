//! A seeded workload of ConfigMaps for controller tests: creates, updates and deletes of a
//! dozen names in `default`, interleaved with server faults (dropped watches, restarts,
//! compaction, 500s on lists and watches).

use std::{collections::HashMap, time::Duration};

use informer_runtime::{
    SharedIndexInformer, SharedInformerFactory,
    cache::namespace_indexers,
    informer,
    reflector::{self, backoff},
    source::KubeListerWatcher,
};
use informer_testserver::{Failure, TestServer};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, api::ObjectMeta};

/// How many names the workload touches (`cm-0` to `cm-11`).
pub const NAMES: usize = 12;

/// The ConfigMap `default/<name>` holding `value`.
pub fn config_map(name: &str, value: u64) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        data: Some([("value".to_owned(), value.to_string())].into()),
        ..ConfigMap::default()
    }
}

/// One step of the workload or a fault, chosen by `rng`; `value` makes every write distinct.
pub fn step(server: &TestServer, rng: &mut fastrand::Rng, value: u64) {
    let name = format!("cm-{}", rng.usize(..NAMES));
    match rng.u8(..20) {
        0 => server.drop_watches(),
        1 => server.restart(),
        2 => server.compact(),
        3 => server.fail_next(Failure::new(500).verb("watch")),
        4 => server.fail_next(Failure::new(500).verb("list")),
        5..=7 => drop(server.delete_typed::<ConfigMap>(Some("default"), &name)),
        _ => {
            if server.create_typed(&config_map(&name, value)).is_err() {
                server
                    .update_typed(&config_map(&name, value))
                    .expect("an update of an object that exists");
            }
        }
    }
}

/// The resource version of every ConfigMap in `default` the server holds, by name.
pub fn server_versions(server: &TestServer) -> HashMap<String, String> {
    let list = server
        .list("v1", "ConfigMap", Some("default"))
        .expect("the server lists config maps");
    list.iter()
        .map(|cm| {
            let meta = &cm["metadata"];
            let field = |f: &str| meta[f].as_str().unwrap_or_default().to_owned();
            (field("name"), field("resourceVersion"))
        })
        .collect()
}

/// The factory's ConfigMap informer with a compressed backoff, so faults cost milliseconds;
/// call it before anything else asks the factory for a ConfigMap informer.
pub fn fast_informer(factory: &SharedInformerFactory) -> SharedIndexInformer<ConfigMap> {
    factory
        .informer_for::<ConfigMap>(|context| {
            let api: Api<ConfigMap> = Api::all(context.client().clone());
            SharedIndexInformer::new(
                KubeListerWatcher::new(api).response_timeout(Duration::from_secs(2)),
                informer::Config {
                    indexers: namespace_indexers(),
                    reflector: reflector::Config {
                        backoff: backoff::Config {
                            initial: Duration::from_millis(10),
                            max: Duration::from_millis(200),
                            ..backoff::Config::default()
                        },
                        ..reflector::Config::default()
                    },
                    ..informer::Config::default()
                },
            )
        })
        .expect("the factory's first ConfigMap informer")
}
