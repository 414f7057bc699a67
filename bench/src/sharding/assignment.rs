//! Which shard of a ring each pod is assigned to: the sharder's own consistent-hash ring
//! ([`HashRing`]: xxHash64 tokens, 100 per shard) over the hash key of each pod
//! (`/Pod/<namespace>/<name>`: the core group is empty), so that the labels the bench renders
//! and the placements it checks are the ones the sharder writes.

use informer_runtime::sharding::hash_ring::{HashRing, hash_key_for_object};

/// The ring of `shards`, as the sharder builds it for those available shards.
pub(crate) fn ring_of(shards: &[String]) -> HashRing {
    HashRing::new(shards.iter().cloned())
}

/// The index in `shards` of the shard `ring` assigns `key` to.
pub(crate) fn shard_index(ring: &HashRing, shards: &[String], key: &str) -> Option<usize> {
    let shard = ring.lookup(key)?;
    shards.iter().position(|candidate| candidate == shard)
}

/// The hash key of a pod.
pub(crate) fn pod_key(namespace: &str, name: &str) -> String {
    hash_key_for_object("", "Pod", Some(namespace), name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pods_key_has_the_core_group_and_its_kind() {
        assert_eq!(pod_key("ns-001", "web-0"), "/Pod/ns-001/web-0");
        let shards = vec!["shard-0".to_owned(), "shard-1".to_owned()];
        let ring = ring_of(&shards);
        let index = shard_index(&ring, &shards, "/Pod/ns-001/web-0").expect("a shard");
        assert_eq!(ring.lookup("/Pod/ns-001/web-0"), Some(shards[index].as_str()));
    }
}
