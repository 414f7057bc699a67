//! Protobuf watch-frame decoding on one thread, on the rendered frames (one chunk each, as the
//! server sends them), against the JSON floor's decode of the same events' lines: where the
//! time of our protobuf decode goes, without sampling.
//!
//! - the JSON floor's decode: `from_utf8` + `serde_json::from_str` per line into
//!   `WatchEvent<Pod>` (k8s-openapi);
//! - prost, as the protobuf floor: k8s-pb's `WatchEvent`, `RawExtension`, `Unknown` and `Pod`
//!   (the envelopes' bytes are copied, as prost does);
//! - prost on the `Pod` message alone (the envelopes stripped before the clock starts);
//! - ours: `WatchFrame::parse` + `informer_runtime::protobuf::from_slice::<Pod>` per frame,
//!   what our watch decoder does with each frame (k8s-openapi's `Pod`);
//! - the part of ours that is JSON: each `managedFields` entry's `fieldsV1` is JSON inside the
//!   protobuf (Kubernetes' `FieldsV1.raw`), which k8s-openapi holds as a `serde_json::Value`;
//!   this row parses only those (taken out of the frames before the clock starts).
//!
//! Every decoded pod is inserted into a `HashMap` by `namespace/name`, as in the floors. The
//! variants run in turn, `rounds` times each, so that a busy machine slows them alike; the
//! table shows each variant's fastest round.

use std::{collections::HashMap, fmt::Write as _, time::Duration};

use informer_runtime::protobuf::{self, WatchFrame};
use k8s_openapi::api::core::v1::Pod;
use kube::core::WatchEvent;
use prost::Message as _;

use crate::{cpu::ThreadCpu, floor_protobuf, render::Rendered};

/// One way of turning the events into pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// `from_utf8` + `serde_json::from_str` per JSON line (the JSON floor's decode).
    JsonFloor,
    /// prost on each frame: `WatchEvent`, `RawExtension`, `Unknown`, `Pod`.
    Prost,
    /// prost on each event's `Pod` message alone.
    ProstPodOnly,
    /// `WatchFrame::parse` + `protobuf::from_slice::<Pod>` per frame.
    Ours,
    /// `serde_json::from_slice::<Value>` on each event's `fieldsV1` texts only.
    OursFieldsV1Json,
    /// `WatchFrame::parse` + the envelope + `k8s_protobuf`'s generated decoder of `Pod`.
    Generated,
    /// The generated decoder on each event's `Pod` message alone.
    GeneratedPodOnly,
    /// The generated decoder on each event's `Pod` message, skipping `metadata.managedFields`.
    GeneratedSkippingManagedFields,
}

impl Variant {
    const ALL: [Self; 8] = [
        Self::JsonFloor,
        Self::Prost,
        Self::ProstPodOnly,
        Self::Ours,
        Self::OursFieldsV1Json,
        Self::Generated,
        Self::GeneratedPodOnly,
        Self::GeneratedSkippingManagedFields,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::JsonFloor => "JSON lines: from_utf8 + serde_json::from_str (the JSON floor's decode)",
            Self::Prost => "prost, k8s-pb: WatchEvent + Unknown + Pod (the protobuf floor's decode)",
            Self::ProstPodOnly => "prost, k8s-pb: the Pod message alone (envelopes stripped beforehand)",
            Self::Ours => "ours: WatchFrame::parse + protobuf::from_slice::<Pod> (k8s-openapi)",
            Self::OursFieldsV1Json => "of which JSON: serde_json::Value of each fieldsV1 (no pods built)",
            Self::Generated => {
                "generated: WatchFrame::parse + envelope + k8s_protobuf decoder of Pod (k8s-openapi)"
            }
            Self::GeneratedPodOnly => "generated: the Pod message alone (envelopes stripped beforehand)",
            Self::GeneratedSkippingManagedFields => {
                "generated: the Pod message alone, metadata.managedFields skipped unread"
            }
        }
    }
}

/// The fastest round of one variant.
#[derive(Debug, Clone)]
pub(crate) struct DecodeOutcome {
    name: &'static str,
    events: usize,
    cpu: Duration,
}

/// What the variants decode, prepared before any clock starts: borrowed from the rendered
/// frames, or in one buffer, so the heap the variants allocate from is not strewn with it.
struct Inputs<'a> {
    rendered: &'a Rendered,
    /// Each event's `Pod` message (no envelope), within its frame.
    pod_messages: Vec<&'a [u8]>,
    /// Every event's `fieldsV1` texts, one after another.
    fields_v1: Vec<u8>,
    /// Where each text of `fields_v1` is.
    fields_v1_spans: Vec<std::ops::Range<usize>>,
}

impl<'a> Inputs<'a> {
    fn of(rendered: &'a Rendered) -> Self {
        let mut pod_messages = Vec::with_capacity(rendered.protobuf.events.len());
        let mut fields_v1 = Vec::new();
        let mut fields_v1_spans = Vec::new();
        for frame in &rendered.protobuf.events {
            let event = WatchFrame::parse(&frame[4..]).expect("a rendered protobuf frame");
            let message = protobuf::Envelope::parse(event.object)
                .expect("a rendered protobuf document")
                .raw;
            let pod = k8s_pb::api::core::v1::Pod::decode(message).expect("a rendered pod");
            let texts = pod
                .metadata
                .iter()
                .flat_map(|metadata| &metadata.managed_fields)
                .filter_map(|entry| entry.fields_v1.as_ref()?.raw.as_deref());
            for text in texts {
                fields_v1_spans.push(fields_v1.len()..fields_v1.len() + text.len());
                fields_v1.extend_from_slice(text);
            }
            pod_messages.push(message);
        }
        Self {
            rendered,
            pod_messages,
            fields_v1,
            fields_v1_spans,
        }
    }
}

fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// What a variant kept: how many distinct pods (or, for the `fieldsV1` row, texts), and the
/// map that holds them, dropped once the clock stopped (as the floors' maps are).
type Kept = (usize, Box<dyn std::any::Any>);

/// Decodes every event with `variant`.
fn decode(variant: Variant, inputs: &Inputs<'_>) -> Kept {
    let rendered = inputs.rendered;
    match variant {
        Variant::JsonFloor => {
            let mut pods = HashMap::new();
            for line in &rendered.events {
                let line = std::str::from_utf8(line).expect("a rendered event is UTF-8");
                if let Ok(WatchEvent::Modified(pod)) = serde_json::from_str::<WatchEvent<Pod>>(line) {
                    pods.insert(key(&pod), pod);
                }
            }
            (pods.len(), Box::new(pods))
        }
        Variant::Prost => {
            let mut pods = HashMap::new();
            for frame in &rendered.protobuf.events {
                if let Ok(Some(pod)) = floor_protobuf::decode_event(frame) {
                    pods.insert(floor_protobuf::key(&pod), pod);
                }
            }
            (pods.len(), Box::new(pods))
        }
        Variant::ProstPodOnly => {
            let mut pods = HashMap::new();
            for message in &inputs.pod_messages {
                if let Ok(pod) = k8s_pb::api::core::v1::Pod::decode(*message) {
                    pods.insert(floor_protobuf::key(&pod), pod);
                }
            }
            (pods.len(), Box::new(pods))
        }
        Variant::Ours => {
            let mut pods = HashMap::new();
            for frame in &rendered.protobuf.events {
                let Ok(event) = WatchFrame::parse(&frame[4..]) else {
                    continue;
                };
                if let Ok(pod) = protobuf::from_slice::<Pod>(event.object) {
                    pods.insert(key(&pod), pod);
                }
            }
            (pods.len(), Box::new(pods))
        }
        Variant::Generated => {
            let mut pods = HashMap::new();
            for frame in &rendered.protobuf.events {
                let Ok(event) = WatchFrame::parse(&frame[4..]) else {
                    continue;
                };
                if let Ok(pod) = k8s_protobuf::decode_document::<Pod>(event.object) {
                    pods.insert(key(&pod), pod);
                }
            }
            (pods.len(), Box::new(pods))
        }
        Variant::GeneratedPodOnly => {
            let mut pods = HashMap::new();
            for message in &inputs.pod_messages {
                if let Ok(pod) = k8s_protobuf::decode_message::<Pod>(message) {
                    pods.insert(key(&pod), pod);
                }
            }
            (pods.len(), Box::new(pods))
        }
        Variant::GeneratedSkippingManagedFields => {
            let skip = k8s_protobuf::SkipFields::new().field(&[1, 17]);
            let mut pods = HashMap::new();
            for message in &inputs.pod_messages {
                if let Ok(pod) = k8s_protobuf::decode_message_with::<Pod>(message, &skip) {
                    pods.insert(key(&pod), pod);
                }
            }
            (pods.len(), Box::new(pods))
        }
        Variant::OursFieldsV1Json => {
            let mut decoded = 0;
            for span in &inputs.fields_v1_spans {
                let text = &inputs.fields_v1[span.clone()];
                if let Ok(value) = serde_json::from_slice::<serde_json::Value>(text) {
                    decoded += 1;
                    drop(value);
                }
            }
            (decoded, Box::new(()))
        }
    }
}

/// Decodes every event with each variant, `rounds` times in turn.
pub(crate) fn run(rendered: &Rendered, rounds: usize) -> Vec<DecodeOutcome> {
    let inputs = Inputs::of(rendered);
    let thread = ThreadCpu::current().expect("the CPU time of this thread");
    let mut best: Vec<Option<Duration>> = vec![None; Variant::ALL.len()];
    let events = rendered.events.len();
    for _ in 0..rounds.max(1) {
        for (i, variant) in Variant::ALL.into_iter().enumerate() {
            let before = thread.times();
            let (kept, map) = decode(variant, &inputs);
            let cpu = thread.times().since(&before).total();
            drop(map);
            let expected = match variant {
                Variant::OursFieldsV1Json => inputs.fields_v1_spans.len(),
                _ => rendered.pods.min(events),
            };
            assert_eq!(kept, expected, "{} decoded every event", variant.name());
            best[i] = Some(best[i].map_or(cpu, |b| b.min(cpu)));
        }
    }
    Variant::ALL
        .into_iter()
        .zip(best)
        .map(|(variant, cpu)| DecodeOutcome {
            name: variant.name(),
            events,
            cpu: cpu.unwrap_or_default(),
        })
        .collect()
}

/// The table of the protobuf decode comparison; `bytes` are the JSON lines' and the protobuf
/// frames' total sizes.
pub(crate) fn markdown(outcomes: &[DecodeOutcome], bytes: (usize, usize)) -> String {
    let mut out = String::new();
    let Some(first) = outcomes.first() else {
        return out;
    };
    let _ = writeln!(
        out,
        "### Protobuf watch-frame decoding on one thread: {} events ({:.1} MB of protobuf frames, {:.1} MB of JSON lines), one chunk each (fastest round)\n",
        first.events,
        bytes.1 as f64 / 1e6,
        bytes.0 as f64 / 1e6,
    );
    let _ = writeln!(
        out,
        "| decoder | CPU | µs per event | vs the JSON floor's decode |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for outcome in outcomes {
        let per_event = outcome.cpu.as_secs_f64() * 1e6 / outcome.events.max(1) as f64;
        let _ = writeln!(
            out,
            "| {} | {:.2} s | {per_event:.1} | {:.2}x |",
            outcome.name,
            outcome.cpu.as_secs_f64(),
            outcome.cpu.as_secs_f64() / first.cpu.as_secs_f64().max(f64::MIN_POSITIVE)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_decodes_every_event() {
        let rendered = Rendered::new(300, 500);
        let inputs = Inputs::of(&rendered);
        assert_eq!(
            inputs.fields_v1_spans.len(),
            2 * 500,
            "two managedFields entries per pod"
        );
        let first =
            serde_json::from_slice::<serde_json::Value>(&inputs.fields_v1[inputs.fields_v1_spans[0].clone()]);
        assert!(first.is_ok_and(|value| value.is_object()));
        drop(inputs);
        let outcomes = run(&rendered, 1);
        assert_eq!(outcomes.len(), Variant::ALL.len());
        let table = markdown(&outcomes, (rendered.event_bytes, rendered.protobuf.event_bytes));
        assert!(table.contains("prost, k8s-pb"), "{table}");
    }
}
