//! The `batch` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const JOB: BuiltinResource = BuiltinResource::namespaced("batch", "v1", "Job", "jobs")
    .categories(&["all"])
    .status()
    .generation(Generation::Spec);

pub(crate) const CRON_JOB: BuiltinResource =
    BuiltinResource::namespaced("batch", "v1", "CronJob", "cronjobs")
        .short_names(&["cj"])
        .categories(&["all"])
        .status()
        .generation(Generation::Spec);
