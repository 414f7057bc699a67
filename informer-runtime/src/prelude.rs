//! The names most code built on informers uses, in one import.
//!
//! ```
//! use informer_runtime::prelude::*;
//! ```

pub use crate::{
    cache::{DeletedFinalStateUnknown, MaybeTombstone, ObjectName},
    factory::SharedInformerFactory,
    informer::{
        SharedIndexInformer,
        handler::{EventHandlerFuncs, ResourceEventHandler},
    },
    lister::{Lister, NamespaceLister},
    workqueue::{RateLimitingQueue, WorkQueue, default_controller_rate_limiter},
};
