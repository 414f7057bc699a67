//! The names most code built on informers uses, in one import.
//!
//! ```
//! use informer_runtime::prelude::*;
//! ```

pub use crate::{
    cache::{DeletedFinalStateUnknown, Index, MaybeTombstone},
    controller::{Action, Controller},
    events::EventRecorder,
    factory::SharedInformerFactory,
    informer::{
        SharedIndexInformer,
        enqueue::Enqueue,
        handler::{EventHandlerFuncs, ResourceEventHandler},
    },
    key::{ObjectKey, ObjectKeyExt},
    lister::{IndexedLister, Lister, NamespaceLister},
    manager::Manager,
    predicate::Predicate,
    scope::{Scope, ScopedInformer, ScopedLister},
    workqueue::{Priority, RateLimitingQueue, WorkQueue, default_controller_rate_limiter},
};
