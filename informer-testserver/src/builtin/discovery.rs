//! The `discovery.k8s.io` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const ENDPOINT_SLICE: BuiltinResource =
    BuiltinResource::namespaced("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices")
        .generation(Generation::SpecAnd("labels"));
