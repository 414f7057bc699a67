//! [`ControllerRing`]: which resources a ring of shards divides among its shards.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::{
    Resource,
    core::{Selector, SelectorExt},
};
use serde_json::json;

use super::{
    error::{Error, Result},
    resource_type::ResourceType,
};
use crate::factory::TypedResource;

/// A ring of shards: its name, the resources its shards divide among themselves, and the
/// namespaces it holds.
///
/// This is the typed equivalent of kubernetes-controller-sharding's `ControllerRing` resource
/// (`sharding.timebertt.dev/v1alpha1`): each [`RingResource`] is a controller's own type,
/// with the types its objects control. A controlled object goes to the shard of its
/// controller (the owner reference with `controller: true`), so one shard reconciles an object
/// and caches what it owns. [`manifest`](Self::manifest) writes the equivalent
/// `ControllerRing` for clusters that run the Go sharder.
///
/// The ring holds the objects in the namespaces its
/// [namespace selector](Self::namespace_selector) selects (by default every namespace but
/// `kube-system` and `sharding-system`, as in Go), and, of a resource with an
/// [object selector](RingResource::labels), the objects it selects. Cluster-scoped objects
/// are in every ring that lists their resource (a namespace by its own labels), as the Go
/// sharder's webhook treats them. The sharder never labels an object outside the ring, and
/// takes its labels off an object that leaves the ring (drained first while its shard runs).
///
/// ```
/// use informer_runtime::sharding::{ControllerRing, RingResource};
/// use k8s_openapi::api::{apps::v1::{Deployment, ReplicaSet}, core::v1::ConfigMap};
///
/// let ring = ControllerRing::new("deployments")?
///     .resource(RingResource::of::<Deployment>().controls::<ReplicaSet>())?
///     .resource(RingResource::of::<ConfigMap>().labels("app.kubernetes.io/part-of=shop")?)?
///     .namespace_selector("team=payments")?;
/// assert!(ring.contains::<ReplicaSet>());
/// assert_eq!(ring.manifest()["spec"]["resources"][0]["controlledResources"][0]["resource"], "replicasets");
/// assert_eq!(ring.manifest()["spec"]["namespaceSelector"]["matchLabels"]["team"], "payments");
/// # Ok::<(), informer_runtime::sharding::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerRing {
    name: String,
    resources: Vec<RingResource>,
    namespace_selector: Selector,
}

/// A controller's own resource in a ring, with the resources its objects control, and the
/// labels its objects in the ring carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingResource {
    resource: ResourceType,
    controlled: Vec<ResourceType>,
    /// The object selector: `None` holds every object.
    labels: Option<(String, Selector)>,
}

impl RingResource {
    /// The objects of `K`, each assigned by its own group, kind, namespace and name.
    pub fn of<K: TypedResource>() -> Self {
        Self {
            resource: ResourceType::of::<K>(),
            controlled: Vec::new(),
            labels: None,
        }
    }

    /// Holds only the objects of this resource whose labels `selector` selects (every object
    /// by default): the sharder neither assigns nor drains the others, and unassigns one that
    /// stops matching. Give a controller that reconciles a labelled subset (a
    /// [scope](crate::scope::Scope) with labels) the same selector here, so the ring is what
    /// the controller reconciles. Objects this resource controls follow their controller's
    /// key whatever their own labels. The Go sharder has no object selector: with it, every
    /// object of the resource in the ring's namespaces is assigned.
    ///
    /// # Errors
    ///
    /// [`Error::Selector`] if `selector` does not parse.
    pub fn labels(mut self, selector: &str) -> Result<Self> {
        let parsed = crate::selector::parse_label_selector(selector).map_err(|source| Error::Selector {
            what: format!("object selector of {}", self.resource),
            selector: selector.to_owned(),
            source,
        })?;
        self.labels = (!parsed.selects_all()).then(|| (selector.to_owned(), parsed));
        Ok(self)
    }

    /// The object selector given to [`labels`](Self::labels), as written.
    pub fn object_selector(&self) -> Option<&str> {
        self.labels.as_ref().map(|(written, _)| written.as_str())
    }

    /// Whether an object of this resource with `labels` is in the ring (by its labels).
    fn selects(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        self.labels
            .as_ref()
            .is_none_or(|(_, selector)| selector.matches(labels))
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
    /// The namespaces a ring holds unless told otherwise: every namespace but `kube-system` and
    /// `sharding-system`, the Go sharder's default (its `SharderConfig` webhook namespace
    /// selector).
    pub const DEFAULT_NAMESPACE_SELECTOR: &str =
        "kubernetes.io/metadata.name notin (kube-system,sharding-system)";

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
        let namespace_selector = crate::selector::parse_label_selector(Self::DEFAULT_NAMESPACE_SELECTOR)
            .expect("the default namespace selector parses");
        Ok(Self {
            name,
            resources: Vec::new(),
            namespace_selector,
        })
    }

    /// Holds only the objects in the namespaces whose labels `selector` selects (instead of
    /// [`Self::DEFAULT_NAMESPACE_SELECTOR`]; `""` selects every namespace). Select namespaces by
    /// name with `kubernetes.io/metadata.name`, which every namespace carries. Keep
    /// `kube-system` and the sharder's own namespace out, as Go's documentation asks.
    ///
    /// ```
    /// use informer_runtime::sharding::{ControllerRing, RingResource};
    /// use k8s_openapi::api::core::v1::ConfigMap;
    ///
    /// let ring = ControllerRing::new("configmaps")?
    ///     .resource(RingResource::of::<ConfigMap>())?
    ///     .namespace_selector("kubernetes.io/metadata.name in (shop,billing)")?;
    /// # Ok::<(), informer_runtime::sharding::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Selector`] if `selector` does not parse.
    pub fn namespace_selector(mut self, selector: &str) -> Result<Self> {
        self.namespace_selector =
            crate::selector::parse_label_selector(selector).map_err(|source| Error::Selector {
                what: format!("namespace selector of ring {:?}", self.name),
                selector: selector.to_owned(),
                source,
            })?;
        Ok(self)
    }

    /// The namespace selector ([`namespace_selector`](Self::namespace_selector)).
    pub fn selected_namespaces(&self) -> &Selector {
        &self.namespace_selector
    }

    /// Whether a namespace with `labels` is in the ring.
    fn selects_namespace(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        self.namespace_selector.matches(labels)
    }

    /// Whether the ring holds the object of `resource` (one of its resources, own or
    /// controlled) with `metadata`, given the labels of its namespace (`None` for a
    /// cluster-scoped object, or a namespace that does not exist): the sharder's test, for
    /// checks such as a test's "every object of the ring is assigned". `false` for a resource
    /// the ring does not list.
    pub fn holds_object(
        &self,
        resource: &ResourceType,
        metadata: &ObjectMeta,
        namespace_labels: Option<&std::collections::BTreeMap<String, String>>,
    ) -> bool {
        self.entry_of(resource)
            .is_some_and(|entry| self.holds(entry, resource, metadata, namespace_labels))
    }

    /// The hash key the sharder places the object of `resource` with `metadata` by: its own
    /// key for a ring resource's object, its controller's for a controlled object (`None`
    /// without a controller: it is not assigned); `None` for a resource the ring does not
    /// list.
    ///
    /// # Errors
    ///
    /// [`Error::HashKey`] if the object has no name, or its controller reference is malformed
    /// (the sharder leaves such an object unassigned).
    pub fn hash_key(&self, resource: &ResourceType, metadata: &ObjectMeta) -> Result<Option<String>> {
        match self.entry_of(resource) {
            None => Ok(None),
            Some(entry) if entry.resource == *resource => {
                super::hash_key::for_ring_object(resource, metadata).map(Some)
            }
            Some(_) => super::hash_key::for_controlled_object(resource, metadata),
        }
    }

    /// The entry of the ring that lists `resource`, as its own or a controlled resource.
    fn entry_of(&self, resource: &ResourceType) -> Option<&RingResource> {
        self.resources
            .iter()
            .find(|entry| entry.resource == *resource || entry.controlled.contains(resource))
    }

    /// Whether the object of `resource` with `metadata` is in the ring, given the labels of
    /// its namespace (`None` for a cluster-scoped object, or when its namespace is not known
    /// yet: then it is not in the ring). `ring_resource` is the entry of the ring that lists
    /// `resource`, as its own or a controlled resource.
    fn holds(
        &self,
        ring_resource: &RingResource,
        resource: &ResourceType,
        metadata: &ObjectMeta,
        namespace_labels: Option<&std::collections::BTreeMap<String, String>>,
    ) -> bool {
        let empty = std::collections::BTreeMap::new();
        let labels = metadata.labels.as_ref().unwrap_or(&empty);
        let namespace_held = if resource.is_namespace() {
            self.selects_namespace(labels)
        } else if resource.is_namespaced() {
            namespace_labels.is_some_and(|labels| self.selects_namespace(labels))
        } else {
            true
        };
        let own_resource = ring_resource.resource == *resource;
        namespace_held && (!own_resource || ring_resource.selects(labels))
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
        let namespace_selector = LabelSelector::from(self.namespace_selector.clone());
        json!({
            "apiVersion": "sharding.timebertt.dev/v1alpha1",
            "kind": "ControllerRing",
            "metadata": {"name": self.name},
            "spec": {"resources": resources, "namespaceSelector": namespace_selector},
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
        core::v1::{ConfigMap, Namespace, Pod, Secret},
    };
    use std::collections::BTreeMap;

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
            ],
            "namespaceSelector": {"matchExpressions": [{
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["kube-system", "sharding-system"],
            }]}},
        });
        assert_eq!(ring.manifest(), expected);
        Ok(())
    }

    fn metadata(namespace: Option<&str>, labels: &[(&str, &str)]) -> ObjectMeta {
        ObjectMeta {
            name: Some("object".into()),
            namespace: namespace.map(str::to_owned),
            labels: Some(
                labels
                    .iter()
                    .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        }
    }

    fn namespace_labels(name: &str, labels: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut all: BTreeMap<String, String> = labels
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        all.insert("kubernetes.io/metadata.name".into(), name.into());
        all
    }

    #[test]
    fn a_ring_holds_the_objects_its_namespace_and_object_selectors_select() -> Result<()> {
        let default_ring = ControllerRing::new("web")?
            .resource(RingResource::of::<Deployment>().controls::<ReplicaSet>())?
            .resource(RingResource::of::<Namespace>())?;
        let (deployments, namespaces) = (&default_ring.resources()[0], &default_ring.resources()[1]);
        let deployment = ResourceType::of::<Deployment>();
        let in_namespace =
            |ring: &ControllerRing, entry: &RingResource, namespace: &str, labels: &[(&str, &str)]| {
                ring.holds(
                    entry,
                    &deployment,
                    &metadata(Some(namespace), labels),
                    Some(&namespace_labels(namespace, &[])),
                )
            };
        assert!(in_namespace(&default_ring, deployments, "default", &[]));
        assert!(!in_namespace(&default_ring, deployments, "kube-system", &[]));
        assert!(!in_namespace(&default_ring, deployments, "sharding-system", &[]));
        // a namespace not known yet is not in the ring (it is checked again when it is)
        assert!(!default_ring.holds(deployments, &deployment, &metadata(Some("new"), &[]), None));
        // a namespace object is selected by its own labels
        let namespace = ResourceType::of::<Namespace>();
        let kube_system = metadata(None, &[("kubernetes.io/metadata.name", "kube-system")]);
        let shop = metadata(None, &[("kubernetes.io/metadata.name", "shop")]);
        assert!(!default_ring.holds(namespaces, &namespace, &kube_system, None));
        assert!(default_ring.holds(namespaces, &namespace, &shop, None));

        let ring = ControllerRing::new("web")?
            .resource(
                RingResource::of::<Deployment>()
                    .labels("app=web")?
                    .controls::<ReplicaSet>(),
            )?
            .namespace_selector("team=payments")?;
        let entry = &ring.resources()[0];
        let payments = namespace_labels("shop", &[("team", "payments")]);
        let holds = |resource: &ResourceType, labels: &[(&str, &str)]| {
            ring.holds(entry, resource, &metadata(Some("shop"), labels), Some(&payments))
        };
        assert!(holds(&deployment, &[("app", "web")]));
        assert!(!holds(&deployment, &[("app", "db")]));
        // controlled objects follow their controller whatever their own labels
        assert!(holds(&ResourceType::of::<ReplicaSet>(), &[]));
        assert!(!in_namespace(&ring, entry, "default", &[("app", "web")]));
        // "" selects every namespace
        let everywhere = ring.clone().namespace_selector("")?;
        assert!(in_namespace(&everywhere, entry, "kube-system", &[("app", "web")]));
        Ok(())
    }

    #[test]
    fn the_public_checks_find_the_entry_of_a_resource() -> Result<()> {
        let ring = ControllerRing::new("web")?.resource(
            RingResource::of::<Deployment>()
                .labels("app=web")?
                .controls::<ReplicaSet>(),
        )?;
        let (deployment, replica_set) = (ResourceType::of::<Deployment>(), ResourceType::of::<ReplicaSet>());
        let default = namespace_labels("default", &[]);
        assert!(ring.holds_object(
            &deployment,
            &metadata(Some("default"), &[("app", "web")]),
            Some(&default)
        ));
        assert!(!ring.holds_object(&deployment, &metadata(Some("default"), &[]), Some(&default)));
        assert!(ring.holds_object(&replica_set, &metadata(Some("default"), &[]), Some(&default)));
        assert!(!ring.holds_object(
            &ResourceType::of::<ConfigMap>(),
            &metadata(Some("default"), &[]),
            Some(&default)
        ));
        let own = ring.hash_key(&deployment, &metadata(Some("default"), &[]))?;
        assert_eq!(own.as_deref(), Some("apps/Deployment/default/object"));
        // a controlled object without a controller is not assigned
        assert_eq!(
            ring.hash_key(&replica_set, &metadata(Some("default"), &[]))?,
            None
        );
        assert_eq!(
            ring.hash_key(&ResourceType::of::<ConfigMap>(), &metadata(None, &[]))?,
            None
        );
        Ok(())
    }

    #[test]
    fn a_selector_that_does_not_parse_is_refused_with_what_it_was_for() -> Result<()> {
        let error = ControllerRing::new("web")?
            .namespace_selector("team in (payments")
            .expect_err("an unclosed set");
        let message = error.to_string();
        assert!(
            message
                .starts_with("failed to use \"team in (payments\" as the namespace selector of ring \"web\""),
            "{message}"
        );
        let error = RingResource::of::<ConfigMap>()
            .labels("app notin")
            .expect_err("no set of values");
        assert!(
            error.to_string().contains("object selector of configmaps"),
            "{error}"
        );
        Ok(())
    }
}
