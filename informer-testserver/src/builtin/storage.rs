//! The `storage.k8s.io` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const CSI_NODE: BuiltinResource =
    BuiltinResource::cluster("storage.k8s.io", "v1", "CSINode", "csinodes");

pub(crate) const CSI_DRIVER: BuiltinResource =
    BuiltinResource::cluster("storage.k8s.io", "v1", "CSIDriver", "csidrivers").generation(Generation::Spec);

pub(crate) const CSI_STORAGE_CAPACITY: BuiltinResource = BuiltinResource::namespaced(
    "storage.k8s.io",
    "v1",
    "CSIStorageCapacity",
    "csistoragecapacities",
);

pub(crate) const STORAGE_CLASS: BuiltinResource =
    BuiltinResource::cluster("storage.k8s.io", "v1", "StorageClass", "storageclasses").short_names(&["sc"]);

pub(crate) const VOLUME_ATTACHMENT: BuiltinResource =
    BuiltinResource::cluster("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments").status();

pub(crate) const VOLUME_ATTRIBUTES_CLASS: BuiltinResource = BuiltinResource::cluster(
    "storage.k8s.io",
    "v1",
    "VolumeAttributesClass",
    "volumeattributesclasses",
)
.short_names(&["vac"]);
