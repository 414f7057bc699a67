//! [`TermFence`]: what a shard's caches may still hold from before its term began.
//!
//! A shard that loses its Lease and takes it back in the same process keeps its caches. While
//! it had lost the Lease, the sharder may have declared it dead and moved its objects to other
//! shards, then given the Lease back. The label changes of those moves reach the shard's caches
//! by watch, a little after the shard holds its Lease again: for those milliseconds its caches
//! still show objects labelled for it that other shards own now. The same holds for a shard
//! that restarts under its name while the sharder still moves its objects.
//!
//! So at the start of each term, before its controllers start, a sharded manager lists the
//! shard's objects of every resource of the ring (metadata only, a consistent read). A cached
//! object that the list does not hold, at a version no newer than the list, is not the
//! shard's: its controllers leave it alone until a newer version of it arrives. The sharder
//! moves a dead shard's objects before it gives its Lease back, so every move is older than the
//! list.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, PoisonError, RwLock},
    time::Duration,
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tokio_util::sync::CancellationToken;

use super::{resource_type::ResourceType, shard::Shard};
use crate::key::ObjectKey;

/// The first wait after a failed list; doubled up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(100);
const MAX_RETRY: Duration = Duration::from_secs(5);

/// The shard's objects of one resource when its term began.
#[derive(Debug, Default)]
struct Listed {
    /// The list's resource version.
    resource_version: u64,
    keys: HashSet<ObjectKey>,
}

/// The shard's objects of every resource of the ring when its current term began (see the
/// [module documentation](self)).
#[derive(Debug, Default)]
pub(crate) struct TermFence {
    /// By `(group, kind)`.
    listed: HashMap<(String, String), Listed>,
}

/// A shard's current [`TermFence`], shared by its clones (its controllers' gates).
#[derive(Debug, Clone, Default)]
pub(crate) struct CurrentFence(Arc<RwLock<Option<Arc<TermFence>>>>);

impl CurrentFence {
    /// Whether the object of `group` and `kind` with `metadata`, labelled for the shard in a
    /// cache, may belong to another shard by now: the term's list did not hold it, and the
    /// cache's version is not newer than the list.
    pub(crate) fn is_stale(&self, group: &str, kind: &str, metadata: &ObjectMeta) -> bool {
        let current = self.0.read().unwrap_or_else(PoisonError::into_inner).clone();
        let Some(fence) = current else {
            return false;
        };
        let Some(listed) = fence.listed.get(&(group.to_owned(), kind.to_owned())) else {
            return false;
        };
        let newer = metadata
            .resource_version
            .as_deref()
            .and_then(|version| version.parse::<u64>().ok())
            .is_none_or(|version| version > listed.resource_version);
        if newer {
            return false;
        }
        let key = ObjectKey::new(
            metadata.namespace.as_deref().unwrap_or_default(),
            metadata.name.as_deref().unwrap_or_default(),
        );
        !listed.keys.contains(&key)
    }

    fn set(&self, fence: TermFence) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(fence));
    }
}

impl Shard {
    /// Lists the shard's objects of every resource of the ring through `client` and fences
    /// the term with them (see the [module documentation](self)), retrying failed lists with
    /// a backoff. Returns `false` if `stop` was cancelled first (the term ended).
    pub(crate) async fn fence_term(&self, client: &kube::Client, stop: &CancellationToken) -> bool {
        let mut retry = FIRST_RETRY;
        loop {
            let listed = tokio::select! {
                () = stop.cancelled() => return false,
                listed = self.list_own(client) => listed,
            };
            match listed {
                Ok(fence) => {
                    self.current_fence().set(fence);
                    return true;
                }
                Err(error) => {
                    tracing::warn!(shard = %self.name(), %error, ?retry, "failed to list the shard's objects at the start of its term; its controllers start once it succeeds");
                }
            }
            tokio::select! {
                () = stop.cancelled() => return false,
                () = tokio::time::sleep(retry) => {}
            }
            retry = (retry * 2).min(MAX_RETRY);
        }
    }

    async fn list_own(&self, client: &kube::Client) -> Result<TermFence, String> {
        let selector = self.selector();
        let mut fence = TermFence::default();
        for resource in self.ring().all_types() {
            let (keys, version) = list_keys(resource, client, &selector).await?;
            let resource_version = version.parse::<u64>().map_err(|_| {
                format!("the list of {resource} has the resource version {version:?}, not a number")
            })?;
            let listed = Listed {
                resource_version,
                keys: keys.into_iter().collect(),
            };
            fence
                .listed
                .insert((resource.group().to_owned(), resource.kind().to_owned()), listed);
        }
        Ok(fence)
    }
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
