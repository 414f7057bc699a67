//! The lock: one `coordination.k8s.io/v1` Lease, read and written with optimistic concurrency
//! (client-go's `resourcelock.LeaseLock`).

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, PostParams};

use super::error::{Error, Result};

/// Reads, creates and replaces the lease. Replacing sends the resourceVersion of the lease it
/// read, so a write that raced with another replica's fails with 409 Conflict.
#[derive(Clone)]
pub(crate) struct LeaseLock {
    api: Api<Lease>,
    name: String,
    /// `namespace/name`, for errors and logs.
    lease: String,
    /// Labels the lease must carry.
    labels: BTreeMap<String, String>,
}

impl LeaseLock {
    pub(crate) fn new(
        client: kube::Client,
        namespace: &str,
        name: &str,
        labels: BTreeMap<String, String>,
    ) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            lease: format!("{namespace}/{name}"),
            labels,
        }
    }

    /// The lease, `None` if it does not exist.
    pub(crate) async fn get(&self) -> Result<Option<Lease>> {
        self.api
            .get_opt(&self.name)
            .await
            .map_err(|source| self.error("get", source))
    }

    /// Creates the lease with this spec; 409 AlreadyExists if another replica created it first.
    pub(crate) async fn create(&self, spec: LeaseSpec) -> Result<Lease> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                labels: (!self.labels.is_empty()).then(|| self.labels.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        };
        self.api
            .create(&PostParams::default(), &lease)
            .await
            .map_err(|source| self.error("create", source))
    }

    /// Replaces the spec of `current` (as read, with its resourceVersion); 409 Conflict if the
    /// lease changed since.
    pub(crate) async fn update(
        &self,
        current: &Lease,
        spec: LeaseSpec,
        action: &'static str,
    ) -> Result<Lease> {
        let mut metadata = current.metadata.clone();
        if !self.labels.is_empty() {
            // merged, not replaced: the sharder keeps its own labels on a shard's lease
            let labels = metadata.labels.get_or_insert_with(BTreeMap::new);
            for (key, value) in &self.labels {
                labels.insert(key.clone(), value.clone());
            }
        }
        let lease = Lease {
            metadata,
            spec: Some(spec),
        };
        self.api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
            .map_err(|source| self.error(action, source))
    }

    fn error(&self, action: &'static str, source: kube::Error) -> Error {
        Error::Api {
            action,
            lease: self.lease.clone(),
            source,
        }
    }
}

/// The holder named in a spec; empty when nobody holds the lease.
pub(crate) fn holder(spec: &LeaseSpec) -> &str {
    spec.holder_identity.as_deref().unwrap_or_default()
}

/// Now, as the lease's timestamps carry it.
pub(crate) fn now() -> MicroTime {
    MicroTime(Timestamp::now())
}
