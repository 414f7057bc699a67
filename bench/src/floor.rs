//! The floor: what decoding the same bytes costs on one thread, with nothing else to do.
//!
//! Every list page is decoded into `ObjectList<Pod>` and its items inserted into a `HashMap`
//! by `namespace/name`; then every event line is decoded into `WatchEvent<Pod>` and its
//! object inserted the same way. No HTTP, no queue, no handlers. Each page and line is checked
//! as UTF-8 once and decoded from `&str`, serde_json's fastest path (decoding from bytes checks
//! every string on its own, and is slower; see the decoding table).

use std::collections::HashMap;

use k8s_openapi::api::core::v1::Pod;
use kube::core::{ObjectList, WatchEvent};

use crate::{
    cpu::{self, Mark},
    outcome::{Outcome, Phase},
    render::Rendered,
};

fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Decodes the pages (the sync phase) then the events (the watch phase).
pub(crate) fn run(rendered: &Rendered) -> Outcome {
    let mut pods: HashMap<String, Pod> = HashMap::new();
    let start = Mark::now(None);
    for page in &rendered.pages {
        let page = std::str::from_utf8(page).expect("a rendered page is UTF-8");
        let list: ObjectList<Pod> = serde_json::from_str(page).expect("a rendered page decodes");
        for pod in list.items {
            pods.insert(key(&pod), pod);
        }
    }
    let synced = Mark::now(None);
    let synced_objects = pods.len();
    cpu::enable_perf();
    for line in &rendered.events {
        let line = std::str::from_utf8(line).expect("a rendered event is UTF-8");
        let event: WatchEvent<Pod> = serde_json::from_str(line).expect("a rendered event decodes");
        if let WatchEvent::Added(pod) | WatchEvent::Modified(pod) = event {
            pods.insert(key(&pod), pod);
        }
    }
    let done = Mark::now(None);
    let last_resource_version = pods
        .get(&rendered.last_pod.key())
        .and_then(|pod| pod.metadata.resource_version.clone())
        .unwrap_or_default();
    Outcome {
        name: "floor: serde_json + HashMap (1 thread)".into(),
        sync: Some(Phase::between(&start, &synced)),
        watch: Some(Phase::between(&synced, &done)),
        synced_objects,
        final_objects: pods.len(),
        last_resource_version,
        note: None,
    }
}
