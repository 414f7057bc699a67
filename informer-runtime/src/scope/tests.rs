//! Scoped caches over HTTP against the embedded API server: what each scope caches, which
//! informers are shared, what listers refuse, and transforms per scope.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use informer_testserver::{TestServer, wait::eventually};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::core::{GroupVersionResource, Selector};

use super::*;
use crate::{EventHandlerFuncs, SharedInformerFactory, factory::SyncReport, selector::parse_label_selector};

const WAIT: Duration = Duration::from_secs(10);

fn config_map(namespace: &str, name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.namespace = Some(namespace.into());
    cm.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    );
    cm.data = Some(BTreeMap::from([("key".to_owned(), "value".to_owned())]));
    cm
}

/// A server with config maps in `source` (two replicated, one not) and in `other` (one
/// replicated, one not), and the namespace objects.
async fn server_with_config_maps() -> TestServer {
    let server = TestServer::start().await.expect("server");
    for name in ["source", "other"] {
        let mut namespace = Namespace::default();
        namespace.metadata.name = Some(name.into());
        server.create_typed(&namespace).expect("create namespace");
    }
    for (namespace, name, replicate) in [
        ("source", "settings", "true"),
        ("source", "flags", "true"),
        ("source", "scratch", "false"),
        ("other", "copy", "true"),
        ("other", "local", "false"),
    ] {
        server
            .create_typed(&config_map(namespace, name, &[("replicate", replicate)]))
            .expect("create config map");
    }
    server
}

fn names<K: Resource>(objects: &[Arc<K>]) -> Vec<String> {
    let mut names: Vec<String> = objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o.meta().namespace.as_deref().unwrap_or_default(),
                o.meta().name.as_deref().unwrap_or_default()
            )
        })
        .collect();
    names.sort();
    names
}

fn replicated() -> Scope<ConfigMap> {
    Scope::all()
        .namespace("source")
        .and_then(|scope| scope.labels("replicate=true"))
        .expect("a valid scope")
}

async fn synced(factory: &SharedInformerFactory) -> SyncReport {
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(WAIT).await;
    assert!(report.all_synced(), "{report}");
    report
}

fn everything() -> Selector {
    Selector::default()
}

/// The story: replicated config maps of one namespace cached beside every namespace
/// and beside another scope of config maps, each cache holding only its own objects, and
/// lists and watches restricted on the server.
#[tokio::test]
async fn two_scopes_of_one_type_are_cached_beside_each_other() {
    let server = server_with_config_maps().await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let replicated = factory.informer_in(&replicated());
    let other = factory.informer_in(&Scope::<ConfigMap>::all().namespace("other").expect("valid"));
    let namespaces = factory.unscoped_informer::<Namespace>();
    synced(&factory).await;

    assert_eq!(
        names(&replicated.lister().list_in_scope(&everything())),
        ["source/flags", "source/settings"]
    );
    assert_eq!(
        names(&other.lister().list_in_scope(&everything())),
        ["other/copy", "other/local"]
    );
    assert!(
        namespaces.lister().get("source").is_some(),
        "namespaces are cluster-wide"
    );
    assert_eq!(factory.stats().len(), 3, "one informer per scope and type");

    let config_map_requests: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.resource == "configmaps" && matches!(r.verb, "list" | "watch"))
        .map(|r| r.query)
        .collect();
    assert!(
        config_map_requests
            .iter()
            .any(|query| query.contains("labelSelector=replicate%3Dtrue")),
        "the label selector is sent to the server: {config_map_requests:?}"
    );

    // live changes reach the scope they belong to only
    server
        .create_typed(&config_map("source", "late", &[("replicate", "true")]))
        .expect("create");
    server
        .create_typed(&config_map("source", "late-unreplicated", &[]))
        .expect("create");
    eventually("the replicated cache to hold the new config map", WAIT, || {
        replicated.lister().list_in_scope(&everything()).len() == 3
    })
    .await
    .expect("replicated");
    eventually("the other cache to stay as it was", WAIT, || {
        other.lister().list_in_scope(&everything()).len() == 2
    })
    .await
    .expect("other");
    assert!(
        replicated
            .lister()
            .by_namespace("source")
            .get("late-unreplicated")
            .is_err(),
        "not cached, and the cache cannot tell whether it exists"
    );
    factory.shutdown().await;
}

/// Equal scopes, however their selectors were written, share one informer and one watch; a
/// scope of everything shares the unscoped informer.
#[tokio::test]
async fn equal_scopes_share_one_watch() {
    let server = server_with_config_maps().await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let a = Scope::<ConfigMap>::all()
        .labels("replicate=true,tier!=db")
        .expect("valid");
    let b = Scope::<ConfigMap>::all()
        .labels("tier!=db")
        .and_then(|scope| scope.labels("replicate==true"))
        .expect("valid");
    assert_eq!(a, b);
    let first = factory.informer_in(&a);
    let second = factory.informer_in(&b);
    assert_eq!(first.descriptions(), second.descriptions());
    let unscoped = factory.unscoped_informer::<ConfigMap>();
    let everything_scope = factory.informer_in(&Scope::<ConfigMap>::all());
    assert_eq!(everything_scope.descriptions(), [unscoped.description()]);
    assert_eq!(factory.stats().len(), 2, "one scoped and one unscoped informer");

    synced(&factory).await;
    let watches_with = |selector: bool| {
        server
            .requests()
            .iter()
            .filter(|r| r.verb == "watch" && r.resource == "configmaps")
            .filter(|r| r.query.contains("labelSelector") == selector)
            .count()
    };
    eventually("both watches to be open", WAIT, || {
        watches_with(true) >= 1 && watches_with(false) >= 1
    })
    .await
    .expect("watches");
    assert_eq!(watches_with(true), 1, "the equal scopes share one watch");
    assert_eq!(
        watches_with(false),
        1,
        "the everything scope shares the unscoped watch"
    );
    assert_eq!(
        names(&second.lister().list_in_scope(&everything())),
        ["other/copy", "source/flags", "source/settings"]
    );
    factory.shutdown().await;
}

/// The brief's refusals: another namespace, every object of a label-scoped cache, and a get
/// the selectors leave open; questions the scope covers are answered.
#[tokio::test]
async fn a_lister_asked_outside_its_scope_errors() {
    let server = server_with_config_maps().await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let lister = factory.informer_in(&replicated()).lister();
    synced(&factory).await;

    let other = lister
        .by_namespace("other")
        .list(&everything())
        .expect_err("another namespace");
    assert!(matches!(&other, Error::OutOfScope { .. }));
    let text = other.to_string();
    for part in [
        "failed to answer a list of namespace other",
        "configmaps cache scoped to namespace source, labels replicate=true",
        "namespace other is outside the cache",
        "read namespace other from the API server, or add it to the scope",
    ] {
        assert!(text.contains(part), "{part:?} in {text}");
    }

    let all = lister
        .by_namespace("source")
        .list(&everything())
        .expect_err("unlabelled");
    let text = all.to_string();
    assert!(
        text.contains("holds only objects with labels replicate=true"),
        "{text}"
    );
    assert!(text.contains("add replicate=true to the selector"), "{text}");
    assert!(lister.list(&everything()).is_err(), "every namespace");
    assert!(
        lister
            .get_by_key(&crate::ObjectKey::new("other", "copy"))
            .is_err()
    );
    assert!(
        lister.by_namespace("source").get("scratch").is_err(),
        "exists without the label: the cache cannot say"
    );

    let covered = parse_label_selector("replicate=true,app notin (db)").expect("selector");
    assert_eq!(
        names(
            &lister
                .by_namespace("source")
                .list(&covered)
                .expect("implied by the scope")
        ),
        ["source/flags", "source/settings"]
    );
    let found = lister.by_namespace("source").get("settings").expect("cached");
    assert!(found.is_some(), "a cached object is always a true answer");

    // a namespace-only scope knows that an uncached name does not exist
    let source_only = factory
        .informer_in(&Scope::<ConfigMap>::all().namespace("source").expect("valid"))
        .lister();
    synced(&factory).await;
    assert_eq!(
        source_only
            .by_namespace("source")
            .get("missing")
            .expect("covered"),
        None
    );
    factory.shutdown().await;
}

/// A scope's transform shapes its cache alone, after the factory's transforms.
#[tokio::test]
async fn a_transform_applies_to_its_scope_only() {
    let server = server_with_config_maps().await;
    let order = Arc::new(Mutex::new(Vec::new()));
    let factory_saw = Arc::clone(&order);
    let factory = SharedInformerFactory::builder(server.client().expect("client"))
        .transform::<ConfigMap>(move |cm| {
            factory_saw.lock().expect("lock").push("factory");
            cm.metadata.annotations = Some(BTreeMap::from([("seen".to_owned(), "factory".to_owned())]));
        })
        .build();
    let scope_saw = Arc::clone(&order);
    let stripped = replicated().transform(move |cm: &mut ConfigMap| {
        let seen_factory = cm
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key("seen"));
        scope_saw.lock().expect("lock").push(if seen_factory {
            "scope after factory"
        } else {
            "scope first"
        });
        cm.data = None;
    });
    let stripped_informer = factory.informer_in(&stripped);
    let same_transform = factory.informer_in(&stripped.clone());
    let plain = factory.informer_in(&replicated());
    assert_eq!(
        factory.stats().len(),
        2,
        "clones share the transform, a scope without it is another cache"
    );
    assert_eq!(stripped_informer.descriptions(), same_transform.descriptions());
    assert_eq!(
        stripped_informer.descriptions(),
        ["configmaps (namespace source, labels replicate=true, transformed)"]
    );
    synced(&factory).await;

    let get = |lister: &ScopedLister<ConfigMap>| {
        lister
            .by_namespace("source")
            .get("settings")
            .expect("covered")
            .expect("cached")
    };
    assert_eq!(get(&stripped_informer.lister()).data, None);
    assert!(
        get(&plain.lister()).data.is_some(),
        "the other scope keeps its data"
    );
    let order = order.lock().expect("lock").clone();
    assert!(order.contains(&"scope after factory"), "{order:?}");
    assert!(!order.contains(&"scope first"), "{order:?}");
    factory.shutdown().await;
}

/// A scope of several namespaces: one informer per namespace, shared with a scope of one of
/// them, a handler on each, and a lister that answers per namespace.
#[tokio::test]
async fn several_namespaces_get_one_shared_informer_each() {
    let server = server_with_config_maps().await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let both = factory.informer_in(
        &Scope::<ConfigMap>::all()
            .namespaces(["source", "other"])
            .expect("valid"),
    );
    let source = factory.informer_in(&Scope::<ConfigMap>::all().namespace("source").expect("valid"));
    assert_eq!(
        both.descriptions(),
        ["configmaps (namespace other)", "configmaps (namespace source)"]
    );
    assert_eq!(factory.stats().len(), 2, "the source informer is shared");
    let added = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&added);
    let registration = both
        .add_event_handler(EventHandlerFuncs::new().added(move |cm: Arc<ConfigMap>, _| {
            seen.lock().expect("lock").push(cm);
        }))
        .expect("registered");
    synced(&factory).await;
    eventually("the handler to see both namespaces", WAIT, || {
        registration.has_synced()
    })
    .await
    .expect("synced");
    assert_eq!(
        names(&added.lock().expect("lock")),
        [
            "other/copy",
            "other/local",
            "source/flags",
            "source/scratch",
            "source/settings"
        ]
    );
    let lister = both.lister();
    assert_eq!(
        names(&lister.by_namespace("other").list(&everything()).expect("covered")).len(),
        2
    );
    assert!(lister.list(&everything()).is_err(), "not every namespace");
    assert_eq!(lister.list_in_scope(&everything()).len(), 5);
    assert_eq!(source.lister().list_in_scope(&everything()).len(), 3);
    registration.remove();
    factory.shutdown().await;
}

/// The sync report names each scope; the generic (`for_resource`) path keeps giving the
/// unscoped informer beside scoped ones; a type's default scope is what `informer`
/// returns, while `unscoped_informer::<K>()` keeps meaning every object.
#[tokio::test]
async fn reports_generic_informers_and_default_scopes_work_beside_scopes() {
    let server = server_with_config_maps().await;
    let factory = SharedInformerFactory::builder(server.client().expect("client"))
        .scope(replicated())
        .build();
    assert_eq!(factory.default_scope::<ConfigMap>(), replicated());
    let scoped = factory.informer::<ConfigMap>();
    assert_eq!(factory.stats().len(), 1, "only the scoped informer so far");
    let generic = factory.generic_informer::<ConfigMap>(GroupVersionResource::gvr("", "v1", "configmaps"));
    let report = synced(&factory).await;
    let descriptions: Vec<&str> = report.informers.iter().map(|i| i.description.as_str()).collect();
    assert_eq!(
        descriptions,
        [
            "configmaps (namespace source, labels replicate=true)",
            "configmaps"
        ]
    );
    assert_eq!(report.is_synced::<ConfigMap>(), Some(true));
    assert_eq!(generic.lister().list(&everything()).len(), 5, "every config map");
    assert_eq!(scoped.lister().list_in_scope(&everything()).len(), 2);
    factory.shutdown().await;
}

/// A factory's namespace is the namespace of its scopes that name none; a scope's
/// namespaces replace it.
#[tokio::test]
async fn a_scope_without_namespaces_watches_the_factorys_namespace() {
    let server = server_with_config_maps().await;
    let factory = SharedInformerFactory::builder(server.client().expect("client"))
        .namespace("source")
        .build();
    let labelled = factory.informer_in(&Scope::<ConfigMap>::all().labels("replicate=true").expect("valid"));
    assert_eq!(labelled.scope().selected_namespaces().len(), 1);
    let elsewhere = factory.informer_in(&Scope::<ConfigMap>::all().namespace("other").expect("valid"));
    synced(&factory).await;
    assert_eq!(labelled.lister().list_in_scope(&everything()).len(), 2);
    assert!(
        labelled
            .lister()
            .by_namespace("other")
            .list(&parse_label_selector("replicate=true").expect("selector"))
            .is_err()
    );
    assert_eq!(
        names(&elsewhere.lister().list_in_scope(&everything())),
        ["other/copy", "other/local"]
    );
    factory.shutdown().await;
}

/// A field selector scope is sent to the server, and its lister answers what the fields fix.
#[tokio::test]
async fn a_field_selector_scope_selects_on_the_server() {
    let server = server_with_config_maps().await;
    let factory = SharedInformerFactory::new(server.client().expect("client"));
    let not_scratch = factory.informer_in(
        &Scope::<ConfigMap>::all()
            .fields("metadata.name!=scratch")
            .expect("valid"),
    );
    synced(&factory).await;
    assert_eq!(
        names(&not_scratch.lister().list_in_scope(&everything())),
        ["other/copy", "other/local", "source/flags", "source/settings"]
    );
    assert!(
        not_scratch.lister().list(&everything()).is_err(),
        "the fields are not fixed"
    );
    assert_eq!(
        not_scratch
            .lister()
            .by_namespace("source")
            .get("missing")
            .expect("the name fixes the field"),
        None
    );
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.resource == "configmaps"
                && r.query.contains("fieldSelector=metadata.name%21%3Dscratch")),
        "{:?}",
        server.requests()
    );
    factory.shutdown().await;
}

#[test]
fn a_bad_scope_is_a_clear_error() {
    let label = Scope::<ConfigMap>::all()
        .labels("app in ()")
        .expect_err("empty set");
    assert_eq!(
        label.to_string(),
        "failed to build a scope: failed to parse label selector \"app in ()\": for 'in', 'notin' operators, values set can't be empty"
    );
    let field = Scope::<ConfigMap>::all()
        .fields("metadata.name")
        .expect_err("no operator");
    assert!(
        field.to_string().contains("failed to parse field selector"),
        "{field}"
    );
    let namespace = Scope::<ConfigMap>::all()
        .namespace("Source_1")
        .expect_err("invalid");
    assert!(
        namespace
            .to_string()
            .starts_with("failed to build a scope: invalid namespace \"Source_1\""),
        "{namespace}"
    );
    let bad_key: Selector = [kube::core::Expression::Exists("-bad".into())]
        .into_iter()
        .collect();
    assert!(Scope::<ConfigMap>::all().label_selector(bad_key).is_err());
    assert!(Scope::<ConfigMap>::all().namespace("").is_err());
}
