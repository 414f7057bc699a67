#[cfg(feature = "policies")]
/// Lists and gets `ClusterPolicy` objects (example.com/v1/clusterpolicies) from an informer's cache.
#[derive(::core::clone::Clone, ::core::fmt::Debug)]
pub struct ClusterPolicyLister {
    lister: ::informer_runtime::__codegen::Lister<::sample::v1::ClusterPolicy>,
}
#[cfg(feature = "policies")]
impl ClusterPolicyLister {
    /// A typed lister over `lister`.
    pub fn new(
        lister: ::informer_runtime::__codegen::Lister<::sample::v1::ClusterPolicy>,
    ) -> Self {
        Self { lister }
    }
    /// The `ClusterPolicy` objects in the cache matching `selector`, in all namespaces.
    pub fn list(
        &self,
        selector: &::informer_runtime::__codegen::Selector,
    ) -> ::informer_runtime::__codegen::Vec<
        ::informer_runtime::__codegen::Arc<::sample::v1::ClusterPolicy>,
    > {
        self.lister.list(selector)
    }
}
#[cfg(feature = "policies")]
impl ClusterPolicyLister {
    /// The `ClusterPolicy` named `name`, if cached.
    pub fn get(
        &self,
        name: &str,
    ) -> ::informer_runtime::__codegen::Option<
        ::informer_runtime::__codegen::Arc<::sample::v1::ClusterPolicy>,
    > {
        self.lister.get(name)
    }
}
