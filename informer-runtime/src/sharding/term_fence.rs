//! [`CurrentFence`]: what a shard's caches may still hold from before its term began.
//!
//! A shard that loses its Lease and takes it back in the same process keeps its caches. While
//! it had lost the Lease, the sharder may have declared it dead and moved its objects to other
//! shards, then given the Lease back. The label changes of those moves reach the shard's caches
//! by watch, a little after the shard holds its Lease again: for those milliseconds its caches
//! still show objects labelled for it that other shards own now. The same holds for a shard
//! that restarts under its name while the sharder still moves its objects.
//!
//! The sharder moves a dead shard's objects only while it holds the shard's Lease, so every
//! move is older than the Lease write that took the Lease back for the shard's new term, and a
//! term that found the Lease still naming the shard (nobody held it in between) needs no
//! fence. At the start of a term that took the Lease over, a sharded manager therefore fences
//! its caches:
//!
//! - a cached object whose version is newer than that write is the shard's, as labelled (the
//!   objects assigned to a joining or returning shard are all such);
//! - an older one waits (its reconcile is tried again shortly) until a list of the shard's
//!   objects of its resource (metadata only, a consistent read, made in the background when
//!   the term begins) answers: the object is the shard's if the list holds it, or if the cache
//!   got a version newer than the list since; otherwise it is left alone until a newer version
//!   of it arrives.

use std::{
    collections::HashSet,
    sync::{Arc, PoisonError, RwLock},
    time::Duration,
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tokio_util::sync::CancellationToken;

use super::{resource_type::ResourceType, ring::ControllerRing};
use crate::key::ObjectKey;

/// The first wait after a failed list; doubled up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(100);
const MAX_RETRY: Duration = Duration::from_secs(5);

/// The shard's objects of one resource when its term began.
#[derive(Debug, Default)]
struct Listed {
    group: String,
    kind: String,
    /// The list's resource version.
    resource_version: u64,
    keys: HashSet<ObjectKey>,
}

/// Where a term's fence stands.
#[derive(Debug)]
enum FenceState {
    /// The term began with a Lease write at this resource version; the list has not answered.
    Pending { began_at: u64 },
    /// The list answered, one entry per resource of the ring.
    Listed(Vec<Listed>),
}

/// What the fence says of a cached object labelled for the shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// It is the shard's, as its labels say.
    Current,
    /// It was not the shard's when the term's list was made, and the cache has no newer
    /// version of it: another shard may own it now.
    Moved,
    /// Older than the term, and the list has not answered yet: ask again shortly.
    Unknown,
}

/// A shard's current fence (see the [module documentation](self)), shared by its clones (its
/// controllers' gates). No fence (an unsharded run, or a term whose Lease write had no
/// comparable resource version) holds nothing back.
#[derive(Debug, Clone, Default)]
pub(crate) struct CurrentFence(Arc<RwLock<Option<Arc<FenceState>>>>);

impl CurrentFence {
    /// Where the object of `group` and `kind` with `metadata`, labelled for the shard in a
    /// cache, stands.
    pub(crate) fn standing(&self, group: &str, kind: &str, metadata: &ObjectMeta) -> Standing {
        let current = self.0.read().unwrap_or_else(PoisonError::into_inner).clone();
        let Some(state) = current else {
            return Standing::Current;
        };
        let Some(version) = metadata
            .resource_version
            .as_deref()
            .and_then(|version| version.parse::<u64>().ok())
        else {
            return Standing::Current;
        };
        match state.as_ref() {
            FenceState::Pending { began_at } if version > *began_at => Standing::Current,
            FenceState::Pending { .. } => Standing::Unknown,
            FenceState::Listed(listed) => {
                let Some(listed) = listed
                    .iter()
                    .find(|listed| listed.group == group && listed.kind == kind)
                else {
                    return Standing::Current;
                };
                let key = ObjectKey::new(
                    metadata.namespace.as_deref().unwrap_or_default(),
                    metadata.name.as_deref().unwrap_or_default(),
                );
                if version > listed.resource_version || listed.keys.contains(&key) {
                    Standing::Current
                } else {
                    Standing::Moved
                }
            }
        }
    }

    fn set(&self, state: Option<FenceState>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = state.map(Arc::new);
    }
}

impl CurrentFence {
    /// Fences a term of shard `shard` begun by a Lease write at resourceVersion
    /// `taken_over_at`, which took the Lease over from another holder or from none (see the
    /// [module documentation](self)): from now on, objects older than it wait until
    /// [`list_for_term`](Self::list_for_term) answers. `false`, and no fence, for a term that
    /// took the Lease over from nobody else (`None`: it still named the shard, so the sharder
    /// cannot have moved an object since), or at a version that cannot be compared.
    pub(crate) fn begin(&self, shard: &str, taken_over_at: Option<&str>) -> bool {
        let Some(taken_over_at) = taken_over_at else {
            self.set(None);
            return false;
        };
        let Ok(began_at) = taken_over_at.parse::<u64>() else {
            tracing::warn!(%shard, resource_version = taken_over_at, "the Lease write that began the term has no comparable resource version; the term is not fenced");
            self.set(None);
            return false;
        };
        self.set(Some(FenceState::Pending { began_at }));
        true
    }

    /// Lists the objects of every resource of `ring` that `selector` (the shard's) selects,
    /// through `client`, for the fence of the term begun with [`begin`](Self::begin),
    /// retrying failed lists with a backoff, until it answers or `stop` is cancelled (the term
    /// ended).
    pub(crate) async fn list_for_term(
        self,
        ring: Arc<ControllerRing>,
        selector: String,
        client: kube::Client,
        stop: CancellationToken,
    ) {
        let mut retry = FIRST_RETRY;
        loop {
            let listed = tokio::select! {
                () = stop.cancelled() => return,
                listed = list_own(&ring, &selector, &client) => listed,
            };
            match listed {
                Ok(listed) => {
                    self.set(Some(FenceState::Listed(listed)));
                    return;
                }
                Err(error) => {
                    tracing::warn!(%selector, %error, ?retry, "failed to list the shard's objects at the start of its term; objects cached before the term wait for it");
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(retry) => {}
            }
            retry = (retry * 2).min(MAX_RETRY);
        }
    }
}

async fn list_own(
    ring: &ControllerRing,
    selector: &str,
    client: &kube::Client,
) -> Result<Vec<Listed>, String> {
    let mut fence = Vec::new();
    for resource in ring.all_types() {
        let (keys, version) = list_keys(resource, client, selector).await?;
        let resource_version = version.parse::<u64>().map_err(|_| {
            format!("the list of {resource} has the resource version {version:?}, not a number")
        })?;
        fence.push(Listed {
            group: resource.group().to_owned(),
            kind: resource.kind().to_owned(),
            resource_version,
            keys: keys.into_iter().collect(),
        });
    }
    Ok(fence)
}

async fn list_keys(
    resource: &ResourceType,
    client: &kube::Client,
    selector: &str,
) -> Result<(Vec<ObjectKey>, String), String> {
    resource
        .access
        .list_keys(client.clone(), selector)
        .await
        .map_err(|error| format!("failed to list {resource}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(name: &str, version: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            resource_version: Some(version.into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn objects_older_than_the_term_wait_for_the_list_and_those_it_lacks_are_moved() {
        let fence = CurrentFence::default();
        let standing =
            |kind: &str, name: &str, version: &str| fence.standing("", kind, &cached(name, version));
        assert_eq!(standing("ConfigMap", "a", "5"), Standing::Current, "no fence");
        fence.set(Some(FenceState::Pending { began_at: 100 }));
        // (object, its cached version, what the pending fence says)
        for (name, version, expected) in [("a", "101", Standing::Current), ("a", "100", Standing::Unknown)] {
            assert_eq!(
                standing("ConfigMap", name, version),
                expected,
                "{name} at {version}"
            );
        }
        let listed = Listed {
            group: String::new(),
            kind: "ConfigMap".to_owned(),
            resource_version: 120,
            keys: HashSet::from([ObjectKey::new("default", "kept")]),
        };
        fence.set(Some(FenceState::Listed(vec![listed])));
        for (kind, name, version, expected) in [
            ("ConfigMap", "kept", "50", Standing::Current),
            ("ConfigMap", "gone", "50", Standing::Moved),
            // a version newer than the list is judged by its labels
            ("ConfigMap", "gone", "121", Standing::Current),
            // a resource the list did not cover
            ("Secret", "gone", "50", Standing::Current),
        ] {
            assert_eq!(
                standing(kind, name, version),
                expected,
                "{kind} {name} at {version}"
            );
        }
    }
}
