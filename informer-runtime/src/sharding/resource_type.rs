//! [`ResourceType`]: one resource of a ring, named as the API names it.

use std::{fmt, sync::Arc};

use kube::Resource;

use super::metadata_access::{MetadataAccess, TypedAccess};
use crate::{factory::TypedResource, source::ApiScope};

/// A resource in a [`ControllerRing`](super::ControllerRing): the Rust type and the API's
/// group, version, kind and plural.
#[derive(Clone)]
pub struct ResourceType {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
    pub(crate) plural: String,
    /// Whether its objects live in namespaces.
    pub(crate) namespaced: bool,
    /// The sharder's typed access to the resource's metadata.
    pub(crate) access: Arc<dyn MetadataAccess>,
}

impl ResourceType {
    /// The resource of `K`.
    pub fn of<K: TypedResource>() -> Self {
        Self {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespaced: <K::Scope as ApiScope>::NAMESPACED,
            access: Arc::new(TypedAccess::<K>::new()),
        }
    }

    /// Whether this is the resource of `K` (by group and plural, so that a type and its
    /// metadata-only form are the same resource).
    pub fn is<K: Resource<DynamicType = ()>>(&self) -> bool {
        self.group == K::group(&()) && self.plural == K::plural(&())
    }

    /// The API group (empty for the core group).
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The kind, as owner references name it.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The plural resource name.
    pub fn plural(&self) -> &str {
        &self.plural
    }

    /// Whether its objects live in namespaces (`false` for cluster-scoped resources).
    pub fn is_namespaced(&self) -> bool {
        self.namespaced
    }

    /// Whether this is the core group's `namespaces` resource (whose objects a ring's
    /// namespace selector selects by their own labels).
    pub(crate) fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.plural == "namespaces"
    }

    /// The API version (`v1`, `apps/v1`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

impl PartialEq for ResourceType {
    fn eq(&self, other: &Self) -> bool {
        self.group == other.group && self.plural == other.plural
    }
}

impl Eq for ResourceType {}

impl fmt::Debug for ResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ResourceType {
    /// `plural.group`, or `plural` in the core group, as kubectl writes a group-resource.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.plural)
        } else {
            write!(f, "{}.{}", self.plural, self.group)
        }
    }
}
