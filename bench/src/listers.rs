//! Lister queries on a large cache: our indexes against kube-rs's full scan.
//!
//! The same pods (without `managedFields`, to keep two caches of 100 000 pods in memory) go
//! into our `Store` (with the namespace index and an index by the `app` label) and into a
//! kube-rs reflector store. Each query runs over every namespace (or every `app` value);
//! results are compared, and the time is reported per returned object.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use informer_runtime::{
    cache::{Indexers, Writer, namespace_indexers},
    lister::Lister,
};
use k8s_openapi::api::core::v1::Pod;
use kube::{core::Selector, runtime::reflector, runtime::watcher};

use crate::{
    generator::{APPS, PodGenerator},
    render::{NAMESPACES, SEED},
};

/// The name of the custom index.
const APP_INDEX: &str = "app";

/// How long each query kind is repeated for.
const MEASURE_FOR: Duration = Duration::from_millis(300);

/// One query kind, ours against kube-rs.
#[derive(Debug, Clone)]
pub(crate) struct ListerOutcome {
    /// The query.
    pub(crate) query: String,
    /// How we answer it.
    pub(crate) ours_method: String,
    /// Objects in the cache.
    pub(crate) objects: usize,
    /// Objects one round of queries returns.
    pub(crate) returned_per_round: usize,
    /// Our time per returned object.
    pub(crate) ours_ns_per_object: f64,
    /// kube-rs's `state_filter` time per returned object.
    pub(crate) kube_ns_per_object: f64,
}

impl ListerOutcome {
    /// How many times faster ours is.
    pub(crate) fn speedup(&self) -> f64 {
        self.kube_ns_per_object / self.ours_ns_per_object.max(f64::MIN_POSITIVE)
    }
}

fn app_of(pod: &Pod) -> Option<&str> {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get("app"))
        .map(String::as_str)
}

/// Runs `round` (returning how many objects it got) until [`MEASURE_FOR`] elapsed.
fn ns_per_object(mut round: impl FnMut() -> usize) -> (f64, usize) {
    let started = Instant::now();
    let mut returned = 0usize;
    let mut rounds = 0usize;
    let mut per_round = 0;
    while rounds == 0 || started.elapsed() < MEASURE_FOR {
        per_round = round();
        returned += per_round;
        rounds += 1;
    }
    (
        started.elapsed().as_nanos() as f64 / returned.max(1) as f64,
        per_round,
    )
}

/// Fills both caches with `objects` pods and times the queries.
pub(crate) fn run(objects: usize) -> Vec<ListerOutcome> {
    let generator = PodGenerator::new(SEED, NAMESPACES);
    let mut indexers: Indexers<Pod> = namespace_indexers();
    indexers.insert(
        APP_INDEX.into(),
        Arc::new(|pod: &Pod| app_of(pod).map(str::to_owned).into_iter().collect()),
    );
    let ours = Writer::new(indexers);
    let (kube, mut writer) = reflector::store::<Pod>();
    for index in 0..objects {
        let mut pod: Pod = serde_json::from_value(generator.pod(index, index as u64 + 1, 0))
            .expect("a generated pod is a Pod");
        pod.metadata.managed_fields = None;
        writer.apply_watcher_event(&watcher::Event::Apply(pod.clone()));
        ours.add(Arc::new(pod));
    }
    assert_eq!(ours.len(), objects);
    assert_eq!(kube.len(), objects);
    let lister = Lister::new(ours.clone());
    let namespaces: Vec<String> = (0..NAMESPACES.min(objects))
        .map(|i| generator.namespace(i))
        .collect();
    let apps: Vec<String> = (0..APPS).map(|i| format!("app-{i:02}")).collect();
    let everything = Selector::default();

    let mut outcomes = Vec::new();
    let (ours_ns, ours_count) = ns_per_object(|| {
        namespaces
            .iter()
            .map(|ns| lister.by_namespace(ns).list(&everything).len())
            .sum()
    });
    let (kube_ns, kube_count) = ns_per_object(|| {
        namespaces
            .iter()
            .map(|ns| {
                kube.state_filter(|pod| pod.metadata.namespace.as_deref() == Some(ns.as_str()))
                    .len()
            })
            .sum()
    });
    assert_eq!(
        ours_count, kube_count,
        "both caches answer the namespace queries alike"
    );
    outcomes.push(ListerOutcome {
        query: format!("pods of one namespace (x{})", namespaces.len()),
        ours_method: "namespace index (`by_namespace().list`)".into(),
        objects,
        returned_per_round: ours_count,
        ours_ns_per_object: ours_ns,
        kube_ns_per_object: kube_ns,
    });

    let app_filter = |app: &str| kube.state_filter(|pod| app_of(pod) == Some(app)).len();
    let (kube_ns, kube_count) = ns_per_object(|| apps.iter().map(|app| app_filter(app)).sum());
    let (ours_ns, ours_count) = ns_per_object(|| {
        apps.iter()
            .map(|app| ours.by_index(APP_INDEX, app).map_or(0, |pods| pods.len()))
            .sum()
    });
    assert_eq!(ours_count, kube_count, "both caches answer the app queries alike");
    outcomes.push(ListerOutcome {
        query: format!("pods with label app=X (x{})", apps.len()),
        ours_method: "custom index on label `app` (`by_index`)".into(),
        objects,
        returned_per_round: ours_count,
        ours_ns_per_object: ours_ns,
        kube_ns_per_object: kube_ns,
    });
    let selectors: Vec<Selector> = apps
        .iter()
        .map(|app| [("app".to_owned(), app.clone())].into_iter().collect())
        .collect();
    let (ours_ns, ours_count) = ns_per_object(|| selectors.iter().map(|s| lister.list(s).len()).sum());
    assert_eq!(ours_count, kube_count, "the selector scan finds the same pods");
    outcomes.push(ListerOutcome {
        query: format!("pods with label app=X (x{})", apps.len()),
        ours_method: "label selector scan (`lister.list(selector)`)".into(),
        objects,
        returned_per_round: ours_count,
        ours_ns_per_object: ours_ns,
        kube_ns_per_object: kube_ns,
    });
    outcomes
}
