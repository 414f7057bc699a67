//! The `storagemigration.k8s.io` group.

use super::description::BuiltinResource;

pub(crate) const STORAGE_VERSION_MIGRATION: BuiltinResource = BuiltinResource::cluster(
    "storagemigration.k8s.io",
    "v1",
    "StorageVersionMigration",
    "storageversionmigrations",
)
.status();
