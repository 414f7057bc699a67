//! Micro-benchmarks of the hot paths between a decoded watch event and the cache: the indexed
//! store (add, update, index lookup) and the DeltaFIFO (add then pop).
//!
//! `cargo bench -p informer-bench`. The processor (distribution to listeners) is internal to
//! `informer-runtime` and is measured end to end by the `informer-bench` binary instead.

use std::{collections::BTreeMap, hint::black_box, sync::Arc};

use criterion::{BatchSize, Criterion, criterion_main};
use informer_runtime::{
    delta_fifo::{DeltaFifo, DeltaFifoOptions, ProcessError},
    store::{NAMESPACE_INDEX, Store, namespace_indexers},
};
use k8s_openapi::api::core::v1::Pod;
use kube::api::ObjectMeta;

/// Objects per benchmark iteration.
const OBJECTS: usize = 1_000;

/// Namespaces they are spread over.
const NAMESPACES: usize = 10;

fn pods(resource_version: u64) -> Vec<Pod> {
    (0..OBJECTS)
        .map(|i| Pod {
            metadata: ObjectMeta {
                name: Some(format!("pod-{i}")),
                namespace: Some(format!("ns-{}", i % NAMESPACES)),
                resource_version: Some(resource_version.to_string()),
                labels: Some(BTreeMap::from([("app".to_owned(), format!("app-{}", i % 20))])),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        })
        .collect()
}

fn store(c: &mut Criterion) {
    let initial: Vec<Arc<Pod>> = pods(1).into_iter().map(Arc::new).collect();
    let updated: Vec<Arc<Pod>> = pods(2).into_iter().map(Arc::new).collect();
    let mut group = c.benchmark_group("store");
    group.bench_function("add 1000 (namespace index)", |b| {
        b.iter_batched(
            || Store::new(namespace_indexers()),
            |store| {
                for pod in &initial {
                    store.add(Arc::clone(pod));
                }
                store
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("update 1000 (namespace index)", |b| {
        let store = Store::new(namespace_indexers());
        for pod in &initial {
            store.add(Arc::clone(pod));
        }
        b.iter(|| {
            for pod in &updated {
                black_box(store.update(Arc::clone(pod)));
            }
        });
    });
    group.bench_function("by_index namespace (100 of 1000)", |b| {
        let store = Store::new(namespace_indexers());
        for pod in &initial {
            store.add(Arc::clone(pod));
        }
        b.iter(|| black_box(store.by_index(NAMESPACE_INDEX, "ns-3").map(|pods| pods.len())));
    });
    group.finish();
}

fn delta_fifo(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    let objects = pods(1);
    c.bench_function("delta_fifo add+pop 1000", |b| {
        b.iter_batched(
            || (DeltaFifo::new(DeltaFifoOptions::default()), objects.clone()),
            |(fifo, objects)| {
                for pod in objects {
                    fifo.add(pod);
                }
                runtime.block_on(async {
                    for _ in 0..OBJECTS {
                        let popped = fifo
                            .pop(|deltas, _| {
                                black_box(deltas.len());
                                Ok::<(), ProcessError<()>>(())
                            })
                            .await;
                        black_box(popped.is_ok());
                    }
                });
            },
            BatchSize::SmallInput,
        );
    });
}

/// Every benchmark of this file (what `criterion_group!` generates, with a doc comment).
fn benches() {
    let mut criterion = Criterion::default().configure_from_args();
    store(&mut criterion);
    delta_fifo(&mut criterion);
}

criterion_main!(benches);
