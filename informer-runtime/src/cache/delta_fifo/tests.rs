//! Ports of client-go's `tools/cache/delta_fifo_test.go`.
//!
//! Test objects are config maps whose name is the key and whose resourceVersion is the payload:
//! `obj("foo", 10)` is client-go's `mkFifoObj("foo", 10)`.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;

use super::*;
use crate::cache::ReflectorStore;

fn obj(name: &str, val: u64) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            resource_version: Some(val.to_string()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn payload(obj: &ConfigMap) -> String {
    format!(
        "{}@{}",
        obj.metadata.name.as_deref().unwrap_or(""),
        obj.metadata.resource_version.as_deref().unwrap_or("")
    )
}

fn describe(delta: &Delta<ConfigMap>) -> (DeltaType, String) {
    let what = match &delta.object {
        MaybeTombstone::Object(o) => payload(o),
        MaybeTombstone::Tombstone(t) => {
            format!(
                "DFSU{{{}, {}}}",
                t.key,
                t.obj.as_deref().map(payload).unwrap_or_else(|| "nil".into())
            )
        }
    };
    (delta.kind, what)
}

fn describe_all(deltas: &Deltas<ConfigMap>) -> Vec<(DeltaType, String)> {
    deltas.iter().map(describe).collect()
}

fn e(kind: DeltaType, what: &str) -> (DeltaType, String) {
    (kind, what.to_owned())
}

use DeltaType::{Added, Deleted, Replaced, Sync, Updated};

/// client-go's `literalListerGetter`: known objects listed in the given order.
struct Literal(Vec<ConfigMap>);

impl KnownObjects<ConfigMap> for Literal {
    fn known_keys(&self) -> Vec<ObjectKey> {
        self.0.iter().map(ObjectKey::of).collect()
    }

    fn known_object(&self, key: &ObjectKey) -> Option<Arc<ConfigMap>> {
        self.0
            .iter()
            .find(|o| ObjectKey::of(*o) == *key)
            .cloned()
            .map(Arc::new)
    }
}

/// The key of a cluster-scoped test object.
fn key(name: &str) -> ObjectKey {
    ObjectKey::new("", name)
}

/// The queued keys, as text.
fn queued(f: &DeltaFifo<ConfigMap>) -> Vec<String> {
    f.list_keys().iter().map(ObjectKey::to_string).collect()
}

fn with_known(objects: Vec<ConfigMap>) -> DeltaFifo<ConfigMap> {
    DeltaFifo::new(Config {
        known_objects: Some(Arc::new(Literal(objects))),
        ..Config::default()
    })
}

fn plain() -> DeltaFifo<ConfigMap> {
    DeltaFifo::new(Config::default())
}

type Popped = Result<Deltas<ConfigMap>, PopError<String>>;

async fn pop(f: &DeltaFifo<ConfigMap>) -> Deltas<ConfigMap> {
    let popped: Popped = f.pop(|_, _| Ok(())).await;
    popped.expect("an item is queued")
}

async fn pop_all(f: &DeltaFifo<ConfigMap>) -> Vec<Vec<(DeltaType, String)>> {
    let mut out = Vec::new();
    while !f.is_empty() {
        out.push(describe_all(&pop(f).await));
    }
    out
}

/// Pops one key: its changes, and whether the queue said they belong to the initial list.
async fn pop_telling_initial(f: &DeltaFifo<ConfigMap>) -> (Vec<(DeltaType, String)>, bool) {
    let mut initial = false;
    let popped: Popped = f
        .pop(|_, is_in_initial_list| {
            initial = is_in_initial_list;
            Ok(())
        })
        .await;
    (describe_all(&popped.expect("queued")), initial)
}

fn newest_payload(d: &Deltas<ConfigMap>) -> String {
    d.newest().map(describe).map(|(_, p)| p).unwrap_or_default()
}

/// Whether a pop completes within 50 ms (of paused time).
async fn pops_within_50ms(f: &DeltaFifo<ConfigMap>) -> bool {
    tokio::time::timeout(Duration::from_millis(50), pop(f))
        .await
        .is_ok()
}

// TestDeltaFIFO_basic
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_preserves_order_per_producer() {
    let f = Arc::new(plain());
    const AMOUNT: u64 = 500;
    let producers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|prefix| {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                for i in 1..=AMOUNT {
                    f.add(obj(&format!("{prefix}{i}"), i));
                }
            })
        })
        .collect();
    let mut last: BTreeMap<char, u64> = BTreeMap::new();
    for _ in 0..2 * AMOUNT {
        let d = pop(&f).await;
        let o = d
            .newest()
            .and_then(|d| d.object.object().cloned())
            .expect("object");
        let prefix = o
            .metadata
            .name
            .as_deref()
            .and_then(|n| n.chars().next())
            .expect("name");
        let val: u64 = o
            .metadata
            .resource_version
            .as_deref()
            .and_then(|v| v.parse().ok())
            .expect("payload");
        let previous = last.insert(prefix, val).unwrap_or(0);
        assert!(val > previous, "producer {prefix}: {val} came after {previous}");
    }
    for p in producers {
        p.join().expect("producer");
    }
    assert_eq!(last.values().copied().collect::<Vec<_>>(), [AMOUNT, AMOUNT]);
}

// TestDeltaFIFO_replaceWithDeleteDeltaIn (regression for kubernetes/kubernetes#83810)
#[tokio::test]
async fn replace_keeps_recreate_after_delete() {
    let f = with_known(vec![obj("foo", 1)]);
    f.delete(obj("foo", 1));
    f.replace(vec![obj("foo", 2)], "0");
    assert_eq!(
        describe_all(&pop(&f).await),
        [e(Deleted, "foo@1"), e(Sync, "foo@2")]
    );
}

// TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue
#[tokio::test]
async fn replace_makes_deletions_for_objects_only_in_queue() {
    type Case = (&'static str, fn(&DeltaFifo<ConfigMap>), Vec<(DeltaType, String)>);
    let tomb = |o: &str| format!("DFSU{{foo, {o}}}");
    let cases: Vec<Case> = vec![
        (
            "added object not present in replace",
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![], "0");
            },
            vec![e(Added, "foo@2"), e(Deleted, &tomb("foo@2"))],
        ),
        (
            "replaced object not present in replace",
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![obj("foo", 2)], "0");
                f.replace(vec![], "0");
            },
            vec![
                e(Added, "foo@2"),
                e(Replaced, "foo@2"),
                e(Deleted, &tomb("foo@2")),
            ],
        ),
        (
            "deleted object not present in replace",
            |f| {
                f.add(obj("foo", 2));
                f.delete(obj("foo", 2));
                f.replace(vec![], "0");
            },
            vec![e(Added, "foo@2"), e(Deleted, "foo@2")],
        ),
        (
            "synced objects not present in replace",
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![obj("foo", 2)], "0");
                f.replace(vec![obj("foo", 2)], "0");
                f.replace(vec![], "0");
            },
            vec![
                e(Added, "foo@2"),
                e(Sync, "foo@2"),
                e(Sync, "foo@2"),
                e(Deleted, &tomb("foo@2")),
            ],
        ),
        (
            "added object not present in two replaces",
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![], "0");
                f.replace(vec![], "1");
            },
            vec![e(Added, "foo@2"), e(Deleted, &tomb("foo@2"))],
        ),
        (
            "re-added object not present in replace",
            |f| {
                f.add(obj("foo", 2));
                f.delete(obj("foo", 2));
                f.add(obj("foo", 3));
                f.replace(vec![], "0");
            },
            vec![
                e(Added, "foo@2"),
                e(Deleted, "foo@2"),
                e(Added, "foo@3"),
                e(Deleted, &tomb("foo@3")),
            ],
        ),
    ];
    for (index, (name, ops, mut want)) in cases.into_iter().enumerate() {
        // The second case runs with EmitDeltaTypeReplaced; the others expect Sync.
        let emit_replaced = index == 1;
        if !emit_replaced {
            for entry in &mut want {
                if entry.0 == Replaced {
                    entry.0 = Sync;
                }
            }
        }
        for known in [Some(Literal(vec![])), None] {
            let with_lister = known.is_some();
            let f = DeltaFifo::new(Config {
                known_objects: known.map(|k| Arc::new(k) as Arc<dyn KnownObjects<ConfigMap>>),
                emit_delta_type_replaced: emit_replaced,
                transform: None,
            });
            ops(&f);
            assert_eq!(
                describe_all(&pop(&f).await),
                want,
                "{name} (known objects: {with_lister})"
            );
            assert!(f.is_empty(), "{name}: items left after one pop");
        }
    }
}

// TestDeltaFIFO_requeueOnPop
#[tokio::test]
async fn requeue_on_pop() {
    let f = plain();
    f.add(obj("foo", 10));
    let r: Popped = f
        .pop(|d, _| {
            assert_eq!(newest_payload(d), "foo@10");
            Err(ProcessError::Requeue(None))
        })
        .await;
    assert!(r.is_ok(), "requeue without cause is not an error");
    assert!(f.get_by_key(&key("foo")).is_some(), "item must be requeued");

    let r: Popped = f
        .pop(|_, _| Err(ProcessError::Requeue(Some("test error".to_owned()))))
        .await;
    assert_eq!(
        r.expect_err("cause is reported"),
        PopError::Process("test error".to_owned())
    );
    assert!(f.get_by_key(&key("foo")).is_some(), "item must be requeued");

    let r: Popped = f.pop(|_, _| Ok(())).await;
    assert!(r.is_ok());
    assert!(f.get_by_key(&key("foo")).is_none(), "item must be gone");
}

// TestDeltaFIFO_addUpdate
#[tokio::test(start_paused = true)]
async fn add_update_delete_coalesce_under_one_key() {
    let f = plain();
    f.add(obj("foo", 10));
    f.update(obj("foo", 12));
    f.delete(obj("foo", 15));
    assert_eq!(
        f.list().iter().map(|o| payload(o)).collect::<Vec<_>>(),
        ["foo@15"]
    );
    assert_eq!(queued(&f), ["foo"]);
    assert_eq!(newest_payload(&pop(&f).await), "foo@15");
    assert!(!pops_within_50ms(&f).await, "nothing else should be queued");
    assert!(f.get_by_key(&key("foo")).is_none());
}

// TestDeltaFIFO_transformer
#[tokio::test]
async fn transformer_is_applied_once_and_never_to_tombstones() {
    fn count(o: &ConfigMap) -> u32 {
        o.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("transformed"))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }
    let transform: Transform<ConfigMap> = Arc::new(|o: &mut ConfigMap| {
        let n = count(o) + 1;
        o.metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert("transformed".into(), n.to_string());
    });
    let f = DeltaFifo::new(Config {
        transform: Some(transform),
        ..Config::default()
    });
    f.add(obj("foo", 10));
    f.add(obj("bar", 11));
    f.update(obj("foo", 12));
    f.delete(obj("foo", 15));
    f.replace(vec![], "");
    f.add(obj("bar", 16));
    f.replace(vec![], "");
    assert_eq!(queued(&f), ["foo", "bar"]);

    let foo = pop(&f).await;
    let newest = foo.newest().expect("delta");
    assert_eq!(
        describe(newest),
        e(Deleted, "foo@15"),
        "the real deletion wins over the tombstone"
    );
    assert!(
        foo.iter()
            .all(|d| d.object.object().is_some_and(|o| count(o) == 1)),
        "each object transformed once"
    );

    let bar = pop(&f).await;
    let newest = bar.newest().expect("delta");
    assert_eq!(describe(newest), e(Deleted, "DFSU{bar, bar@16}"));
    assert_eq!(
        newest.object.object().map(|o| count(o)),
        Some(1),
        "tombstone's object transformed exactly once"
    );
}

// TestDeltaFIFO_enqueueingNoLister
#[tokio::test]
async fn enqueueing_without_known_objects_drops_unknown_deletes() {
    let f = plain();
    f.add(obj("foo", 10));
    f.update(obj("bar", 15));
    f.add(obj("qux", 17));
    f.delete(obj("qux", 18));
    f.delete(obj("baz", 20));
    let mut got = Vec::new();
    while !f.is_empty() {
        got.push(newest_payload(&pop(&f).await));
    }
    assert_eq!(got, ["foo@10", "bar@15", "qux@18"]);
}

// TestDeltaFIFO_enqueueingWithLister
#[tokio::test]
async fn enqueueing_with_known_objects_keeps_known_deletes() {
    let f = with_known(vec![obj("foo", 5), obj("bar", 6), obj("baz", 7)]);
    f.add(obj("foo", 10));
    f.update(obj("bar", 15));
    f.delete(obj("baz", 20));
    let mut got = Vec::new();
    while !f.is_empty() {
        got.push(newest_payload(&pop(&f).await));
    }
    assert_eq!(got, ["foo@10", "bar@15", "baz@20"]);
}

// TestDeltaFIFO_addReplace
#[tokio::test(start_paused = true)]
async fn add_then_replace_pops_once() {
    let f = plain();
    f.add(obj("foo", 10));
    f.replace(vec![obj("foo", 15)], "0");
    assert_eq!(newest_payload(&pop(&f).await), "foo@15");
    assert!(!pops_within_50ms(&f).await, "nothing else should be queued");
    assert!(f.get_by_key(&key("foo")).is_none());
}

// TestDeltaFIFO_ResyncNonExisting
#[tokio::test]
async fn resync_skips_keys_with_queued_changes() {
    let f = with_known(vec![obj("foo", 5)]);
    f.delete(obj("foo", 10));
    f.resync();
    let deltas = f.get_by_key(&key("foo")).expect("queued");
    assert_eq!(describe_all(&deltas), [e(Deleted, "foo@10")]);
}

// TestDeltaFIFO_Resync
#[tokio::test]
async fn resync_queues_sync_for_known_objects() {
    let f = with_known(vec![obj("foo", 5)]);
    f.resync();
    let deltas = f.get_by_key(&key("foo")).expect("queued");
    assert_eq!(describe_all(&deltas), [e(Sync, "foo@5")]);
}

// TestDeltaFIFO_DeleteExistingNonPropagated
#[tokio::test]
async fn delete_of_queued_object_is_kept() {
    let f = with_known(vec![]);
    f.add(obj("foo", 5));
    f.delete(obj("foo", 6));
    let deltas = f.get_by_key(&key("foo")).expect("queued");
    assert_eq!(deltas.len(), 2);
    assert_eq!(deltas.newest().map(|d| d.kind), Some(Deleted));
}

// TestDeltaFIFO_ReplaceMakesDeletions
#[tokio::test]
async fn replace_makes_deletions() {
    let known = || vec![obj("foo", 5), obj("bar", 6), obj("baz", 7)];

    let f = with_known(known());
    f.delete(obj("baz", 10));
    f.replace(vec![obj("foo", 5)], "0");
    assert_eq!(
        pop_all(&f).await,
        [
            vec![e(Deleted, "baz@10")],
            vec![e(Sync, "foo@5")],
            vec![e(Deleted, "DFSU{bar, bar@6}")]
        ]
    );

    let f = with_known(known());
    f.add(obj("baz", 10));
    f.replace(vec![obj("foo", 5)], "0");
    assert_eq!(
        pop_all(&f).await,
        [
            vec![e(Added, "baz@10"), e(Deleted, "DFSU{baz, baz@10}")],
            vec![e(Sync, "foo@5")],
            vec![e(Deleted, "DFSU{bar, bar@6}")]
        ]
    );

    let f = with_known(known());
    f.delete(obj("bar", 6));
    f.add(obj("bar", 100));
    f.replace(vec![obj("foo", 5)], "0");
    assert_eq!(
        pop_all(&f).await,
        [
            vec![
                e(Deleted, "bar@6"),
                e(Added, "bar@100"),
                e(Deleted, "DFSU{bar, bar@100}")
            ],
            vec![e(Sync, "foo@5")],
            vec![e(Deleted, "DFSU{baz, baz@7}")]
        ]
    );

    // The tombstone carries the newest queued object, not the known one.
    let f = with_known(known());
    f.replace(vec![obj("bar", 100), obj("foo", 5)], "0");
    f.replace(vec![obj("foo", 5)], "0");
    assert_eq!(
        pop_all(&f).await,
        [
            vec![e(Sync, "bar@100"), e(Deleted, "DFSU{bar, bar@100}")],
            vec![e(Sync, "foo@5"), e(Sync, "foo@5")],
            vec![e(Deleted, "DFSU{baz, baz@7}")]
        ]
    );

    let f = plain();
    f.add(obj("baz", 10));
    f.replace(vec![obj("foo", 5)], "0");
    assert_eq!(
        pop_all(&f).await,
        [
            vec![e(Added, "baz@10"), e(Deleted, "DFSU{baz, baz@10}")],
            vec![e(Sync, "foo@5")]
        ]
    );
}

// TestDeltaFIFO_ReplaceMakesDeletionsReplaced
#[tokio::test]
async fn replace_makes_deletions_with_replaced_type() {
    let f = DeltaFifo::new(Config {
        known_objects: Some(Arc::new(Literal(vec![
            obj("foo", 5),
            obj("bar", 6),
            obj("baz", 7),
        ]))),
        emit_delta_type_replaced: true,
        transform: None,
    });
    f.delete(obj("baz", 10));
    f.replace(vec![obj("foo", 6)], "0");
    assert_eq!(
        pop_all(&f).await,
        [
            vec![e(Deleted, "baz@10")],
            vec![e(Replaced, "foo@6")],
            vec![e(Deleted, "DFSU{bar, bar@6}")]
        ]
    );
}

// TestDeltaFIFO_ReplaceDeltaType
#[tokio::test]
async fn replace_emits_replaced_when_asked() {
    let f = DeltaFifo::new(Config {
        known_objects: Some(Arc::new(Literal(vec![obj("foo", 5)]))),
        emit_delta_type_replaced: true,
        transform: None,
    });
    f.replace(vec![obj("foo", 5)], "0");
    assert_eq!(pop_all(&f).await, [vec![e(Replaced, "foo@5")]]);
}

// TestDeltaFIFO_UpdateResyncRace
#[tokio::test]
async fn update_then_resync_does_not_append_sync() {
    let f = with_known(vec![obj("foo", 5)]);
    f.update(obj("foo", 6));
    f.resync();
    assert_eq!(pop_all(&f).await, [vec![e(Updated, "foo@6")]]);
}

// TestDeltaFIFO_HasSyncedCorrectOnDeletion
#[tokio::test]
async fn has_synced_counts_deletions_of_initial_replace() {
    let f = with_known(vec![obj("foo", 5), obj("bar", 6), obj("baz", 7)]);
    f.replace(vec![obj("foo", 5)], "0");
    let want = [
        vec![e(Sync, "foo@5")],
        vec![e(Deleted, "DFSU{bar, bar@6}")],
        vec![e(Deleted, "DFSU{baz, baz@7}")],
    ];
    for expected in want {
        assert!(!f.has_synced(), "synced too early");
        let (popped, initial) = pop_telling_initial(&f).await;
        assert_eq!(popped, expected);
        assert!(initial, "every pop belongs to the initial list");
    }
    assert!(f.has_synced());
}

// TestDeltaFIFO_detectLineJumpers
#[tokio::test]
async fn popped_key_added_again_goes_to_the_tail() {
    let f = plain();
    f.add(obj("foo", 10));
    f.add(obj("bar", 1));
    f.add(obj("foo", 11));
    f.add(obj("foo", 13));
    f.add(obj("zab", 30));
    assert_eq!(newest_payload(&pop(&f).await), "foo@13");
    f.add(obj("foo", 14));
    for want in ["bar@1", "zab@30", "foo@14"] {
        assert_eq!(newest_payload(&pop(&f).await), want);
    }
}

// TestDeltaFIFO_addIfNotPresent
#[tokio::test]
async fn add_if_not_present() {
    let f = plain();
    assert_eq!(
        f.add_if_not_present(Deltas::from(vec![])),
        Err(Error::ZeroLengthDeltas)
    );

    f.add(obj("b", 3));
    let b3 = pop(&f).await;
    f.add(obj("c", 4));
    let c4 = pop(&f).await;
    assert!(f.is_empty());

    f.add(obj("a", 1));
    f.add(obj("b", 2));
    f.add_if_not_present(b3).expect("non-empty");
    f.add_if_not_present(c4).expect("non-empty");
    assert_eq!(f.len(), 3);
    let mut got = Vec::new();
    while !f.is_empty() {
        got.push(newest_payload(&pop(&f).await));
    }
    assert_eq!(got, ["a@1", "b@2", "c@4"]);
}

// TestDeltaFIFO_KeyOf
#[test]
fn key_of_objects_tombstones_and_deltas() {
    let object = MaybeTombstone::Object(Arc::new(obj("A", 1)));
    assert_eq!(object.key(), key("A"));
    let tombstone: MaybeTombstone<ConfigMap> = MaybeTombstone::Tombstone(DeletedFinalStateUnknown {
        key: key("B"),
        obj: None,
    });
    assert_eq!(tombstone.key(), key("B"));
    let deltas = Deltas::from(vec![Delta {
        kind: Added,
        object: MaybeTombstone::Object(Arc::new(obj("C", 1))),
    }]);
    assert_eq!(deltas.key(), Some(key("C")));
    let deltas: Deltas<ConfigMap> = Deltas::from(vec![Delta {
        kind: Deleted,
        object: MaybeTombstone::Tombstone(DeletedFinalStateUnknown {
            key: key("D"),
            obj: None,
        }),
    }]);
    assert_eq!(deltas.key(), Some(key("D")));
}

// TestDeltaFIFO_HasSynced
#[tokio::test]
async fn has_synced_table() {
    type Row = (&'static str, fn(&DeltaFifo<ConfigMap>), usize, bool);
    let rows: [Row; 7] = [
        ("empty", |_| {}, 0, false),
        ("add", |f| f.add(obj("a", 1)), 0, true),
        ("replace empty", |f| f.replace(vec![], "0"), 0, true),
        (
            "replace two",
            |f| f.replace(vec![obj("a", 1), obj("b", 2)], "0"),
            0,
            false,
        ),
        (
            "replace two, pop one",
            |f| f.replace(vec![obj("a", 1), obj("b", 2)], "0"),
            1,
            false,
        ),
        (
            "replace two, pop two",
            |f| f.replace(vec![obj("a", 1), obj("b", 2)], "0"),
            2,
            true,
        ),
        (
            "replace duplicate key, pop one",
            |f| f.replace(vec![obj("a", 1), obj("a", 2)], "0"),
            1,
            true,
        ),
    ];
    for (name, actions, pops, want) in rows {
        let f = plain();
        actions(&f);
        for _ in 0..pops {
            pop(&f).await;
        }
        assert_eq!(f.has_synced(), want, "{name}");
    }
}

// TestDeltaFIFO_PopShouldUnblockWhenClosed
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pop_unblocks_when_closed() {
    let f = Arc::new(plain());
    let waiters: Vec<_> = (0..10)
        .map(|_| {
            let f = Arc::clone(&f);
            tokio::spawn(async move {
                let popped: Popped = f.pop(|_, _| Ok(())).await;
                popped.map(|_| ())
            })
        })
        .collect();
    tokio::task::yield_now().await;
    f.close();
    for waiter in waiters {
        let result = tokio::time::timeout(Duration::from_millis(500), waiter).await;
        assert_eq!(
            result.expect("pop returned in time").expect("task"),
            Err(PopError::Closed)
        );
    }
}

#[tokio::test]
async fn consecutive_deletes_collapse() {
    let tomb = |name: &str, o: ConfigMap| {
        MaybeTombstone::Tombstone(DeletedFinalStateUnknown {
            key: key(name),
            obj: Some(Arc::new(o)),
        })
    };
    let real = |o: ConfigMap| MaybeTombstone::Object(Arc::new(o));
    // (older, newer) -> survivor
    let cases = [
        (real(obj("x", 1)), tomb("x", obj("x", 2)), "x@1"),
        (tomb("x", obj("x", 1)), real(obj("x", 2)), "x@2"),
        (real(obj("x", 1)), real(obj("x", 2)), "x@1"),
        (tomb("x", obj("x", 1)), tomb("x", obj("x", 2)), "DFSU{x, x@2}"),
    ];
    for (older, newer, survivor) in cases {
        let mut deltas = vec![
            Delta {
                kind: Deleted,
                object: older,
            },
            Delta {
                kind: Deleted,
                object: newer,
            },
        ];
        dedup_deletions(&mut deltas);
        assert_eq!(
            deltas.iter().map(describe).collect::<Vec<_>>(),
            [e(Deleted, survivor)]
        );
    }
}

fn prepared(f: &DeltaFifo<ConfigMap>, objects: Vec<ConfigMap>) -> Vec<Arc<ConfigMap>> {
    objects.into_iter().map(|o| f.prepare(o)).collect()
}

/// A relist handed over page by page: each page is queued at once and can be popped before the
/// list ends; the end queues the tombstones, and the initial population is what is still
/// queued then, so the queue has synced only once every page and tombstone was popped.
#[tokio::test]
async fn replace_by_pages_queues_each_page_at_once_and_syncs_after_the_end() {
    let f = with_known(vec![obj("gone", 1)]);
    let mut relist = f.begin_relist();
    relist.page(prepared(&f, vec![obj("a", 2), obj("b", 2)]));
    assert_eq!(
        queued(&f),
        ["a", "b"],
        "the first page is queued before the list ends"
    );
    let (popped, initial) = pop_telling_initial(&f).await;
    assert_eq!(popped, [e(Sync, "a@2")]);
    assert!(initial, "a page of the first list is part of the initial list");
    assert!(!f.has_synced(), "the list has not ended");

    relist.page(prepared(&f, vec![obj("c", 2)]));
    relist.finish("2");
    assert!(!f.has_synced(), "b, c and the tombstone of gone are still queued");
    assert_eq!(
        pop_all(&f).await,
        [
            vec![e(Sync, "b@2")],
            vec![e(Sync, "c@2")],
            vec![e(Deleted, "DFSU{gone, gone@1}")],
        ]
    );
    assert!(f.has_synced());
}

/// A key listed by an earlier page is not deleted at the end, even once popped: the keys of
/// every page count, not only those still queued.
#[tokio::test]
async fn replace_by_pages_keeps_popped_keys_of_earlier_pages() {
    let f = with_known(vec![obj("a", 1), obj("b", 1)]);
    let mut relist = f.begin_relist();
    relist.page(prepared(&f, vec![obj("a", 2)]));
    pop(&f).await;
    relist.page(prepared(&f, vec![]));
    relist.finish("2");
    assert_eq!(pop_all(&f).await, [vec![e(Deleted, "DFSU{b, b@1}")]]);
    assert!(f.has_synced());
}

/// A deletion inside a relist (a streaming list's initial events) is queued after the object's
/// page and takes the key off the listed ones, without ending the initial population: the
/// queue has not synced until the relist ends, even with nothing left to pop.
#[tokio::test]
async fn a_deletion_inside_a_relist_does_not_end_the_initial_population() {
    let f = with_known(vec![]);
    let mut relist = f.begin_relist();
    relist.page(prepared(&f, vec![obj("a", 2), obj("b", 2)]));
    relist.delete(f.prepare(obj("b", 3)));
    assert_eq!(
        pop_all(&f).await,
        [vec![e(Sync, "a@2")], vec![e(Sync, "b@2"), e(Deleted, "b@3")]]
    );
    assert!(!f.has_synced(), "the relist has not ended");
    relist.finish("3");
    assert!(f.has_synced());
    assert!(f.is_empty(), "b is not listed, and not known: no tombstone");
}

/// A queue publishing the resource version its consumer caught up with to the returned
/// receiver.
fn publishing_caught_up() -> (DeltaFifo<ConfigMap>, watch::Receiver<String>) {
    let caught_up = Arc::new(watch::Sender::new(String::new()));
    let receiver = caught_up.subscribe();
    (plain().publish_caught_up_to(caught_up), receiver)
}

#[tokio::test]
async fn the_caught_up_version_moves_only_when_every_received_change_was_processed() {
    let (f, caught_up) = publishing_caught_up();
    f.replace(vec![obj("a", 3)], "5");
    assert_eq!(*caught_up.borrow(), "", "the listed change is not processed yet");
    pop(&f).await;
    assert_eq!(
        *caught_up.borrow(),
        "5",
        "the queue ran empty: the list is applied"
    );

    ReflectorStore::add(&f, Arc::new(obj("b", 6)));
    ReflectorStore::update_resource_version(&f, "6");
    ReflectorStore::update(&f, Arc::new(obj("c", 7)));
    ReflectorStore::update_resource_version(&f, "7");
    assert_eq!(*caught_up.borrow(), "5", "b and c are still queued");
    pop(&f).await;
    assert_eq!(*caught_up.borrow(), "5", "c is still queued");
    pop(&f).await;
    assert_eq!(*caught_up.borrow(), "7");
}

#[tokio::test]
async fn a_bookmark_on_an_empty_queue_is_caught_up_with_at_once() {
    let (f, caught_up) = publishing_caught_up();
    f.replace(Vec::new(), "5");
    assert_eq!(
        *caught_up.borrow(),
        "5",
        "an empty list leaves nothing to process"
    );
    ReflectorStore::update_resource_version(&f, "9");
    assert_eq!(*caught_up.borrow(), "9");
}

#[tokio::test]
async fn a_change_popped_before_its_version_was_received_counts_once_it_is() {
    let (f, caught_up) = publishing_caught_up();
    f.replace(Vec::new(), "5");
    ReflectorStore::add(&f, Arc::new(obj("b", 6)));
    pop(&f).await;
    assert_eq!(*caught_up.borrow(), "5", "6 was not received yet");
    ReflectorStore::update_resource_version(&f, "6");
    assert_eq!(*caught_up.borrow(), "6");
}

#[tokio::test]
async fn a_requeued_change_holds_the_caught_up_version_back() {
    let (f, caught_up) = publishing_caught_up();
    f.replace(Vec::new(), "5");
    ReflectorStore::add(&f, Arc::new(obj("b", 6)));
    ReflectorStore::update_resource_version(&f, "6");
    let requeued = f
        .pop(|_, _| Err::<(), ProcessError<()>>(ProcessError::Requeue(None)))
        .await;
    assert!(requeued.is_ok());
    assert_eq!(*caught_up.borrow(), "5", "b went back to the queue unprocessed");
    pop(&f).await;
    assert_eq!(*caught_up.borrow(), "6");
}
