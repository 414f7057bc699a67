//! The `node.k8s.io` group.

use super::description::BuiltinResource;

pub(crate) const RUNTIME_CLASS: BuiltinResource =
    BuiltinResource::cluster("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses");
