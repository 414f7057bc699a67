use std::{
    sync::{Arc, Mutex, OnceLock, Weak},
    time::Duration,
};

use k8s_openapi::api::core::v1::Pod;
use kube::api::ObjectMeta;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::{
    reflector::{Config, Reflector},
    source::ListerWatcher,
    testing::FakeControllerSource,
};

/// A pod named `name` carrying `val` in its `val` label (client-go's `testUndeltaObject`).
fn obj(name: &str, val: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some([("val".to_owned(), val.to_owned())].into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    }
}

/// `(name, val)` of each pod, sorted by name.
fn names_and_vals(pods: &[Arc<Pod>]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = pods
        .iter()
        .map(|p| {
            let val = p.metadata.labels.as_ref().and_then(|l| l.get("val")).cloned();
            (
                p.metadata.name.clone().unwrap_or_default(),
                val.unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Every push, in order.
type Pushes = Arc<Mutex<Vec<Vec<Arc<Pod>>>>>;

/// A store recording every push.
fn recording() -> (UndeltaStore<Pod>, Pushes) {
    let pushes = Arc::new(Mutex::new(Vec::new()));
    let store = UndeltaStore::new({
        let pushes = Arc::clone(&pushes);
        move |pods: Vec<Arc<Pod>>| pushes.lock().expect("not poisoned").push(pods)
    });
    (store, pushes)
}

fn pair(name: &str, val: &str) -> (String, String) {
    (name.to_owned(), val.to_owned())
}

// TestUpdateCallsPush
#[test]
fn update_calls_push() {
    let (u, pushes) = recording();
    u.add(Arc::new(obj("a", "2")));
    u.update(Arc::new(obj("a", "1")));
    let pushes = pushes.lock().expect("not poisoned");
    assert_eq!(pushes.len(), 2, "one push per change");
    assert_eq!(names_and_vals(&pushes[1]), [pair("a", "1")]);
}

// TestDeleteCallsPush
#[test]
fn delete_calls_push() {
    let (u, pushes) = recording();
    u.add(Arc::new(obj("a", "2")));
    u.delete(&obj("a", ""));
    let pushes = pushes.lock().expect("not poisoned");
    assert_eq!(pushes.len(), 2, "one push per change");
    assert!(pushes[1].is_empty(), "the object is gone");
}

// TestReadsDoNotCallPush
#[test]
fn reads_do_not_call_push() {
    let (u, pushes) = recording();
    let _ = u.list();
    let _ = u.get(&obj("a", ""));
    let _ = u.store().get_by_key(&ObjectKey::new("", "a"));
    assert!(
        ReflectorStore::resync(&u).is_ok(),
        "a resync succeeds without pushing"
    );
    assert!(pushes.lock().expect("not poisoned").is_empty(), "no push");
}

// TestReplaceCallsPush
#[test]
fn replace_calls_push() {
    let (u, pushes) = recording();
    u.replace([Arc::new(obj("a", "1"))]);
    let pushes = pushes.lock().expect("not poisoned");
    assert_eq!(pushes.len(), 1, "one push per replace");
    assert_eq!(names_and_vals(&pushes[0]), [pair("a", "1")]);
}

#[test]
fn pushes_share_the_stored_objects() {
    let (u, pushes) = recording();
    let a = Arc::new(obj("a", "1"));
    u.add(Arc::clone(&a));
    let pushes = pushes.lock().expect("not poisoned");
    assert!(
        Arc::ptr_eq(&pushes[0][0], &a),
        "the pushed object is the stored Arc"
    );
}

#[test]
fn a_panicking_push_is_counted_and_the_store_goes_on() {
    let pushes = Arc::new(Mutex::new(Vec::new()));
    let u = UndeltaStore::new({
        let pushes = Arc::clone(&pushes);
        move |pods: Vec<Arc<Pod>>| {
            if pods.len() == 1 {
                panic!("push bug");
            }
            pushes.lock().expect("not poisoned").push(names_and_vals(&pods));
        }
    });
    u.add(Arc::new(obj("a", "1")));
    assert_eq!(u.push_panics(), 1);
    assert_eq!(u.len(), 1, "the change is kept");
    u.add(Arc::new(obj("b", "1")));
    assert_eq!(u.push_panics(), 1);
    assert_eq!(
        *pushes.lock().expect("not poisoned"),
        [vec![pair("a", "1"), pair("b", "1")]]
    );
}

#[test]
fn a_push_that_changes_its_store_pushes_again() {
    let this: Arc<OnceLock<Weak<UndeltaStore<Pod>>>> = Arc::new(OnceLock::new());
    let pushes = Arc::new(Mutex::new(Vec::new()));
    let u = Arc::new(UndeltaStore::new({
        let this = Arc::clone(&this);
        let pushes = Arc::clone(&pushes);
        move |pods: Vec<Arc<Pod>>| {
            pushes.lock().expect("not poisoned").push(names_and_vals(&pods));
            let store = this.get().and_then(Weak::upgrade).expect("store alive");
            if store.get_by_key(&ObjectKey::new("", "b")).is_none() {
                store.add(Arc::new(obj("b", "added by push")));
            }
        }
    }));
    this.set(Arc::downgrade(&u)).expect("set once");
    u.add(Arc::new(obj("a", "1")));
    assert_eq!(
        *pushes.lock().expect("not poisoned"),
        [
            vec![pair("a", "1")],
            vec![pair("a", "1"), pair("b", "added by push")]
        ]
    );
}

#[test]
fn pushes_from_concurrent_writers_follow_the_order_of_changes() {
    let (u, pushes) = recording();
    let u = Arc::new(u);
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let u = Arc::clone(&u);
            std::thread::spawn(move || {
                for i in 0..50 {
                    u.add(Arc::new(obj(&format!("pod-{t}-{i}"), "1")));
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("the writer finishes");
    }
    let lens: Vec<usize> = pushes
        .lock()
        .expect("not poisoned")
        .iter()
        .map(Vec::len)
        .collect();
    assert_eq!(
        lens,
        (1..=200).collect::<Vec<_>>(),
        "each push holds one more object than the one before, the last all of them"
    );
}

async fn next_push(rx: &mut mpsc::UnboundedReceiver<Vec<(String, String)>>) -> Vec<(String, String)> {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a push within 10s")
        .expect("the store is alive")
}

#[tokio::test]
async fn a_reflector_pushes_after_its_list_and_after_each_watch_event() {
    let source = Arc::new(FakeControllerSource::<Pod>::new());
    source.add(obj("a", "1"));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let undelta = Arc::new(UndeltaStore::new(move |pods: Vec<Arc<Pod>>| {
        let _ = tx.send(names_and_vals(&pods));
    }));
    let reflector = Reflector::new(
        "pods",
        Arc::clone(&source) as Arc<dyn ListerWatcher<Pod>>,
        Arc::clone(&undelta) as Arc<dyn ReflectorStore<Pod>>,
        Config::default(),
    );
    let cancel = CancellationToken::new();
    let running = tokio::spawn({
        let cancel = cancel.clone();
        async move { reflector.run(cancel).await }
    });

    assert_eq!(next_push(&mut rx).await, [pair("a", "1")], "after the list");
    source.add(obj("b", "1"));
    assert_eq!(
        next_push(&mut rx).await,
        [pair("a", "1"), pair("b", "1")],
        "after ADDED"
    );
    source.modify(obj("a", "2"));
    assert_eq!(
        next_push(&mut rx).await,
        [pair("a", "2"), pair("b", "1")],
        "after MODIFIED"
    );
    source.delete(obj("b", "1"));
    assert_eq!(next_push(&mut rx).await, [pair("a", "2")], "after DELETED");
    assert_eq!(names_and_vals(&undelta.store().list()), [pair("a", "2")]);

    cancel.cancel();
    running.await.expect("the reflector stops");
    assert_eq!(undelta.push_panics(), 0);
}
