//! Micro-benchmarks of the hot paths between a decoded watch event and the cache: the indexed
//! store (add, update, index lookup), the DeltaFIFO (add then pop), and the processor: decoded
//! events from an in-memory source through a running informer to 1 and 3 handler threads
//! (reflector, queue, store and distribution; no HTTP, no JSON).
//!
//! `cargo bench -p informer-bench`.

use std::{collections::BTreeMap, hint::black_box, sync::Arc};

use criterion::{BatchSize, Criterion, criterion_main};
use std::sync::atomic::{AtomicU64, Ordering};

use informer_runtime::{
    EventHandlerFuncs, SharedIndexInformer,
    cache::{
        NAMESPACE_INDEX, Writer,
        delta_fifo::{self, DeltaFifo, ProcessError},
        namespace_indexers,
    },
    informer,
    testing::FakeControllerSource,
};
use k8s_openapi::api::core::v1::Pod;
use kube::api::ObjectMeta;
use tokio_util::sync::CancellationToken;

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
            || Writer::new(namespace_indexers()),
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
        let store = Writer::new(namespace_indexers());
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
        let store = Writer::new(namespace_indexers());
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
            || (DeltaFifo::new(delta_fifo::Config::default()), objects.clone()),
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

/// 1000 modifications through a running informer with the namespace index to `handlers`
/// counting handlers, waiting until every handler counted every one.
fn processor(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("informer (in-memory source)");
    for handlers in [1_u64, 3] {
        let source = Arc::new(FakeControllerSource::<Pod>::new());
        for pod in pods(1) {
            source.add(pod);
        }
        let informer = SharedIndexInformer::from_arc(
            Arc::clone(&source) as _,
            informer::Config {
                indexers: namespace_indexers(),
                ..informer::Config::default()
            },
        );
        let delivered = Arc::new(AtomicU64::new(0));
        for _ in 0..handlers {
            let (added, updated) = (Arc::clone(&delivered), Arc::clone(&delivered));
            informer
                .add_event_handler(
                    EventHandlerFuncs::new()
                        .added(move |_, _| {
                            added.fetch_add(1, Ordering::Relaxed);
                        })
                        .updated(move |_, _| {
                            updated.fetch_add(1, Ordering::Relaxed);
                        }),
                )
                .expect("registered before the informer runs");
        }
        let cancel = CancellationToken::new();
        let running = runtime.spawn({
            let (informer, cancel) = (informer.clone(), cancel.clone());
            async move { informer.run(cancel).await }
        });
        runtime.block_on(informer.wait_for_sync());
        let objects = pods(2);
        group.bench_function(format!("1000 updates to {handlers} handler(s)"), |b| {
            b.iter(|| {
                let target = delivered.load(Ordering::Relaxed) + OBJECTS as u64 * handlers;
                for pod in &objects {
                    source.modify(pod.clone());
                }
                // poll without taking a core from the informer
                while delivered.load(Ordering::Relaxed) < target {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
            });
        });
        cancel.cancel();
        let _ = runtime.block_on(running);
    }
    group.finish();
}

/// Every benchmark of this file (what `criterion_group!` generates, with a doc comment).
fn benches() {
    let mut criterion = Criterion::default().configure_from_args();
    store(&mut criterion);
    delta_fifo(&mut criterion);
    processor(&mut criterion);
}

criterion_main!(benches);
