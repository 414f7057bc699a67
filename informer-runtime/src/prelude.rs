//! The names most code built on informers uses, in one import.
//!
//! ```
//! use informer_runtime::prelude::*;
//! ```

pub use crate::{
    cache::{DeletedFinalStateUnknown, Index, MaybeTombstone, ObjectName},
    controller::{Action, Controller},
    events::EventRecorder,
    factory::SharedInformerFactory,
    informer::{
        SharedIndexInformer,
        enqueue::Enqueue,
        handler::{EventHandlerFuncs, ResourceEventHandler},
    },
    lister::{IndexedLister, Lister, NamespaceLister},
    workqueue::{RateLimitingQueue, WorkQueue, default_controller_rate_limiter},
};
