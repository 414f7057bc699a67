//! The `autoscaling` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const HORIZONTAL_POD_AUTOSCALER_V2: BuiltinResource = BuiltinResource::namespaced(
    "autoscaling",
    "v2",
    "HorizontalPodAutoscaler",
    "horizontalpodautoscalers",
)
.short_names(&["hpa"])
.categories(&["all"])
.status()
.generation(Generation::Spec);

/// The same resource, served at `autoscaling/v1` too (discovery prefers `v2`).
pub(crate) const HORIZONTAL_POD_AUTOSCALER_V1: BuiltinResource =
    HORIZONTAL_POD_AUTOSCALER_V2.at_version("v1");
