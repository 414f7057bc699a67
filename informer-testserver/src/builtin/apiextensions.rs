//! The `apiextensions.k8s.io` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const CUSTOM_RESOURCE_DEFINITION: BuiltinResource = BuiltinResource::cluster(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
)
.short_names(&["crd", "crds"])
.categories(&["api-extensions"])
.status()
.generation(Generation::Spec);
