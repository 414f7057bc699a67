//! What describes a built-in resource, and the builder its descriptions are written with.

use super::subresource::Subresource;

/// A built-in resource as kube-apiserver serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BuiltinResource {
    /// API group, empty for the core group.
    pub(crate) group: &'static str,
    /// Version within the group.
    pub(crate) version: &'static str,
    /// Kind of its objects.
    pub(crate) kind: &'static str,
    /// Plural name in URLs.
    pub(crate) plural: &'static str,
    /// Whether its objects live in namespaces.
    pub(crate) namespaced: bool,
    /// Short names discovery lists (`kubectl get po`).
    pub(crate) short_names: &'static [&'static str],
    /// Categories discovery lists (`kubectl get all` reads `all`).
    pub(crate) categories: &'static [&'static str],
    /// The verbs served; others answer `405`.
    pub(crate) verbs: &'static [&'static str],
    /// Whether it is stored or computed.
    pub(crate) served_as: ServedAs,
    /// Whether the `status` subresource is served.
    pub(crate) status: bool,
    /// Whether the `scale` subresource is served (of `.spec.replicas`).
    pub(crate) scale: bool,
    /// The other subresources, in discovery's order.
    pub(crate) subresources: &'static [Subresource],
    /// What its strategy does with `metadata.generation`.
    pub(crate) generation: Generation,
}

/// How a resource's requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServedAs {
    /// From the store, by the verbs' handlers.
    Stored,
    /// A review (TokenReview, the access reviews): created and answered, never stored.
    Review,
    /// `componentstatuses`: read-only, computed on each read.
    ComponentStatuses,
    /// The legacy `bindings` resource, the form of `pods/binding` without a pod in the URL.
    LegacyBindings,
}

/// What a kind's strategy does with `metadata.generation` (`write/generation.rs` applies it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generation {
    /// Nothing: the kind keeps no generation.
    None,
    /// 1 on create, +1 when anything but `metadata` and `status` changes (the `spec`, or the
    /// `webhooks` of a webhook configuration, the `endpoints` of an EndpointSlice).
    Spec,
    /// As [`Spec`](Self::Spec), and +1 when this field of the metadata changes: a Deployment's
    /// `annotations` (its controller copies them to its ReplicaSets), an EndpointSlice's
    /// `labels`.
    SpecAnd(&'static str),
    /// 1 on create, never bumped (a PriorityClass, whose spec cannot change).
    OnCreate,
    /// 1 on create, +1 when anything but `metadata` changes: a custom resource without a
    /// `status` subresource, whose status is part of what its clients write.
    AllButMetadata,
}

/// Every verb of a stored resource.
pub(crate) const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// The verbs of resources that are only created and answered, never stored (the reviews,
/// `bindings`).
const CREATE_ONLY: &[&str] = &["create"];
/// The verbs of `componentstatuses`.
const READ_ONLY: &[&str] = &["get", "list"];
/// The verbs of `namespaces`: no delete-collection.
pub(super) const NAMESPACE_VERBS: &[&str] = &["create", "delete", "get", "list", "patch", "update", "watch"];

impl BuiltinResource {
    /// A stored resource of objects in namespaces, with every verb and nothing else.
    pub(super) const fn namespaced(
        group: &'static str,
        version: &'static str,
        kind: &'static str,
        plural: &'static str,
    ) -> Self {
        Self {
            group,
            version,
            kind,
            plural,
            namespaced: true,
            short_names: &[],
            categories: &[],
            verbs: ALL_VERBS,
            served_as: ServedAs::Stored,
            status: false,
            scale: false,
            subresources: &[],
            generation: Generation::None,
        }
    }

    /// A stored resource of cluster-scoped objects, with every verb and nothing else.
    pub(super) const fn cluster(
        group: &'static str,
        version: &'static str,
        kind: &'static str,
        plural: &'static str,
    ) -> Self {
        Self {
            namespaced: false,
            ..Self::namespaced(group, version, kind, plural)
        }
    }

    /// The same resource served at another version of its group.
    pub(super) const fn at_version(self, version: &'static str) -> Self {
        Self { version, ..self }
    }

    pub(super) const fn short_names(self, short_names: &'static [&'static str]) -> Self {
        Self { short_names, ..self }
    }

    pub(super) const fn categories(self, categories: &'static [&'static str]) -> Self {
        Self { categories, ..self }
    }

    pub(super) const fn verbs(self, verbs: &'static [&'static str]) -> Self {
        Self { verbs, ..self }
    }

    /// Computed rather than stored: the verbs follow (create only, or read only).
    pub(super) const fn served_as(self, served_as: ServedAs) -> Self {
        let verbs = match served_as {
            ServedAs::Stored => self.verbs,
            ServedAs::Review | ServedAs::LegacyBindings => CREATE_ONLY,
            ServedAs::ComponentStatuses => READ_ONLY,
        };
        Self {
            served_as,
            verbs,
            ..self
        }
    }

    pub(super) const fn status(self) -> Self {
        Self { status: true, ..self }
    }

    pub(super) const fn scale(self) -> Self {
        Self { scale: true, ..self }
    }

    pub(super) const fn subresources(self, subresources: &'static [Subresource]) -> Self {
        Self { subresources, ..self }
    }

    pub(super) const fn generation(self, generation: Generation) -> Self {
        Self { generation, ..self }
    }

    /// `v1` or `group/version`.
    #[cfg(test)]
    pub(crate) fn api_version(&self) -> String {
        match self.group {
            "" => self.version.to_string(),
            group => format!("{group}/{}", self.version),
        }
    }

    /// The subresource `name` besides `status` and `scale`, if served.
    pub(crate) fn subresource(&self, name: &str) -> Option<&'static Subresource> {
        self.subresources.iter().find(|s| s.name == name)
    }
}
