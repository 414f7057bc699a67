//! Watch-body decoding on one thread, on the rendered event lines (one chunk each, as the
//! server sends them): kube's framing (lines copied into a `String` each, then decoded)
//! against ours (decoded in place from the chunks), and each line decoded on its own by every
//! parser of [`bare`] for reference: `serde_json` from bytes, and from `&str` after one UTF-8
//! check of the line (by std or by simdutf8); informer-runtime's exact-capacity decoding
//! (`source::watch_body::decode_text`); simd-json on a copy of the line. Every decoded pod is inserted into a
//! `HashMap`, as in the floor. [`pages`] does the same for list pages.
//!
//! The variants run in turn, `rounds` times each, so that a busy machine slows them alike;
//! the table shows each variant's fastest round.

mod bare;

pub(crate) mod pages;

use std::{collections::HashMap, fmt::Write as _, time::Duration};

use futures::{Stream, StreamExt, stream};
use informer_runtime::source::watch_body::decode_watch_body;
use k8s_openapi::api::core::v1::Pod;
use kube::core::WatchEvent;
use tokio_util::{
    codec::{FramedRead, LinesCodec},
    io::StreamReader,
};

use crate::{cpu::ThreadCpu, render::Rendered};
use bare::{Bare, Scratch};

/// One way of turning watch bytes into pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// One parser on each line, no stream.
    Bare(Bare),
    /// kube-rs's framing: `FramedRead` + `LinesCodec`, then `serde_json::from_str`.
    KubeLines,
    /// `informer_runtime::source::watch_body::decode_watch_body`.
    Ours,
    /// The same, then a compacting clone of each object (exact-capacity collections).
    OursCompacted,
}

impl Variant {
    const ALL: [Self; 9] = [
        Self::Bare(Bare::FromSlice),
        Self::Bare(Bare::FromStr),
        Self::Bare(Bare::SimdUtf8FromStr),
        Self::Bare(Bare::Exact),
        Self::Bare(Bare::SimdJson),
        Self::Bare(Bare::SimdJsonKeptBuffers),
        Self::KubeLines,
        Self::Ours,
        Self::OursCompacted,
    ];

    fn name(self) -> String {
        match self {
            Self::Bare(Bare::FromStr) => format!("{} per line (no stream; the floor)", Bare::FromStr.name()),
            Self::Bare(bare) => format!("{} per line (no stream)", bare.name()),
            Self::KubeLines => "kube-rs framing: LinesCodec + from_str".into(),
            Self::Ours => "ours: decode_watch_body (in place)".into(),
            Self::OursCompacted => "ours, objects compacted (a clone of each)".into(),
        }
    }
}

/// The fastest round of one variant.
#[derive(Debug, Clone)]
pub(crate) struct DecodeOutcome {
    name: String,
    /// What was decoded: event lines, or pods of list pages.
    items: usize,
    /// The bytes decoded.
    bytes: usize,
    cpu: Duration,
}

fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

fn chunks(
    rendered: &Rendered,
) -> impl Stream<Item = Result<bytes::Bytes, std::io::Error>> + Unpin + Send + use<> {
    stream::iter(rendered.events.clone().into_iter().map(Ok))
}

async fn insert_all(events: impl Stream<Item = Option<WatchEvent<Pod>>>, pods: &mut HashMap<String, Pod>) {
    let mut events = std::pin::pin!(events);
    while let Some(event) = events.next().await {
        if let Some(WatchEvent::Modified(pod) | WatchEvent::Added(pod)) = event {
            pods.insert(key(&pod), pod);
        }
    }
}

async fn decode(variant: Variant, rendered: &Rendered, pods: &mut HashMap<String, Pod>) {
    match variant {
        Variant::Bare(bare) => {
            let mut scratch = Scratch::new();
            let events =
                stream::iter(&rendered.events).map(|line| bare.decode::<WatchEvent<Pod>>(line, &mut scratch));
            insert_all(events, pods).await;
        }
        Variant::KubeLines => {
            let lines = FramedRead::new(StreamReader::new(chunks(rendered)), LinesCodec::new());
            let events = lines.map(|line| serde_json::from_str::<WatchEvent<Pod>>(&line.ok()?).ok());
            insert_all(events, pods).await;
        }
        Variant::Ours => {
            let events = decode_watch_body::<Pod, _, _>(chunks(rendered)).map(Result::ok);
            insert_all(events, pods).await;
        }
        Variant::OursCompacted => {
            let events = decode_watch_body::<Pod, _, _>(chunks(rendered)).map(|event| match event {
                Ok(WatchEvent::Modified(pod)) => Some(WatchEvent::Modified(pod.clone())),
                other => other.ok(),
            });
            insert_all(events, pods).await;
        }
    }
}

/// Decodes every event line with each variant, `rounds` times in turn.
pub(crate) fn run(rendered: &Rendered, rounds: usize) -> Vec<DecodeOutcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let thread = ThreadCpu::current().expect("the CPU time of this thread");
    let mut best: Vec<Option<Duration>> = vec![None; Variant::ALL.len()];
    for _ in 0..rounds.max(1) {
        for (i, variant) in Variant::ALL.into_iter().enumerate() {
            let mut pods = HashMap::new();
            let before = thread.times();
            runtime.block_on(decode(variant, rendered, &mut pods));
            let cpu = thread.times().since(&before).total();
            assert_eq!(
                pods.len(),
                rendered.pods.min(rendered.events.len()),
                "{} decoded every event",
                variant.name()
            );
            drop(pods);
            best[i] = Some(best[i].map_or(cpu, |b| b.min(cpu)));
        }
    }
    Variant::ALL
        .into_iter()
        .zip(best)
        .map(|(variant, cpu)| DecodeOutcome {
            name: variant.name(),
            items: rendered.events.len(),
            bytes: rendered.event_bytes,
            cpu: cpu.unwrap_or_default(),
        })
        .collect()
}

/// The table of the watch-line comparison.
pub(crate) fn markdown(outcomes: &[DecodeOutcome]) -> String {
    let Some(first) = outcomes.first() else {
        return String::new();
    };
    let title = format!(
        "Watch-body decoding on one thread: {} event lines, one chunk each",
        first.items
    );
    table(&title, "event", outcomes)
}

/// A table of decoders: CPU of the fastest round, per item, throughput, and against the first
/// row.
fn table(title: &str, item: &str, outcomes: &[DecodeOutcome]) -> String {
    let mut out = String::new();
    let Some(first) = outcomes.first() else {
        return out;
    };
    let _ = writeln!(out, "### {title} (fastest round)\n");
    let _ = writeln!(out, "| decoder | CPU | µs per {item} | MB/s | vs first row |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for outcome in outcomes {
        let seconds = outcome.cpu.as_secs_f64().max(f64::MIN_POSITIVE);
        let per_item = seconds * 1e6 / outcome.items.max(1) as f64;
        let _ = writeln!(
            out,
            "| {} | {:.2} s | {per_item:.1} | {:.0} | {:.2}x |",
            outcome.name,
            outcome.cpu.as_secs_f64(),
            outcome.bytes as f64 / 1e6 / seconds,
            seconds / first.cpu.as_secs_f64().max(f64::MIN_POSITIVE)
        );
    }
    out
}
