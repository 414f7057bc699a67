//! Runs a schedule against a fresh test server and informers over `kube::Client`, then checks
//! every invariant.
//!
//! A run starts an `informer-testserver` with the schedule's history size and a proxy in front
//! of it that resets watch connections on demand, creates the setup objects, and builds three
//! factories on one client through the proxy: one over all namespaces (pods and config maps),
//! one restricted to the first namespace, one with the label selector `tier=front`. Every
//! informer gets a recording handler, a transform and a tier index that panic on objects
//! annotated for it; the cluster-wide pod informer also gets a handler that blocks or panics on
//! demand. Informers back off quickly (20 ms doubling to 400 ms) so a run takes under
//! a second, and their requests are traced for failure reports. `has_synced` of every informer
//! and registration is sampled every 5 ms by a background task and after every step.
//!
//! After the last step the run clears the faults and waits until every store equals the
//! server's objects in its scope and every handler caught up with a replay equal to the store
//! (polling every 20 ms, for at most [`RunOptions::quiesce_deadline`], [`QUIESCE_DEADLINE`] by
//! default); then it shuts everything down and checks that no task, handler thread or watch is
//! left.

use std::{
    collections::BTreeMap,
    fmt,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use informer_runtime::{
    ObjectKey,
    cache::namespace_indexers,
    factory::SharedInformerFactory,
    informer::{self, InformerStats, Registration, SharedIndexInformer},
    reflector::{self, InitialListStrategy, backoff},
    source::{ApiScope, KubeListerWatcher},
};
use informer_testserver::{Failure, ResetProxy, ResourceType, TestServer};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::{
    Resource,
    core::{NamespaceResourceScope, ObjectMeta},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{
    invariants::{Invariant, State, SyncedTracker, Violation, compare_states, replay},
    recorder::{
        DELIBERATE_PANIC, HandlerCensus, Misbehaviour, NotificationLog, RecordingHandler,
        silence_deliberate_panics,
    },
    request_trace::{RequestTrace, TracedListerWatcher},
    schedule::{
        InformerId, Kind, NAMESPACES, OTHER_TIER, POISON_ANNOTATION, Poison, REVISION_ANNOTATION,
        SELECTED_TIER, Schedule, Settings, Step, TIER_LABEL,
    },
};

/// How long a run waits for every informer and handler to converge after the last step.
pub const QUIESCE_DEADLINE: Duration = Duration::from_secs(10);

/// How often convergence is checked while quiescing.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// How often `has_synced` is sampled in the background.
const SAMPLE_INTERVAL: Duration = Duration::from_millis(5);

/// How long shutdown, the closing of watches and the end of tasks may take.
const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(10);

/// The server's bookmark interval: often enough that bookmarks happen within a run.
const BOOKMARK_INTERVAL: Duration = Duration::from_millis(150);

/// How long watches failing with 500 are re-opened at once when the schedule asks for it.
const INTERNAL_ERROR_RETRY: Duration = Duration::from_secs(2);

/// The label every workload object carries besides the tier.
const APP_LABEL: (&str, &str) = ("app", "fault-suite");

/// The objects a run caches: namespaced built-in types with value equality.
pub trait CachedObject:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + PartialEq
    + fmt::Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> CachedObject for K where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + PartialEq
        + fmt::Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// What one run did, for the campaign's summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunReport {
    /// Steps run, by category.
    pub categories: BTreeMap<String, usize>,
    /// Successful lists of every informer (initial ones included).
    pub lists: u64,
    /// Lists after the first.
    pub relists: u64,
    /// Failed lists.
    pub list_errors: u64,
    /// Watches opened.
    pub watches: u64,
    /// Watches that failed.
    pub watch_errors: u64,
    /// Errors reported through the factories' watch-error hooks.
    pub reported_errors: usize,
    /// Notifications received by every handler.
    pub notifications: usize,
    /// Deletions received as tombstones.
    pub tombstones: usize,
    /// Handler calls that panicked on purpose.
    pub handler_panics: u64,
    /// Transform and index function calls that panicked on purpose.
    pub user_code_panics: u64,
    /// Registrations added while informers ran.
    pub late_registrations: usize,
    /// How long the informers took to converge after the last step.
    pub quiesce: Duration,
    /// The whole run.
    pub elapsed: Duration,
}

/// How long a run waits for convergence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// How long after the last step every informer and handler must have converged.
    pub quiesce_deadline: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            quiesce_deadline: QUIESCE_DEADLINE,
        }
    }
}

/// Runs `schedule` from a fresh server; the first broken invariant, if any.
pub async fn run_schedule(schedule: &Schedule) -> Result<RunReport, Violation> {
    run_schedule_with(schedule, RunOptions::default()).await
}

/// Runs `schedule` from a fresh server with `options`; the first broken invariant, if any.
pub async fn run_schedule_with(schedule: &Schedule, options: RunOptions) -> Result<RunReport, Violation> {
    silence_deliberate_panics();
    let started = Instant::now();
    let tasks_before = tokio::runtime::Handle::current().metrics().num_alive_tasks();
    let server = TestServer::builder()
        .history_size(schedule.settings.history_size)
        .bookmark_interval(BOOKMARK_INTERVAL)
        .start()
        .await
        .expect("the test server starts");
    crate::create_namespaces(&server, NAMESPACES);
    server.register(ResourceType::new(
        "fault.example.com",
        "v1",
        Kind::ConfigMirrors.api_kind(),
        Kind::ConfigMirrors.plural(),
        true,
    ));
    let mut revision = 0;
    for step in &schedule.setup {
        if step.is_workload() {
            apply_workload(&server, step, &mut revision);
        }
    }
    let proxy = ResetProxy::start(server.addr()).await.expect("the proxy starts");
    let client = proxy.client().expect("a client through the proxy");
    let mut world = World::new(client, schedule);
    let sampler = world.start_sampler();
    world.start();
    let outcome = world.run(&server, &proxy, schedule, &mut revision, options).await;
    sampler.stop().await;
    let protobuf_watches = server
        .requests()
        .iter()
        .filter(|r| r.verb == "watch")
        .map(|r| r.accept.starts_with(informer_runtime::protobuf::MEDIA_TYPE))
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(
        protobuf_watches.len(),
        2,
        "the informers watch in protobuf and in JSON (protobuf: {protobuf_watches:?})"
    );
    let outcome = outcome.and_then(|report| world.synced.violation().map_or(Ok(report), Err));
    let shutdown = world.shut_down(&server).await;
    drop(world);
    proxy.shutdown().await;
    server.shutdown().await;
    let report = outcome.and_then(|report| shutdown.map(|()| report))?;
    tasks_end(tasks_before).await?;
    Ok(RunReport {
        categories: schedule.category_counts(),
        elapsed: started.elapsed(),
        ..report
    })
}

/// Waits until the runtime has no more tasks than before the run.
async fn tasks_end(before: usize) -> Result<(), Violation> {
    let metrics = tokio::runtime::Handle::current().metrics();
    let deadline = Instant::now() + SHUTDOWN_DEADLINE;
    while metrics.num_alive_tasks() > before {
        if Instant::now() >= deadline {
            return Err(Violation::new(
                Invariant::ShutdownEndsEverything,
                format!(
                    "{} tasks still alive {SHUTDOWN_DEADLINE:?} after shutdown (expected at most {before})",
                    metrics.num_alive_tasks()
                ),
            ));
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
    Ok(())
}

/// The name of object `index` of `kind`.
pub fn object_name(kind: Kind, index: u8) -> String {
    match kind {
        Kind::Pods => format!("pod-{index}"),
        Kind::ConfigMaps | Kind::ConfigMirrors => format!("cm-{index}"),
    }
}

fn tier(front: bool) -> &'static str {
    if front { SELECTED_TIER } else { OTHER_TIER }
}

/// The object a `Create` step writes.
fn new_object(kind: Kind, namespace: &str, name: &str, front: bool) -> Value {
    let metadata = json!({
        "name": name,
        "namespace": namespace,
        "labels": {TIER_LABEL: tier(front), APP_LABEL.0: APP_LABEL.1},
    });
    match kind {
        Kind::Pods => json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": {"containers": [{"name": "main", "image": "nginx"}]},
        }),
        Kind::ConfigMaps => json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata,
            "data": {"payload": "initial"},
        }),
        Kind::ConfigMirrors => json!({
            "apiVersion": Kind::ConfigMirrors.api_version(),
            "kind": "ConfigMirror",
            "metadata": metadata,
            "spec": {"payload": "initial", "sizes": [1, 2, 3]},
        }),
    }
}

/// A custom resource that mirrors each config map, read over CBOR by its own informer.
pub mod mirror {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The spec of a `ConfigMirror`.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "fault.example.com",
        version = "v1",
        kind = "ConfigMirror",
        namespaced,
        derive = "PartialEq"
    )]
    pub struct ConfigMirrorSpec {
        /// A payload.
        pub payload: String,
        /// Some numbers.
        #[serde(default)]
        pub sizes: Vec<u32>,
    }
}

/// Makes the server fail the requests a `Fail` or `Throttle` step names.
fn fail(server: &TestServer, step: &Step) {
    match *step {
        Step::Fail {
            code,
            verb,
            kind,
            times,
        } => server.fail_next(
            Failure::new(code)
                .verb(verb.as_str())
                .resource(kind.plural())
                .times(times),
        ),
        Step::Throttle { verb, kind } => server.fail_next(
            Failure::new(429)
                .verb(verb.as_str())
                .resource(kind.plural())
                .retry_after(1),
        ),
        _ => {}
    }
}

/// The same step on the config map mirror, for a step on a config map.
fn mirrored(step: &Step) -> Option<Step> {
    let mut mirrored = *step;
    let kind = match &mut mirrored {
        Step::Create { kind, .. }
        | Step::Update { kind, .. }
        | Step::Relabel { kind, .. }
        | Step::Poison { kind, .. }
        | Step::Delete { kind, .. }
        | Step::Fail { kind, .. }
        | Step::Throttle { kind, .. } => kind,
        _ => return None,
    };
    if *kind != Kind::ConfigMaps {
        return None;
    }
    *kind = Kind::ConfigMirrors;
    Some(mirrored)
}

/// Applies a workload step through the server's Rust API (so faults never hit the workload);
/// a step that no longer applies (the object is missing, or already exists) is skipped.
fn apply_workload(server: &TestServer, step: &Step, revision: &mut u64) {
    if let Some(mirrored) = mirrored(step) {
        apply_workload(server, &mirrored, &mut revision.clone());
    }
    let target = |kind: Kind, namespace: u8, name: u8| {
        (
            kind,
            NAMESPACES[usize::from(namespace) % NAMESPACES.len()],
            object_name(kind, name),
        )
    };
    let result = match *step {
        Step::Create {
            kind,
            namespace,
            name,
            front,
        } => {
            let (kind, namespace, name) = target(kind, namespace, name);
            server.create(new_object(kind, namespace, &name, front)).map(drop)
        }
        Step::Update {
            kind,
            namespace,
            name,
        } => {
            let (kind, namespace, name) = target(kind, namespace, name);
            *revision += 1;
            let revision = revision.to_string();
            server
                .get(kind.api_version(), kind.api_kind(), Some(namespace), &name)
                .and_then(|mut object| {
                    object["metadata"]["annotations"][REVISION_ANNOTATION] = json!(revision);
                    server.update(object).map(drop)
                })
        }
        Step::Relabel {
            kind,
            namespace,
            name,
            front,
        } => {
            let (kind, namespace, name) = target(kind, namespace, name);
            server
                .get(kind.api_version(), kind.api_kind(), Some(namespace), &name)
                .and_then(|mut object| {
                    object["metadata"]["labels"][TIER_LABEL] = json!(tier(front));
                    server.update(object).map(drop)
                })
        }
        Step::Poison {
            kind,
            namespace,
            name,
            poison,
        } => {
            let (kind, namespace, name) = target(kind, namespace, name);
            server
                .get(kind.api_version(), kind.api_kind(), Some(namespace), &name)
                .and_then(|mut object| {
                    match poison.annotation_value() {
                        Some(value) => object["metadata"]["annotations"][POISON_ANNOTATION] = json!(value),
                        None => {
                            if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
                                annotations.remove(POISON_ANNOTATION);
                            }
                        }
                    }
                    server.update(object).map(drop)
                })
        }
        Step::Delete {
            kind,
            namespace,
            name,
        } => {
            let (kind, namespace, name) = target(kind, namespace, name);
            server
                .delete(kind.api_version(), kind.api_kind(), Some(namespace), &name)
                .map(drop)
        }
        _ => Ok(()),
    };
    if let Err(error) = result {
        assert!(
            matches!(error.reason.as_str(), "NotFound" | "AlreadyExists"),
            "the workload step {step:?} failed: {error}"
        );
    }
}

/// The backoff of a run's informers: client-go's shape, compressed so a run stays short.
fn fast_backoff(seed: u64, id: InformerId) -> backoff::Config {
    backoff::Config {
        initial: Duration::from_millis(20),
        max: Duration::from_millis(400),
        factor: 2.0,
        jitter: true,
        reset_after: Duration::from_secs(2),
        jitter_seed: Some(seed.wrapping_mul(31).wrapping_add(id as u64)),
    }
}

/// How long the informers' requests wait for a response to start: far above the slowest
/// response a schedule asks for (120 ms), far below the default, so that a request left
/// unanswered is given up on within a run.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// The index of every informer by tier label, whose function panics on objects poisoned with
/// [`Poison::IndexFunction`].
pub const TIER_INDEX: &str = "tier";

/// Whether `meta` is poisoned with `poison`.
fn poisoned(meta: &ObjectMeta, poison: Poison) -> bool {
    let value = meta.annotations.as_ref().and_then(|a| a.get(POISON_ANNOTATION));
    value.map(String::as_str) == poison.annotation_value()
}

/// The tier index: the tier label's value; panics on poisoned objects.
fn tier_index<K: CachedObject>(object: &K) -> Vec<String> {
    assert!(
        !poisoned(object.meta(), Poison::IndexFunction),
        "{DELIBERATE_PANIC}"
    );
    let labels = object.meta().labels.as_ref();
    labels
        .and_then(|l| l.get(TIER_LABEL))
        .cloned()
        .into_iter()
        .collect()
}

/// The informer of `K` in `factory`, scoped by the factory, configured by the schedule; its
/// transform and its tier index panic on poisoned objects.
fn scoped_informer<K: CachedObject>(
    factory: &SharedInformerFactory,
    id: InformerId,
    schedule: &Schedule,
    trace: &Arc<RequestTrace>,
) -> SharedIndexInformer<K> {
    let Settings {
        streaming_list,
        page_size,
        retry_internal_errors,
        ..
    } = schedule.settings;
    let streams = streaming_list && matches!(id, InformerId::NamespacedPods | InformerId::SelectedPods);
    factory
        .informer_for::<K>(|context| {
            let api = <K::Scope as ApiScope>::api::<K>(context.client().clone(), context.namespace());
            let lister_watcher = TracedListerWatcher::new(
                KubeListerWatcher::new(api)
                    .shared_tweak_list_options(context.tweak_list_options())
                    .encoding(context.encoding())
                    .response_timeout(RESPONSE_TIMEOUT),
                Arc::clone(trace),
            );
            let mut indexers = namespace_indexers();
            indexers.insert(TIER_INDEX.into(), Arc::new(tier_index::<K>));
            let informer = SharedIndexInformer::new(
                lister_watcher,
                informer::Config {
                    resync_period: context.resync_period(),
                    indexers,
                    reflector: reflector::Config {
                        page_size,
                        backoff: fast_backoff(schedule.seed, id),
                        max_internal_error_retry_duration: if retry_internal_errors {
                            INTERNAL_ERROR_RETRY
                        } else {
                            Duration::ZERO
                        },
                        initial_list_strategy: if streams {
                            InitialListStrategy::StreamingList
                        } else {
                            InitialListStrategy::ListWatch
                        },
                        ..reflector::Config::default()
                    },
                    description: Some(K::plural(&()).into_owned()),
                },
            );
            informer
                .set_transform(|object: &mut K| {
                    assert!(!poisoned(object.meta(), Poison::Transform), "{DELIBERATE_PANIC}");
                })
                .expect("a new informer takes a transform");
            informer
        })
        .expect("each informer of a schedule is created once")
}

/// One registered recording handler.
struct Recorded<K> {
    name: String,
    log: Arc<NotificationLog<K>>,
    registration: Arc<Registration<K>>,
    misbehaviour: Option<Arc<Misbehaviour>>,
}

/// An informer with its scope and recording handlers.
struct Observed<K> {
    id: InformerId,
    informer: SharedIndexInformer<K>,
    handlers: Mutex<Vec<Recorded<K>>>,
    trace: Arc<RequestTrace>,
}

/// What a run does with an informer without knowing its type.
trait Observe: Send + Sync {
    fn id(&self) -> InformerId;
    fn register(
        &self,
        name: String,
        census: &HandlerCensus,
        synced: &SyncedTracker,
        misbehaviour: Option<Arc<Misbehaviour>>,
    );
    fn check_notifications(&self) -> Result<(), Violation>;
    fn check_converged(&self, server: &TestServer) -> Result<(), Violation>;
    fn check_panics(&self, reported: &BTreeMap<String, u64>) -> Result<(), Violation>;
    fn stats(&self) -> InformerStats;
    fn notifications(&self) -> (usize, usize);
    fn is_stopped(&self) -> bool;
    fn requests(&self) -> String;
}

impl<K> Observed<K> {
    fn handlers(&self) -> MutexGuard<'_, Vec<Recorded<K>>> {
        self.handlers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: CachedObject> Observed<K> {
    /// The server's objects in this informer's scope.
    fn server_state(&self, server: &TestServer) -> State<K> {
        let kind = self.id.kind();
        let objects = server
            .list(kind.api_version(), kind.api_kind(), self.id.namespace())
            .expect("the server lists its objects");
        objects
            .into_iter()
            .filter(|object| {
                !self.id.selects_tier() || object["metadata"]["labels"][TIER_LABEL] == SELECTED_TIER
            })
            .map(|object| {
                let object: K = serde_json::from_value(object).expect("the server's objects decode");
                (ObjectKey::of(&object), Arc::new(object))
            })
            .collect()
    }

    fn store_state(&self) -> State<K> {
        self.informer
            .store()
            .list()
            .into_iter()
            .map(|object| (ObjectKey::of(object.as_ref()), object))
            .collect()
    }

    /// Every panic of the transform and the tier index was counted and reported, and a
    /// poisoned object in the store means its function did panic.
    fn check_user_code_panics(&self, reported: &BTreeMap<String, u64>) -> Result<(), Violation> {
        let counted = self.informer.stats().panics;
        let reported = reported.get(&self.hook_name()).copied().unwrap_or(0);
        let violation = |details: String| {
            Violation::new(
                Invariant::PanicsCounted,
                format!("informer \"{}\": {details}", self.id.name()),
            )
        };
        if counted.total() != reported {
            return Err(violation(format!(
                "{counted:?} counted, {reported} reported to the watch-error handler"
            )));
        }
        if counted.watch_error_handler + counted.lister_watcher > 0 {
            return Err(violation(format!("panics nobody raised: {counted:?}")));
        }
        let store = self.store_state();
        for (poison, count) in [
            (Poison::Transform, counted.transform),
            (Poison::IndexFunction, counted.index_functions),
        ] {
            if count == 0
                && let Some(key) = store
                    .iter()
                    .find(|(_, o)| poisoned(o.meta(), poison))
                    .map(|(k, _)| k)
            {
                return Err(violation(format!(
                    "{key} is cached poisoned with {poison:?}, but no panic was counted"
                )));
            }
        }
        Ok(())
    }

    /// The tier index holds every cached object under its tier, except those whose index
    /// function panics.
    fn check_tier_index(&self, store: &State<K>) -> Result<(), Violation> {
        for tier in [SELECTED_TIER, OTHER_TIER] {
            let expected: Vec<ObjectKey> = store
                .iter()
                .filter(|(_, o)| {
                    let labels = o.meta().labels.as_ref();
                    !poisoned(o.meta(), Poison::IndexFunction)
                        && labels.and_then(|l| l.get(TIER_LABEL)).map(String::as_str) == Some(tier)
                })
                .map(|(key, _)| key.clone())
                .collect();
            let indexed = self
                .informer
                .store()
                .index_keys(TIER_INDEX, tier)
                .expect("the tier index exists");
            if indexed != expected {
                return Err(Violation::new(
                    Invariant::IndexMatchesStore,
                    format!(
                        "informer \"{}\": tier index {tier:?} holds {indexed:?}, the store {expected:?}",
                        self.id.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The name the factory's watch-error hook gives this informer.
    fn hook_name(&self) -> String {
        format!("{} {}", self.id.factory_scope(), K::plural(&()))
    }

    fn place(&self, handler: &str) -> String {
        format!("informer \"{}\", handler \"{handler}\"", self.id.name())
    }
}

impl<K: CachedObject> Observe for Observed<K> {
    fn id(&self) -> InformerId {
        self.id
    }

    fn register(
        &self,
        name: String,
        census: &HandlerCensus,
        synced: &SyncedTracker,
        misbehaviour: Option<Arc<Misbehaviour>>,
    ) {
        let log = Arc::new(NotificationLog::default());
        let handler = RecordingHandler::new(Arc::clone(&log), census, misbehaviour.clone());
        let registration = Arc::new(
            self.informer
                .add_event_handler(handler)
                .expect("handlers can be added to a running informer"),
        );
        let probe = Arc::clone(&registration);
        synced.watch(self.place(&name), move || probe.has_synced());
        self.handlers().push(Recorded {
            name,
            log,
            registration,
            misbehaviour,
        });
    }

    fn check_notifications(&self) -> Result<(), Violation> {
        for handler in self.handlers().iter() {
            replay(&handler.log.snapshot()).map_err(|details| {
                Violation::new(
                    Invariant::NotificationsConsistent,
                    format!("{}: {details}", self.place(&handler.name)),
                )
            })?;
        }
        Ok(())
    }

    fn check_converged(&self, server: &TestServer) -> Result<(), Violation> {
        let store = self.store_state();
        compare_states(&self.server_state(server), &store).map_err(|difference| {
            Violation::new(
                Invariant::StoreMatchesServer,
                format!(
                    "informer \"{}\": server (expected) vs store (actual): {difference}",
                    self.id.name()
                ),
            )
        })?;
        self.check_tier_index(&store)?;
        if !self.informer.has_synced() {
            return Err(Violation::new(
                Invariant::RegistrationsSync,
                format!("informer \"{}\" has not synced", self.id.name()),
            ));
        }
        for handler in self.handlers().iter() {
            let registration = &handler.registration;
            let received = handler.log.len();
            let finished = registration.handled() + registration.panics();
            if registration.backlog() > 0 || finished != received as u64 {
                return Err(Violation::new(
                    Invariant::RegistrationsSync,
                    format!(
                        "{}: backlog {}, {finished} of {received} received notifications finished",
                        self.place(&handler.name),
                        registration.backlog()
                    ),
                ));
            }
            let replayed = replay(&handler.log.snapshot()).map_err(|details| {
                Violation::new(
                    Invariant::NotificationsConsistent,
                    format!("{}: {details}", self.place(&handler.name)),
                )
            })?;
            compare_states(&store, &replayed).map_err(|difference| {
                Violation::new(
                    Invariant::ReplayMatchesStore,
                    format!(
                        "{}: store (expected) vs replayed notifications (actual): {difference}",
                        self.place(&handler.name)
                    ),
                )
            })?;
            if !registration.has_synced() {
                return Err(Violation::new(
                    Invariant::RegistrationsSync,
                    format!("{}: the registration has not synced", self.place(&handler.name)),
                ));
            }
        }
        Ok(())
    }

    fn check_panics(&self, reported: &BTreeMap<String, u64>) -> Result<(), Violation> {
        self.check_user_code_panics(reported)?;
        for handler in self.handlers().iter() {
            let Some(misbehaviour) = &handler.misbehaviour else {
                continue;
            };
            let counted = handler.registration.panics();
            if counted != misbehaviour.panicked() {
                return Err(Violation::new(
                    Invariant::PanicsCounted,
                    format!(
                        "{}: panicked {} times, the runtime counted {counted}",
                        self.place(&handler.name),
                        misbehaviour.panicked()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn stats(&self) -> InformerStats {
        self.informer.stats()
    }

    fn notifications(&self) -> (usize, usize) {
        self.handlers().iter().fold((0, 0), |(all, tombstones), handler| {
            (all + handler.log.len(), tombstones + handler.log.tombstones())
        })
    }

    fn is_stopped(&self) -> bool {
        self.informer.is_stopped()
    }

    fn requests(&self) -> String {
        self.trace.summary()
    }
}

/// The background task sampling `has_synced`.
struct Sampler {
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Sampler {
    async fn stop(self) {
        self.cancel.cancel();
        self.task.await.expect("the sampler does not panic");
    }
}

/// The informers of one run and what observes them.
struct World {
    factories: Vec<SharedInformerFactory>,
    observed: Vec<Arc<dyn Observe>>,
    census: HandlerCensus,
    synced: Arc<SyncedTracker>,
    misbehaviour: Arc<Misbehaviour>,
    reported_errors: Arc<Mutex<Vec<String>>>,
    /// Panics reported to each informer's watch-error hook, by `scope informer`.
    reported_panics: Arc<Mutex<BTreeMap<String, u64>>>,
    late_registrations: usize,
}

impl World {
    fn new(client: kube::Client, schedule: &Schedule) -> Self {
        let reported_errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let reported_panics: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
        let hook = |scope: &'static str| {
            let sink = Arc::clone(&reported_errors);
            let panics = Arc::clone(&reported_panics);
            move |informer: &str, error: &informer_runtime::reflector::Error| {
                if let informer_runtime::reflector::Error::Panicked(_) = error {
                    let mut panics = panics.lock().unwrap_or_else(PoisonError::into_inner);
                    *panics.entry(format!("{scope} {informer}")).or_insert(0) += 1;
                }
                sink.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(format!("{scope} {informer}: {error}"));
            }
        };
        // The cluster and selected informers read protobuf (the default), the namespaced ones
        // JSON: every schedule's faults meet both decoders.
        let cluster = SharedInformerFactory::builder(client.clone())
            .watch_error_handler(hook("cluster"))
            .build();
        let namespaced = SharedInformerFactory::builder(client.clone())
            .namespace(NAMESPACES[0])
            .encoding(informer_runtime::source::Encoding::Json)
            .watch_error_handler(hook("namespaced"))
            .build();
        // The config map mirrors, a custom resource, are read over CBOR.
        let cbor = SharedInformerFactory::builder(client.clone())
            .encoding(informer_runtime::source::Encoding::Cbor)
            .watch_error_handler(hook("cbor"))
            .build();
        let selected = SharedInformerFactory::builder(client)
            .tweak_list_options(|options| {
                options.label_selector = Some(format!("{TIER_LABEL}={SELECTED_TIER}"));
            })
            .watch_error_handler(hook("selected"))
            .build();
        let synced = Arc::new(SyncedTracker::default());
        let observed: Vec<Arc<dyn Observe>> = vec![
            observe::<Pod>(&cluster, InformerId::ClusterPods, schedule, &synced),
            observe::<ConfigMap>(&cluster, InformerId::ClusterConfigMaps, schedule, &synced),
            observe::<Pod>(&namespaced, InformerId::NamespacedPods, schedule, &synced),
            observe::<Pod>(&selected, InformerId::SelectedPods, schedule, &synced),
            observe::<mirror::ConfigMirror>(&cbor, InformerId::ClusterMirrors, schedule, &synced),
        ];
        let world = Self {
            factories: vec![cluster, namespaced, selected, cbor],
            observed,
            census: HandlerCensus::default(),
            synced,
            misbehaviour: Arc::new(Misbehaviour::default()),
            reported_errors,
            reported_panics,
            late_registrations: 0,
        };
        for observed in &world.observed {
            observed.register("recorder".into(), &world.census, &world.synced, None);
            if observed.id() == InformerId::ClusterPods {
                observed.register(
                    "faulty recorder".into(),
                    &world.census,
                    &world.synced,
                    Some(Arc::clone(&world.misbehaviour)),
                );
            }
        }
        world
    }

    fn start_sampler(&self) -> Sampler {
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (synced, cancel) = (Arc::clone(&self.synced), cancel.clone());
            async move {
                while !cancel.is_cancelled() {
                    synced.sample();
                    tokio::select! {
                        () = cancel.cancelled() => {}
                        () = tokio::time::sleep(SAMPLE_INTERVAL) => {}
                    }
                }
            }
        });
        Sampler { cancel, task }
    }

    fn start(&self) {
        for factory in &self.factories {
            factory.start();
        }
    }

    async fn run(
        &mut self,
        server: &TestServer,
        proxy: &ResetProxy,
        schedule: &Schedule,
        revision: &mut u64,
        options: RunOptions,
    ) -> Result<RunReport, Violation> {
        for step in &schedule.steps {
            self.apply(server, proxy, step, revision).await;
            self.synced.sample();
        }
        server.clear_faults();
        let quiesce_started = Instant::now();
        self.quiesce(server, options.quiesce_deadline).await?;
        let quiesce = quiesce_started.elapsed();
        let reported_panics = self
            .reported_panics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for observed in &self.observed {
            observed.check_panics(&reported_panics)?;
        }
        let mut report = RunReport {
            quiesce,
            late_registrations: self.late_registrations,
            handler_panics: self.misbehaviour.panicked(),
            reported_errors: self
                .reported_errors
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .len(),
            ..RunReport::default()
        };
        for observed in &self.observed {
            let stats = observed.stats().reflector;
            report.lists += stats.lists;
            report.relists += stats.relists;
            report.list_errors += stats.list_errors;
            report.watches += stats.watches;
            report.watch_errors += stats.watch_errors;
            report.user_code_panics += observed.stats().panics.total();
            let (notifications, tombstones) = observed.notifications();
            report.notifications += notifications;
            report.tombstones += tombstones;
        }
        Ok(report)
    }

    async fn apply(&mut self, server: &TestServer, proxy: &ResetProxy, step: &Step, revision: &mut u64) {
        match *step {
            Step::Create { .. }
            | Step::Update { .. }
            | Step::Relabel { .. }
            | Step::Poison { .. }
            | Step::Delete { .. } => {
                apply_workload(server, step, revision);
            }
            Step::DropWatches => server.drop_watches(),
            Step::ResetWatches => drop(proxy.reset_watches()),
            Step::DropWatchesAfter { events } => server.drop_watches_after(events),
            Step::Restart => server.restart(),
            Step::Compact => server.compact(),
            Step::Fail { .. } | Step::Throttle { .. } => {
                fail(server, step);
                if let Some(mirrored) = mirrored(step) {
                    fail(server, &mirrored);
                }
            }
            Step::ClearFaults => server.clear_faults(),
            Step::Delay { millis: 0 } => server.set_delay(None),
            Step::Delay { millis } => server.set_delay(Some(Duration::from_millis(millis))),
            Step::MalformedLine => server.send_malformed_watch_line(),
            Step::BlockHandler { millis } => self.misbehaviour.block_next(Duration::from_millis(millis)),
            Step::PanicHandler { times } => self.misbehaviour.panic_next(times),
            Step::LateHandler { informer } => {
                self.late_registrations += 1;
                let name = format!("late recorder #{}", self.late_registrations);
                if let Some(observed) = self.observed.iter().find(|o| o.id() == informer) {
                    observed.register(name, &self.census, &self.synced, None);
                }
            }
            Step::Pause { millis } => tokio::time::sleep(Duration::from_millis(millis)).await,
        }
    }

    /// Waits until every informer and handler converged; fails at once on a permanent
    /// violation, or with the last difference at the deadline.
    async fn quiesce(&self, server: &TestServer, within: Duration) -> Result<(), Violation> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(violation) = self.synced.violation() {
                return Err(violation);
            }
            for observed in &self.observed {
                observed.check_notifications()?;
            }
            let converged = self
                .observed
                .iter()
                .try_for_each(|observed| observed.check_converged(server));
            match converged {
                Ok(()) => return Ok(()),
                Err(violation) if Instant::now() >= deadline => {
                    return Err(Violation::new(
                        violation.invariant,
                        format!(
                            "{} (not converged {within:?} after the last step; last reported errors: {}; {})",
                            violation.details,
                            self.last_errors(3),
                            self.diagnostics(server)
                        ),
                    ));
                }
                Err(_) => tokio::time::sleep(POLL_INTERVAL).await,
            }
        }
    }

    /// What the informers and the server were doing: each reflector's counts, last version
    /// and traced requests, the server's version and open watches.
    fn diagnostics(&self, server: &TestServer) -> String {
        let informers: Vec<String> = self
            .observed
            .iter()
            .map(|observed| {
                let stats = observed.stats();
                let reflector = &stats.reflector;
                format!(
                    "{}: {} lists, {} watches, {} failed lists, {} failed watches, last rv {}, {} cached, requests {}",
                    observed.id().name(),
                    reflector.lists,
                    reflector.watches,
                    reflector.list_errors,
                    reflector.watch_errors,
                    reflector.last_resource_version,
                    stats.store_size,
                    observed.requests()
                )
            })
            .collect();
        format!(
            "server at rv {} with {} open watches; informers: [{}]",
            server.resource_version(),
            server.watch_count(),
            informers.join("; ")
        )
    }

    fn last_errors(&self, count: usize) -> String {
        let errors = self
            .reported_errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let last: Vec<&str> = errors.iter().rev().take(count).map(String::as_str).collect();
        if last.is_empty() {
            "none".into()
        } else {
            last.join(" | ")
        }
    }

    /// Shuts every factory down and checks that nothing is left running.
    async fn shut_down(&self, server: &TestServer) -> Result<(), Violation> {
        let shutdown = |details: String| Violation::new(Invariant::ShutdownEndsEverything, details);
        for factory in &self.factories {
            tokio::time::timeout(SHUTDOWN_DEADLINE, factory.shutdown())
                .await
                .map_err(|_| {
                    shutdown(format!(
                        "a factory's shutdown did not return within {SHUTDOWN_DEADLINE:?}"
                    ))
                })?;
        }
        if let Some(running) = self.observed.iter().find(|o| !o.is_stopped()) {
            return Err(shutdown(format!(
                "informer \"{}\" is not stopped after shutdown",
                running.id().name()
            )));
        }
        if self.census.alive() > 0 {
            return Err(shutdown(format!(
                "{} handlers are still alive after shutdown",
                self.census.alive()
            )));
        }
        let deadline = Instant::now() + SHUTDOWN_DEADLINE;
        while server.watch_count() > 0 {
            if Instant::now() >= deadline {
                return Err(shutdown(format!(
                    "{} watches still open {SHUTDOWN_DEADLINE:?} after shutdown",
                    server.watch_count()
                )));
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        Ok(())
    }
}

/// The informer `id` of `factory`, with its `has_synced` sampled by `synced`.
fn observe<K: CachedObject>(
    factory: &SharedInformerFactory,
    id: InformerId,
    schedule: &Schedule,
    synced: &SyncedTracker,
) -> Arc<dyn Observe> {
    let trace = Arc::new(RequestTrace::default());
    let informer = scoped_informer::<K>(factory, id, schedule, &trace);
    let probe = informer.clone();
    synced.watch(format!("informer \"{}\"", id.name()), move || probe.has_synced());
    Arc::new(Observed {
        id,
        informer,
        handlers: Mutex::new(Vec::new()),
        trace,
    })
}
