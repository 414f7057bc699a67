//! Memory per cached object, each consumer in a process of its own.
//!
//! The bench binary re-executes itself as
//! `--rss ours|ours-json|kube|floor|floor-protobuf [--strip-managed-fields] --url <server>`: the child reads `VmRSS` (the baseline) once its runtime and client exist,
//! syncs every pod from the parent's server, then reads `VmRSS` and `VmHWM` again and prints
//! one `RSS {json}` line. Bytes per object are (after − baseline) / objects: `VmRSS` for what
//! stays, `VmHWM` for the peak during the sync.

use std::{collections::HashMap, process::Command, time::Duration};

use futures::{FutureExt, StreamExt, stream::BoxStream};
use http_body_util::BodyExt;
use informer_runtime::{
    factory::SharedInformerFactory,
    protobuf,
    source::{Encoding, FieldPath},
};
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    api::ListParams,
    core::Selector,
    runtime::{WatchStreamExt, reflector, watcher},
};
use serde::{Deserialize, Serialize};

use crate::{cpu, floor_protobuf, ours::Reading, render::PAGE_SIZE, scope, server};

/// Which consumer a child process measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Consumer {
    /// Our factory informer (namespace index, no handlers), over protobuf, the default
    /// (`factory::Builder::encoding(Encoding::Protobuf)`).
    Ours,
    /// The same over JSON.
    OursJson,
    /// The same as `ours` (protobuf) with `metadata.managedFields` skipped as objects are read
    /// (`factory::Builder::skip_fields`).
    OursSkipping,
    /// The same as `ours` (protobuf) with `compact_objects(true)`.
    OursCompacted,
    /// Our factory's metadata-only informer (`metadata_informer::<Pod>()`), over protobuf.
    OursMetadata,
    /// Our factory's informer of a scope (`informer_in`) that selects a tenth of the pods
    /// by label, on the server.
    OursScoped,
    /// kube-rs's watcher and reflector.
    Kube,
    /// Paged lists decoded into a `HashMap<String, Pod>`.
    Floor,
    /// Paged protobuf lists decoded by prost into a `HashMap` of k8s-pb's `Pod`s.
    FloorProtobuf,
}

impl Consumer {
    fn arg(self) -> &'static str {
        match self {
            Self::Ours => "ours",
            Self::OursJson => "ours-json",
            Self::OursSkipping => "ours-skipping",
            Self::OursCompacted => "ours-compacted",
            Self::OursMetadata => "ours-metadata",
            Self::OursScoped => "ours-scoped",
            Self::Kube => "kube",
            Self::Floor => "floor",
            Self::FloorProtobuf => "floor-protobuf",
        }
    }
}

/// The name of a consumer (as its child reports it) in the memory table.
pub(crate) fn label(consumer: &str) -> &str {
    match consumer {
        "ours" => "ours (protobuf, default)",
        "ours-json" => "ours (JSON)",
        "ours-skipping" => "ours (protobuf, default), managedFields skipped as read",
        "ours-compacted" => "ours, compacted (protobuf)",
        "ours-metadata" => "ours, metadata only (protobuf)",
        "kube" => "kube-rs (JSON)",
        "floor" => "floor (serde_json)",
        "floor-protobuf" => "floor (protobuf: prost, k8s-pb)",
        other => other,
    }
}

/// What one child process measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RssOutcome {
    /// The consumer.
    pub(crate) consumer: String,
    /// Whether `metadata.managedFields` was stripped before caching.
    pub(crate) strip_managed_fields: bool,
    /// Objects cached.
    pub(crate) objects: usize,
    /// `VmRSS` before the sync, in bytes.
    pub(crate) baseline_rss: u64,
    /// `VmRSS` after the sync, in bytes.
    pub(crate) rss: u64,
    /// `VmHWM` (peak RSS) after the sync, in bytes.
    pub(crate) hwm: u64,
    /// The peak RSS during a relist after a 410 (the peak reset once synced), in bytes; none
    /// for consumers without a watch or where the peak cannot be reset.
    #[serde(default)]
    pub(crate) relist_hwm: Option<u64>,
    /// User CPU time of the whole process during the sync, in microseconds.
    #[serde(default)]
    pub(crate) sync_user_micros: u64,
    /// System CPU time of the whole process during the sync, in microseconds: mostly the
    /// first touch of fresh memory, whose cost depends on the machine (a VM's host) more than
    /// on the consumer.
    #[serde(default)]
    pub(crate) sync_system_micros: u64,
}

impl RssOutcome {
    /// Bytes per object that stay after the sync.
    pub(crate) fn retained_per_object(&self) -> u64 {
        self.rss.saturating_sub(self.baseline_rss) / self.objects.max(1) as u64
    }

    /// Peak bytes per object during the sync.
    pub(crate) fn peak_per_object(&self) -> u64 {
        self.hwm.saturating_sub(self.baseline_rss) / self.objects.max(1) as u64
    }

    /// User and system CPU time per object of the sync, in microseconds.
    pub(crate) fn sync_cpu_per_object(&self) -> (f64, f64) {
        let per_object = |micros: u64| micros as f64 / self.objects.max(1) as f64;
        (
            per_object(self.sync_user_micros),
            per_object(self.sync_system_micros),
        )
    }

    /// The peak during a relist against the memory held once synced (1.0: no more).
    pub(crate) fn relist_peak_ratio(&self) -> Option<f64> {
        let held = self.rss.saturating_sub(self.baseline_rss).max(1) as f64;
        self.relist_hwm
            .map(|peak| peak.saturating_sub(self.baseline_rss) as f64 / held)
    }
}

/// `VmRSS` and `VmHWM` of this process, in bytes.
pub(crate) fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn strip(pod: &mut Pod) {
    pod.metadata.managed_fields = None;
}

async fn sync_floor(api: Api<Pod>, strip_managed: bool) -> (usize, Option<Relist>) {
    let mut pods: HashMap<String, Pod> = HashMap::new();
    let mut params = ListParams::default().limit(PAGE_SIZE as u32);
    loop {
        let list = api.list(&params).await.expect("the bench server lists pods");
        for mut pod in list.items {
            if strip_managed {
                strip(&mut pod);
            }
            let key = format!(
                "{}/{}",
                pod.metadata.namespace.as_deref().unwrap_or_default(),
                pod.metadata.name.as_deref().unwrap_or_default()
            );
            pods.insert(key, pod);
        }
        match list.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    let objects = pods.len();
    // Measured while the map is alive.
    std::mem::forget(pods);
    (objects, None)
}

/// Paged protobuf lists (asked for as our informer asks), decoded by prost into k8s-pb's pods.
async fn sync_floor_protobuf(client: kube::Client, strip_managed: bool) -> (usize, Option<Relist>) {
    let mut pods: HashMap<String, k8s_pb::api::core::v1::Pod> = HashMap::new();
    let mut continue_token: Option<String> = None;
    loop {
        let mut uri = format!("/api/v1/pods?limit={PAGE_SIZE}");
        if let Some(token) = &continue_token {
            uri.push_str("&continue=");
            uri.extend(form_urlencoded::byte_serialize(token.as_bytes()));
        }
        let request = http::Request::get(uri)
            .header(
                http::header::ACCEPT,
                format!("{}, application/json", protobuf::MEDIA_TYPE),
            )
            .body(kube::client::Body::from(Vec::new()))
            .expect("a list request");
        let response = client.send(request).await.expect("the bench server lists pods");
        let page = response
            .into_body()
            .collect()
            .await
            .expect("the bench server sends the page")
            .to_bytes();
        let list = floor_protobuf::decode_page(&page).expect("the page is a protobuf PodList");
        for mut pod in list.items {
            if strip_managed && let Some(metadata) = pod.metadata.as_mut() {
                metadata.managed_fields = Vec::new();
            }
            pods.insert(floor_protobuf::key(&pod), pod);
        }
        continue_token = list
            .metadata
            .and_then(|metadata| metadata.r#continue)
            .filter(|token| !token.is_empty());
        if continue_token.is_none() {
            break;
        }
    }
    let objects = pods.len();
    // Measured while the map is alive.
    std::mem::forget(pods);
    (objects, None)
}

async fn sync_kube(api: Api<Pod>, strip_managed: bool) -> (usize, Option<Relist>) {
    let (reader, writer) = reflector::store::<Pod>();
    let events = watcher(api, watcher::Config::default());
    let events: BoxStream<'static, _> = if strip_managed {
        events.modify(strip).boxed()
    } else {
        events.boxed()
    };
    let mut stream = events.reflect(writer).boxed();
    while let Some(event) = stream.next().await {
        if matches!(event, Ok(watcher::Event::InitDone)) {
            break;
        }
    }
    let objects = reader.len();
    // The relist waits for the next end of an initial list; the store (and the open watch)
    // stays alive while memory is read.
    let relist = async move {
        while let Some(event) = stream.next().await {
            if matches!(event, Ok(watcher::Event::InitDone)) {
                break;
            }
        }
        std::mem::forget((reader, stream));
    };
    (objects, Some(relist.boxed()))
}

/// Waits, once the watches were expired, until the factory's informer listed again and
/// watches anew; the factory and `informer` (its handle) stay alive.
fn relist_of<I: Send + 'static>(factory: SharedInformerFactory, informer: I) -> Relist {
    async move {
        let relisted = |factory: &SharedInformerFactory| {
            factory
                .stats()
                .iter()
                .all(|s| s.reflector.lists >= 2 && s.reflector.watches >= 2)
        };
        while !relisted(&factory) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        std::mem::forget((factory, informer));
    }
    .boxed()
}

async fn sync_ours(
    client: kube::Client,
    strip_managed: bool,
    compact: bool,
    reading: Reading,
) -> (usize, Option<Relist>) {
    let mut builder = SharedInformerFactory::builder(client)
        .compact_objects(compact)
        .encoding(reading.encoding);
    if reading.skip_managed_fields {
        builder = builder.skip_fields([FieldPath::managed_fields()]);
    }
    if strip_managed {
        builder = builder.transform_metadata(|meta| meta.managed_fields = None);
    }
    let factory = builder.build();
    let informer = factory.unscoped_informer::<Pod>();
    factory.start();
    let report = factory
        .wait_for_cache_sync_timeout(Duration::from_secs(900))
        .await;
    assert!(report.all_synced(), "{report}");
    let objects = informer.store().len();
    (objects, Some(relist_of(factory, informer)))
}

async fn sync_ours_metadata(client: kube::Client, strip_managed: bool) -> (usize, Option<Relist>) {
    let mut builder = SharedInformerFactory::builder(client).encoding(Encoding::Protobuf);
    if strip_managed {
        builder = builder.transform_metadata(|meta| meta.managed_fields = None);
    }
    let factory = builder.build();
    let informer = factory.metadata_informer::<Pod>();
    factory.start();
    let report = factory
        .wait_for_cache_sync_timeout(Duration::from_secs(900))
        .await;
    assert!(report.all_synced(), "{report}");
    let objects = informer.store().len();
    (objects, Some(relist_of(factory, informer)))
}

async fn sync_ours_scoped(client: kube::Client, strip_managed: bool) -> (usize, Option<Relist>) {
    let mut builder = SharedInformerFactory::builder(client);
    if strip_managed {
        builder = builder.transform_metadata(|meta| meta.managed_fields = None);
    }
    let factory = builder.build();
    let informer = factory.informer_in(&scope::scope());
    factory.start();
    let report = factory
        .wait_for_cache_sync_timeout(Duration::from_secs(900))
        .await;
    assert!(report.all_synced(), "{report}");
    let objects = informer.lister().list_in_scope(&Selector::default()).len();
    (objects, Some(relist_of(factory, informer)))
}

/// Waits until a consumer relisted after its watches were expired.
type Relist = futures::future::BoxFuture<'static, ()>;

fn micros(time: Duration) -> u64 {
    u64::try_from(time.as_micros()).unwrap_or(u64::MAX)
}

/// Resets `VmHWM` to the current RSS (Linux's `clear_refs`); false where it cannot.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The child process: syncs every pod from `url` with `consumer` and prints its memory.
pub(crate) fn child(consumer: Consumer, strip_managed: bool, url: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let client = {
        let _runtime = runtime.enter();
        server::client(url)
    };
    let (baseline_rss, _) = memory();
    let cpu_before = cpu::process();
    let expiring = client.clone();
    let (objects, relist) = runtime.block_on(async {
        let api = Api::<Pod>::all(client.clone());
        match consumer {
            Consumer::Floor => sync_floor(api, strip_managed).await,
            Consumer::FloorProtobuf => sync_floor_protobuf(client, strip_managed).await,
            Consumer::Kube => sync_kube(api, strip_managed).await,
            Consumer::Ours => sync_ours(client, strip_managed, false, Reading::PROTOBUF).await,
            Consumer::OursJson => sync_ours(client, strip_managed, false, Reading::JSON).await,
            Consumer::OursSkipping => {
                sync_ours(
                    client,
                    strip_managed,
                    false,
                    Reading::PROTOBUF_SKIPPING_MANAGED_FIELDS,
                )
                .await
            }
            Consumer::OursCompacted => sync_ours(client, strip_managed, true, Reading::PROTOBUF).await,
            Consumer::OursMetadata => sync_ours_metadata(client, strip_managed).await,
            Consumer::OursScoped => sync_ours_scoped(client, strip_managed).await,
        }
    });
    let (rss, hwm) = memory();
    let sync_cpu = cpu::process().since(&cpu_before);
    // The peak of a relist after a 410: reset the peak, expire the watch, wait for the relist.
    let relist_hwm = relist.filter(|_| reset_peak()).map(|relist| {
        runtime.block_on(async {
            server::expire_watches(&expiring).await;
            relist.await;
        });
        memory().1
    });
    let outcome = RssOutcome {
        consumer: consumer.arg().into(),
        strip_managed_fields: strip_managed,
        objects,
        baseline_rss,
        rss,
        hwm,
        relist_hwm,
        sync_user_micros: micros(sync_cpu.user),
        sync_system_micros: micros(sync_cpu.system),
    };
    println!(
        "RSS {}",
        serde_json::to_string(&outcome).expect("the outcome serializes")
    );
    // Exit without tearing down the runtime and its open watch.
    std::process::exit(0);
}

/// Every consumer, with and without `managedFields`: the memory table at the default size.
pub(crate) const ALL_RUNS: [(Consumer, bool); 13] = [
    (Consumer::Floor, false),
    (Consumer::FloorProtobuf, false),
    (Consumer::Kube, false),
    (Consumer::Kube, true),
    (Consumer::Ours, false),
    (Consumer::Ours, true),
    (Consumer::OursJson, false),
    (Consumer::OursJson, true),
    (Consumer::OursSkipping, false),
    (Consumer::OursCompacted, false),
    (Consumer::OursCompacted, true),
    (Consumer::OursMetadata, false),
    (Consumer::OursMetadata, true),
];

/// Runs one child per consumer and stripping choice of `runs` against the server at `url`,
/// which serves `pods` pods; a child that cached another number of pods failed.
pub(crate) fn measure_all(
    url: &str,
    runs: &[(Consumer, bool)],
    pods: usize,
) -> Vec<Result<RssOutcome, String>> {
    runs.iter()
        .map(|&(consumer, strip_managed)| measure(url, consumer, strip_managed, pods))
        .collect()
}

/// Runs one child of `consumer` against the server at `url`; a child that cached another
/// number of pods than `expected` failed.
pub(crate) fn measure(
    url: &str,
    consumer: Consumer,
    strip_managed: bool,
    expected: usize,
) -> Result<RssOutcome, String> {
    let exe = std::env::current_exe().expect("the path of the bench binary");
    let mut command = Command::new(&exe);
    command.args(["--rss", consumer.arg(), "--url", url]);
    if strip_managed {
        command.arg("--strip-managed-fields");
    }
    let output = command.output().map_err(|e| format!("{}: {e}", consumer.arg()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let outcome: RssOutcome = stdout
        .lines()
        .find_map(|line| line.strip_prefix("RSS "))
        .and_then(|json| serde_json::from_str(json).ok())
        .ok_or_else(|| {
            format!(
                "{} child failed ({}): {}",
                consumer.arg(),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )
        })?;
    if outcome.objects != expected {
        return Err(format!(
            "memory of {}: {} objects, expected {expected}",
            outcome.consumer, outcome.objects
        ));
    }
    Ok(outcome)
}
