//! Which shard of a ring each pod is assigned to: the consistent-hash ring the sharder uses
//! (kubernetes-controller-sharding's `consistenthash.Ring`), so that the labels the bench
//! renders are the ones a sharder would write.
//!
//! Each shard puts [`VIRTUAL_NODES`] tokens on the ring, the xxHash64 (seed 0) of its name
//! followed by the decimal token index; a pod goes to the shard of the first token at or after
//! the hash of its key `<group>/<Kind>/<namespace>/<name>` (`/Pod/<namespace>/<name>` for a
//! pod, whose group is the core one), wrapping around past the last token.

use std::collections::HashMap;

/// Tokens per shard (the sharder's default).
pub(crate) const VIRTUAL_NODES: usize = 100;

/// A consistent-hash ring of shards.
#[derive(Debug, Clone)]
pub(crate) struct HashRing {
    tokens: Vec<u64>,
    shard_of_token: HashMap<u64, usize>,
    shards: Vec<String>,
}

fn xxhash64(data: &str) -> u64 {
    xxhash_rust::xxh64::xxh64(data.as_bytes(), 0)
}

impl HashRing {
    /// The ring of `shards`.
    pub(crate) fn new(shards: &[String]) -> Self {
        let mut tokens = Vec::with_capacity(shards.len() * VIRTUAL_NODES);
        let mut shard_of_token = HashMap::with_capacity(shards.len() * VIRTUAL_NODES);
        for (shard_index, shard) in shards.iter().enumerate() {
            for token_index in 0..VIRTUAL_NODES {
                let token = xxhash64(&format!("{shard}{token_index}"));
                tokens.push(token);
                // A token two shards share goes to the one added last, as on the sharder's ring.
                shard_of_token.insert(token, shard_index);
            }
        }
        tokens.sort_unstable();
        Self {
            tokens,
            shard_of_token,
            shards: shards.to_vec(),
        }
    }

    /// The index (in the shards given to [`new`](Self::new)) of the shard `key` belongs to;
    /// `None` on a ring of no shards.
    pub(crate) fn shard_index(&self, key: &str) -> Option<usize> {
        if self.tokens.is_empty() {
            return None;
        }
        let hash = xxhash64(key);
        let index = self.tokens.partition_point(|token| *token < hash);
        let token = self.tokens[if index == self.tokens.len() { 0 } else { index }];
        self.shard_of_token.get(&token).copied()
    }

    /// The name of the shard `key` belongs to.
    pub(crate) fn lookup(&self, key: &str) -> Option<&str> {
        self.shard_index(key).map(|index| self.shards[index].as_str())
    }
}

/// The hash key of a pod: its group (the core group, empty), kind, namespace and name.
pub(crate) fn pod_key(namespace: &str, name: &str) -> String {
    format!("/Pod/{namespace}/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shards(count: usize) -> Vec<String> {
        (0..count).map(|index| format!("shard-{index}")).collect()
    }

    #[test]
    fn every_key_has_a_shard_and_the_shares_are_even() {
        let ring = HashRing::new(&shards(4));
        let mut counts = [0usize; 4];
        for index in 0..100_000 {
            let key = pod_key(&format!("ns-{:03}", index % 100), &format!("pod-{index}"));
            counts[ring.shard_index(&key).expect("a shard")] += 1;
        }
        for count in counts {
            assert!((21_250..=28_750).contains(&count), "{counts:?}");
        }
        assert_eq!(HashRing::new(&[]).lookup("/Pod/a/b"), None);
    }

    #[test]
    fn a_joining_shard_takes_keys_only_from_the_others() {
        let four = HashRing::new(&shards(4));
        let five = HashRing::new(&shards(5));
        for index in 0..10_000 {
            let key = pod_key("ns", &format!("pod-{index}"));
            let after = five.lookup(&key).expect("a shard");
            if after != "shard-4" {
                assert_eq!(four.lookup(&key), Some(after), "{key} moved between old shards");
            }
        }
    }
}
