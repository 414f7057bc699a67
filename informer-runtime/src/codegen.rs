//! The items generated code uses, under stable paths (`::informer_runtime::__codegen::…`).
//!
//! Generated informers, listers and factories reach the runtime, kube and std only through
//! this module, so they compile whatever the user's crate shadows (`Option`, `Result`, …) and
//! whatever dependencies it declares. Not part of the public API.

pub use std::{
    boxed::Box,
    option::Option::{self, None, Some},
    result::Result::{self, Err, Ok},
    string::String,
    sync::Arc,
    time::Duration,
    vec::Vec,
};

pub use kube::{
    self, Api, Client, Resource,
    core::{GroupVersionResource, PartialObjectMeta, Selector},
};

pub use crate::{
    cache::{Error as CacheError, Index, Indexers, namespace_indexers},
    factory::{Error as FactoryError, GenericInformer, InformerContext, SharedInformerFactory},
    informer::{Config as InformerConfig, SharedIndexInformer},
    lister::{Lister, NamespaceLister},
    source::{ApiScope, KubeListerWatcher},
    source::{ListOptions, TweakListOptions},
};
