//! The `autoscaling` group.

use super::{BuiltinResource, Generation};

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

pub(crate) const HORIZONTAL_POD_AUTOSCALER_V1: BuiltinResource = BuiltinResource::namespaced(
    "autoscaling",
    "v1",
    "HorizontalPodAutoscaler",
    "horizontalpodautoscalers",
)
.short_names(&["hpa"])
.categories(&["all"])
.status()
.generation(Generation::Spec);
