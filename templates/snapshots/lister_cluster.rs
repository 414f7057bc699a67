#[cfg(feature = "policies")]
/// Lists and gets `ClusterPolicy` objects (example.com/v1/clusterpolicies) from an informer's cache.
#[derive(::core::clone::Clone, ::core::fmt::Debug)]
pub struct ClusterPolicyLister {
    lister: ::informer_runtime::__codegen::Lister<::sample::v1::ClusterPolicy>,
}
#[cfg(feature = "policies")]
impl ClusterPolicyLister {
    /// A typed lister over `lister`.
    #[inline]
    pub fn new(
        lister: ::informer_runtime::__codegen::Lister<::sample::v1::ClusterPolicy>,
    ) -> Self {
        Self { lister }
    }
    /// The `ClusterPolicy` objects in the cache matching `selector`, in all namespaces.
    #[inline]
    pub fn list(
        &self,
        selector: &::informer_runtime::__codegen::Selector,
    ) -> ::informer_runtime::__codegen::Vec<
        ::informer_runtime::__codegen::Arc<::sample::v1::ClusterPolicy>,
    > {
        self.lister.list(selector)
    }
    /// The `ClusterPolicy` objects indexed under `value` by `index` (see `SharedIndexInformer::add_index`); fails if `index` is not registered on the informer.
    #[inline]
    pub fn by_index(
        &self,
        index: &::informer_runtime::__codegen::Index<::sample::v1::ClusterPolicy>,
        value: &str,
    ) -> ::informer_runtime::__codegen::Result<
        ::informer_runtime::__codegen::Vec<
            ::informer_runtime::__codegen::Arc<::sample::v1::ClusterPolicy>,
        >,
        ::informer_runtime::__codegen::CacheError,
    > {
        self.lister.by_index(index, value)
    }
    /// The runtime lister this wraps, for generic code.
    #[inline]
    pub fn as_lister(
        &self,
    ) -> &::informer_runtime::__codegen::Lister<::sample::v1::ClusterPolicy> {
        &self.lister
    }
}
#[cfg(feature = "policies")]
impl ClusterPolicyLister {
    /// The `ClusterPolicy` named `name`, if cached.
    #[inline]
    pub fn get(
        &self,
        name: &str,
    ) -> ::informer_runtime::__codegen::Option<
        ::informer_runtime::__codegen::Arc<::sample::v1::ClusterPolicy>,
    > {
        self.lister.get(name)
    }
}
