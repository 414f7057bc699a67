//! The `resource.k8s.io` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const DEVICE_CLASS: BuiltinResource =
    BuiltinResource::cluster("resource.k8s.io", "v1", "DeviceClass", "deviceclasses")
        .generation(Generation::Spec);

pub(crate) const DEVICE_TAINT_RULE: BuiltinResource =
    BuiltinResource::cluster("resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules")
        .status()
        .generation(Generation::Spec);

pub(crate) const RESOURCE_CLAIM: BuiltinResource =
    BuiltinResource::namespaced("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims").status();

pub(crate) const RESOURCE_CLAIM_TEMPLATE: BuiltinResource = BuiltinResource::namespaced(
    "resource.k8s.io",
    "v1",
    "ResourceClaimTemplate",
    "resourceclaimtemplates",
);

pub(crate) const RESOURCE_SLICE: BuiltinResource =
    BuiltinResource::cluster("resource.k8s.io", "v1", "ResourceSlice", "resourceslices")
        .generation(Generation::Spec);
