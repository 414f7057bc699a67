//! The protobuf floor: what decoding the protobuf pages and frames costs on one thread with
//! prost, with nothing else to do.
//!
//! Every protobuf list page is decoded into k8s-pb's `PodList` and its items inserted into a
//! `HashMap` by `namespace/name`; then every watch frame is decoded into k8s-pb's `WatchEvent`
//! and its object, a protobuf document, into a `Pod`, inserted the same way. The `k8s\0` prefix
//! and `runtime.Unknown` envelope of each document, and the `WatchEvent` and `RawExtension`
//! around each event's object, are read with k8s-pb's messages too (prost copies each `bytes`
//! field it decodes: the object's bytes twice per event, once per page). No HTTP, no queue, no
//! handlers: the floor of [`floor`](crate::floor), in protobuf.

use std::collections::HashMap;

use k8s_pb::{
    api::core::v1::{Pod, PodList},
    apimachinery::pkg::{apis::meta::v1::WatchEvent, runtime::Unknown},
};
use prost::Message as _;

use crate::{
    cpu::{self, Mark},
    outcome::{Outcome, Phase},
    render::Rendered,
};

/// Why a protobuf document or frame did not decode.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The document does not start with `k8s\0`.
    #[error("failed to read a protobuf document: it does not start with `k8s\\0`")]
    NoMagic,
    /// A message did not decode.
    #[error("failed to decode a protobuf message: {0}")]
    Decode(#[from] prost::DecodeError),
    /// A watch frame is shorter than its length says, or has no object.
    #[error("failed to read a protobuf watch frame: {0}")]
    Frame(&'static str),
}

/// The name of the floor's row in the tables.
pub(crate) const NAME: &str = "floor (protobuf): prost + HashMap (1 thread)";

/// The message bytes of a protobuf document (`k8s\0`, then a `runtime.Unknown`).
pub(crate) fn unwrap_document(document: &[u8]) -> Result<Vec<u8>, Error> {
    let unknown = document.strip_prefix(b"k8s\0").ok_or(Error::NoMagic)?;
    Ok(Unknown::decode(unknown)?.raw.unwrap_or_default())
}

/// The event type and object document of a watch frame (its 4-byte length, then a
/// `WatchEvent`).
pub(crate) fn unwrap_frame(frame: &[u8]) -> Result<(String, Vec<u8>), Error> {
    let (length, message) = frame.split_at_checked(4).ok_or(Error::Frame("no length"))?;
    let length = u32::from_be_bytes(length.try_into().map_err(|_| Error::Frame("no length"))?) as usize;
    let message = message
        .get(..length)
        .ok_or(Error::Frame("shorter than its length"))?;
    let event = WatchEvent::decode(message)?;
    let object = event
        .object
        .and_then(|raw| raw.raw)
        .ok_or(Error::Frame("no object"))?;
    Ok((event.r#type.unwrap_or_default(), object))
}

/// The pod of a watch frame, unless its event is neither `ADDED` nor `MODIFIED`.
pub(crate) fn decode_event(frame: &[u8]) -> Result<Option<Pod>, Error> {
    let (event_type, document) = unwrap_frame(frame)?;
    if event_type != "ADDED" && event_type != "MODIFIED" {
        return Ok(None);
    }
    Ok(Some(Pod::decode(unwrap_document(&document)?.as_slice())?))
}

/// The pods of a protobuf `PodList` document.
pub(crate) fn decode_page(document: &[u8]) -> Result<PodList, Error> {
    Ok(PodList::decode(unwrap_document(document)?.as_slice())?)
}

/// `namespace/name` of `pod`.
pub(crate) fn key(pod: &Pod) -> String {
    let metadata = pod.metadata.as_ref();
    format!(
        "{}/{}",
        metadata.and_then(|m| m.namespace.as_deref()).unwrap_or_default(),
        metadata.and_then(|m| m.name.as_deref()).unwrap_or_default()
    )
}

/// Decodes the protobuf pages (the sync phase) then the frames (the watch phase).
pub(crate) fn run(rendered: &Rendered) -> Outcome {
    let mut pods: HashMap<String, Pod> = HashMap::new();
    let start = Mark::now(None);
    for page in &rendered.protobuf.pages {
        let list = decode_page(page).expect("a rendered protobuf page decodes");
        for pod in list.items {
            pods.insert(key(&pod), pod);
        }
    }
    let synced = Mark::now(None);
    let synced_objects = pods.len();
    cpu::enable_perf();
    for frame in &rendered.protobuf.events {
        if let Some(pod) = decode_event(frame).expect("a rendered protobuf frame decodes") {
            pods.insert(key(&pod), pod);
        }
    }
    let done = Mark::now(None);
    let last_resource_version = pods
        .get(&rendered.last_pod.key())
        .and_then(|pod| pod.metadata.as_ref()?.resource_version.clone())
        .unwrap_or_default();
    Outcome {
        name: NAME.into(),
        sync: Some(Phase::between(&start, &synced)),
        watch: Some(Phase::between(&synced, &done)),
        synced_objects,
        final_objects: pods.len(),
        last_resource_version,
        note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prost_reads_the_rendered_pages_and_frames() {
        let rendered = Rendered::new(600, 3);
        let first = decode_page(&rendered.protobuf.pages[0]).expect("a PodList");
        assert_eq!(first.items.len(), 500);
        assert_eq!(
            first.metadata.and_then(|m| m.r#continue).as_deref(),
            Some("page-1")
        );
        let pod = decode_event(rendered.protobuf.events.last().expect("events"))
            .expect("a frame")
            .expect("a MODIFIED pod");
        assert_eq!(key(&pod), rendered.last_pod.key());
        let containers = pod.spec.as_ref().map(|spec| spec.containers.len());
        assert_eq!(containers, Some(2));
        let end = decode_event(&rendered.protobuf.initial_events_end).expect("a frame");
        assert!(end.is_none(), "a BOOKMARK holds no pod to insert");
        assert!(matches!(decode_page(b"{}"), Err(Error::NoMagic)));
        assert!(matches!(decode_event(&[0, 0, 0, 9, 1]), Err(Error::Frame(_))));
    }

    #[test]
    fn the_floor_ends_with_every_pod_and_the_last_event() {
        let rendered = Rendered::new(1_000, 1_500);
        let outcome = run(&rendered);
        assert_eq!(outcome.check(1_000, rendered.last_resource_version), Ok(()));
    }
}
