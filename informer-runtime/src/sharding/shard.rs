//! [`Shard`]: one replica's place in a ring: its name, its Lease, and what it caches.

use std::{sync::Arc, time::Duration};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    error::{Error, Result},
    labels::{RING_LABEL, drain_label, shard_label},
    ring::ControllerRing,
    term_fence::CurrentFence,
};
use crate::{
    factory::{self, SharedInformerFactory, TypedResource},
    leader_election,
    scope::Scope,
};

/// One shard of a [`ControllerRing`]: a replica that holds its own Lease and reconciles only
/// the objects assigned to it.
///
/// Give it to [`Manager::builder`](crate::manager::Builder::shard): the manager then holds the
/// shard's Lease (named after the shard, labelled with the ring) instead of competing for a
/// leader's, caches only the ring's objects labelled for this shard, and its controllers hand
/// over objects the sharder drains.
///
/// ```
/// use std::time::Duration;
///
/// use informer_runtime::sharding::{ControllerRing, RingResource, Shard};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// let ring = ControllerRing::new("configmaps")?.resource(RingResource::of::<ConfigMap>())?;
/// let shard = Shard::new(ring, "replicator-7d9f8-x2k4p", "default")?
///     .lease_duration(Duration::from_secs(15));
/// assert_eq!(shard.selector(), "shard.alpha.sharding.timebertt.dev/configmaps=replicator-7d9f8-x2k4p");
/// # Ok::<(), informer_runtime::sharding::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Shard {
    ring: Arc<ControllerRing>,
    name: String,
    shard_label: String,
    drain_label: String,
    lease: leader_election::Config,
    /// What the caches may still hold from before the current term (shared by the clones).
    fence: CurrentFence,
}

/// Where an object stands for a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Assignment {
    /// Assigned to this shard: reconcile it.
    Ours,
    /// Assigned to this shard and drained by the sharder: acknowledge, do not reconcile.
    Draining,
    /// Assigned to another shard, or to none: leave it alone.
    NotOurs,
}

impl Shard {
    /// Shard `name` of `ring`, holding the Lease `name` in `lease_namespace` (as the Go
    /// sharder expects: the Lease's name is the holder identity; use the pod name). The Lease
    /// durations are client-go's (15 s, renew deadline 10 s, retry 2 s) and the Lease is
    /// released on a graceful shutdown, so the sharder moves the shard's objects at once.
    ///
    /// # Errors
    ///
    /// [`Error::ShardName`] if `name` cannot be a label value; [`Error::EmptyRing`] if the ring
    /// lists no resources.
    pub fn new(
        ring: impl Into<Arc<ControllerRing>>,
        name: impl Into<String>,
        lease_namespace: &str,
    ) -> Result<Self> {
        let ring = ring.into().checked()?;
        let name = name.into();
        if let Err(reason) = check_shard_name(&name) {
            return Err(Error::ShardName { name, reason });
        }
        let lease = leader_election::Config::new(&name, lease_namespace, &name)
            .label(RING_LABEL, ring.name())
            .release_on_cancel(true)
            .name(&format!("shard {name} of ring {}", ring.name()));
        Ok(Self {
            shard_label: shard_label(ring.name()),
            drain_label: drain_label(ring.name()),
            ring,
            name,
            lease,
            fence: CurrentFence::default(),
        })
    }

    /// How long the sharder waits after the last renewal before it treats the shard as gone
    /// (default 15 s); see [`leader_election::Config::lease_duration`].
    #[must_use]
    pub fn lease_duration(mut self, duration: Duration) -> Self {
        self.lease = self.lease.lease_duration(duration);
        self
    }

    /// How long the shard keeps reconciling without a successful renewal (default 10 s): it
    /// stops before its Lease can expire; see [`leader_election::Config::renew_deadline`].
    #[must_use]
    pub fn renew_deadline(mut self, duration: Duration) -> Self {
        self.lease = self.lease.renew_deadline(duration);
        self
    }

    /// The wait between two renewals (default 2 s).
    #[must_use]
    pub fn retry_period(mut self, duration: Duration) -> Self {
        self.lease = self.lease.retry_period(duration);
        self
    }

    /// The ring.
    pub fn ring(&self) -> &Arc<ControllerRing> {
        &self.ring
    }

    /// The shard's name: its Lease's name, holder identity and shard-label value.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Lease the shard holds, as a leader election config.
    pub fn lease(&self) -> &leader_election::Config {
        &self.lease
    }

    /// The label selector of the objects assigned to this shard.
    pub fn selector(&self) -> String {
        self.ring.shard_selector(&self.name)
    }

    /// `builder` restricted to this shard: every resource of the ring gets the shard's label
    /// selector ([`factory::Builder::resource_labels`]), so controllers on the factory cache
    /// only this shard's objects. A manager with a [shard](crate::manager::Builder::shard)
    /// builds its default factory this way.
    pub fn restrict_factory(&self, builder: factory::Builder) -> factory::Builder {
        let selector = self.selector();
        self.ring.all_types().fold(builder, |builder, resource| {
            builder
                .resource_labels(resource.group(), resource.plural(), &selector)
                .expect("a shard selector is made of a checked label key and value")
        })
    }

    /// The resources of the ring that `factory` does not restrict to this shard (see
    /// [`restrict_factory`](Self::restrict_factory)), as `plural.group`.
    pub fn unrestricted_in(&self, factory: &SharedInformerFactory) -> Vec<String> {
        let selector = self.selector();
        self.ring
            .all_types()
            .filter(|resource| {
                !factory
                    .resource_labels(resource.group(), resource.plural())
                    .contains(&selector.as_str())
            })
            .map(ToString::to_string)
            .collect()
    }

    /// `scope` narrowed to this shard's objects when the ring divides `K`; `scope` itself
    /// otherwise.
    pub fn restrict<K: TypedResource>(&self, scope: Scope<K>) -> Scope<K> {
        if !self.ring.contains::<K>() {
            return scope;
        }
        scope
            .labels(&self.selector())
            .expect("a shard selector is made of a checked label key and value")
    }

    /// Where the object with `metadata` stands for this shard.
    pub(crate) fn assignment(&self, metadata: &ObjectMeta) -> Assignment {
        let labels = metadata.labels.as_ref();
        let assigned = labels
            .and_then(|labels| labels.get(&self.shard_label))
            .is_some_and(|shard| *shard == self.name);
        if !assigned {
            return Assignment::NotOurs;
        }
        if labels.is_some_and(|labels| labels.contains_key(&self.drain_label)) {
            return Assignment::Draining;
        }
        Assignment::Ours
    }

    /// The fence of the shard's current term.
    pub(crate) fn current_fence(&self) -> &CurrentFence {
        &self.fence
    }

    /// Fences a term begun by a Lease write at resourceVersion `taken_over_at` (see
    /// [`CurrentFence::begin`]); `true` if the term needs [`list_for_term`](Self::list_for_term).
    pub(crate) fn begin_term_fence(&self, taken_over_at: Option<&str>) -> bool {
        self.fence.begin(&self.name, taken_over_at)
    }

    /// The list of the shard's objects for the fence of its term, through `client`, until it
    /// answers or `stop` is cancelled (see [`CurrentFence::list_for_term`]).
    pub(crate) fn list_for_term(
        &self,
        client: kube::Client,
        stop: tokio_util::sync::CancellationToken,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let ring = Arc::clone(&self.ring);
        self.fence
            .clone()
            .list_for_term(ring, self.selector(), client, stop)
    }

    /// Whether the object with `metadata` carries the ring's drain label.
    pub(crate) fn is_drained(&self, metadata: &ObjectMeta) -> bool {
        metadata
            .labels
            .as_ref()
            .is_some_and(|labels| labels.contains_key(&self.drain_label))
    }

    /// The merge patch that acknowledges a drain: removes the shard and drain labels,
    /// conditional on `resource_version` (a 409 if the object changed since it was read).
    pub(crate) fn acknowledge_patch(&self, resource_version: Option<&str>) -> serde_json::Value {
        serde_json::json!({
            "metadata": {
                "resourceVersion": resource_version,
                "labels": {&self.shard_label: null, &self.drain_label: null},
            }
        })
    }
}

/// Checks a shard name: a label value (at most 63 characters, alphanumerics at both ends, `-`,
/// `_`, `.` between) that is also a Lease name (lowercase, no `_`).
fn check_shard_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.is_empty() {
        return Err("it is empty");
    }
    if name.len() > 63 {
        return Err("it is longer than 63 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err("it holds a character other than a-z, A-Z, 0-9, `-`, `_` and `.`");
    }
    let alphanumeric_ends = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !alphanumeric_ends {
        return Err("it does not start and end with a letter or digit");
    }
    if name.chars().any(|c| c.is_ascii_uppercase() || c == '_') {
        return Err("it holds an uppercase letter or `_`, which a Lease name cannot");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{ConfigMap, Secret};

    use super::*;
    use crate::sharding::{RingResource, labels::SHARD_LABEL_PREFIX};

    fn ring() -> Result<ControllerRing> {
        ControllerRing::new("web")?.resource(RingResource::of::<ConfigMap>())
    }

    fn metadata(labels: &[(&str, &str)]) -> ObjectMeta {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        ObjectMeta {
            labels: Some(labels),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn a_shard_name_is_a_lease_name_and_a_label_value() -> Result<()> {
        assert!(Shard::new(ring()?, "web-7d9f8-x2k4p", "default").is_ok());
        for bad in ["Web", "web_1", "", "-web", &"w".repeat(64)] {
            assert!(
                matches!(Shard::new(ring()?, bad, "default"), Err(Error::ShardName { .. })),
                "{bad:?}"
            );
        }
        let empty = ControllerRing::new("empty")?;
        assert!(matches!(
            Shard::new(empty, "a", "default"),
            Err(Error::EmptyRing { .. })
        ));
        Ok(())
    }

    #[test]
    fn the_shard_lease_is_named_after_the_shard_and_labelled_with_the_ring() -> Result<()> {
        let shard = Shard::new(ring()?, "web-0", "controllers")?;
        let lease = shard.lease();
        assert_eq!(lease.lease(), "controllers/web-0");
        assert_eq!(lease.identity(), "web-0");
        assert_eq!(lease.labels.get(RING_LABEL).map(String::as_str), Some("web"));
        assert!(lease.release_on_cancel);
        Ok(())
    }

    #[test]
    fn assignment_follows_the_shard_and_drain_labels() -> Result<()> {
        let shard = Shard::new(ring()?, "web-0", "default")?;
        let key = format!("{SHARD_LABEL_PREFIX}web");
        let drain = drain_label("web");
        assert_eq!(shard.assignment(&metadata(&[(&key, "web-0")])), Assignment::Ours);
        assert_eq!(
            shard.assignment(&metadata(&[(&key, "web-0"), (&drain, "true")])),
            Assignment::Draining
        );
        assert_eq!(
            shard.assignment(&metadata(&[(&key, "web-1")])),
            Assignment::NotOurs
        );
        assert_eq!(
            shard.assignment(&metadata(&[(&drain, "true")])),
            Assignment::NotOurs
        );
        assert_eq!(shard.assignment(&ObjectMeta::default()), Assignment::NotOurs);
        // another ring's labels say nothing about this one
        assert_eq!(
            shard.assignment(&metadata(&[(&shard_label("other"), "web-0")])),
            Assignment::NotOurs
        );
        Ok(())
    }

    #[test]
    fn only_the_rings_resources_are_restricted() -> Result<()> {
        let shard = Shard::new(ring()?, "web-0", "default")?;
        let config_maps = shard.restrict(Scope::<ConfigMap>::all());
        assert_eq!(
            config_maps.selected_labels().to_string(),
            "shard.alpha.sharding.timebertt.dev/web=web-0"
        );
        assert!(shard.restrict(Scope::<Secret>::all()).is_everything());
        Ok(())
    }
}
