//! The `flowcontrol.apiserver.k8s.io` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const FLOW_SCHEMA: BuiltinResource =
    BuiltinResource::cluster("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas")
        .status()
        .generation(Generation::Spec);

pub(crate) const PRIORITY_LEVEL_CONFIGURATION: BuiltinResource = BuiltinResource::cluster(
    "flowcontrol.apiserver.k8s.io",
    "v1",
    "PriorityLevelConfiguration",
    "prioritylevelconfigurations",
)
.status()
.generation(Generation::Spec);
