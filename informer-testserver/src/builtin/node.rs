//! The `node.k8s.io` group.

use super::BuiltinResource;

pub(crate) const RUNTIME_CLASS: BuiltinResource =
    BuiltinResource::cluster("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses");
