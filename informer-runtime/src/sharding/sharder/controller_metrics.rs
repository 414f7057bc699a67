//! [`ControllerMetrics`]: where the controllers of a sharder's terms report their queues and
//! reconciles: the metrics the manager that runs the sharder registers for them, by controller
//! name, before the first term.

use std::{
    collections::HashMap,
    sync::{Arc, PoisonError, RwLock},
};

use crate::{
    controller::ReconcileMetrics,
    sharding::{resource_type::ResourceType, ring::ControllerRing},
    workqueue::QueueMetrics,
};

/// A controller's queue metrics and reconcile metrics.
pub(crate) type Sinks = (Arc<dyn QueueMetrics>, Arc<dyn ReconcileMetrics>);

/// The metrics of a sharder's controllers, by controller name (none until registered).
#[derive(Default)]
pub(crate) struct ControllerMetrics(RwLock<HashMap<String, Sinks>>);

impl ControllerMetrics {
    /// Reports the controller `name` to `sinks` from the next term on.
    #[cfg(feature = "metrics")]
    pub(crate) fn set(&self, name: &str, sinks: Sinks) {
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), sinks);
    }

    /// Where the controller `name` reports, if registered.
    pub(crate) fn get(&self, name: &str) -> Option<Sinks> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
    }
}

/// The name of the controller of the ring's shard Leases: `sharder <ring> leases`.
pub(crate) fn lease_controller_name(ring: &ControllerRing) -> String {
    format!("sharder {} leases", ring.name())
}

/// The name of the controller of `resource`'s objects: `sharder <ring> <plural.group>`.
pub(crate) fn object_controller_name(ring: &ControllerRing, resource: &ResourceType) -> String {
    format!("sharder {} {resource}", ring.name())
}
