//! [`Tally`]: which objects a reconcile function has seen, shared by every consumer.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::core::v1::Pod;
use tokio::sync::Notify;

/// Counts reconciles and the distinct pods reconciled; wakes a waiter once every pod was.
///
/// Pods are told apart by the index that ends their name (`…-<index>`, as the generator names
/// them), so marking one costs an atomic swap and no allocation.
#[derive(Debug)]
pub(crate) struct Tally {
    seen: Vec<AtomicBool>,
    distinct: AtomicUsize,
    reconciles: AtomicU64,
    /// Names that carry no index below the number of pods.
    unknown: AtomicU64,
    /// Distinct pods that complete the tally (every pod unless [`Tally::expect`] said less).
    target: AtomicUsize,
    complete: Notify,
}

impl Tally {
    /// A tally for `objects` pods, none seen yet.
    pub(crate) fn new(objects: usize) -> Arc<Self> {
        Arc::new(Self {
            seen: (0..objects).map(|_| AtomicBool::new(false)).collect(),
            distinct: AtomicUsize::new(0),
            reconciles: AtomicU64::new(0),
            unknown: AtomicU64::new(0),
            target: AtomicUsize::new(objects),
            complete: Notify::new(),
        })
    }

    /// Completes the tally once `distinct` pods were reconciled instead of every pod: for a
    /// consumer that is given a part of the pods (a shard), told once it knows how many.
    pub(crate) fn expect(&self, distinct: usize) {
        self.target
            .store(distinct.min(self.seen.len()), Ordering::Release);
        if self.distinct() >= distinct {
            self.complete.notify_one();
        }
    }

    /// Records one reconcile of `pod`.
    pub(crate) fn reconciled(&self, pod: &Pod) {
        self.reconciles.fetch_add(1, Ordering::Relaxed);
        let Some(flag) = Self::index(pod).and_then(|index| self.seen.get(index)) else {
            self.unknown.fetch_add(1, Ordering::Relaxed);
            return;
        };
        if !flag.swap(true, Ordering::Relaxed)
            && self.distinct.fetch_add(1, Ordering::AcqRel) + 1 == self.target.load(Ordering::Acquire)
        {
            self.complete.notify_one();
        }
    }

    /// The index at the end of the pod's name.
    fn index(pod: &Pod) -> Option<usize> {
        let name = pod.metadata.name.as_deref()?;
        name.rsplit_once('-')?.1.parse().ok()
    }

    /// Waits until every pod (or as many as [`expect`](Self::expect) said) was reconciled at
    /// least once, or `timeout` passed; returns whether they were.
    pub(crate) async fn wait_complete(&self, timeout: Duration) -> bool {
        let done = || self.distinct() >= self.target.load(Ordering::Acquire);
        if self.seen.is_empty() || done() {
            return true;
        }
        tokio::time::timeout(timeout, self.complete.notified())
            .await
            .is_ok()
            || done()
    }

    /// Pods reconciled at least once.
    pub(crate) fn distinct(&self) -> usize {
        self.distinct.load(Ordering::Acquire)
    }

    /// Reconciles so far, repeats included.
    pub(crate) fn reconciles(&self) -> u64 {
        self.reconciles.load(Ordering::Relaxed)
    }

    /// Reconciles of pods whose name carries no known index.
    pub(crate) fn unknown(&self) -> u64 {
        self.unknown.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.to_owned());
        pod
    }

    #[tokio::test]
    async fn completes_once_every_index_is_seen() {
        let tally = Tally::new(2);
        tally.reconciled(&pod("app-01-abc-x1-1"));
        tally.reconciled(&pod("app-01-abc-x1-1"));
        tally.reconciled(&pod("no-index-here"));
        assert_eq!((tally.distinct(), tally.reconciles(), tally.unknown()), (1, 3, 1));
        assert!(!tally.wait_complete(Duration::ZERO).await);
        tally.reconciled(&pod("app-00-def-y2-0"));
        assert!(tally.wait_complete(Duration::from_secs(5)).await);
        assert_eq!(tally.distinct(), 2);
    }

    #[tokio::test]
    async fn completes_at_the_expected_part() {
        let tally = Tally::new(10);
        tally.reconciled(&pod("app-01-abc-x1-1"));
        tally.reconciled(&pod("app-01-abc-x1-7"));
        tally.expect(3);
        assert!(!tally.wait_complete(Duration::ZERO).await);
        tally.reconciled(&pod("app-01-abc-x1-4"));
        assert!(tally.wait_complete(Duration::from_secs(5)).await);
        // told after the pods were reconciled
        let late = Tally::new(10);
        late.reconciled(&pod("app-01-abc-x1-2"));
        late.expect(1);
        assert!(late.wait_complete(Duration::from_secs(5)).await);
    }
}
