//! The `apiregistration.k8s.io` group.

use super::description::BuiltinResource;

pub(crate) const API_SERVICE: BuiltinResource =
    BuiltinResource::cluster("apiregistration.k8s.io", "v1", "APIService", "apiservices")
        .categories(&["api-extensions"])
        .status();
