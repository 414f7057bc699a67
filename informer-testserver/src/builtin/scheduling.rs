//! The `scheduling.k8s.io` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const PRIORITY_CLASS: BuiltinResource =
    BuiltinResource::cluster("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses")
        .short_names(&["pc"])
        .generation(Generation::OnCreate);
