//! [`ControllerRing`]: which resources a ring of shards divides among its shards.

use std::sync::Arc;

use kube::Resource;
use serde_json::json;

use super::{
    error::{Error, Result},
    resource_type::ResourceType,
};
use crate::factory::TypedResource;

/// A ring of shards: its name and the resources its shards divide among themselves.
///
/// This is the typed equivalent of kubernetes-controller-sharding's `ControllerRing` resource
/// (`sharding.timebertt.dev/v1alpha1`): each [`RingResource`] is a controller's own type,
/// with the types its objects control. A controlled object goes to the shard of its
/// controller (the owner reference with `controller: true`), so one shard reconciles an object
/// and caches what it owns. [`manifest`](Self::manifest) writes the equivalent
/// `ControllerRing` for clusters that run the Go sharder.
///
/// ```
/// use informer_runtime::sharding::{ControllerRing, RingResource};
/// use k8s_openapi::api::{apps::v1::{Deployment, ReplicaSet}, core::v1::ConfigMap};
///
/// let ring = ControllerRing::new("deployments")?
///     .resource(RingResource::of::<Deployment>().controls::<ReplicaSet>())?
///     .resource(RingResource::of::<ConfigMap>())?;
/// assert!(ring.contains::<ReplicaSet>());
/// assert_eq!(ring.manifest()["spec"]["resources"][0]["controlledResources"][0]["resource"], "replicasets");
/// # Ok::<(), informer_runtime::sharding::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerRing {
    name: String,
    resources: Vec<RingResource>,
}

/// A controller's own resource in a ring, with the resources its objects control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingResource {
    resource: ResourceType,
    controlled: Vec<ResourceType>,
}

impl RingResource {
    /// The objects of `K`, each assigned by its own group, kind, namespace and name.
    pub fn of<K: TypedResource>() -> Self {
        Self {
            resource: ResourceType::of::<K>(),
            controlled: Vec::new(),
        }
    }

    /// Also the objects of `C` that an object of this resource controls, assigned to their
    /// controller's shard. As with the Go sharder, an object of `C` goes to the shard of
    /// whatever controls it (the owner reference with `controller: true`), whether or not that
    /// is an object of this resource; objects of `C` with no controller are not assigned.
    #[must_use]
    pub fn controls<C: TypedResource>(mut self) -> Self {
        self.controlled.push(ResourceType::of::<C>());
        self
    }

    /// The controller's own resource.
    pub fn resource(&self) -> &ResourceType {
        &self.resource
    }

    /// The resources its objects control.
    pub fn controlled(&self) -> &[ResourceType] {
        &self.controlled
    }
}

impl ControllerRing {
    /// An empty ring named `name`.
    ///
    /// # Errors
    ///
    /// [`Error::RingName`] if `name` cannot be a `ControllerRing`'s name: a cluster-scoped
    /// custom resource's name (a DNS-1123 subdomain: lowercase letters, digits, `-` and `.`,
    /// each dot-separated part starting and ending with a letter or digit) of at most 63
    /// characters (the `ControllerRing` CRD's rule, so that it fits the name part of the shard
    /// label key).
    pub fn new(name: impl Into<String>) -> Result<Self> {
        let name = name.into();
        if let Err(reason) = check_ring_name(&name) {
            return Err(Error::RingName { name, reason });
        }
        Ok(Self {
            name,
            resources: Vec::new(),
        })
    }

    /// Adds a controller's resource and the resources it controls.
    ///
    /// # Errors
    ///
    /// [`Error::DuplicateResource`] if one of them is in the ring already.
    pub fn resource(mut self, resource: RingResource) -> Result<Self> {
        let added: Vec<&ResourceType> = std::iter::once(&resource.resource)
            .chain(&resource.controlled)
            .collect();
        for (index, candidate) in added.iter().enumerate() {
            if self.contains_type(candidate) || added[..index].contains(candidate) {
                return Err(Error::DuplicateResource {
                    ring: self.name,
                    resource: candidate.to_string(),
                });
            }
        }
        self.resources.push(resource);
        Ok(self)
    }

    /// The ring's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The controllers' resources with what they control.
    pub fn resources(&self) -> &[RingResource] {
        &self.resources
    }

    /// Whether objects of `K` are divided among the shards (as a controller's own resource or
    /// as controlled objects).
    pub fn contains<K: Resource<DynamicType = ()>>(&self) -> bool {
        self.all_types().any(ResourceType::is::<K>)
    }

    /// Whether `K` is a controller's own resource in this ring: one whose objects are drained
    /// before they move to another shard.
    pub fn is_ring_resource<K: Resource<DynamicType = ()>>(&self) -> bool {
        self.resources.iter().any(|resource| resource.resource.is::<K>())
    }

    /// Every resource of the ring: the controllers' and the controlled ones.
    pub fn all_types(&self) -> impl Iterator<Item = &ResourceType> {
        self.resources
            .iter()
            .flat_map(|resource| std::iter::once(&resource.resource).chain(&resource.controlled))
    }

    fn contains_type(&self, candidate: &ResourceType) -> bool {
        self.all_types().any(|existing| existing == candidate)
    }

    /// The `label=value` selector of the objects of this ring assigned to `shard`.
    pub fn shard_selector(&self, shard: &str) -> String {
        format!("{}={shard}", super::labels::shard_label(&self.name))
    }

    /// The equivalent `sharding.timebertt.dev/v1alpha1` `ControllerRing` object, for clusters
    /// where kubernetes-controller-sharding's Go sharder assigns the objects.
    pub fn manifest(&self) -> serde_json::Value {
        let group_resource =
            |resource: &ResourceType| json!({"group": resource.group(), "resource": resource.plural()});
        let resources: Vec<serde_json::Value> = self
            .resources
            .iter()
            .map(|resource| {
                let mut entry = group_resource(&resource.resource);
                if !resource.controlled.is_empty() {
                    entry["controlledResources"] = resource.controlled.iter().map(group_resource).collect();
                }
                entry
            })
            .collect();
        json!({
            "apiVersion": "sharding.timebertt.dev/v1alpha1",
            "kind": "ControllerRing",
            "metadata": {"name": self.name},
            "spec": {"resources": resources},
        })
    }

    /// The ring, checked to be usable: it lists at least one resource.
    pub(crate) fn checked(self: Arc<Self>) -> Result<Arc<Self>> {
        if self.resources.is_empty() {
            return Err(Error::EmptyRing {
                ring: self.name.clone(),
            });
        }
        Ok(self)
    }
}

/// Checks a ring name as Kubernetes checks a `ControllerRing`'s: a cluster-scoped custom
/// resource's name, a DNS-1123 subdomain (`[a-z0-9]([-a-z0-9]*[a-z0-9])?` parts joined by `.`),
/// and at most 63 characters (the CRD's CEL rule `size(self.metadata.name) <= 63`).
fn check_ring_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.is_empty() {
        return Err("it is empty");
    }
    if name.len() > 63 {
        return Err("it is longer than 63 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'))
    {
        return Err("it holds a character other than a-z, 0-9, `-` and `.`");
    }
    let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let parts_well_formed = name
        .split('.')
        .all(|part| part.starts_with(alphanumeric) && part.ends_with(alphanumeric));
    if !parts_well_formed {
        return Err(
            "one of its dot-separated parts is empty or does not start and end with a letter or digit",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::{
        apps::v1::{Deployment, ReplicaSet},
        core::v1::{ConfigMap, Pod, Secret},
    };

    use super::*;
    use kube::core::PartialObjectMeta;

    /// Go: the `ControllerRing` CRD's name rules (a custom resource's name is a DNS-1123
    /// subdomain; the CEL rule `size(self.metadata.name) <= 63`).
    #[test]
    fn a_ring_name_is_a_controller_ring_name() {
        for (name, accepted) in [
            ("web", true),
            ("1web", true),
            ("kube-controller-manager.deployment-1", true),
            ("web.example.com", true),
            (&"r".repeat(63), true),
            (&"r".repeat(64), false),
            ("", false),
            ("-web", false),
            ("web-", false),
            ("web.", false),
            (".web", false),
            ("a..b", false),
            ("a-.b", false),
            ("a.-b", false),
            ("web/x", false),
            ("Web", false),
            ("web_1", false),
        ] {
            let result = ControllerRing::new(name);
            assert_eq!(result.is_ok(), accepted, "{name:?}: {result:?}");
            if !accepted {
                assert!(matches!(result, Err(Error::RingName { .. })), "{name:?}");
            }
        }
        let error = ControllerRing::new("Web_1").expect_err("uppercase").to_string();
        assert!(
            error.starts_with("failed to use \"Web_1\" as a ring name: it holds a character other than a-z, 0-9, `-` and `.`"),
            "{error}"
        );
        assert!(error.contains("replace uppercase letters"), "{error}");
        let error = ControllerRing::new("a..b")
            .expect_err("an empty part")
            .to_string();
        assert!(error.contains("dot-separated parts"), "{error}");
    }

    #[test]
    fn a_resource_is_in_a_ring_once() -> Result<()> {
        let ring = ControllerRing::new("apps")?
            .resource(RingResource::of::<Deployment>().controls::<ReplicaSet>())?;
        let again = ring.clone().resource(RingResource::of::<ReplicaSet>());
        assert!(
            matches!(again, Err(Error::DuplicateResource { resource, .. }) if resource == "replicasets.apps")
        );
        let twice = ControllerRing::new("pods")?.resource(
            RingResource::of::<ConfigMap>()
                .controls::<Pod>()
                .controls::<Pod>(),
        );
        assert!(matches!(twice, Err(Error::DuplicateResource { .. })));
        Ok(())
    }

    #[test]
    fn membership_is_by_group_and_resource_whatever_the_rust_type() -> Result<()> {
        let ring = ControllerRing::new("apps")?
            .resource(RingResource::of::<Deployment>().controls::<ReplicaSet>())?;
        assert!(ring.contains::<Deployment>());
        assert!(ring.contains::<PartialObjectMeta<Deployment>>());
        assert!(ring.contains::<ReplicaSet>());
        assert!(!ring.contains::<Secret>());
        assert!(ring.is_ring_resource::<Deployment>());
        assert!(!ring.is_ring_resource::<ReplicaSet>());
        Ok(())
    }

    #[test]
    fn the_manifest_is_the_go_sharders_controller_ring() -> Result<()> {
        let ring = ControllerRing::new("web")?
            .resource(RingResource::of::<Deployment>().controls::<ReplicaSet>())?
            .resource(RingResource::of::<ConfigMap>())?;
        let expected = json!({
            "apiVersion": "sharding.timebertt.dev/v1alpha1",
            "kind": "ControllerRing",
            "metadata": {"name": "web"},
            "spec": {"resources": [
                {"group": "apps", "resource": "deployments", "controlledResources": [{"group": "apps", "resource": "replicasets"}]},
                {"group": "", "resource": "configmaps"},
            ]},
        });
        assert_eq!(ring.manifest(), expected);
        Ok(())
    }
}
