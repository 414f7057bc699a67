#[cfg(feature = "policies")]
/// Access to the shared informer and lister of `ClusterPolicy` (example.com/v1/clusterpolicies).
#[derive(::core::clone::Clone, ::core::fmt::Debug)]
pub struct ClusterPolicyInformer {
    factory: ::my_runtime::__codegen::SharedInformerFactory,
}
#[cfg(feature = "policies")]
impl ClusterPolicyInformer {
    /// Access through `factory` (cheap: the factory is shared).
    #[inline]
    pub fn new(factory: &::my_runtime::__codegen::SharedInformerFactory) -> Self {
        Self {
            factory: ::core::clone::Clone::clone(factory),
        }
    }
    /// The factory's informer of `ClusterPolicy`: one per factory, created on first use and started by the factory's `start`.
    #[inline]
    pub fn informer(
        &self,
    ) -> ::my_runtime::__codegen::SharedIndexInformer<::sample::v1::ClusterPolicy> {
        self.factory.unscoped_informer::<::sample::v1::ClusterPolicy>()
    }
    /// A lister over the cache of the factory's `ClusterPolicy` informer.
    #[inline]
    pub fn lister(&self) -> ClusterPolicyLister {
        ClusterPolicyLister::new(self.informer().lister())
    }
}
#[cfg(feature = "policies")]
/// A new informer of the cluster-scoped `ClusterPolicy`. The informer is not shared with any factory: prefer the factory's accessor to share one informer and its cache.
#[inline]
pub fn new_cluster_policy_informer(
    client: ::my_runtime::__codegen::Client,
    resync_period: ::my_runtime::__codegen::Duration,
    indexers: ::my_runtime::__codegen::Indexers<::sample::v1::ClusterPolicy>,
) -> ::my_runtime::__codegen::SharedIndexInformer<::sample::v1::ClusterPolicy> {
    new_filtered_cluster_policy_informer(
        client,
        resync_period,
        indexers,
        ::my_runtime::__codegen::None,
    )
}
#[cfg(feature = "policies")]
/// Like [`new_cluster_policy_informer`], with `tweak` changing every list and watch request (such as adding a label selector).
#[inline]
pub fn new_filtered_cluster_policy_informer(
    client: ::my_runtime::__codegen::Client,
    resync_period: ::my_runtime::__codegen::Duration,
    indexers: ::my_runtime::__codegen::Indexers<::sample::v1::ClusterPolicy>,
    tweak: ::my_runtime::__codegen::Option<::my_runtime::__codegen::TweakListOptions>,
) -> ::my_runtime::__codegen::SharedIndexInformer<::sample::v1::ClusterPolicy> {
    let api = ::my_runtime::__codegen::Api::<::sample::v1::ClusterPolicy>::all(client);
    let lister_watcher = ::my_runtime::__codegen::KubeListerWatcher::new(api)
        .shared_tweak_list_options(tweak);
    ::my_runtime::__codegen::SharedIndexInformer::new(
        lister_watcher,
        ::my_runtime::__codegen::InformerConfig {
            resync_period,
            indexers,
            description: ::my_runtime::__codegen::Some(
                ::my_runtime::__codegen::String::from("clusterpolicies"),
            ),
            ..::core::default::Default::default()
        },
    )
}
