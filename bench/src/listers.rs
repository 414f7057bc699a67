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
use kube::{
    core::Selector,
    runtime::{reflector, reflector::ObjectRef, watcher},
};

use crate::{
    generator::{APPS, PodGenerator},
    render::{NAMESPACES, SEED},
};

/// The name of the custom index.
const APP_INDEX: &str = "app";

/// Objects read again and again by the "hot" gets: a working set that stays in the CPU's
/// caches, as the objects a reconcile reads often do, so that the lookup's own work shows.
const HOT_NAMES: usize = 1_000;

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
    let caches = Caches::fill(objects);
    let by_namespace = caches.namespace_queries();
    let (by_app_index, kube) = caches.app_index_queries();
    let by_app_selector = caches.app_selector_queries(kube);
    let by_name = caches.get_queries(caches.names.len());
    let by_name_hot = caches.get_queries(HOT_NAMES.min(caches.names.len()));
    vec![by_namespace, by_app_index, by_app_selector, by_name, by_name_hot]
}

/// The lister queries as a markdown table.
pub(crate) fn markdown(outcomes: &[ListerOutcome]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let Some(first) = outcomes.first() else {
        return out;
    };
    let _ = writeln!(
        out,
        "\n### Lister queries over {} pods (ns per returned pod; kube-rs: `Store::state_filter`, `Store::get`)\n",
        first.objects
    );
    let _ = writeln!(
        out,
        "| query | pods returned | ours | ours ns/pod | kube-rs ns/pod | speed-up |"
    );
    let _ = writeln!(out, "|---|---:|---|---:|---:|---:|");
    for l in outcomes {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1} | {:.1} | {:.1}x |",
            l.query,
            l.returned_per_round,
            l.ours_method,
            l.ours_ns_per_object,
            l.kube_ns_per_object,
            l.speedup()
        );
    }
    out
}

/// The same pods in our store (namespace and `app` indexes) and in a kube-rs store, and the
/// values the queries ask for.
struct Caches {
    objects: usize,
    ours: Writer<Pod>,
    lister: Lister<Pod>,
    kube: reflector::Store<Pod>,
    namespaces: Vec<String>,
    apps: Vec<String>,
    /// The namespace and name of every cached pod, in a shuffled order.
    names: Vec<(String, String)>,
}

impl Caches {
    fn fill(objects: usize) -> Self {
        let generator = PodGenerator::new(SEED, NAMESPACES);
        let mut indexers: Indexers<Pod> = namespace_indexers();
        indexers.insert(
            APP_INDEX.into(),
            Arc::new(|pod: &Pod| app_of(pod).map(str::to_owned).into_iter().collect()),
        );
        // Decoded first, then cached: each cache's allocations come in one sweep of their own,
        // so neither cache's layout is interleaved with the other's.
        let pods: Vec<Pod> = (0..objects)
            .map(|index| {
                let mut pod: Pod = serde_json::from_value(generator.pod(index, index as u64 + 1, 0))
                    .expect("a generated pod is a Pod");
                pod.metadata.managed_fields = None;
                pod
            })
            .collect();
        let mut names: Vec<(String, String)> = pods
            .iter()
            .map(|pod| {
                (
                    pod.metadata.namespace.clone().unwrap_or_default(),
                    pod.metadata.name.clone().unwrap_or_default(),
                )
            })
            .collect();
        let (kube, mut writer) = reflector::store::<Pod>();
        for pod in &pods {
            writer.apply_watcher_event(&watcher::Event::Apply(pod.clone()));
        }
        let ours = Writer::new(indexers);
        for pod in pods {
            ours.add(Arc::new(pod));
        }
        assert_eq!(ours.len(), objects);
        assert_eq!(kube.len(), objects);
        fastrand::Rng::with_seed(SEED).shuffle(&mut names);
        Self {
            objects,
            lister: Lister::new(ours.clone()),
            ours,
            kube,
            namespaces: (0..NAMESPACES.min(objects))
                .map(|i| generator.namespace(i))
                .collect(),
            apps: (0..APPS).map(|i| format!("app-{i:02}")).collect(),
            names,
        }
    }

    /// The first `count` pods (of a shuffled order) by namespace and name, as a reconcile
    /// reads its object: our namespace lister's `get` against kube-rs's `Store::get`.
    fn get_queries(&self, count: usize) -> ListerOutcome {
        let names = &self.names[..count];
        let ours = ns_per_object(|| {
            names
                .iter()
                .filter(|(namespace, name)| self.lister.by_namespace(namespace).get(name).is_some())
                .count()
        });
        let kube = ns_per_object(|| {
            names
                .iter()
                .filter(|(namespace, name)| self.kube.get(&ObjectRef::new(name).within(namespace)).is_some())
                .count()
        });
        assert_eq!(ours.1, count, "our lister finds every pod by name");
        assert_eq!(kube.1, count, "kube-rs's store finds every pod by name");
        let query = if count == self.objects {
            format!("one pod by namespace and name (x{count})")
        } else {
            format!("one pod by namespace and name, {count} hot pods (x{count})")
        };
        let method = "`by_namespace(ns).get(name)`";
        self.outcome(query, method, ours, kube.0)
    }

    /// The pods of each namespace: our namespace index against a scan.
    fn namespace_queries(&self) -> ListerOutcome {
        let everything = Selector::default();
        let ours = ns_per_object(|| {
            self.namespaces
                .iter()
                .map(|ns| self.lister.by_namespace(ns).list(&everything).len())
                .sum()
        });
        let (kube_ns, kube_count) = ns_per_object(|| {
            self.namespaces
                .iter()
                .map(|ns| {
                    self.kube
                        .state_filter(|pod| pod.metadata.namespace.as_deref() == Some(ns.as_str()))
                        .len()
                })
                .sum()
        });
        assert_eq!(
            ours.1, kube_count,
            "both caches answer the namespace queries alike"
        );
        let query = format!("pods of one namespace (x{})", self.namespaces.len());
        self.outcome(query, "namespace index (`by_namespace().list`)", ours, kube_ns)
    }

    /// The pods of each `app` label value: our custom index against a scan. Also returns the
    /// scan's figures, which the selector queries are compared with.
    fn app_index_queries(&self) -> (ListerOutcome, (f64, usize)) {
        let app_filter = |app: &str| self.kube.state_filter(|pod| app_of(pod) == Some(app)).len();
        let kube = ns_per_object(|| self.apps.iter().map(|app| app_filter(app)).sum());
        let ours = ns_per_object(|| {
            self.apps
                .iter()
                .map(|app| self.ours.by_index(APP_INDEX, app).map_or(0, |pods| pods.len()))
                .sum()
        });
        assert_eq!(ours.1, kube.1, "both caches answer the app queries alike");
        let query = format!("pods with label app=X (x{})", self.apps.len());
        let method = "custom index on label `app` (`by_index`)";
        (self.outcome(query, method, ours, kube.0), kube)
    }

    /// The same queries as label selectors, which our lister answers by a scan.
    fn app_selector_queries(&self, (kube_ns, kube_count): (f64, usize)) -> ListerOutcome {
        let selectors: Vec<Selector> = self
            .apps
            .iter()
            .map(|app| [("app".to_owned(), app.clone())].into_iter().collect())
            .collect();
        let ours = ns_per_object(|| selectors.iter().map(|s| self.lister.list(s).len()).sum());
        assert_eq!(ours.1, kube_count, "the selector scan finds the same pods");
        let query = format!("pods with label app=X (x{})", self.apps.len());
        let method = "label selector scan (`lister.list(selector)`)";
        self.outcome(query, method, ours, kube_ns)
    }

    fn outcome(
        &self,
        query: String,
        ours_method: &str,
        (ours_ns, ours_count): (f64, usize),
        kube_ns: f64,
    ) -> ListerOutcome {
        ListerOutcome {
            query,
            ours_method: ours_method.into(),
            objects: self.objects,
            returned_per_round: ours_count,
            ours_ns_per_object: ours_ns,
            kube_ns_per_object: kube_ns,
        }
    }
}
