//! The `coordination.k8s.io` group.

use super::description::BuiltinResource;

pub(crate) const LEASE: BuiltinResource =
    BuiltinResource::namespaced("coordination.k8s.io", "v1", "Lease", "leases");
