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

/// One resource in a generated `for_resource` table: its group (`""` for the core group),
/// version and plural, and the factory method returning its generic informer
/// (`SharedInformerFactory::generic_informer::<K>`, with `K` the resource's type or its
/// `PartialObjectMeta`).
pub type GenericInformerEntry = (
    &'static str,
    &'static str,
    &'static str,
    fn(&SharedInformerFactory, GroupVersionResource) -> GenericInformer,
);

/// The generic informer of `gvr` from `table`, sorted by group, version and plural (as a
/// generated `for_resource` table is): a binary search, then the entry's method.
///
/// A table costs its crate nothing to compile until a function that reads it is compiled:
/// the generated `for_resource` functions are `#[inline]`, so each
/// `generic_informer::<K>` is instantiated in the crate that calls them, not in the crate
/// that generates them. Non-generic, so the search is compiled once, here.
///
/// # Errors
///
/// `FactoryError::NoInformerFor` when `table` has no entry for `gvr`.
pub fn generic_informer_from(
    factory: &SharedInformerFactory,
    table: &[GenericInformerEntry],
    gvr: &GroupVersionResource,
) -> Result<GenericInformer, FactoryError> {
    let key = |&(group, version, plural, _): &GenericInformerEntry| (group, version, plural);
    debug_assert!(table.is_sorted_by_key(key), "a for_resource table is sorted");
    let wanted = (gvr.group.as_str(), gvr.version.as_str(), gvr.resource.as_str());
    table
        .binary_search_by(|entry| key(entry).cmp(&wanted))
        .ok()
        .and_then(|found| table.get(found))
        .map(|&(.., generic_informer)| generic_informer(factory, gvr.clone()))
        .ok_or_else(|| FactoryError::no_informer_for(gvr))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Pod};

    use super::*;

    /// Two resources, sorted as a generated table is.
    const TABLE: &[GenericInformerEntry] = &[
        (
            "",
            "v1",
            "configmaps",
            SharedInformerFactory::generic_informer::<ConfigMap>,
        ),
        ("", "v1", "pods", SharedInformerFactory::generic_informer::<Pod>),
    ];

    /// A factory whose client is never used: nothing here starts it.
    fn factory() -> SharedInformerFactory {
        let url = "http://127.0.0.1:9".parse().expect("url");
        SharedInformerFactory::new(Client::try_from(kube::Config::new(url)).expect("client"))
    }

    #[tokio::test]
    async fn a_table_resolves_each_entry_to_the_factory_informer_of_its_type() {
        let factory = factory();
        let pods = GroupVersionResource::gvr("", "v1", "pods");
        let generic = generic_informer_from(&factory, TABLE, &pods).expect("pods are in the table");
        assert_eq!(generic.gvr(), &pods);
        assert!(
            generic.informer::<ConfigMap>().is_none(),
            "not the config map informer"
        );
        let typed = generic.informer::<Pod>().expect("the pod informer");
        assert_eq!(
            typed.description(),
            factory.unscoped_informer::<Pod>().description()
        );
        let configmaps = GroupVersionResource::gvr("", "v1", "configmaps");
        let generic = generic_informer_from(&factory, TABLE, &configmaps).expect("config maps too");
        assert!(generic.informer::<ConfigMap>().is_some());
        assert_eq!(
            factory.stats().len(),
            2,
            "one informer per type, shared with `unscoped_informer::<K>()`"
        );
    }

    #[tokio::test]
    async fn a_resource_missing_from_the_table_is_no_informer_for_it() {
        let factory = factory();
        for (group, version, plural) in [
            ("", "v1", "secrets"),
            ("apps", "v1", "pods"),
            ("", "v2", "pods"),
            ("", "", ""),
        ] {
            let gvr = GroupVersionResource::gvr(group, version, plural);
            let err = generic_informer_from(&factory, TABLE, &gvr).expect_err("not in the table");
            assert!(
                matches!(&err, FactoryError::NoInformerFor { group: g, version: v, resource: r }
                    if g == group && v == version && r == plural),
                "{err}"
            );
        }
        assert!(
            factory.stats().is_empty(),
            "no informer is created for an unknown resource"
        );
    }
}
