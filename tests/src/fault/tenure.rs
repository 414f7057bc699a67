//! The ownership check of sharded controllers: each reconcile of an object is logged with the
//! shard that ran it and the time it acted (from its start to its last write the server
//! accepted), and no two shards may act on one object at once.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Instant,
};

/// One reconcile that acted: which object, which shard, from when to when.
#[derive(Debug, Clone)]
pub struct Tenure {
    /// The object's name.
    pub object: String,
    /// The shard that reconciled it.
    pub shard: String,
    /// When the reconcile started.
    pub from: Instant,
    /// When it last acted: its last accepted write, or its start if it wrote nothing.
    pub to: Instant,
}

/// Every shard's reconciles, shared between the shards and the test.
#[derive(Debug, Clone, Default)]
pub struct TenureLog {
    tenures: Arc<Mutex<Vec<Tenure>>>,
}

impl TenureLog {
    /// Records that `shard` acted on `object` from `from` until now.
    pub fn record(&self, object: &str, shard: &str, from: Instant) {
        self.lock().push(Tenure {
            object: object.to_owned(),
            shard: shard.to_owned(),
            from,
            to: Instant::now(),
        });
    }

    /// Reconciles recorded so far.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// The shards that reconciled each object, in order, without repeats in a row.
    pub fn owners(&self) -> HashMap<String, Vec<String>> {
        let mut tenures = self.lock().clone();
        tenures.sort_by_key(|tenure| tenure.from);
        let mut owners: HashMap<String, Vec<String>> = HashMap::new();
        for tenure in tenures {
            let shards = owners.entry(tenure.object).or_default();
            if shards.last() != Some(&tenure.shard) {
                shards.push(tenure.shard);
            }
        }
        owners
    }

    /// The pairs of reconciles of one object by two shards whose times overlap.
    pub fn overlaps(&self) -> Vec<(Tenure, Tenure)> {
        let mut by_object: HashMap<&str, Vec<&Tenure>> = HashMap::new();
        let tenures = self.lock().clone();
        for tenure in &tenures {
            by_object.entry(&tenure.object).or_default().push(tenure);
        }
        let mut overlaps = Vec::new();
        for (_, mut reconciles) in by_object {
            reconciles.sort_by_key(|tenure| tenure.from);
            for (index, earlier) in reconciles.iter().enumerate() {
                let later = reconciles[index + 1..]
                    .iter()
                    .take_while(|later| later.from <= earlier.to)
                    .filter(|later| later.shard != earlier.shard);
                overlaps.extend(later.map(|later| ((*earlier).clone(), (*later).clone())));
            }
        }
        overlaps
    }

    /// Panics, naming `seed`, if two shards acted on one object at once.
    pub fn assert_exclusive(&self, seed: u64) {
        let overlaps = self.overlaps();
        assert!(
            overlaps.is_empty(),
            "seed {seed}: {} pairs of reconciles by two shards overlapped, first: {:?}",
            overlaps.len(),
            overlaps.first()
        );
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Tenure>> {
        self.tenures.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn reconciles_of_two_shards_overlap_only_when_their_times_do() {
        let log = TenureLog::default();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let push = |object: &str, shard: &str, from: u64, to: u64| {
            log.lock().push(Tenure {
                object: object.into(),
                shard: shard.into(),
                from: at(from),
                to: at(to),
            });
        };
        push("a", "s0", 0, 10);
        push("a", "s1", 11, 20);
        push("a", "s0", 30, 40);
        push("b", "s0", 0, 10);
        push("b", "s0", 5, 15);
        assert!(
            log.overlaps().is_empty(),
            "hand-overs in turn, and one shard's own reconciles"
        );
        assert_eq!(log.owners()["a"], ["s0", "s1", "s0"]);
        push("b", "s1", 12, 13);
        let overlaps = log.overlaps();
        assert_eq!(overlaps.len(), 1);
        assert_eq!(
            (overlaps[0].0.shard.as_str(), overlaps[0].1.shard.as_str()),
            ("s0", "s1")
        );
    }
}
