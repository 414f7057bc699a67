//! The `policy` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const POD_DISRUPTION_BUDGET: BuiltinResource =
    BuiltinResource::namespaced("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets")
        .short_names(&["pdb"])
        .status()
        .generation(Generation::Spec);
