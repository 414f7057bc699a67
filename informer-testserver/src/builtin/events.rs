//! The `events.k8s.io` group.

use super::description::BuiltinResource;

pub(crate) const EVENT: BuiltinResource =
    BuiltinResource::namespaced("events.k8s.io", "v1", "Event", "events").short_names(&["ev"]);
