//! Resource types the server serves: the built-in ones, registered types and CRD-defined ones.
//!
//! A [`ResourceType`] names a resource as discovery does (group, version, kind, plural, scope,
//! short names, status and scale subresources). Every server starts with [`builtin_types`]
//! (every resource kube-apiserver 1.37 serves by default) and the types given to
//! [`TestServerBuilder::resource`](crate::TestServerBuilder::resource);
//! [`TestServer::register`](crate::TestServer::register) adds one to a running server.

use std::any::TypeId;

use k8s_openapi::NamespaceResourceScope;
use kube::core::ApiResource;

use crate::builtin::subresource::{self, Subresource};
use crate::builtin::{self, BuiltinResource};

/// One served resource: group, version, kind, plural and scope, as in an `APIResource`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// API group, empty for the core group.
    pub group: String,
    /// Version within the group, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// Plural resource name used in URLs, e.g. `pods`.
    pub plural: String,
    /// Singular name, e.g. `pod` (discovery's `singularName`).
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Short names listed in discovery (kubectl's `po`, `cm`, ...).
    pub short_names: Vec<String>,
    /// Whether the `status` subresource is served (PUT/PATCH `.../status`).
    pub status_subresource: bool,
    /// The `scale` subresource (`autoscaling/v1` `Scale` at `.../scale`), if served.
    pub scale_subresource: Option<ScaleSubresource>,
}

/// Where the `scale` subresource of a resource reads and writes, as a CRD's
/// `subresources.scale` says (paths such as `.spec.replicas`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleSubresource {
    /// The path of the desired replicas, which a write of the scale sets.
    pub spec_replicas_path: String,
    /// The path of the observed replicas.
    pub status_replicas_path: String,
    /// The path of the label selector of the scaled pods, if any: a string, a `LabelSelector`
    /// or a map of labels.
    pub label_selector_path: Option<String>,
}

impl ScaleSubresource {
    /// The scale of the built-in workloads: `.spec.replicas`, `.status.replicas`, and the
    /// selector of `.spec.selector`.
    pub fn replicas() -> Self {
        Self {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".spec.selector".into()),
        }
    }
}

impl ResourceType {
    /// A resource type; `singular` is the lowercased kind, no short names, no status subresource.
    pub fn new(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> Self {
        Self {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            plural: plural.to_string(),
            singular: kind.to_ascii_lowercase(),
            namespaced,
            short_names: Vec::new(),
            status_subresource: false,
            scale_subresource: None,
        }
    }

    /// Sets the short names.
    pub fn with_short_names(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Serves (or not) the `status` subresource.
    pub fn with_status_subresource(mut self, enabled: bool) -> Self {
        self.status_subresource = enabled;
        self
    }

    /// Serves (or not) the `scale` subresource.
    pub fn with_scale_subresource(mut self, scale: Option<ScaleSubresource>) -> Self {
        self.scale_subresource = scale;
        self
    }

    /// The resource type of a kube [`ApiResource`] with the given scope.
    pub fn from_api_resource(ar: &ApiResource, namespaced: bool) -> Self {
        Self::new(&ar.group, &ar.version, &ar.kind, &ar.plural, namespaced)
    }

    /// The resource type of a statically typed resource such as `k8s_openapi::api::core::v1::Pod`.
    pub fn of<K>() -> Self
    where
        K: kube::Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        let namespaced = TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>();
        Self::new(
            &K::group(&()),
            &K::version(&()),
            &K::kind(&()),
            &K::plural(&()),
            namespaced,
        )
    }

    /// `apiVersion` of objects: `v1` or `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// This type as a kube [`ApiResource`], for `Api::namespaced_with` and friends.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: self.api_version(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }

    /// Whether this is the core group's `kind` (`Pod`, `Namespace`, ...).
    pub(crate) fn is_core(&self, kind: &str) -> bool {
        self.group.is_empty() && self.kind == kind
    }

    /// `pods` or `deployments.apps`, as in Status messages.
    pub(crate) fn qualified_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The description of the built-in resource served at this type's group, version and
    /// plural, if it is one.
    pub(crate) fn builtin(&self) -> Option<&'static BuiltinResource> {
        builtin::find(&self.group, &self.version, &self.plural)
    }

    /// The subresources served on this type, by name: `status` and `scale` if it has them,
    /// then its description's if it is built in.
    pub(crate) fn subresources(&self) -> Vec<&'static Subresource> {
        let status = self.status_subresource.then_some(&subresource::STATUS);
        let scale = self.scale_subresource.is_some().then_some(&subresource::SCALE);
        let described = self.builtin().map_or(&[][..], |b| b.subresources);
        let mut all: Vec<_> = status.into_iter().chain(scale).chain(described).collect();
        all.sort_by_key(|s| s.name);
        all
    }

    /// The subresource `name`, if this type serves it.
    pub(crate) fn subresource(&self, name: &str) -> Option<&'static Subresource> {
        match name {
            "status" => self.status_subresource.then_some(&subresource::STATUS),
            "scale" => self.scale_subresource.as_ref().map(|_| &subresource::SCALE),
            _ => self.builtin()?.subresource(name),
        }
    }

    /// The verbs served on this type: a built-in resource's, else every verb.
    pub(crate) fn verbs(&self) -> &'static [&'static str] {
        self.builtin().map_or(builtin::ALL_VERBS, |b| b.verbs)
    }

    /// Key of the storage shared by all versions of a resource.
    pub(crate) fn storage_key(&self) -> StorageKey {
        StorageKey {
            group: self.group.clone(),
            plural: self.plural.clone(),
        }
    }
}

/// Objects of all versions of one resource share a storage, keyed by group and plural.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct StorageKey {
    pub(crate) group: String,
    pub(crate) plural: String,
}

/// The built-in resource types the server registers by default: every resource kube-apiserver
/// 1.37 serves by default, one per description of the crate's `builtin` module.
pub fn builtin_types() -> Vec<ResourceType> {
    crate::builtin::ALL
        .iter()
        .map(|b| {
            ResourceType::new(b.group, b.version, b.kind, b.plural, b.namespaced)
                .with_short_names(b.short_names)
                .with_status_subresource(b.status)
                .with_scale_subresource(b.scale.then(ScaleSubresource::replicas))
        })
        .collect()
}

/// A registered type and who registered it.
#[derive(Debug, Clone)]
struct Entry {
    rt: ResourceType,
    /// Name of the CRD that defines it, if any.
    crd: Option<String>,
}

/// The set of served resource types, in registration order (discovery lists them in that order).
#[derive(Debug, Clone, Default)]
pub(crate) struct Registry {
    entries: Vec<Entry>,
}

impl Registry {
    /// A registry with the given types.
    pub(crate) fn with_types(types: Vec<ResourceType>) -> Self {
        let mut r = Self::default();
        for rt in types {
            r.add(rt, None);
        }
        r
    }

    /// Adds or replaces the type with the same group, version and plural.
    pub(crate) fn add(&mut self, rt: ResourceType, crd: Option<String>) {
        let entry = Entry { rt, crd };
        match self.entries.iter_mut().find(|e| {
            e.rt.group == entry.rt.group && e.rt.version == entry.rt.version && e.rt.plural == entry.rt.plural
        }) {
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
    }

    /// Removes the types a CRD defines.
    pub(crate) fn remove_crd(&mut self, crd: &str) -> Vec<ResourceType> {
        let (removed, kept) = std::mem::take(&mut self.entries)
            .into_iter()
            .partition::<Vec<_>, _>(|e| e.crd.as_deref() == Some(crd));
        self.entries = kept;
        removed.into_iter().map(|e| e.rt).collect()
    }

    /// The type served at `group/version/plural`.
    pub(crate) fn get(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceType> {
        self.iter()
            .find(|rt| rt.group == group && rt.version == version && rt.plural == plural)
    }

    /// The type of objects with this `apiVersion` and `kind`.
    pub(crate) fn by_kind(&self, api_version: &str, kind: &str) -> Option<&ResourceType> {
        self.iter()
            .find(|rt| rt.api_version() == api_version && rt.kind == kind)
    }

    /// The name of the CRD serving `rt`, if a CRD does.
    pub(crate) fn crd_of(&self, rt: &ResourceType) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.rt.group == rt.group && e.rt.version == rt.version && e.rt.plural == rt.plural)
            .and_then(|e| e.crd.as_deref())
    }

    /// Whether `rt` is a built-in kind (a Go type of kube-apiserver, with a protobuf form), not a
    /// custom resource: kube-apiserver serves the two differently (list items without their
    /// type, field selectors, `406`s naming the Go type).
    pub(crate) fn is_builtin(&self, rt: &ResourceType) -> bool {
        self.crd_of(rt).is_none()
            && informer_apimachinery::protobuf::has_form(&rt.group, &rt.version, &rt.kind)
    }

    /// Whether any served version still uses this storage.
    pub(crate) fn has_storage(&self, key: &StorageKey) -> bool {
        self.iter().any(|rt| &rt.storage_key() == key)
    }

    /// All types in registration order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ResourceType> {
        self.entries.iter().map(|e| &e.rt)
    }

    /// Groups (non-core) in registration order, each with its versions in registration order.
    pub(crate) fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for rt in self.iter().filter(|rt| !rt.group.is_empty()) {
            match groups.iter_mut().find(|(g, _)| *g == rt.group) {
                Some((_, versions)) => {
                    if !versions.contains(&rt.version) {
                        versions.push(rt.version.clone());
                    }
                }
                None => groups.push((rt.group.clone(), vec![rt.version.clone()])),
            }
        }
        groups
    }

    /// Types of one group version.
    pub(crate) fn in_group_version<'a>(
        &'a self,
        group: &'a str,
        version: &'a str,
    ) -> impl Iterator<Item = &'a ResourceType> + 'a {
        self.iter()
            .filter(move |rt| rt.group == group && rt.version == version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_resources_know_their_scope() {
        let pods = ResourceType::of::<k8s_openapi::api::core::v1::Pod>();
        assert_eq!(
            (pods.api_version().as_str(), pods.plural.as_str(), pods.namespaced),
            ("v1", "pods", true)
        );
        let nodes = ResourceType::of::<k8s_openapi::api::core::v1::Node>();
        assert!(!nodes.namespaced);
        let deploy = ResourceType::of::<k8s_openapi::api::apps::v1::Deployment>();
        assert_eq!(deploy.api_version(), "apps/v1");
        assert_eq!(deploy.qualified_resource(), "deployments.apps");
    }

    #[test]
    fn builtin_table_matches_k8s_openapi() {
        let builtins = builtin_types();
        for typed in [
            ResourceType::of::<k8s_openapi::api::core::v1::Pod>(),
            ResourceType::of::<k8s_openapi::api::core::v1::Namespace>(),
            ResourceType::of::<k8s_openapi::api::core::v1::Endpoints>(),
            ResourceType::of::<k8s_openapi::api::apps::v1::StatefulSet>(),
            ResourceType::of::<k8s_openapi::api::coordination::v1::Lease>(),
        ] {
            let found = builtins
                .iter()
                .find(|b| b.group == typed.group && b.plural == typed.plural);
            let found = found.expect("builtin present");
            assert_eq!((&found.kind, found.namespaced), (&typed.kind, typed.namespaced));
        }
    }

    #[test]
    fn groups_are_listed_once_in_order() {
        let mut reg = Registry::with_types(builtin_types());
        reg.add(
            ResourceType::new("example.com", "v1", "Foo", "foos", true),
            Some("foos.example.com".into()),
        );
        reg.add(
            ResourceType::new("example.com", "v2", "Foo", "foos", true),
            Some("foos.example.com".into()),
        );
        let groups = reg.groups();
        assert_eq!(groups[0].0, "apps");
        let last = groups.last().expect("a group");
        assert_eq!(
            last,
            &(
                "example.com".to_string(),
                vec!["v1".to_string(), "v2".to_string()]
            )
        );
        assert_eq!(reg.remove_crd("foos.example.com").len(), 2);
        assert!(reg.get("example.com", "v1", "foos").is_none());
    }
}
