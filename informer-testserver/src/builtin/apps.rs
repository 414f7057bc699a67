//! The `apps` group.

use super::description::{BuiltinResource, Generation};

pub(crate) const DEPLOYMENT: BuiltinResource =
    BuiltinResource::namespaced("apps", "v1", "Deployment", "deployments")
        .short_names(&["deploy"])
        .categories(&["all"])
        .status()
        .scale()
        .generation(Generation::SpecAnd("annotations"));

pub(crate) const REPLICA_SET: BuiltinResource =
    BuiltinResource::namespaced("apps", "v1", "ReplicaSet", "replicasets")
        .short_names(&["rs"])
        .categories(&["all"])
        .status()
        .scale()
        .generation(Generation::Spec);

pub(crate) const STATEFUL_SET: BuiltinResource =
    BuiltinResource::namespaced("apps", "v1", "StatefulSet", "statefulsets")
        .short_names(&["sts"])
        .categories(&["all"])
        .status()
        .scale()
        .generation(Generation::Spec);

pub(crate) const DAEMON_SET: BuiltinResource =
    BuiltinResource::namespaced("apps", "v1", "DaemonSet", "daemonsets")
        .short_names(&["ds"])
        .categories(&["all"])
        .status()
        .generation(Generation::Spec);

pub(crate) const CONTROLLER_REVISION: BuiltinResource =
    BuiltinResource::namespaced("apps", "v1", "ControllerRevision", "controllerrevisions");
