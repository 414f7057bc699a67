//! Prometheus metrics (feature `metrics`), through `prometheus-client`.
//!
//! - [`register_leader_election`]: whether this replica leads, and its elector's counters.
//! - a sharder's assignments, drains, moves, Lease acquisitions and ring size
//!   (`controller_sharding_*`), and its controllers' queues and reconciles: registered by the
//!   [`Manager`](crate::manager::Manager) it is added to.
//! - [`register_factory`]: per informer, lists, relists, watches, list and watch errors, cache
//!   size, sync state and last resource version; per handler, backlog, handled notifications and
//!   panics. Read from the informers' counters at each scrape: nothing is added to the hot path.
//! - [`WorkQueueMetrics`]: per work queue, adds, depth, retries, time in queue and work
//!   duration (client-go's workqueue metrics), fed through [`QueueMetrics`].
//! - [`ControllerMetrics`]: per controller, reconciles by result, errors, panics, reconcile
//!   time, active workers and concurrency, under controller-runtime's names (so its dashboards
//!   work), and the waits for a reconcile's own writes (`controller_own_write_*`), fed through
//!   [`ReconcileMetrics`]; [`register_controller`] wires both to a [`Controller`].
//!
//! ```
//! use std::sync::Arc;
//! use informer_runtime::{metrics::WorkQueueMetrics, workqueue::{PriorityQueue, default_controller_rate_limiter}};
//! use prometheus_client::{encoding::text::encode, registry::Registry};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mut registry = Registry::default();
//! let metrics = WorkQueueMetrics::register(&mut registry, "foo-controller");
//! let queue = PriorityQueue::<String>::with_metrics(default_controller_rate_limiter(), metrics);
//! queue.add("default/web".into());
//! let mut text = String::new();
//! encode(&mut text, &registry).expect("encodable");
//! assert!(text.contains("workqueue_adds_total{name=\"foo-controller\"} 1"));
//! # }
//! ```

use std::{fmt, sync::Arc, time::Duration};

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{
        counter::{ConstCounter, Counter},
        gauge::{ConstGauge, Gauge},
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};

use prometheus_client::metrics::family::Family;

use crate::{
    controller::{Controller, OwnWriteWait, ReconcileMetrics, ReconcileOutcome},
    factory::{SharedInformerFactory, TypedResource},
    leader_election::LeaderElector,
    workqueue::QueueMetrics,
};

/// Registers the metrics of every informer of `factory` (also ones created later).
pub fn register_factory(registry: &mut Registry, factory: &SharedInformerFactory) {
    registry.register_collector(Box::new(FactoryCollector {
        factory: factory.clone(),
    }));
}

struct FactoryCollector {
    factory: SharedInformerFactory,
}

impl fmt::Debug for FactoryCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FactoryCollector").finish_non_exhaustive()
    }
}

type Labels = Vec<(&'static str, String)>;

fn encode_each(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    samples: &[(Labels, Box<dyn EncodeMetric>)],
) -> Result<(), fmt::Error> {
    let Some((_, first)) = samples.first() else {
        return Ok(());
    };
    let mut metric = encoder.encode_descriptor(name, help, None, first.metric_type())?;
    for (labels, value) in samples {
        value.encode(metric.encode_family(labels)?)?;
    }
    Ok(())
}

fn counter(value: u64) -> Box<dyn EncodeMetric> {
    Box::new(ConstCounter::new(value))
}

fn gauge(value: i64) -> Box<dyn EncodeMetric> {
    Box::new(ConstGauge::new(value))
}

fn clamp(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// One sample per informer and kind of user function.
fn user_function_panics(stats: &[crate::informer::InformerStats]) -> Vec<(Labels, Box<dyn EncodeMetric>)> {
    stats
        .iter()
        .flat_map(|s| {
            let p = s.panics;
            [
                ("transform", p.transform),
                ("index_function", p.index_functions),
                ("watch_error_handler", p.watch_error_handler),
                ("lister_watcher", p.lister_watcher),
            ]
            .map(|(function, count)| {
                let labels = vec![
                    ("informer", s.description.clone()),
                    ("function", function.to_owned()),
                ];
                (labels, counter(count))
            })
        })
        .collect()
}

impl Collector for FactoryCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), fmt::Error> {
        let stats = self.factory.stats();
        let informer = |s: &crate::informer::InformerStats| vec![("informer", s.description.clone())];
        type Pick = fn(&crate::informer::InformerStats) -> Box<dyn EncodeMetric>;
        let per_informer: [(&str, &str, Pick); 9] = [
            ("informer_lists", "Successful lists, the first included.", |s| {
                counter(s.reflector.lists)
            }),
            ("informer_relists", "Lists after the first one.", |s| {
                counter(s.reflector.relists)
            }),
            ("informer_list_errors", "Failed list requests.", |s| {
                counter(s.reflector.list_errors)
            }),
            ("informer_watches", "Watches opened.", |s| {
                counter(s.reflector.watches)
            }),
            (
                "informer_watch_errors",
                "Watches that failed to open or ended with an error.",
                |s| counter(s.reflector.watch_errors),
            ),
            ("informer_store_objects", "Objects in the cache.", |s| {
                gauge(clamp(s.store_size))
            }),
            (
                "informer_synced",
                "1 while the cache is synced and kept up to date.",
                |s| gauge(i64::from(s.synced)),
            ),
            (
                "informer_stopped",
                "1 once the informer stopped processing changes.",
                |s| gauge(i64::from(s.stopped)),
            ),
            (
                "informer_last_resource_version",
                "The last resource version seen, when it is a number.",
                |s| gauge(s.reflector.last_resource_version.parse().unwrap_or(0)),
            ),
        ];
        for (name, help, pick) in per_informer {
            let samples: Vec<(Labels, Box<dyn EncodeMetric>)> =
                stats.iter().map(|s| (informer(s), pick(s))).collect();
            encode_each(&mut encoder, name, help, &samples)?;
        }

        encode_each(
            &mut encoder,
            "informer_user_function_panics",
            "Calls of the informer's transform, index functions, watch-error handler or lister-watcher that panicked.",
            &user_function_panics(&stats),
        )?;

        let handlers = |pick: fn(&crate::informer::HandlerStats) -> Box<dyn EncodeMetric>| {
            stats
                .iter()
                .flat_map(|s| {
                    s.handlers.iter().map(move |h| {
                        (
                            vec![("informer", s.description.clone()), ("handler", h.id.to_string())],
                            pick(h),
                        )
                    })
                })
                .collect::<Vec<(Labels, Box<dyn EncodeMetric>)>>()
        };
        encode_each(
            &mut encoder,
            "informer_handler_backlog",
            "Notifications waiting for the handler.",
            &handlers(|h| gauge(clamp(h.backlog))),
        )?;
        encode_each(
            &mut encoder,
            "informer_handler_handled",
            "Notifications handled.",
            &handlers(|h| counter(h.handled)),
        )?;
        encode_each(
            &mut encoder,
            "informer_handler_panics",
            "Handler calls that panicked.",
            &handlers(|h| counter(h.panics)),
        )
    }
}

/// Registers the metrics of `elector`: `leader_election_master_status{name}` (client-go's
/// gauge, 1 while this replica leads) and counters of acquisitions, renewals, failed renewals,
/// lost terms and releases, read from [`LeaderElector::stats`] at each scrape.
pub fn register_leader_election(registry: &mut Registry, elector: &LeaderElector) {
    registry.register_collector(Box::new(LeaderElectionCollector {
        elector: elector.clone(),
    }));
}

#[derive(Debug)]
struct LeaderElectionCollector {
    elector: LeaderElector,
}

impl Collector for LeaderElectionCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), fmt::Error> {
        let name = || vec![("name", self.elector.config().lease())];
        let stats = self.elector.stats();
        encode_each(
            &mut encoder,
            "leader_election_master_status",
            "1 while this replica leads the lease, else 0.",
            &[(name(), gauge(i64::from(self.elector.is_leader())))],
        )?;
        let counters = [
            (
                "leader_election_acquisitions",
                "Terms this replica began.",
                stats.acquisitions,
            ),
            (
                "leader_election_renewals",
                "Successful renewals of the lease.",
                stats.renewals,
            ),
            (
                "leader_election_failed_renewals",
                "Renewals that failed.",
                stats.failed_renewals,
            ),
            (
                "leader_election_lost",
                "Terms that ended without a cancel (renew deadline passed, lease taken).",
                stats.leadership_lost,
            ),
            (
                "leader_election_releases",
                "Times the lease was given up on cancel.",
                stats.releases,
            ),
        ];
        for (metric, help, value) in counters {
            encode_each(&mut encoder, metric, help, &[(name(), counter(value))])?;
        }
        Ok(())
    }
}

/// Registers the metrics of `sharder`, labelled `controllerring=<ring>` (names after the Go
/// sharder's `controller_sharding_*`): assignments, drains, moves, shard Lease acquisitions,
/// orphaned Leases deleted, conflicts, errors and skipped writes as counters, and the ring's
/// available shards as a gauge; read from [`Sharder::stats`](crate::sharding::Sharder::stats)
/// at each scrape; and the work queue and reconcile metrics of its controllers, named
/// `sharder <ring> leases` and `sharder <ring> <plural.group>`. A
/// [`Manager`](crate::manager::Manager) calls it when the sharder is
/// [added](crate::manager::Manager::add).
pub(crate) fn register_sharder(registry: &mut Registry, sharder: &crate::sharding::Sharder) {
    registry.register_collector(Box::new(SharderCollector {
        sharder: sharder.clone(),
    }));
    for name in sharder.controller_names() {
        let queue = WorkQueueMetrics::register(registry, &name);
        let reconciles = ControllerMetrics::register(registry, &name);
        sharder.report_controller(&name, queue, reconciles);
    }
}

#[derive(Debug)]
struct SharderCollector {
    sharder: crate::sharding::Sharder,
}

impl Collector for SharderCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), fmt::Error> {
        let ring = || vec![("controllerring", self.sharder.ring().name().to_owned())];
        let stats = self.sharder.stats();
        encode_each(
            &mut encoder,
            "controller_sharding_ring_shards_available",
            "Shards on the ring now (ready, expired or uncertain).",
            &[(
                ring(),
                gauge(i64::try_from(stats.ring_members).unwrap_or(i64::MAX)),
            )],
        )?;
        let counters = [
            (
                "controller_sharding_assignments",
                "Objects labelled for a shard.",
                stats.assigned,
            ),
            (
                "controller_sharding_drains",
                "Drain labels added: objects asked to leave a live shard.",
                stats.drains,
            ),
            (
                "controller_sharding_movements",
                "Objects moved straight to a new shard.",
                stats.moves,
            ),
            (
                "controller_sharding_unassignments",
                "Objects whose shard labels were removed because they left the ring.",
                stats.unassigned,
            ),
            (
                "controller_sharding_lease_acquisitions",
                "Shard Leases the sharder took, declaring their shards dead.",
                stats.lease_acquisitions,
            ),
            (
                "controller_sharding_lease_hand_backs",
                "Dead shards' Leases given back once all their objects moved.",
                stats.lease_hand_backs,
            ),
            (
                "controller_sharding_orphaned_leases_deleted",
                "Orphaned shard Leases deleted.",
                stats.orphans_deleted,
            ),
            (
                "controller_sharding_conflicts",
                "Writes answered 409 Conflict (checked again from the cache).",
                stats.conflicts,
            ),
            (
                "controller_sharding_errors",
                "Failed writes and objects whose hash key could not be computed.",
                stats.errors,
            ),
            (
                "controller_sharding_writes_skipped",
                "Writes not sent because the sharder no longer led.",
                stats.writes_skipped,
            ),
        ];
        for (metric, help, value) in counters {
            encode_each(&mut encoder, metric, help, &[(ring(), counter(value))])?;
        }
        Ok(())
    }
}

/// The metrics of one work queue, registered under the label `name`.
#[derive(Debug)]
pub struct WorkQueueMetrics {
    adds: Counter,
    depth: Gauge,
    retries: Counter,
    queue_duration: Histogram,
    work_duration: Histogram,
}

impl WorkQueueMetrics {
    /// Registers the metrics of a queue called `name` (`workqueue_*{name="..."}`).
    pub fn register(registry: &mut Registry, name: &str) -> Arc<Self> {
        let metrics = Arc::new(Self {
            adds: Counter::default(),
            depth: Gauge::default(),
            retries: Counter::default(),
            // 1 µs to about 17 minutes, like client-go's 10^-8 .. 10^3 range.
            queue_duration: Histogram::new(exponential_buckets(1e-6, 4.0, 16)),
            work_duration: Histogram::new(exponential_buckets(1e-6, 4.0, 16)),
        });
        let registry = registry.sub_registry_with_label(("name".into(), name.to_owned().into()));
        registry.register("workqueue_adds", "Items added.", metrics.adds.clone());
        registry.register("workqueue_depth", "Items waiting.", metrics.depth.clone());
        registry.register(
            "workqueue_retries",
            "Items added back with a rate limit.",
            metrics.retries.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long items waited before a worker took them.",
            metrics.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long workers took to process items.",
            metrics.work_duration.clone(),
        );
        metrics
    }
}

impl QueueMetrics for WorkQueueMetrics {
    fn added(&self) {
        self.adds.inc();
        self.depth.inc();
    }

    fn taken(&self, waited: Duration) {
        self.depth.dec();
        self.queue_duration.observe(waited.as_secs_f64());
    }

    fn done(&self, worked: Duration) {
        self.work_duration.observe(worked.as_secs_f64());
    }

    fn retried(&self) {
        self.retries.inc();
    }
}

/// The metrics of one controller, registered under the label `controller`
/// (controller-runtime's `controller_runtime_*` names).
#[derive(Debug)]
pub struct ControllerMetrics {
    reconciles: Family<Vec<(&'static str, &'static str)>, Counter>,
    errors: Counter,
    panics: Counter,
    reconcile_time: Histogram,
    active_workers: Gauge,
    max_concurrent: Gauge,
    own_write_waits: Family<Vec<(&'static str, &'static str)>, Counter>,
    own_write_wait_time: Histogram,
    own_writes_skipped: Counter,
}

impl ControllerMetrics {
    /// Registers the metrics of a controller called `name`.
    pub fn register(registry: &mut Registry, name: &str) -> Arc<Self> {
        let metrics = Arc::new(Self {
            reconciles: Family::default(),
            errors: Counter::default(),
            panics: Counter::default(),
            // 1 ms to about 4.6 hours.
            reconcile_time: Histogram::new(exponential_buckets(1e-3, 4.0, 12)),
            active_workers: Gauge::default(),
            max_concurrent: Gauge::default(),
            own_write_waits: Family::default(),
            // 1 ms to about 16 s.
            own_write_wait_time: Histogram::new(exponential_buckets(1e-3, 2.0, 15)),
            own_writes_skipped: Counter::default(),
        });
        let registry = registry.sub_registry_with_label(("controller".into(), name.to_owned().into()));
        registry.register(
            "controller_runtime_reconcile",
            "Reconciles, by result (success, error, panic).",
            metrics.reconciles.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Reconciles that returned an error.",
            metrics.errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_panics",
            "Reconciles or error policies that panicked.",
            metrics.panics.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "How long reconciles took.",
            metrics.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Reconciles running now.",
            metrics.active_workers.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "The most reconciles the controller runs at once.",
            metrics.max_concurrent.clone(),
        );
        registry.register(
            "controller_own_write_waits",
            "Reconciles held back until the caches saw the previous reconcile's writes, by how the wait ended (caught_up, timed_out).",
            metrics.own_write_waits.clone(),
        );
        registry.register(
            "controller_own_write_wait_seconds",
            "How long reconciles were held back for their own writes.",
            metrics.own_write_wait_time.clone(),
        );
        registry.register(
            "controller_own_writes_skipped",
            "Writes not waited for: a resource version that is not an integer.",
            metrics.own_writes_skipped.clone(),
        );
        metrics
    }
}

impl ReconcileMetrics for ControllerMetrics {
    fn reconciled(&self, outcome: ReconcileOutcome, duration: Duration) {
        self.reconciles
            .get_or_create(&vec![("result", outcome.as_str())])
            .inc();
        match outcome {
            ReconcileOutcome::Success => {}
            ReconcileOutcome::Error => drop(self.errors.inc()),
            ReconcileOutcome::Panic => drop(self.panics.inc()),
        }
        self.reconcile_time.observe(duration.as_secs_f64());
    }

    fn worker_active(&self, active: bool) {
        if active {
            self.active_workers.inc();
        } else {
            self.active_workers.dec();
        }
    }

    fn concurrency(&self, concurrency: usize) {
        self.max_concurrent.set(clamp(concurrency));
    }

    fn own_write_wait(&self, outcome: OwnWriteWait, waited: Duration) {
        self.own_write_waits
            .get_or_create(&vec![("result", outcome.as_str())])
            .inc();
        self.own_write_wait_time.observe(waited.as_secs_f64());
    }

    fn own_write_skipped(&self) {
        self.own_writes_skipped.inc();
    }
}

/// Registers the metrics of `controller` (named by
/// [`Controller::name`](crate::controller::Controller::name)): its reconciles
/// ([`ControllerMetrics`]) and its work queue ([`WorkQueueMetrics`], `workqueue_*` with the
/// controller's name). Call it after naming the controller.
///
/// ```
/// use informer_runtime::{controller::Controller, metrics::register_controller};
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use prometheus_client::registry::Registry;
///
/// fn build(factory: &informer_runtime::SharedInformerFactory, registry: &mut Registry) -> Controller<ConfigMap> {
///     register_controller(registry, Controller::new(factory).name("config-rollout"))
/// }
/// ```
pub fn register_controller<K: TypedResource>(
    registry: &mut Registry,
    controller: Controller<K>,
) -> Controller<K> {
    let name = controller.controller_name().to_owned();
    let queue = WorkQueueMetrics::register(registry, &name);
    let reconciles = ControllerMetrics::register(registry, &name);
    if controller.is_sharded() {
        registry.register_collector(Box::new(ShardedControllerCollector {
            name: name.clone(),
            stats: controller.stats(),
        }));
    }
    controller.metrics(queue, reconciles)
}

/// A sharded controller's hand-overs, read from its [`ControllerStats`] at each scrape.
#[derive(Debug)]
struct ShardedControllerCollector {
    name: String,
    stats: crate::controller::ControllerStats,
}

impl Collector for ShardedControllerCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), fmt::Error> {
        let labels = || vec![("controller", self.name.clone())];
        encode_each(
            &mut encoder,
            "controller_sharding_drains_acknowledged",
            "Drained objects the controller let go of (their shard and drain labels removed) instead of reconciling them.",
            &[(labels(), counter(self.stats.drains_acknowledged()))],
        )?;
        encode_each(
            &mut encoder,
            "controller_sharding_not_assigned",
            "Objects not reconciled because they are assigned to another shard (or to none).",
            &[(labels(), counter(self.stats.not_assigned()))],
        )
    }
}

/// Registers the counter of a shard's drain sweep (the drains it acknowledged for objects no
/// controller of its manager sees), labelled with the shard and its ring.
pub(crate) fn register_drain_sweep(registry: &mut Registry, sweep: Arc<crate::sharding::DrainSweep>) {
    registry.register_collector(Box::new(DrainSweepCollector { sweep }));
}

struct DrainSweepCollector {
    sweep: Arc<crate::sharding::DrainSweep>,
}

impl fmt::Debug for DrainSweepCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DrainSweepCollector").finish_non_exhaustive()
    }
}

impl Collector for DrainSweepCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), fmt::Error> {
        let labels = vec![
            ("controllerring", self.sweep.ring().to_owned()),
            ("shard", self.sweep.shard_name().to_owned()),
        ];
        encode_each(
            &mut encoder,
            "controller_sharding_shard_drains_released",
            "Drained objects outside every controller's scope that the shard let go of.",
            &[(labels, counter(self.sweep.acknowledged()))],
        )
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::ObjectMeta;
    use prometheus_client::encoding::text::encode;

    use super::*;
    use crate::{
        informer::SharedIndexInformer, informer::handler::EventHandlerFuncs, source::ListerWatcher,
        testing::FakeControllerSource,
    };

    fn client() -> kube::Client {
        let url = "http://127.0.0.1:9".parse().expect("url");
        kube::Client::try_from(kube::Config::new(url)).expect("client")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn factory_metrics_describe_each_informer_and_handler() {
        let source = Arc::new(FakeControllerSource::<Pod>::new());
        source.add(Pod {
            metadata: ObjectMeta {
                name: Some("p".into()),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        });
        let factory = SharedInformerFactory::new(client());
        let pods = factory
            .informer_for::<Pod>(|_| {
                SharedIndexInformer::from_arc(
                    Arc::clone(&source) as Arc<dyn ListerWatcher<Pod>>,
                    crate::informer::Config {
                        description: Some("pods".into()),
                        ..crate::informer::Config::default()
                    },
                )
            })
            .expect("the factory's first pod informer");
        pods.add_event_handler(EventHandlerFuncs::new()).expect("added");
        pods.set_transform(|_: &mut Pod| panic!("transform bug"))
            .expect("set before start");
        let mut registry = Registry::default();
        register_factory(&mut registry, &factory);
        factory.start();
        assert!(
            factory
                .wait_for_cache_sync_timeout(Duration::from_secs(10))
                .await
                .all_synced()
        );
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while pods.stats().handlers[0].handled == 0 {
            assert!(tokio::time::Instant::now() < deadline, "handler never ran");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }

        let mut text = String::new();
        encode(&mut text, &registry).expect("encodable");
        for line in [
            "informer_lists_total{informer=\"pods\"} 1",
            "informer_relists_total{informer=\"pods\"} 0",
            "informer_store_objects{informer=\"pods\"} 1",
            "informer_synced{informer=\"pods\"} 1",
            "informer_last_resource_version{informer=\"pods\"} 1",
            "informer_handler_backlog{informer=\"pods\",handler=\"0\"} 0",
            "informer_handler_handled_total{informer=\"pods\",handler=\"0\"} 1",
            "informer_handler_panics_total{informer=\"pods\",handler=\"0\"} 0",
            "informer_stopped{informer=\"pods\"} 0",
            "informer_user_function_panics_total{informer=\"pods\",function=\"transform\"} 1",
            "informer_user_function_panics_total{informer=\"pods\",function=\"index_function\"} 0",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        factory.shutdown().await;
    }

    #[tokio::test(start_paused = true)]
    async fn work_queue_metrics_count_and_time() {
        let mut registry = Registry::default();
        let metrics = WorkQueueMetrics::register(&mut registry, "q");
        let queue = crate::workqueue::WorkQueue::with_metrics(Arc::clone(&metrics) as Arc<dyn QueueMetrics>);
        queue.add("a");
        queue.add("b");
        tokio::time::sleep(Duration::from_millis(3)).await;
        let a = queue.get().await.expect("a");
        queue.done(&a);
        let mut text = String::new();
        encode(&mut text, &registry).expect("encodable");
        for line in [
            "workqueue_adds_total{name=\"q\"} 2",
            "workqueue_depth{name=\"q\"} 1",
            "workqueue_queue_duration_seconds_count{name=\"q\"} 1",
            "workqueue_work_duration_seconds_count{name=\"q\"} 1",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
    }

    #[tokio::test]
    async fn sharder_metrics_are_labelled_with_the_ring() -> Result<(), Box<dyn std::error::Error>> {
        use k8s_openapi::api::core::v1::ConfigMap;

        use crate::sharding::{ControllerRing, RingResource, Sharder};

        let ring = ControllerRing::new("web")?.resource(RingResource::of::<ConfigMap>())?;
        let sharder = Sharder::new(client(), ring)?;
        let mut registry = Registry::default();
        register_sharder(&mut registry, &sharder);
        let mut text = String::new();
        encode(&mut text, &registry)?;
        for line in [
            "controller_sharding_ring_shards_available{controllerring=\"web\"} 0",
            "controller_sharding_assignments_total{controllerring=\"web\"} 0",
            "controller_sharding_drains_total{controllerring=\"web\"} 0",
            "controller_sharding_lease_acquisitions_total{controllerring=\"web\"} 0",
        ] {
            assert!(text.contains(line), "missing {line:?} in:\n{text}");
        }
        Ok(())
    }

    #[test]
    fn controller_metrics_count_waits_for_own_writes_by_result() -> Result<(), fmt::Error> {
        let mut registry = Registry::default();
        let metrics = ControllerMetrics::register(&mut registry, "creator");
        metrics.own_write_wait(OwnWriteWait::CaughtUp, Duration::from_millis(800));
        metrics.own_write_wait(OwnWriteWait::TimedOut, Duration::from_secs(5));
        metrics.own_write_skipped();
        let mut text = String::new();
        encode(&mut text, &registry)?;
        for line in [
            "controller_own_write_waits_total{controller=\"creator\",result=\"caught_up\"} 1",
            "controller_own_write_waits_total{controller=\"creator\",result=\"timed_out\"} 1",
            "controller_own_write_wait_seconds_count{controller=\"creator\"} 2",
            "controller_own_writes_skipped_total{controller=\"creator\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in:\n{text}");
        }
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn controller_metrics_count_reconciles_by_result() -> Result<(), Box<dyn std::error::Error>> {
        use k8s_openapi::api::core::v1::ConfigMap;

        use crate::controller::Action;

        let server = informer_testserver::TestServer::start().await?;
        for name in ["fine", "broken"] {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some(name.into());
            cm.metadata.namespace = Some("default".into());
            server.create_typed(&cm)?;
        }
        let factory = SharedInformerFactory::new(server.client()?);
        let mut registry = Registry::default();
        let shutdown = tokio_util::sync::CancellationToken::new();
        let controller =
            register_controller(&mut registry, Controller::<ConfigMap>::new(&factory).name("cms"))
                // the panic's retry comes after the counts are read, not during
                .rate_limiter(crate::workqueue::ItemExponentialFailureRateLimiter::new(
                    Duration::from_secs(3600),
                    Duration::from_secs(3600),
                ))
                .graceful_shutdown_on(shutdown.clone().cancelled_owned());
        let stats = controller.stats();
        let run = tokio::spawn(controller.run(
            |cm: Arc<ConfigMap>, _: Arc<()>| async move {
                if cm.metadata.name.as_deref() == Some("broken") {
                    panic!("reconcile bug");
                }
                Ok::<_, std::fmt::Error>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            Arc::new(()),
        ));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while stats.panics() == 0 || stats.reconciles() < 2 {
            assert!(tokio::time::Instant::now() < deadline, "no reconciles: {stats:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut text = String::new();
        encode(&mut text, &registry).expect("encodable");
        for line in [
            "controller_runtime_reconcile_total{controller=\"cms\",result=\"success\"} 1",
            "controller_runtime_reconcile_panics_total{controller=\"cms\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"cms\"} 0",
            "controller_runtime_max_concurrent_reconciles{controller=\"cms\"} 1",
            "controller_runtime_reconcile_time_seconds_count{controller=\"cms\"}",
            "workqueue_adds_total{name=\"cms\"}",
            "workqueue_retries_total{name=\"cms\"}",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        shutdown.cancel();
        run.await??;
        factory.shutdown().await;
        Ok(())
    }
}
