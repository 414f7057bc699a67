//! List-page decoding on one thread: every rendered page (a `PodList` of 500 pods) decoded
//! into `ObjectList<Pod>` by each parser of [`Bare`], its pods inserted into a `HashMap` as in
//! the floor's sync phase. The variants run in turn, `rounds` times each; the table shows each
//! variant's fastest round.

use std::{collections::HashMap, time::Duration};

use k8s_openapi::api::core::v1::Pod;
use kube::core::ObjectList;

use super::{
    DecodeOutcome,
    bare::{Bare, Scratch},
    key, table,
};
use crate::{cpu::ThreadCpu, render::Rendered};

const VARIANTS: [Bare; 6] = [
    Bare::FromSlice,
    Bare::FromStr,
    Bare::SimdUtf8FromStr,
    Bare::Exact,
    Bare::SimdJson,
    Bare::SimdJsonKeptBuffers,
];

fn decode_pages(bare: Bare, rendered: &Rendered) -> HashMap<String, Pod> {
    let mut scratch = Scratch::new();
    let mut pods = HashMap::new();
    for page in &rendered.pages {
        let list: Option<ObjectList<Pod>> = bare.decode(page, &mut scratch);
        for pod in list.map(|list| list.items).unwrap_or_default() {
            pods.insert(key(&pod), pod);
        }
    }
    pods
}

/// Decodes every list page with each parser, `rounds` times in turn.
pub(crate) fn run(rendered: &Rendered, rounds: usize) -> Vec<DecodeOutcome> {
    let thread = ThreadCpu::current().expect("the CPU time of this thread");
    let mut best: Vec<Option<Duration>> = vec![None; VARIANTS.len()];
    for _ in 0..rounds.max(1) {
        for (i, bare) in VARIANTS.into_iter().enumerate() {
            let before = thread.times();
            let pods = decode_pages(bare, rendered);
            let cpu = thread.times().since(&before).total();
            assert_eq!(pods.len(), rendered.pods, "{} decoded every page", bare.name());
            drop(pods);
            best[i] = Some(best[i].map_or(cpu, |b| b.min(cpu)));
        }
    }
    VARIANTS
        .into_iter()
        .zip(best)
        .map(|(bare, cpu)| DecodeOutcome {
            name: bare.name().to_owned(),
            items: rendered.pods,
            bytes: rendered.list_bytes,
            cpu: cpu.unwrap_or_default(),
        })
        .collect()
}

/// The table of the list-page comparison.
pub(crate) fn markdown(outcomes: &[DecodeOutcome], pages: usize) -> String {
    let Some(first) = outcomes.first() else {
        return String::new();
    };
    let title = format!(
        "List-page decoding on one thread: {} pods in {pages} pages into `ObjectList<Pod>`",
        first.items
    );
    table(&title, "pod", outcomes)
}
