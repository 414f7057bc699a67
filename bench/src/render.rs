//! The exact bytes every consumer decodes, rendered once before any measurement.
//!
//! List pages are JSON `PodList`s of [`PAGE_SIZE`] items (client-go's page size) with the
//! list's `metadata.resourceVersion` and a `continue` token on every page but the last. Watch
//! events are one JSON line each: `MODIFIED` events with increasing resource versions after
//! the list's; the streaming-list form (`sendInitialEvents`) is one `ADDED` line per pod and a
//! `BOOKMARK` carrying the `k8s.io/initial-events-end` annotation.

use std::fmt::Write as _;

use bytes::Bytes;
use serde_json::json;

use crate::generator::{PodGenerator, PodId};

/// Items per list page.
pub(crate) const PAGE_SIZE: usize = 500;

/// Namespaces the pods are spread over.
pub(crate) const NAMESPACES: usize = 100;

/// The seed of every run, so every run decodes the same bytes.
pub(crate) const SEED: u64 = 0x1bf0_4e5e_8b1d_2c37;

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
}

impl Selection {
    /// The pages of the pods at `indexes` (rendered by `object`), answering `label_selector`
    /// with the list's `resource_version`.
    fn render(
        label_selector: &str,
        indexes: &[usize],
        resource_version: u64,
        object: impl Fn(usize) -> Vec<u8>,
    ) -> Self {
        let mut chunks: Vec<&[usize]> = indexes.chunks(PAGE_SIZE).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        let continue_tokens: Vec<String> = (0..chunks.len()).map(|page| format!("selected-{page}")).collect();
        let pages = chunks
            .iter()
            .enumerate()
            .map(|(page, chunk)| {
                let objects: Vec<Vec<u8>> = chunk.iter().map(|&index| object(index)).collect();
                list_page(&objects, resource_version, continue_tokens.get(page + 1))
            })
            .collect();
        Self {
            label_selector: label_selector.to_owned(),
            pods: indexes.len(),
            pages,
            continue_tokens,
        }
    }

    /// The page a `continue` token asks for (page 0 without one, `None` if unknown).
    pub(crate) fn page_for(&self, continue_token: Option<&str>) -> Option<&Bytes> {
        page_of(&self.pages, &self.continue_tokens, continue_token)
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
        for page in 0..page_count {
            let start = page * PAGE_SIZE;
            let end = (start + PAGE_SIZE).min(pods);
            let objects: Vec<Vec<u8>> = (start..end)
                .map(|index| pod_bytes(&generator, index, index as u64 + 1, 0))
                .collect();
            initial_events.extend(objects.iter().map(|object| line("ADDED", object)));
            let out = list_page(&objects, list_resource_version, continue_tokens.get(page + 1));
            metadata_pages.push(metadata_page(&out));
            pages.push(out);
        }
        let mut rendered_events = Vec::with_capacity(events);
        for event in 0..events {
            let target = event_target(event, pods);
            let resource_version = list_resource_version + 1 + event as u64;
            let generation = 1 + (event / pods.max(1)) as u64;
            let object = pod_bytes(&generator, target, resource_version, generation);
            rendered_events.push(line("MODIFIED", &object));
        }
        let bookmark = json!({
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {
                "resourceVersion": list_resource_version.to_string(),
                "annotations": {"k8s.io/initial-events-end": "true"},
            },
        });
        let bookmark = serde_json::to_vec(&bookmark).unwrap_or_default();
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
            initial_events_end: line("BOOKMARK", &bookmark),
            last_pod: generator.id(last_target),
            last_resource_version: list_resource_version + events as u64,
            selections: Vec::new(),
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
            pod_bytes(&generator, index, index as u64 + 1, 0)
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
                    labelled_pod_bytes(&generator, index, &labels(index))
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
    /// pods or, with `metadata_only`, as `PartialObjectMetadata`.
    pub(crate) fn page_for(&self, continue_token: Option<&str>, metadata_only: bool) -> Option<&Bytes> {
        let pages = if metadata_only {
            &self.metadata_pages
        } else {
            &self.pages
        };
        page_of(pages, &self.continue_tokens, continue_token)
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

/// A `PodList` page as the `PartialObjectMetadataList` an API server sends for a metadata-only
/// list: the list's metadata, and each item's.
fn metadata_page(page: &[u8]) -> Bytes {
    let list: serde_json::Value = serde_json::from_slice(page).unwrap_or_default();
    let items: Vec<serde_json::Value> = list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| {
                    json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": item["metadata"],
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let out = json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list["metadata"],
        "items": items,
    });
    Bytes::from(serde_json::to_vec(&out).unwrap_or_default())
}

fn pod_bytes(generator: &PodGenerator, index: usize, resource_version: u64, generation: u64) -> Vec<u8> {
    serde_json::to_vec(&generator.pod(index, resource_version, generation)).unwrap_or_default()
}

/// Pod `index` as listed (resource version `index + 1`) with `labels` added to its own.
fn labelled_pod_bytes(generator: &PodGenerator, index: usize, labels: &[(String, String)]) -> Vec<u8> {
    let mut pod = generator.pod(index, index as u64 + 1, 0);
    if let Some(own) = pod["metadata"]["labels"].as_object_mut() {
        for (key, value) in labels {
            own.insert(key.clone(), serde_json::Value::String(value.clone()));
        }
    }
    serde_json::to_vec(&pod).unwrap_or_default()
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
        assert_eq!(rendered.page_for(Some("page-2"), false), rendered.pages.get(2));
        let metadata = rendered.page_for(Some("page-2"), true).expect("a metadata page");
        let list: ObjectList<kube::core::PartialObjectMeta<Pod>> =
            serde_json::from_slice(metadata).expect("a PartialObjectMetadataList");
        let pods: ObjectList<Pod> = serde_json::from_slice(&rendered.pages[2]).expect("a PodList");
        assert_eq!(list.metadata.continue_, pods.metadata.continue_);
        assert_eq!(list.items.len(), pods.items.len());
        assert_eq!(list.items[0].metadata, pods.items[0].metadata);
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
            serde_json::from_slice(selection.page_for(None).expect("a page")).expect("a PodList");
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
                .and_then(|s| s.page_for(None))
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
            let page = selection.page_for(token.as_deref()).expect("a page");
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
