//! The custom resource phase (`--only custom`): a CRD type the size of a large operator's
//! (about 6 KiB of JSON per object: several containers with environment, ports, probes and
//! mounts, tolerations, storage, free-form configuration and a status with conditions), 50 000
//! objects and 100 000 `MODIFIED` events (2 000 and 2 000 with `--quick`; `--pods` and
//! `--events` set them), served over loopback HTTP in JSON and in CBOR as kube-apiserver writes
//! it (every string a byte string, keys sorted, the self-described tag on answers, events and
//! their objects).
//!
//! Five consumers, each in a child process of its own (`--custom-child`, against `--url`): the
//! JSON floor (serde_json on one thread, from the rendered bytes in memory, into a `HashMap`),
//! the CBOR floor (cbor4ii through the runtime's byte-string adapter, the same), kube-rs
//! (`watcher` + `reflector`, JSON), and our factory informer over JSON and over CBOR. Each
//! reports its sync and watch times with the process's CPU, and the growth of its resident
//! memory over the sync per cached object. Before them, a decoding table times the CBOR crates
//! on the objects alone, one thread: cbor4ii and ciborium through the same adapter, the
//! runtime's CBOR decoding (heads scanned, then cbor4ii), and serde_json on the JSON.

use std::{
    collections::{BTreeMap, HashMap},
    convert::Infallible,
    fmt::Write as _,
    process::Command,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use futures::StreamExt;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, StreamBody, combinators::BoxBody};
use hyper::{body::Frame, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use informer_runtime::{
    EventHandlerFuncs, ObjectKey, SharedInformerFactory,
    source::{
        Encoding,
        watch_body::{cbor_texts, decode_cbor},
    },
};
use kube::{
    Api,
    api::ObjectMeta,
    core::WatchEvent,
    runtime::{WatchStreamExt, reflector, watcher},
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::cpu::{CpuTimes, Mark};

/// Objects per list page.
const PAGE_SIZE: usize = 500;
/// Namespaces the objects are spread over.
const NAMESPACES: usize = 100;
/// The resource version of the list; event `i` has `LIST_VERSION + 1 + i`.
const LIST_VERSION: u64 = 1_000_000;
/// The group, version and plural of the custom resource.
const PATH: &str = "/apis/bench.example.com/v1/benchapps";
/// The longest a consumer may take.
const TIMEOUT: Duration = Duration::from_secs(900);

/// A `BenchApp`: the shape of a large operator's generated CRD type.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BenchApp {
    /// The metadata.
    pub(crate) metadata: ObjectMeta,
    /// The spec.
    pub(crate) spec: AppSpec,
    /// The status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<AppStatus>,
}

impl kube::Resource for BenchApp {
    type DynamicType = ();
    type Scope = kube::core::NamespaceResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        "BenchApp".into()
    }

    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        "bench.example.com".into()
    }

    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        "v1".into()
    }

    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        "benchapps".into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// The spec of a `BenchApp`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AppSpec {
    replicas: Option<i32>,
    image: String,
    version: Option<String>,
    paused: Option<bool>,
    #[serde(default)]
    containers: Vec<AppContainer>,
    #[serde(default)]
    node_selector: BTreeMap<String, String>,
    #[serde(default)]
    tolerations: Vec<Toleration>,
    storage: Option<Storage>,
    scrape_ratio: Option<f64>,
    #[serde(default)]
    config: BTreeMap<String, String>,
    extra: Option<Value>,
}

/// A container of the spec.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct AppContainer {
    name: String,
    image: String,
    image_pull_policy: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: Vec<EnvVar>,
    #[serde(default)]
    ports: Vec<Port>,
    resources: Option<Resources>,
    #[serde(default)]
    volume_mounts: Vec<Mount>,
    liveness_probe: Option<Probe>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct EnvVar {
    name: String,
    value: Option<String>,
    value_from: Option<KeyRef>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct KeyRef {
    name: String,
    key: String,
    optional: Option<bool>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Port {
    name: String,
    container_port: i32,
    protocol: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
struct Resources {
    #[serde(default)]
    limits: BTreeMap<String, String>,
    #[serde(default)]
    requests: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Mount {
    name: String,
    mount_path: String,
    read_only: Option<bool>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Probe {
    path: Option<String>,
    port: i32,
    initial_delay_seconds: Option<i32>,
    period_seconds: Option<i32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Toleration {
    key: Option<String>,
    operator: Option<String>,
    effect: Option<String>,
    toleration_seconds: Option<i64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Storage {
    storage_class_name: Option<String>,
    size: String,
    #[serde(default)]
    access_modes: Vec<String>,
}

/// The status of a `BenchApp`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AppStatus {
    observed_generation: Option<i64>,
    replicas: Option<i32>,
    ready_replicas: Option<i32>,
    #[serde(default)]
    conditions: Vec<Condition>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Condition {
    #[serde(rename = "type")]
    type_: String,
    status: String,
    reason: Option<String>,
    message: Option<String>,
    last_transition_time: Option<String>,
}

/// Object `index` at `resource_version`, as JSON.
fn object(index: usize, resource_version: u64) -> Value {
    let name = format!("app-{index}");
    let container = |c: usize| {
        json!({
            "name": format!("worker-{c}"),
            "image": format!("registry.example.com/team/worker-{c}:v1.{}.{}", index % 7, c),
            "imagePullPolicy": "IfNotPresent",
            "args": ["--log-level=info", format!("--shard={c}"), "--metrics-addr=:8080", "--leader-elect=true"],
            "env": (0..12).map(|e| if e % 4 == 3 {
                json!({"name": format!("SECRET_{e}"), "valueFrom": {"name": format!("{name}-secrets"), "key": format!("key-{e}"), "optional": false}})
            } else {
                json!({"name": format!("SETTING_{c}_{e}"), "value": format!("value-{index}-{c}-{e}-with-some-length")})
            }).collect::<Vec<_>>(),
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}, {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}, {"name": "grpc", "containerPort": 9443}],
            "resources": {"limits": {"cpu": "2", "memory": "4Gi"}, "requests": {"cpu": format!("{}m", 100 + c * 50), "memory": "512Mi"}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": true}, {"name": "data", "mountPath": "/var/lib/app"}, {"name": "tls", "mountPath": "/etc/tls", "readOnly": true}],
            "livenessProbe": {"path": "/healthz", "port": 8080, "initialDelaySeconds": 10, "periodSeconds": 15},
        })
    };
    let conditions = ["Available", "Progressing", "Degraded"].map(|t| {
        json!({
            "type": t, "status": "True", "reason": "AsExpected",
            "message": format!("{t} since the last rollout of {name} at revision {resource_version}"),
            "lastTransitionTime": "2026-01-02T03:04:05Z",
        })
    });
    let ready = resource_version % 4;
    let containers: Vec<Value> = (0..3).map(container).collect();
    json!({
        "apiVersion": "bench.example.com/v1",
        "kind": "BenchApp",
        "metadata": {
            "name": name,
            "namespace": format!("ns-{}", index % NAMESPACES),
            "uid": format!("7c0a{index:08x}-1b2c-4d5e-8f90-{index:012x}"),
            "resourceVersion": resource_version.to_string(),
            "generation": 3,
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"app.kubernetes.io/name": "bench-app", "app.kubernetes.io/instance": name,
                       "app.kubernetes.io/part-of": "platform", "team": format!("team-{}", index % 13), "tier": "backend"},
            "annotations": {"operator.example.com/revision": format!("{resource_version}"),
                            "operator.example.com/checksum": format!("sha256:{:064x}", index as u128 * 0x9e37_79b9_7f4a_7c15)},
        },
        "spec": {
            "replicas": 3,
            "image": "registry.example.com/team/app:v2.4.1",
            "version": "2.4.1",
            "paused": false,
            "containers": containers,
            "nodeSelector": {"kubernetes.io/os": "linux", "node.example.com/pool": "general"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "effect": "NoSchedule"},
                            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "storage": {"storageClassName": "fast-ssd", "size": "100Gi", "accessModes": ["ReadWriteOnce"]},
            "scrapeRatio": 0.25,
            "config": (0..8).map(|k| (format!("setting.{k}"), format!("{k}-{index}-a configuration value of moderate length"))).collect::<BTreeMap<_, _>>(),
            "extra": {"featureGates": {"alpha": false, "beta": true}, "weights": [1, 2, 3.5]},
        },
        "status": {
            "observedGeneration": 3, "replicas": 3, "readyReplicas": ready,
            "conditions": conditions,
        },
    })
}

/// Which object event `event` modifies.
fn event_target(event: usize, objects: usize) -> usize {
    (event * 7919) % objects
}

/// A CBOR head of `major` with `argument`, shortest.
fn head(out: &mut Vec<u8>, major: u8, argument: u64) {
    let major = major << 5;
    match argument {
        0..=23 => out.push(major | argument as u8),
        24..=0xff => out.extend([major | 24, argument as u8]),
        0x100..=0xffff => {
            out.push(major | 25);
            out.extend((argument as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(major | 26);
            out.extend((argument as u32).to_be_bytes());
        }
        _ => {
            out.push(major | 27);
            out.extend(argument.to_be_bytes());
        }
    }
}

fn byte_string(out: &mut Vec<u8>, text: &str) {
    head(out, 2, text.len() as u64);
    out.extend(text.as_bytes());
}

/// `value` in CBOR as apimachinery writes it: byte strings, keys sorted shorter first then
/// bytewise, shortest integers (floats as doubles: the objects' floats need them).
fn cbor(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(0xf6),
        Value::Bool(b) => out.push(if *b { 0xf5 } else { 0xf4 }),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(n), _) => head(out, 0, n),
            (None, Some(n)) => head(out, 1, !(n as u64)),
            _ => {
                out.push(0xfb);
                out.extend(n.as_f64().unwrap_or_default().to_be_bytes());
            }
        },
        Value::String(text) => byte_string(out, text),
        Value::Array(items) => {
            head(out, 4, items.len() as u64);
            items.iter().for_each(|item| cbor(out, item));
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
            head(out, 5, entries.len() as u64);
            for (key, value) in entries {
                byte_string(out, key);
                cbor(out, value);
            }
        }
    }
}

const SELF_DESCRIBED: [u8; 3] = [0xd9, 0xd9, 0xf7];

/// The bytes every consumer reads, in JSON and in CBOR.
pub(crate) struct Rendered {
    objects: usize,
    json_pages: Vec<Bytes>,
    cbor_pages: Vec<Bytes>,
    json_events: Vec<Bytes>,
    cbor_events: Vec<Bytes>,
    /// Each object in JSON and untagged CBOR, for the decoding table.
    sample: Vec<(String, Vec<u8>)>,
}

impl Rendered {
    /// Renders `objects` objects and `events` events.
    pub(crate) fn new(objects: usize, events: usize, sample: usize) -> Self {
        let mut rendered = Self {
            objects,
            json_pages: Vec::new(),
            cbor_pages: Vec::new(),
            json_events: Vec::with_capacity(events),
            cbor_events: Vec::with_capacity(events),
            sample: Vec::new(),
        };
        let pages = objects.div_ceil(PAGE_SIZE);
        for page in 0..pages {
            let range = page * PAGE_SIZE..((page + 1) * PAGE_SIZE).min(objects);
            let next = (page + 1 < pages).then(|| (page + 1).to_string());
            let mut metadata = json!({"resourceVersion": LIST_VERSION.to_string()});
            if let Some(next) = &next {
                metadata["continue"] = json!(next);
            }
            let (mut json_items, mut cbor_items) = (Vec::new(), Vec::new());
            head(&mut cbor_items, 4, range.len() as u64);
            for index in range {
                let value = object(index, LIST_VERSION - 1 - (index as u64 % 1000));
                let text = serde_json::to_string(&value).expect("JSON");
                let start = cbor_items.len();
                cbor(&mut cbor_items, &value);
                if rendered.sample.len() < sample {
                    rendered.sample.push((text.clone(), cbor_items[start..].to_vec()));
                }
                json_items.push(text);
            }
            let json_page = format!(
                r#"{{"apiVersion":"bench.example.com/v1","kind":"BenchAppList","metadata":{},"items":[{}]}}"#,
                metadata,
                json_items.join(",")
            );
            rendered.json_pages.push(Bytes::from(json_page));
            // keys in apimachinery's order: kind, items, metadata, apiVersion
            let mut page = SELF_DESCRIBED.to_vec();
            head(&mut page, 5, 4);
            byte_string(&mut page, "kind");
            byte_string(&mut page, "BenchAppList");
            byte_string(&mut page, "items");
            page.extend(&cbor_items);
            byte_string(&mut page, "metadata");
            cbor(&mut page, &metadata);
            byte_string(&mut page, "apiVersion");
            byte_string(&mut page, "bench.example.com/v1");
            rendered.cbor_pages.push(Bytes::from(page));
        }
        for event in 0..events {
            let value = object(event_target(event, objects), LIST_VERSION + 1 + event as u64);
            let line = format!(r#"{{"type":"MODIFIED","object":{value}}}"#) + "\n";
            rendered.json_events.push(Bytes::from(line));
            let mut item = SELF_DESCRIBED.to_vec();
            head(&mut item, 5, 2);
            byte_string(&mut item, "type");
            byte_string(&mut item, "MODIFIED");
            byte_string(&mut item, "object");
            item.extend(SELF_DESCRIBED);
            cbor(&mut item, &value);
            rendered.cbor_events.push(Bytes::from(item));
        }
        rendered
    }

    fn last(&self) -> (ObjectKey, String) {
        let events = self.json_events.len();
        let (index, version) = match events {
            0 => (
                self.objects - 1,
                LIST_VERSION - 1 - ((self.objects - 1) as u64 % 1000),
            ),
            _ => (
                event_target(events - 1, self.objects),
                LIST_VERSION + events as u64,
            ),
        };
        (
            ObjectKey::new(&format!("ns-{}", index % NAMESPACES), &format!("app-{index}")),
            version.to_string(),
        )
    }

    fn bytes(pages: &[Bytes]) -> usize {
        pages.iter().map(Bytes::len).sum()
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn body(bytes: Bytes) -> Body {
    http_body_util::Full::new(bytes).boxed()
}

/// Answers a list page or the watch, in CBOR when `Accept` prefers it.
fn respond(rendered: &Rendered, request: &Request<hyper::body::Incoming>) -> Response<Body> {
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let in_cbor = accept.contains("application/cbor;q=1") || accept.starts_with("application/cbor");
    let query: HashMap<String, String> =
        form_urlencoded::parse(request.uri().query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    if request.uri().path() != PATH {
        return Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(body(Bytes::new()))
            .expect("a response");
    }
    if query.get("watch").is_some_and(|w| w == "true" || w == "1") {
        let from_list = query.get("resourceVersion").map(String::as_str) == Some(&LIST_VERSION.to_string());
        let events = match (from_list, in_cbor) {
            (false, _) => Vec::new(),
            (true, true) => rendered.cbor_events.clone(),
            (true, false) => rendered.json_events.clone(),
        };
        let stream = futures::stream::iter(events.into_iter().map(|e| Ok(Frame::data(e))))
            .chain(futures::stream::pending());
        return Response::builder()
            .header(
                header::CONTENT_TYPE,
                if in_cbor {
                    "application/cbor-seq"
                } else {
                    "application/json"
                },
            )
            .body(BodyExt::boxed(StreamBody::new(stream)))
            .expect("a response");
    }
    let page = query
        .get("continue")
        .and_then(|c| c.parse().ok())
        .unwrap_or(0usize);
    let pages = if in_cbor {
        &rendered.cbor_pages
    } else {
        &rendered.json_pages
    };
    Response::builder()
        .header(
            header::CONTENT_TYPE,
            if in_cbor {
                "application/cbor"
            } else {
                "application/json"
            },
        )
        .body(body(pages.get(page).cloned().unwrap_or_default()))
        .expect("a response")
}

/// Serves `rendered` on a thread of its own; its URL.
fn serve(rendered: Arc<Rendered>) -> String {
    let (ready, address) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("the server's runtime");
        runtime.block_on(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
            let _ = ready.send(listener.local_addr().expect("an address"));
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let rendered = Arc::clone(&rendered);
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let rendered = Arc::clone(&rendered);
                        async move { Ok::<_, Infallible>(respond(&rendered, &request)) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    format!("http://{}", address.recv().expect("the server starts"))
}

/// The consumers of the phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Consumer {
    /// serde_json on one thread, from the rendered JSON.
    FloorJson,
    /// cbor4ii (through the byte-string adapter) on one thread, from the rendered CBOR.
    FloorCbor,
    /// kube-rs `watcher` + `reflector` (JSON).
    Kube,
    /// Our factory informer over JSON.
    OursJson,
    /// Our factory informer over CBOR.
    OursCbor,
}

impl Consumer {
    const ALL: [Self; 5] = [
        Self::FloorJson,
        Self::FloorCbor,
        Self::Kube,
        Self::OursJson,
        Self::OursCbor,
    ];

    fn arg(self) -> &'static str {
        match self {
            Self::FloorJson => "floor-json",
            Self::FloorCbor => "floor-cbor",
            Self::Kube => "kube",
            Self::OursJson => "ours-json",
            Self::OursCbor => "ours-cbor",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::FloorJson => "JSON floor: serde_json + HashMap (1 thread)",
            Self::FloorCbor => "CBOR floor: cbor4ii + HashMap (1 thread)",
            Self::Kube => "kube-rs 5: watcher + reflector (JSON)",
            Self::OursJson => "ours over JSON (factory informer, 1 handler)",
            Self::OursCbor => "ours over CBOR (factory informer, 1 handler)",
        }
    }
}

/// What a child reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Measured {
    sync_wall: f64,
    sync_cpu: f64,
    watch_wall: f64,
    watch_cpu: f64,
    rss_per_object: u64,
    synced: usize,
    complete: bool,
}

fn secs(cpu: CpuTimes) -> f64 {
    cpu.total().as_secs_f64()
}

/// Decodes `T` from an untagged CBOR item with `decode`, through the byte-string adapter.
struct ViaTexts<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ViaTexts<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(cbor_texts(deserializer)).map(ViaTexts)
    }
}

fn cbor4ii_decode<T: serde::de::DeserializeOwned>(item: &[u8]) -> T {
    let item = item.strip_prefix(&SELF_DESCRIBED[..]).unwrap_or(item);
    let ViaTexts(value) = cbor4ii::serde::from_slice::<ViaTexts<T>>(item).expect("cbor4ii decodes");
    value
}

/// A list's items and version, as the floors read them.
#[derive(Deserialize)]
struct FloorList {
    items: Vec<BenchApp>,
}

fn key(app: &BenchApp) -> String {
    format!(
        "{}/{}",
        app.metadata.namespace.as_deref().unwrap_or_default(),
        app.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The floors: every page, then every event, decoded on this thread into a `HashMap`.
fn floor(rendered: &Rendered, in_cbor: bool) -> Measured {
    let mut cache: HashMap<String, BenchApp> = HashMap::new();
    let (rss_before, _) = crate::rss::memory();
    let start = Mark::now(None);
    let pages = if in_cbor {
        &rendered.cbor_pages
    } else {
        &rendered.json_pages
    };
    for page in pages {
        let list: FloorList = if in_cbor {
            cbor4ii_decode(page)
        } else {
            serde_json::from_str(std::str::from_utf8(page).expect("UTF-8")).expect("a page decodes")
        };
        for app in list.items {
            cache.insert(key(&app), app);
        }
    }
    let synced = Mark::now(None);
    let (rss_after, _) = crate::rss::memory();
    let synced_objects = cache.len();
    let events = if in_cbor {
        &rendered.cbor_events
    } else {
        &rendered.json_events
    };
    for event in events {
        let event: WatchEvent<BenchApp> = if in_cbor {
            // cbor4ii reads no tags: the floor cuts the object out of the event as rendered
            // (tag, map of 2, "type", a short type, "object", tag, object)
            let type_len = usize::from(event[9] & 0x1f);
            let object = &event[10 + type_len + 7..];
            WatchEvent::Modified(cbor4ii_decode(object))
        } else {
            serde_json::from_str(std::str::from_utf8(event).expect("UTF-8")).expect("an event decodes")
        };
        if let WatchEvent::Modified(app) = event {
            cache.insert(key(&app), app);
        }
    }
    let done = Mark::now(None);
    let (last, version) = rendered.last();
    let complete = cache
        .get(&format!(
            "{}/{}",
            last.namespace().unwrap_or_default(),
            last.name()
        ))
        .is_some_and(|app| app.metadata.resource_version.as_deref() == Some(version.as_str()));
    Measured {
        sync_wall: synced.at.duration_since(start.at).as_secs_f64(),
        sync_cpu: secs(synced.cpu.since(&start.cpu)),
        watch_wall: done.at.duration_since(synced.at).as_secs_f64(),
        watch_cpu: secs(done.cpu.since(&synced.cpu)),
        rss_per_object: rss_after.saturating_sub(rss_before) / synced_objects.max(1) as u64,
        synced: synced_objects,
        complete,
    }
}

async fn until(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + TIMEOUT;
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    true
}

/// Our factory informer with one counting handler.
async fn ours(url: &str, rendered: &Rendered, encoding: Encoding) -> Measured {
    let (last, version) = rendered.last();
    let (rss_before, _) = crate::rss::memory();
    let start = Mark::now(None);
    let factory = SharedInformerFactory::builder(crate::server::client(url))
        .encoding(encoding)
        .build();
    let informer = factory.unscoped_informer::<BenchApp>();
    let counted = Arc::new(AtomicU64::new(0));
    let (added, updated) = (Arc::clone(&counted), Arc::clone(&counted));
    let registration = informer
        .add_event_handler(
            EventHandlerFuncs::new()
                .added(move |_, _| {
                    added.fetch_add(1, Ordering::Relaxed);
                })
                .updated(move |_, _| {
                    updated.fetch_add(1, Ordering::Relaxed);
                }),
        )
        .expect("a handler");
    factory.start();
    let report = factory.wait_for_cache_sync_timeout(TIMEOUT).await;
    let synced_ok = report.all_synced() && until(|| registration.has_synced()).await;
    let synced = Mark::now(None);
    let (rss_after, _) = crate::rss::memory();
    let store = informer.store();
    let synced_objects = store.len();
    let expected = (rendered.objects + rendered.json_events.len()) as u64;
    let complete = synced_ok
        && until(|| {
            counted.load(Ordering::Relaxed) >= expected
                && store
                    .get_by_key(&last)
                    .is_some_and(|app| app.metadata.resource_version.as_deref() == Some(version.as_str()))
        })
        .await;
    let done = Mark::now(None);
    Measured {
        sync_wall: synced.at.duration_since(start.at).as_secs_f64(),
        sync_cpu: secs(synced.cpu.since(&start.cpu)),
        watch_wall: done.at.duration_since(synced.at).as_secs_f64(),
        watch_cpu: secs(done.cpu.since(&synced.cpu)),
        rss_per_object: rss_after.saturating_sub(rss_before) / synced_objects.max(1) as u64,
        synced: synced_objects,
        complete,
    }
}

/// kube-rs's watcher and reflector.
async fn kube_rs(url: &str, rendered: &Rendered) -> Measured {
    let (last, version) = rendered.last();
    let (rss_before, _) = crate::rss::memory();
    let start = Mark::now(None);
    let (reader, writer) = reflector::store::<BenchApp>();
    let api = Api::<BenchApp>::all(crate::server::client(url));
    let stream = watcher(api, watcher::Config::default().page_size(PAGE_SIZE as u32)).reflect(writer);
    let mut stream = std::pin::pin!(stream);
    let mut synced = None;
    let mut synced_objects = 0;
    let mut rss_after = 0;
    let drive = async {
        while let Some(event) = stream.next().await {
            match event {
                Ok(watcher::Event::InitDone) if synced.is_none() => {
                    synced = Some(Mark::now(None));
                    rss_after = crate::rss::memory().0;
                    synced_objects = reader.len();
                }
                Ok(watcher::Event::Apply(app))
                    if app.metadata.resource_version.as_deref() == Some(version.as_str())
                        && app.metadata.name.as_deref() == Some(last.name()) =>
                {
                    return true;
                }
                _ => {}
            }
        }
        false
    };
    let complete = tokio::time::timeout(TIMEOUT, drive).await.unwrap_or(false);
    let done = Mark::now(None);
    let synced = synced.unwrap_or_else(|| Mark::now(None));
    Measured {
        sync_wall: synced.at.duration_since(start.at).as_secs_f64(),
        sync_cpu: secs(synced.cpu.since(&start.cpu)),
        watch_wall: done.at.duration_since(synced.at).as_secs_f64(),
        watch_cpu: secs(done.cpu.since(&synced.cpu)),
        rss_per_object: rss_after.saturating_sub(rss_before) / synced_objects.max(1) as u64,
        synced: synced_objects,
        complete,
    }
}

/// Child mode: measures `consumer` and prints what it measured as one JSON line.
pub(crate) fn child(consumer: Consumer, url: &str, objects: usize, events: usize) {
    let in_memory = matches!(consumer, Consumer::FloorJson | Consumer::FloorCbor);
    // The informers' children render only the events' count and the last key: no bytes.
    let rendered = Rendered::new(objects, if in_memory { events } else { 0 }, 0);
    let rendered = Rendered {
        json_events: if in_memory {
            rendered.json_events
        } else {
            vec![Bytes::new(); events]
        },
        json_pages: if in_memory {
            rendered.json_pages
        } else {
            Vec::new()
        },
        cbor_pages: if in_memory {
            rendered.cbor_pages
        } else {
            Vec::new()
        },
        ..rendered
    };
    let measured = match consumer {
        Consumer::FloorJson => floor(&rendered, false),
        Consumer::FloorCbor => floor(&rendered, true),
        other => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async {
                match other {
                    Consumer::Kube => kube_rs(url, &rendered).await,
                    Consumer::OursJson => ours(url, &rendered, Encoding::Json).await,
                    _ => ours(url, &rendered, Encoding::Cbor).await,
                }
            })
        }
    };
    println!("{}", serde_json::to_string(&measured).expect("JSON"));
}

/// One decoder of the decoding table: its name, what its time is per byte of, and how it
/// decodes one sampled object (the JSON text and the CBOR item).
type Decoder = (&'static str, bool, fn(&str, &[u8]) -> BenchApp);

/// The decoders the table times: serde_json on the JSON, the CBOR crates through the
/// byte-string adapter, and the runtime's CBOR decoding.
const DECODERS: [Decoder; 6] = [
    ("serde_json (JSON, from &str)", false, |json, _| {
        serde_json::from_str(json).expect("JSON decodes")
    }),
    ("cbor4ii 1.2 + byte-string adapter", true, |_, item| {
        cbor4ii_decode(item)
    }),
    ("ciborium 0.2 + byte-string adapter", true, |_, item| {
        let ViaTexts(app) =
            ciborium::de::from_reader::<ViaTexts<BenchApp>, _>(item).expect("ciborium decodes");
        app
    }),
    ("minicbor-serde 0.7 + byte-string adapter", true, |_, item| {
        let item = item.strip_prefix(&SELF_DESCRIBED[..]).unwrap_or(item);
        let mut deserializer = minicbor_serde::Deserializer::new(item);
        let ViaTexts(app) =
            ViaTexts::<BenchApp>::deserialize(&mut deserializer).expect("minicbor-serde decodes");
        app
    }),
    ("serde_cbor_2 0.13 + byte-string adapter", true, |_, item| {
        let ViaTexts(app) =
            serde_cbor_2::from_slice::<ViaTexts<BenchApp>>(item).expect("serde_cbor_2 decodes");
        app
    }),
    (
        "informer-runtime CBOR (heads scanned, then cbor4ii)",
        true,
        |_, item| decode_cbor(item).expect("the runtime decodes"),
    ),
];

/// Times each decoder on the sampled objects, one thread, the fastest of `rounds` (the
/// decoders take turns in each round, and the objects of a round are dropped outside its
/// time): the markdown table.
fn decoding_table(rendered: &Rendered, rounds: usize) -> String {
    let sample = &rendered.sample;
    let (json_bytes, cbor_bytes): (usize, usize) = sample
        .iter()
        .fold((0, 0), |(j, c), (json, cbor)| (j + json.len(), c + cbor.len()));
    let mut fastest = [Duration::MAX; DECODERS.len()];
    let mut reference: Vec<BenchApp> = Vec::new();
    for _ in 0..rounds.max(1) {
        for (slot, (name, _, decode)) in DECODERS.iter().enumerate() {
            let start = Instant::now();
            let decoded: Vec<BenchApp> = sample.iter().map(|(json, item)| decode(json, item)).collect();
            fastest[slot] = fastest[slot].min(start.elapsed());
            if slot == 0 {
                reference = decoded;
            } else {
                assert!(decoded == reference, "{name} decodes what serde_json decodes");
            }
        }
    }
    let per_object = |time: Duration| time.as_nanos() as f64 / sample.len().max(1) as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nCustom resource decoding, one thread, {} objects (JSON {:.1} KiB, CBOR {:.1} KiB per object), fastest of {rounds}:\n",
        sample.len(),
        json_bytes as f64 / sample.len().max(1) as f64 / 1024.0,
        cbor_bytes as f64 / sample.len().max(1) as f64 / 1024.0,
    );
    let _ = writeln!(
        out,
        "| decoder | µs per object | MB/s of its input | × serde_json's time |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for ((name, in_cbor, _), time) in DECODERS.iter().zip(fastest) {
        let bytes = if *in_cbor { cbor_bytes } else { json_bytes };
        let _ = writeln!(
            out,
            "| {name} | {:.2} | {:.0} | {:.2} |",
            per_object(time) / 1000.0,
            bytes as f64 / time.as_secs_f64().max(1e-9) / 1e6,
            time.as_secs_f64() / fastest[0].as_secs_f64().max(1e-9),
        );
    }
    out
}

/// Runs the phase: the decoding table, then every consumer in a child process; the markdown
/// and the problems found.
pub(crate) fn phase(objects: usize, events: usize, rounds: usize) -> (String, Vec<String>) {
    let started = Instant::now();
    let rendered = Arc::new(Rendered::new(objects, events, objects.min(5_000)));
    let mut out = format!(
        "\n## Custom resources: {objects} objects, {events} events (rendered in {:.1} s; list {:.1} MiB JSON, {:.1} MiB CBOR; events {:.1} MiB JSON, {:.1} MiB CBOR)\n",
        started.elapsed().as_secs_f64(),
        Rendered::bytes(&rendered.json_pages) as f64 / 1048576.0,
        Rendered::bytes(&rendered.cbor_pages) as f64 / 1048576.0,
        Rendered::bytes(&rendered.json_events) as f64 / 1048576.0,
        Rendered::bytes(&rendered.cbor_events) as f64 / 1048576.0,
    );
    out.push_str(&decoding_table(&rendered, rounds));
    let url = serve(Arc::clone(&rendered));
    let exe = std::env::current_exe().expect("this program");
    let mut problems = Vec::new();
    let mut measured = Vec::new();
    for consumer in Consumer::ALL {
        let output = Command::new(&exe)
            .args(["--custom-child", consumer.arg(), "--url", &url])
            .args(["--pods", &objects.to_string(), "--events", &events.to_string()])
            .output();
        let parsed = output.ok().filter(|o| o.status.success()).and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .rev()
                .find_map(|line| serde_json::from_str::<Measured>(line).ok())
        });
        match parsed {
            Some(m) if m.complete && m.synced == objects => measured.push((consumer, m)),
            Some(m) => {
                problems.push(format!("{}: incomplete ({} synced)", consumer.label(), m.synced));
                measured.push((consumer, m));
            }
            None => problems.push(format!("{}: the child failed", consumer.label())),
        }
    }
    let floor = measured
        .iter()
        .find(|(c, _)| *c == Consumer::FloorJson)
        .map(|(_, m)| m.clone());
    let _ = writeln!(
        out,
        "\n| consumer | sync s (CPU s) | watch s (CPU s) | events/s | CPU µs/event | events/s × JSON floor | CPU/event × JSON floor | memory/object KiB |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    let per_second = |m: &Measured| events as f64 / m.watch_wall.max(1e-9);
    let cpu_per_event = |m: &Measured| m.watch_cpu / events.max(1) as f64 * 1e6;
    for (consumer, m) in &measured {
        let ratio = |ours: f64, floor: Option<f64>| {
            floor.map_or("–".into(), |f| format!("{:.2}", ours / f.max(1e-12)))
        };
        let _ = writeln!(
            out,
            "| {} | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.0} | {:.1} | {} | {} | {:.1} |",
            consumer.label(),
            m.sync_wall,
            m.sync_cpu,
            m.watch_wall,
            m.watch_cpu,
            per_second(m),
            cpu_per_event(m),
            ratio(per_second(m), floor.as_ref().map(per_second)),
            ratio(cpu_per_event(m), floor.as_ref().map(cpu_per_event)),
            m.rss_per_object as f64 / 1024.0,
        );
    }
    (out, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocations of `decode` over every sampled object, per object.
    fn allocations(rendered: &Rendered, decode: impl Fn(&str, &[u8]) -> BenchApp) -> f64 {
        let counted = allocation_counter::measure(|| {
            for (json, cbor) in &rendered.sample {
                drop(decode(json, cbor));
            }
        });
        counted.count_total as f64 / rendered.sample.len() as f64
    }

    /// The decoders' allocations per object (printed with `--nocapture`): the CBOR paths
    /// allocate what the object holds, no more than serde_json does.
    #[test]
    fn cbor_decoders_allocate_no_more_than_serde_json() {
        let rendered = Rendered::new(200, 0, 200);
        let json = allocations(&rendered, |json, _| serde_json::from_str(json).expect("JSON"));
        let cbor4ii = allocations(&rendered, |_, cbor| cbor4ii_decode(cbor));
        let ciborium = allocations(&rendered, |_, cbor| {
            let ViaTexts(app) = ciborium::de::from_reader::<ViaTexts<BenchApp>, _>(cbor).expect("ciborium");
            app
        });
        let runtime = allocations(&rendered, |_, cbor| decode_cbor(cbor).expect("the runtime"));
        println!(
            "allocations per object: serde_json {json:.1}, cbor4ii {cbor4ii:.1}, ciborium {ciborium:.1}, runtime {runtime:.1}"
        );
        assert!(
            cbor4ii <= json && runtime <= json,
            "{cbor4ii} {runtime} against {json}"
        );
    }

    #[test]
    fn objects_are_of_a_large_operators_size_and_every_form_decodes_alike() {
        let rendered = Rendered::new(600, 3, 600);
        let (json, cbor) = &rendered.sample[0];
        assert!(
            (5 * 1024..10 * 1024).contains(&json.len()),
            "{} bytes",
            json.len()
        );
        let from_json: BenchApp = serde_json::from_str(json).expect("JSON");
        assert_eq!(cbor4ii_decode::<BenchApp>(cbor), from_json);
        assert_eq!(
            decode_cbor::<BenchApp>(cbor).expect("the runtime decodes"),
            from_json
        );
        let list: kube::core::ObjectList<BenchApp> =
            decode_cbor(&rendered.cbor_pages[1]).expect("a CBOR page");
        assert_eq!(list.items.len(), 100);
        assert_eq!(list.metadata.resource_version.as_deref(), Some("1000000"));
        let event: WatchEvent<BenchApp> =
            informer_runtime::source::watch_body::decode_cbor_event(&rendered.cbor_events[2])
                .expect("an event");
        let json_event: WatchEvent<BenchApp> =
            serde_json::from_slice(&rendered.json_events[2]).expect("JSON");
        match (event, json_event) {
            (WatchEvent::Modified(a), WatchEvent::Modified(b)) => assert_eq!(a, b),
            other => panic!("{other:?}"),
        }
    }
}
