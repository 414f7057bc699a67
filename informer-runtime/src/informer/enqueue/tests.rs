use std::{collections::BTreeSet, sync::Arc, time::Duration};

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::OwnerReference};
use kube::api::ObjectMeta;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::{
    cache::DeletedFinalStateUnknown,
    informer::{Config, SharedIndexInformer},
    source::ListerWatcher,
    testing::FakeControllerSource,
    workqueue::{PriorityQueue, WorkQueue, default_controller_rate_limiter},
};

fn pod(name: &str, rv: &str) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            resource_version: Some(rv.into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    })
}

fn owned(name: &str, rv: &str, owner: &str) -> Arc<Pod> {
    let mut pod = (*pod(name, rv)).clone();
    pod.metadata.owner_references = Some(vec![OwnerReference {
        kind: "ReplicaSet".into(),
        name: owner.into(),
        controller: Some(true),
        ..OwnerReference::default()
    }]);
    Arc::new(pod)
}

fn owner_names(pod: &Pod) -> Vec<String> {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .map(|owner| owner.name.clone())
        .collect()
}

/// Takes every waiting item off `queue`.
async fn drain<T: Eq + std::hash::Hash + Clone + Ord>(queue: &WorkQueue<T>) -> BTreeSet<T> {
    let mut items = BTreeSet::new();
    while !queue.is_empty() {
        let item = queue.get().await.expect("an item");
        queue.done(&item);
        items.insert(item);
    }
    items
}

fn tombstone(key: &str, last: Option<Arc<Pod>>) -> MaybeTombstone<Pod> {
    MaybeTombstone::Tombstone(DeletedFinalStateUnknown {
        key: key.parse().expect("a valid key"),
        obj: last,
    })
}

fn keys<const N: usize>(texts: [&str; N]) -> BTreeSet<ObjectKey> {
    texts
        .iter()
        .map(|text| text.parse().expect("a valid key"))
        .collect()
}

#[tokio::test]
async fn by_key_enqueues_adds_updates_and_deletes() {
    let queue = Arc::new(WorkQueue::new());
    let handler = Enqueue::by_key(Arc::clone(&queue));
    handler.on_add(pod("a", "1"), true);
    handler.on_update(pod("b", "1"), pod("b", "2"));
    handler.on_delete(MaybeTombstone::Object(pod("c", "3")));
    assert_eq!(drain(&queue).await, keys(["ns/a", "ns/b", "ns/c"]));
}

#[tokio::test]
async fn resync_updates_are_skipped_unless_asked() {
    let queue = Arc::new(WorkQueue::new());
    let handler = Enqueue::by_key(Arc::clone(&queue));
    handler.on_update(pod("a", "1"), pod("a", "1"));
    assert_eq!(queue.len(), 0, "a resync is skipped");
    let handler = Enqueue::by_key(Arc::clone(&queue)).on_resync(true);
    handler.on_update(pod("a", "1"), pod("a", "1"));
    assert_eq!(drain(&queue).await, keys(["ns/a"]));
}

#[tokio::test]
async fn tombstones_enqueue_their_key_or_last_known_state() {
    let queue = Arc::new(WorkQueue::new());
    Enqueue::by_key(Arc::clone(&queue)).on_delete(tombstone("ns/gone", None));
    assert_eq!(drain(&queue).await, keys(["ns/gone"]));

    let owners = Arc::new(WorkQueue::new());
    let handler = Enqueue::new(Arc::clone(&owners), |pod: &Pod| owner_names(pod));
    handler.on_delete(tombstone("ns/gone", Some(owned("gone", "4", "rs-1"))));
    assert_eq!(drain(&owners).await, BTreeSet::from(["rs-1".to_owned()]));
    handler.on_delete(tombstone("ns/unknown", None));
    assert_eq!(owners.len(), 0, "nothing to map: logged, not enqueued");
}

#[tokio::test]
async fn a_custom_mapper_enqueues_old_and_new_items() {
    let queue = Arc::new(WorkQueue::new());
    let handler = Enqueue::new(Arc::clone(&queue), |pod: &Pod| owner_names(pod));
    handler.on_add(pod("orphan", "1"), false);
    assert_eq!(queue.len(), 0, "no items, nothing enqueued");
    handler.on_update(owned("a", "1", "rs-old"), owned("a", "2", "rs-new"));
    assert_eq!(
        drain(&queue).await,
        BTreeSet::from(["rs-new".to_owned(), "rs-old".to_owned()])
    );
}

#[tokio::test]
async fn works_with_shared_priority_queues_and_owned_work_queues() {
    let queue = Arc::new(PriorityQueue::new(default_controller_rate_limiter()).fifo(true));
    Enqueue::by_key(Arc::clone(&queue)).on_add(pod("a", "1"), false);
    assert_eq!(
        queue.get().await,
        Some((ObjectKey::new("ns", "a"), Priority::NORMAL))
    );

    let owned_queue: WorkQueue<ObjectKey> = WorkQueue::new();
    let handler = Enqueue::<Pod, _>::by_key(owned_queue);
    handler.on_add(pod("b", "1"), false);
    assert_eq!(handler.queue.len(), 1);
}

#[tokio::test]
async fn initial_list_and_resyncs_are_low_priority_and_live_changes_normal_or_as_set() {
    let queue = Arc::new(PriorityQueue::new(default_controller_rate_limiter()).fair_share(0));
    let handler = Enqueue::by_key(Arc::clone(&queue)).on_resync(true);
    handler.on_add(pod("listed", "1"), true);
    handler.on_update(pod("resynced", "1"), pod("resynced", "1"));
    handler.on_add(pod("created", "2"), false);
    handler.on_update(pod("changed", "1"), pod("changed", "3"));
    handler.on_delete(MaybeTombstone::Object(pod("deleted", "4")));
    let urgent = Enqueue::by_key(Arc::clone(&queue)).priority(Priority::HIGH);
    urgent.on_add(pod("urgent", "5"), false);
    urgent.on_add(pod("urgent-listed", "5"), true);
    let mut order = Vec::new();
    while !queue.is_empty() {
        let (key, priority) = queue.get().await.expect("an item");
        queue.done(&key);
        order.push((key.to_string(), priority));
    }
    let expected = [
        ("ns/urgent", Priority::HIGH),
        ("ns/created", Priority::NORMAL),
        ("ns/changed", Priority::NORMAL),
        ("ns/deleted", Priority::NORMAL),
        ("ns/listed", Priority::LOW),
        ("ns/resynced", Priority::LOW),
        ("ns/urgent-listed", Priority::LOW),
    ];
    let expected: Vec<_> = expected.iter().map(|(key, p)| ((*key).to_owned(), *p)).collect();
    assert_eq!(order, expected);
}

/// Waits in real time (handlers run on threads) while letting the runtime make progress.
async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::task::yield_now().await;
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[tokio::test(start_paused = true)]
async fn wired_to_a_running_informer() {
    let source = Arc::new(FakeControllerSource::<Pod>::new());
    source.add((*pod("a", "")).clone());
    let informer = SharedIndexInformer::from_arc(
        Arc::clone(&source) as Arc<dyn ListerWatcher<Pod>>,
        Config {
            resync_period: Duration::from_secs(1),
            ..Config::default()
        },
    );
    let queue = Arc::new(WorkQueue::new());
    let registration = informer
        .add_event_handler_with_resync_period(Enqueue::by_key(Arc::clone(&queue)), Duration::from_secs(1))
        .expect("added");
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    eventually("the initial list", || {
        registration.has_synced() && queue.len() == 1
    })
    .await;
    assert_eq!(drain(&queue).await, keys(["ns/a"]));

    // resyncs re-deliver `a` without enqueueing it
    let handled = registration.handled();
    tokio::time::advance(Duration::from_secs(3)).await;
    eventually("a resync", || {
        registration.handled() > handled && registration.backlog() == 0
    })
    .await;
    assert_eq!(queue.len(), 0, "resyncs are skipped");

    source.add((*pod("b", "")).clone());
    source.delete((*pod("a", "")).clone());
    eventually("the add and the delete", || queue.len() == 2).await;
    assert_eq!(drain(&queue).await, keys(["ns/a", "ns/b"]));

    cancel.cancel();
    task.await.expect("run returns");
}
