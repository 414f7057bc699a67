//! The exact bytes every consumer decodes, rendered once before any measurement.
//!
//! List pages are JSON `PodList`s of [`PAGE_SIZE`] items (client-go's page size) with the
//! list's `metadata.resourceVersion` and a `continue` token on every page but the last. Watch
//! events are one JSON line each: `MODIFIED` events with increasing resource versions after
//! the list's; the streaming-list form (`sendInitialEvents`) is one `ADDED` line per pod and a
//! `BOOKMARK` carrying the `k8s.io/initial-events-end` annotation.
//!
//! Every page, metadata page, event and initial event is rendered in protobuf too
//! ([`Protobuf`]), from the same JSON values: documents by `informer_runtime::protobuf::to_vec`,
//! events as the frames of a protobuf watch stream. The server answers in protobuf a client
//! that asks for it first.

use std::fmt::Write as _;

use bytes::Bytes;
use informer_runtime::protobuf::{self, WatchFrame};
use serde_json::{Value, json};

use crate::generator::{PodGenerator, PodId};

/// Items per list page.
pub(crate) const PAGE_SIZE: usize = 500;

/// Namespaces the pods are spread over.
pub(crate) const NAMESPACES: usize = 100;

/// The seed of every run, so every run decodes the same bytes.
pub(crate) const SEED: u64 = 0x1bf0_4e5e_8b1d_2c37;

/// What the server answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// JSON documents and watch lines.
    Json,
    /// Protobuf documents and watch frames.
    Protobuf,
}

/// The bytes of [`Rendered`] in protobuf: documents (`k8s\0`, `runtime.Unknown`, the message)
/// and watch frames (a 4-byte length, a `WatchEvent`), one for each JSON page and line.
#[derive(Debug, Default)]
pub(crate) struct Protobuf {
    /// The list pages, in order.
    pub(crate) pages: Vec<Bytes>,
    /// The `PartialObjectMetadataList` pages.
    pub(crate) metadata_pages: Vec<Bytes>,
    /// One `MODIFIED` frame per watch event.
    pub(crate) events: Vec<Bytes>,
    /// One `ADDED` frame per pod, for the streaming list.
    pub(crate) initial_events: Vec<Bytes>,
    /// The bookmark frame that ends the initial events.
    pub(crate) initial_events_end: Bytes,
    /// Total size of the list pages.
    pub(crate) list_bytes: usize,
    /// Total size of the watch frames.
    pub(crate) event_bytes: usize,
}

/// The pre-rendered bytes of one benchmark run.
#[derive(Debug)]
pub(crate) struct Rendered {
    /// How many pods the list holds.
    pub(crate) pods: usize,
    /// The list pages, in order.
    pub(crate) pages: Vec<Bytes>,
    /// The same pages as `PartialObjectMetadataList`s, for metadata-only lists.
    pub(crate) metadata_pages: Vec<Bytes>,
    /// The `continue` token that asks for page `i` (the token of page 0 is unused).
    pub(crate) continue_tokens: Vec<String>,
    /// The resource version of the list.
    pub(crate) list_resource_version: u64,
    /// One `MODIFIED` line per watch event, resource versions increasing from the list's.
    pub(crate) events: Vec<Bytes>,
    /// One `ADDED` line per pod, for the streaming list.
    pub(crate) initial_events: Vec<Bytes>,
    /// The bookmark that ends the initial events.
    pub(crate) initial_events_end: Bytes,
    /// The pod the last watch event modifies.
    pub(crate) last_pod: PodId,
    /// The resource version of the last watch event (the list's if there are none).
    pub(crate) last_resource_version: u64,
    /// Total size of the list pages.
    pub(crate) list_bytes: usize,
    /// Total size of the watch event lines.
    pub(crate) event_bytes: usize,
    /// The pages of label-selected parts of the pods, each served for its `labelSelector`.
    pub(crate) selections: Vec<Selection>,
    /// The same pages and events in protobuf.
    pub(crate) protobuf: Protobuf,
}

/// The list pages of the pods a label selector selects (a scoped cache's list), rendered
/// like the full list.
#[derive(Debug)]
pub(crate) struct Selection {
    /// The `labelSelector` these pages answer, as the client sends it.
    pub(crate) label_selector: String,
    /// How many pods it selects.
    pub(crate) pods: usize,
    /// The pages, in order.
    pub(crate) pages: Vec<Bytes>,
    /// The `continue` token that asks for page `i`.
    pub(crate) continue_tokens: Vec<String>,
    /// The same pages in protobuf.
    pub(crate) protobuf_pages: Vec<Bytes>,
}

impl Selection {
    /// The pages of the pods at `indexes` (rendered by `object`), answering `label_selector`
    /// with the list's `resource_version`.
    fn render(
        label_selector: &str,
        indexes: &[usize],
        resource_version: u64,
        object: impl Fn(usize) -> Value,
    ) -> Self {
        let mut chunks: Vec<&[usize]> = indexes.chunks(PAGE_SIZE).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        let continue_tokens: Vec<String> = (0..chunks.len()).map(|page| format!("selected-{page}")).collect();
        let (pages, protobuf_pages) = chunks
            .iter()
            .enumerate()
            .map(|(page, chunk)| {
                let values: Vec<Value> = chunk.iter().map(|&index| object(index)).collect();
                let objects: Vec<Vec<u8>> = values.iter().map(json_bytes).collect();
                let next = continue_tokens.get(page + 1);
                (
                    list_page(&objects, resource_version, next),
                    protobuf_list_page(values, resource_version, next),
                )
            })
            .unzip();
        Self {
            label_selector: label_selector.to_owned(),
            pods: indexes.len(),
            pages,
            continue_tokens,
            protobuf_pages,
        }
    }

    /// The page a `continue` token asks for (page 0 without one, `None` if unknown), in
    /// `encoding`.
    pub(crate) fn page_for(&self, continue_token: Option<&str>, encoding: Encoding) -> Option<&Bytes> {
        let pages = match encoding {
            Encoding::Json => &self.pages,
            Encoding::Protobuf => &self.protobuf_pages,
        };
        page_of(pages, &self.continue_tokens, continue_token)
    }
}

/// The pod watch event `event` modifies (round robin over the pods).
pub(crate) fn event_target(event: usize, pods: usize) -> usize {
    event % pods.max(1)
}

fn line(kind: &str, object: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(object.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(object);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// The protobuf watch frame of an event of `kind` carrying the protobuf `document`.
fn frame(kind: &str, document: &[u8]) -> Bytes {
    Bytes::from(
        WatchFrame {
            event_type: kind,
            object: document,
        }
        .encode(),
    )
}

/// `value` as JSON.
fn json_bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

/// `value`, the JSON of a built-in object or list, as a protobuf document.
pub(crate) fn protobuf_bytes(value: &Value) -> Vec<u8> {
    protobuf::to_vec(value).unwrap_or_else(|err| {
        panic!("the bench renders only objects with a protobuf form, but one failed: {err}")
    })
}

impl Rendered {
    /// Renders `pods` pods (resource versions 1..=pods, the list at `pods`) and `events`
    /// watch events.
    pub(crate) fn new(pods: usize, events: usize) -> Self {
        let generator = PodGenerator::new(SEED, NAMESPACES);
        let list_resource_version = pods as u64;
        let page_count = pods.div_ceil(PAGE_SIZE).max(1);
        let continue_tokens: Vec<String> = (0..page_count).map(|page| format!("page-{page}")).collect();
        let mut pages = Vec::with_capacity(page_count);
        let mut metadata_pages = Vec::with_capacity(page_count);
        let mut initial_events = Vec::with_capacity(pods);
        let mut protobuf = Protobuf {
            pages: Vec::with_capacity(page_count),
            metadata_pages: Vec::with_capacity(page_count),
            events: Vec::with_capacity(events),
            initial_events: Vec::with_capacity(pods),
            ..Protobuf::default()
        };
        for page in 0..page_count {
            let start = page * PAGE_SIZE;
            let end = (start + PAGE_SIZE).min(pods);
            let values: Vec<Value> = (start..end)
                .map(|index| generator.pod(index, index as u64 + 1, 0))
                .collect();
            let objects: Vec<Vec<u8>> = values.iter().map(json_bytes).collect();
            initial_events.extend(objects.iter().map(|object| line("ADDED", object)));
            protobuf
                .initial_events
                .extend(values.iter().map(|value| frame("ADDED", &protobuf_bytes(value))));
            let next = continue_tokens.get(page + 1);
            pages.push(list_page(&objects, list_resource_version, next));
            let metadata = metadata_list(&values, list_resource_version, next);
            metadata_pages.push(Bytes::from(json_bytes(&metadata)));
            protobuf
                .metadata_pages
                .push(Bytes::from(protobuf_bytes(&metadata)));
            protobuf
                .pages
                .push(protobuf_list_page(values, list_resource_version, next));
        }
        let mut rendered_events = Vec::with_capacity(events);
        for event in 0..events {
            let target = event_target(event, pods);
            let resource_version = list_resource_version + 1 + event as u64;
            let generation = 1 + (event / pods.max(1)) as u64;
            let object = generator.pod(target, resource_version, generation);
            rendered_events.push(line("MODIFIED", &json_bytes(&object)));
            protobuf.events.push(frame("MODIFIED", &protobuf_bytes(&object)));
        }
        let bookmark = json!({
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {
                "resourceVersion": list_resource_version.to_string(),
                "annotations": {"k8s.io/initial-events-end": "true"},
            },
        });
        protobuf.initial_events_end = frame("BOOKMARK", &protobuf_bytes(&bookmark));
        protobuf.list_bytes = protobuf.pages.iter().map(Bytes::len).sum();
        protobuf.event_bytes = protobuf.events.iter().map(Bytes::len).sum();
        let last_target = if events == 0 {
            pods.saturating_sub(1)
        } else {
            event_target(events - 1, pods)
        };
        Self {
            pods,
            list_bytes: pages.iter().map(Bytes::len).sum(),
            event_bytes: rendered_events.iter().map(Bytes::len).sum(),
            pages,
            metadata_pages,
            continue_tokens,
            list_resource_version,
            events: rendered_events,
            initial_events,
            initial_events_end: line("BOOKMARK", &json_bytes(&bookmark)),
            last_pod: generator.id(last_target),
            last_resource_version: list_resource_version + events as u64,
            selections: Vec::new(),
            protobuf,
        }
    }

    /// [`new`](Self::new) with no events, and the pages of the pods whose index `selected`
    /// holds, served for `label_selector` (which must select exactly those pods).
    pub(crate) fn with_selection(
        pods: usize,
        label_selector: &str,
        selected: impl Fn(usize) -> bool,
    ) -> Self {
        let mut rendered = Self::new(pods, 0);
        let generator = PodGenerator::new(SEED, NAMESPACES);
        let indexes: Vec<usize> = (0..pods).filter(|&index| selected(index)).collect();
        let selection = Selection::render(label_selector, &indexes, pods as u64, |index| {
            generator.pod(index, index as u64 + 1, 0)
        });
        rendered.selections.push(selection);
        rendered
    }

    /// `pods` pods, each carrying the extra labels `labels` gives it, served only as
    /// `selections` (a `labelSelector` and the indexes of the pods it selects): the list of
    /// every pod is not rendered (a list without one of the selectors is refused), nor are
    /// watch events. What a ring of shards lists, each shard with its own selector.
    pub(crate) fn selections_only(
        pods: usize,
        labels: impl Fn(usize) -> Vec<(String, String)>,
        selections: &[(String, Vec<usize>)],
    ) -> Self {
        let generator = PodGenerator::new(SEED, NAMESPACES);
        let list_resource_version = pods as u64;
        let selections = selections
            .iter()
            .map(|(label_selector, indexes)| {
                Selection::render(label_selector, indexes, list_resource_version, |index| {
                    labelled_pod(&generator, index, &labels(index))
                })
            })
            .collect();
        Self {
            pods,
            pages: Vec::new(),
            metadata_pages: Vec::new(),
            continue_tokens: Vec::new(),
            list_resource_version,
            events: Vec::new(),
            initial_events: Vec::new(),
            initial_events_end: Bytes::new(),
            last_pod: generator.id(pods.saturating_sub(1)),
            last_resource_version: list_resource_version,
            list_bytes: 0,
            event_bytes: 0,
            selections,
            protobuf: Protobuf::default(),
        }
    }

    /// The selection rendered for `label_selector`, if any.
    pub(crate) fn selection(&self, label_selector: &str) -> Option<&Selection> {
        self.selections
            .iter()
            .find(|selection| selection.label_selector == label_selector)
    }

    /// Whether the list of every pod was rendered (not by [`selections_only`](Self::selections_only)).
    pub(crate) fn serves_every_pod(&self) -> bool {
        !self.pages.is_empty()
    }

    /// The page a `continue` token asks for (page 0 without one, `None` if unknown), as
    /// pods or, with `metadata_only`, as `PartialObjectMetadata`, in `encoding`.
    pub(crate) fn page_for(
        &self,
        continue_token: Option<&str>,
        metadata_only: bool,
        encoding: Encoding,
    ) -> Option<&Bytes> {
        let pages = match (encoding, metadata_only) {
            (Encoding::Json, false) => &self.pages,
            (Encoding::Json, true) => &self.metadata_pages,
            (Encoding::Protobuf, false) => &self.protobuf.pages,
            (Encoding::Protobuf, true) => &self.protobuf.metadata_pages,
        };
        page_of(pages, &self.continue_tokens, continue_token)
    }

    /// The watch events (JSON lines or protobuf frames).
    pub(crate) fn events(&self, encoding: Encoding) -> &[Bytes] {
        match encoding {
            Encoding::Json => &self.events,
            Encoding::Protobuf => &self.protobuf.events,
        }
    }

    /// The initial events of a streaming list, then the bookmark that ends them.
    pub(crate) fn initial_events(&self, encoding: Encoding) -> Vec<Bytes> {
        let (events, end) = match encoding {
            Encoding::Json => (&self.initial_events, &self.initial_events_end),
            Encoding::Protobuf => (&self.protobuf.initial_events, &self.protobuf.initial_events_end),
        };
        events.iter().chain([end]).cloned().collect()
    }
}

/// The page of `pages` a `continue` token asks for (page 0 without one, `None` if unknown).
fn page_of<'a>(pages: &'a [Bytes], tokens: &[String], continue_token: Option<&str>) -> Option<&'a Bytes> {
    match continue_token {
        None | Some("") => pages.first(),
        Some(token) => tokens
            .iter()
            .position(|t| t == token)
            .and_then(|page| pages.get(page)),
    }
}

/// A `PodList` page of `objects` at `resource_version`, continued by `next` if any.
fn list_page(objects: &[Vec<u8>], resource_version: u64, next: Option<&String>) -> Bytes {
    let mut metadata = format!("{{\"resourceVersion\":\"{resource_version}\"");
    if let Some(next) = next {
        let _ = write!(metadata, ",\"continue\":\"{next}\"");
    }
    metadata.push('}');
    let mut out = Vec::with_capacity(objects.iter().map(Vec::len).sum::<usize>() + objects.len() + 128);
    out.extend_from_slice(b"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":");
    out.extend_from_slice(metadata.as_bytes());
    out.extend_from_slice(b",\"items\":[");
    for (i, object) in objects.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(object);
    }
    out.extend_from_slice(b"]}");
    Bytes::from(out)
}

/// The `metadata` of a list page at `resource_version`, continued by `next` if any.
fn list_metadata(resource_version: u64, next: Option<&String>) -> Value {
    let mut metadata = json!({"resourceVersion": resource_version.to_string()});
    if let Some(next) = next {
        metadata["continue"] = Value::String(next.clone());
    }
    metadata
}

/// A `PodList` page of `items` as a protobuf document.
fn protobuf_list_page(items: Vec<Value>, resource_version: u64, next: Option<&String>) -> Bytes {
    let list = json!({
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": list_metadata(resource_version, next),
        "items": items,
    });
    Bytes::from(protobuf_bytes(&list))
}

/// A page of `pods` as the `PartialObjectMetadataList` an API server sends for a
/// metadata-only list: the list's metadata, and each item's.
fn metadata_list(pods: &[Value], resource_version: u64, next: Option<&String>) -> Value {
    let items: Vec<Value> = pods
        .iter()
        .map(|pod| {
            json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": pod["metadata"],
            })
        })
        .collect();
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_metadata(resource_version, next),
        "items": items,
    })
}

/// Pod `index` as listed (resource version `index + 1`) with `labels` added to its own.
fn labelled_pod(generator: &PodGenerator, index: usize, labels: &[(String, String)]) -> Value {
    let mut pod = generator.pod(index, index as u64 + 1, 0);
    if let Some(own) = pod["metadata"]["labels"].as_object_mut() {
        for (key, value) in labels {
            own.insert(key.clone(), Value::String(value.clone()));
        }
    }
    pod
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use kube::core::{ObjectList, WatchEvent};

    use super::*;

    #[test]
    fn pages_and_events_decode() {
        let rendered = Rendered::new(1_234, 10);
        assert_eq!(rendered.pages.len(), 3);
        let mut items = 0;
        for (page, bytes) in rendered.pages.iter().enumerate() {
            let list: ObjectList<Pod> = serde_json::from_slice(bytes).expect("a page is a PodList");
            assert_eq!(list.metadata.resource_version.as_deref(), Some("1234"));
            assert_eq!(
                list.metadata.continue_.as_deref(),
                rendered.continue_tokens.get(page + 1).map(String::as_str)
            );
            items += list.items.len();
        }
        assert_eq!(items, 1_234);
        let last: WatchEvent<Pod> =
            serde_json::from_slice(rendered.events.last().expect("events")).expect("an event decodes");
        let WatchEvent::Modified(pod) = last else {
            panic!("not MODIFIED: {last:?}");
        };
        assert_eq!(pod.metadata.resource_version.as_deref(), Some("1244"));
        assert_eq!(pod.metadata.name, Some(rendered.last_pod.name.clone()));
        assert_eq!(rendered.last_resource_version, 1244);
        assert_eq!(
            rendered.page_for(Some("page-2"), false, Encoding::Json),
            rendered.pages.get(2)
        );
        let metadata = rendered
            .page_for(Some("page-2"), true, Encoding::Json)
            .expect("a metadata page");
        let list: ObjectList<kube::core::PartialObjectMeta<Pod>> =
            serde_json::from_slice(metadata).expect("a PartialObjectMetadataList");
        let pods: ObjectList<Pod> = serde_json::from_slice(&rendered.pages[2]).expect("a PodList");
        assert_eq!(list.metadata.continue_, pods.metadata.continue_);
        assert_eq!(list.items.len(), pods.items.len());
        assert_eq!(list.items[0].metadata, pods.items[0].metadata);
    }

    /// The pods of every JSON page, in order.
    fn json_pods(pages: &[Bytes]) -> Vec<Pod> {
        pages
            .iter()
            .flat_map(|page| {
                serde_json::from_slice::<ObjectList<Pod>>(page)
                    .expect("a page is a PodList")
                    .items
            })
            .collect()
    }

    #[test]
    fn protobuf_pages_and_frames_hold_what_the_json_holds() {
        let rendered = Rendered::new(1_234, 10);
        let protobuf = &rendered.protobuf;
        assert_eq!(protobuf.pages.len(), rendered.pages.len());
        let mut pods = Vec::new();
        for (page, bytes) in protobuf.pages.iter().enumerate() {
            assert!(bytes.starts_with(protobuf::MAGIC));
            let list: ObjectList<Pod> = protobuf::from_slice(bytes).expect("a protobuf PodList");
            let json: ObjectList<Pod> = serde_json::from_slice(&rendered.pages[page]).expect("a PodList");
            assert_eq!(list.metadata, json.metadata);
            pods.extend(list.items);
        }
        assert_eq!(pods, json_pods(&rendered.pages));
        let metadata: ObjectList<kube::core::PartialObjectMeta<Pod>> =
            protobuf::from_slice(&protobuf.metadata_pages[2]).expect("a protobuf PartialObjectMetadataList");
        assert_eq!(metadata.items.len(), 234);
        assert_eq!(metadata.items[0].metadata, pods[1_000].metadata);

        let decode = |frame: &Bytes| -> (String, Pod) {
            let length = u32::from_be_bytes(frame[..4].try_into().expect("a length")) as usize;
            assert_eq!(frame.len(), 4 + length, "one frame");
            let event = WatchFrame::parse(&frame[4..]).expect("a WatchEvent");
            let pod = protobuf::from_slice(event.object).expect("a Pod");
            (event.event_type.to_owned(), pod)
        };
        let (kind, last) = decode(protobuf.events.last().expect("events"));
        assert_eq!(kind, "MODIFIED");
        let json: WatchEvent<Pod> =
            serde_json::from_slice(rendered.events.last().expect("events")).expect("an event");
        let WatchEvent::Modified(json) = json else {
            panic!("not MODIFIED: {json:?}");
        };
        assert_eq!(json, last);
        let initial = rendered.initial_events(Encoding::Protobuf);
        assert_eq!(initial.len(), 1_235);
        assert_eq!(decode(&initial[7]), ("ADDED".to_owned(), pods[7].clone()));
        let (kind, bookmark) = decode(initial.last().expect("the bookmark"));
        assert_eq!(kind, "BOOKMARK");
        assert_eq!(bookmark.metadata.resource_version.as_deref(), Some("1234"));
        assert!(protobuf.list_bytes > 0 && protobuf.event_bytes > 0);
    }

    #[test]
    fn selections_are_rendered_in_protobuf_too() {
        let rendered = Rendered::with_selection(1_200, "app in (app-00)", |index| index % 3 == 0);
        let selection = rendered.selection("app in (app-00)").expect("a selection");
        let page = selection
            .page_for(Some("selected-0"), Encoding::Protobuf)
            .expect("a protobuf page");
        let list: ObjectList<Pod> = protobuf::from_slice(page).expect("a protobuf PodList");
        assert_eq!(list.items, json_pods(&selection.pages[..1]));
        assert_eq!(list.metadata.continue_.as_deref(), None);
    }

    #[test]
    fn selections_only_serve_labelled_pods_per_selector() {
        let labels = |index: usize| vec![("ring".to_owned(), format!("shard-{}", index % 2))];
        let selections = [
            ("ring=shard-0".to_owned(), (0..600).step_by(2).collect()),
            ("ring=empty".to_owned(), Vec::new()),
        ];
        let rendered = Rendered::selections_only(600, labels, &selections);
        assert!(!rendered.serves_every_pod());
        let selection = rendered.selection("ring=shard-0").expect("a selection");
        assert_eq!(selection.pods, 300);
        let first: ObjectList<Pod> =
            serde_json::from_slice(selection.page_for(None, Encoding::Json).expect("a page"))
                .expect("a PodList");
        assert_eq!(first.items.len(), 300);
        assert!(first.items.iter().all(|pod| {
            pod.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("ring"))
                .map(String::as_str)
                == Some("shard-0")
        }));
        assert_eq!(
            first.items[0].metadata.labels.as_ref().map(|l| l.len()),
            Some(8),
            "its own seven and the ring's"
        );
        let empty: ObjectList<Pod> = serde_json::from_slice(
            rendered
                .selection("ring=empty")
                .and_then(|s| s.page_for(None, Encoding::Json))
                .expect("a page"),
        )
        .expect("a PodList");
        assert!(empty.items.is_empty());
        assert!(rendered.selection("ring=shard-1").is_none());
    }

    #[test]
    fn a_selection_pages_only_its_pods() {
        let rendered = Rendered::with_selection(1_200, "app in (app-00)", |index| index % 3 == 0);
        let selection = rendered.selection("app in (app-00)").expect("a selection");
        assert_eq!(selection.pods, 400);
        let mut items = 0;
        let mut token = None;
        loop {
            let page = selection
                .page_for(token.as_deref(), Encoding::Json)
                .expect("a page");
            let list: ObjectList<Pod> = serde_json::from_slice(page).expect("a PodList");
            assert_eq!(list.metadata.resource_version.as_deref(), Some("1200"));
            items += list.items.len();
            token = list.metadata.continue_.filter(|t| !t.is_empty());
            if token.is_none() {
                break;
            }
        }
        assert_eq!(items, 400);
        assert_eq!(rendered.pages.len(), 3, "the full list is unchanged");
    }
}
