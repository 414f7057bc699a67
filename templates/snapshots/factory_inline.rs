/// The typed informers and listers of this crate's resources, by group, version and
/// resource (`informers.apps().v1().deployments()`) or by
/// [`for_resource`](Self::for_resource), on a runtime `SharedInformerFactory`.
///
/// The runtime factory owns the informers (one per type) and starts, syncs and stops
/// them; this is a typed view of it. Views of several generated crates (built-in
/// resources and custom resources) over one factory share its informers, its start and
/// its sync. Dereferences to the factory for `start`, `wait_for_cache_sync` and
/// `shutdown`.
#[derive(::core::clone::Clone, ::core::fmt::Debug)]
pub struct Informers {
    factory: ::informer_runtime::__codegen::SharedInformerFactory,
}
impl Informers {
    /// The typed view of `factory` (cheap: the factory is shared, not copied).
    #[inline]
    pub fn new(factory: &::informer_runtime::__codegen::SharedInformerFactory) -> Self {
        Self {
            factory: ::core::clone::Clone::clone(factory),
        }
    }
    /// The runtime factory these informers belong to.
    #[inline]
    pub fn factory(&self) -> &::informer_runtime::__codegen::SharedInformerFactory {
        &self.factory
    }
    /// The informers of the `core` API group.
    #[inline]
    pub fn core(&self) -> self::core::Core {
        self::core::Core::new(&self.factory)
    }
    /// The informers of the `example.com` API group.
    #[inline]
    pub fn example_com(&self) -> self::example_com::ExampleCom {
        self::example_com::ExampleCom::new(&self.factory)
    }
}
impl ::core::ops::Deref for Informers {
    type Target = ::informer_runtime::__codegen::SharedInformerFactory;
    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.factory
    }
}
impl ::core::convert::From<::informer_runtime::__codegen::SharedInformerFactory>
for Informers {
    #[inline]
    fn from(factory: ::informer_runtime::__codegen::SharedInformerFactory) -> Self {
        Self { factory }
    }
}
/// Informers and listers of the `core` API group.
pub mod core {
    /// The informers of the `core` API group, by version.
    #[derive(::core::clone::Clone, ::core::fmt::Debug)]
    pub struct Core {
        factory: ::informer_runtime::__codegen::SharedInformerFactory,
    }
    impl Core {
        /// Access through `factory`.
        #[inline]
        pub fn new(
            factory: &::informer_runtime::__codegen::SharedInformerFactory,
        ) -> Self {
            Self {
                factory: ::core::clone::Clone::clone(factory),
            }
        }
        /// The informers of `core` version `v1`.
        #[inline]
        pub fn v1(&self) -> self::v1::V1 {
            self::v1::V1::new(&self.factory)
        }
    }
    /// Informers and listers of `core` version `v1`.
    pub mod v1 {
        /// The informers of `v1`.
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct V1 {
            factory: ::informer_runtime::__codegen::SharedInformerFactory,
        }
        impl V1 {
            /// Access through `factory`.
            #[inline]
            pub fn new(
                factory: &::informer_runtime::__codegen::SharedInformerFactory,
            ) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }
            /// The shared informer and lister of `Pod` (pods).
            #[inline]
            pub fn pods(&self) -> PodInformer {
                PodInformer::new(&self.factory)
            }
        }
        /// Access to the shared informer and lister of `Pod` (core/v1/pods).
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct PodInformer {
            factory: ::informer_runtime::__codegen::SharedInformerFactory,
        }
        impl PodInformer {
            /// Access through `factory` (cheap: the factory is shared).
            #[inline]
            pub fn new(
                factory: &::informer_runtime::__codegen::SharedInformerFactory,
            ) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }
            /// The factory's informer of `Pod`: one per factory, created on first use and started by the factory's `start`.
            #[inline]
            pub fn informer(
                &self,
            ) -> ::informer_runtime::__codegen::SharedIndexInformer<::k8s::Pod> {
                self.factory.unscoped_informer::<::k8s::Pod>()
            }
            /// A lister over the cache of the factory's `Pod` informer.
            #[inline]
            pub fn lister(&self) -> PodLister {
                PodLister::new(self.informer().lister())
            }
        }
        /// A new informer of `Pod` in `namespace` (`None`: all namespaces). The informer is not shared with any factory: prefer the factory's accessor to share one informer and its cache.
        #[inline]
        pub fn new_pod_informer(
            client: ::informer_runtime::__codegen::Client,
            namespace: ::informer_runtime::__codegen::Option<&str>,
            resync_period: ::informer_runtime::__codegen::Duration,
            indexers: ::informer_runtime::__codegen::Indexers<::k8s::Pod>,
        ) -> ::informer_runtime::__codegen::SharedIndexInformer<::k8s::Pod> {
            new_filtered_pod_informer(
                client,
                namespace,
                resync_period,
                indexers,
                ::informer_runtime::__codegen::None,
            )
        }
        /// Like [`new_pod_informer`], with `tweak` changing every list and watch request (such as adding a label selector).
        #[inline]
        pub fn new_filtered_pod_informer(
            client: ::informer_runtime::__codegen::Client,
            namespace: ::informer_runtime::__codegen::Option<&str>,
            resync_period: ::informer_runtime::__codegen::Duration,
            indexers: ::informer_runtime::__codegen::Indexers<::k8s::Pod>,
            tweak: ::informer_runtime::__codegen::Option<
                ::informer_runtime::__codegen::TweakListOptions,
            >,
        ) -> ::informer_runtime::__codegen::SharedIndexInformer<::k8s::Pod> {
            let api = <<::k8s::Pod as ::informer_runtime::__codegen::Resource>::Scope as ::informer_runtime::__codegen::ApiScope>::api::<
                ::k8s::Pod,
            >(client, namespace);
            let lister_watcher = ::informer_runtime::__codegen::KubeListerWatcher::new(
                    api,
                )
                .shared_tweak_list_options(tweak);
            ::informer_runtime::__codegen::SharedIndexInformer::new(
                lister_watcher,
                ::informer_runtime::__codegen::InformerConfig {
                    resync_period,
                    indexers,
                    description: ::informer_runtime::__codegen::Some(
                        ::informer_runtime::__codegen::String::from("pods"),
                    ),
                    ..::core::default::Default::default()
                },
            )
        }
        /// Lists and gets `Pod` objects (core/v1/pods) from an informer's cache.
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct PodLister {
            lister: ::informer_runtime::__codegen::Lister<::k8s::Pod>,
        }
        impl PodLister {
            /// A typed lister over `lister`.
            #[inline]
            pub fn new(
                lister: ::informer_runtime::__codegen::Lister<::k8s::Pod>,
            ) -> Self {
                Self { lister }
            }
            /// The `Pod` objects in the cache matching `selector`, in all namespaces.
            #[inline]
            pub fn list(
                &self,
                selector: &::informer_runtime::__codegen::Selector,
            ) -> ::informer_runtime::__codegen::Vec<
                ::informer_runtime::__codegen::Arc<::k8s::Pod>,
            > {
                self.lister.list(selector)
            }
            /// The `Pod` objects indexed under `value` by `index` (see `SharedIndexInformer::add_index`); fails if `index` is not registered on the informer.
            #[inline]
            pub fn by_index(
                &self,
                index: &::informer_runtime::__codegen::Index<::k8s::Pod>,
                value: &str,
            ) -> ::informer_runtime::__codegen::Result<
                ::informer_runtime::__codegen::Vec<
                    ::informer_runtime::__codegen::Arc<::k8s::Pod>,
                >,
                ::informer_runtime::__codegen::CacheError,
            > {
                self.lister.by_index(index, value)
            }
            /// The runtime lister this wraps, for generic code.
            #[inline]
            pub fn as_lister(
                &self,
            ) -> &::informer_runtime::__codegen::Lister<::k8s::Pod> {
                &self.lister
            }
        }
        impl PodLister {
            /// The `Pod` objects in `namespace`.
            #[inline]
            pub fn pods(&self, namespace: &str) -> PodNamespaceLister {
                PodNamespaceLister {
                    lister: self.lister.by_namespace(namespace),
                }
            }
        }
        /// Lists and gets the `Pod` objects of one namespace from a cache.
        #[derive(::core::fmt::Debug)]
        pub struct PodNamespaceLister {
            lister: ::informer_runtime::__codegen::NamespaceLister<::k8s::Pod>,
        }
        impl PodNamespaceLister {
            /// The namespace.
            #[inline]
            pub fn namespace(&self) -> &str {
                self.lister.namespace()
            }
            /// The `Pod` objects in the namespace matching `selector`.
            #[inline]
            pub fn list(
                &self,
                selector: &::informer_runtime::__codegen::Selector,
            ) -> ::informer_runtime::__codegen::Vec<
                ::informer_runtime::__codegen::Arc<::k8s::Pod>,
            > {
                self.lister.list(selector)
            }
            /// The `Pod` named `name` in the namespace, if cached.
            #[inline]
            pub fn get(
                &self,
                name: &str,
            ) -> ::informer_runtime::__codegen::Option<
                ::informer_runtime::__codegen::Arc<::k8s::Pod>,
            > {
                self.lister.get(name)
            }
            /// The `Pod` objects of the namespace indexed under `value` by `index`; fails if `index` is not registered on the informer.
            #[inline]
            pub fn by_index(
                &self,
                index: &::informer_runtime::__codegen::Index<::k8s::Pod>,
                value: &str,
            ) -> ::informer_runtime::__codegen::Result<
                ::informer_runtime::__codegen::Vec<
                    ::informer_runtime::__codegen::Arc<::k8s::Pod>,
                >,
                ::informer_runtime::__codegen::CacheError,
            > {
                self.lister.by_index(index, value)
            }
        }
    }
}
/// Informers and listers of the `example.com` API group.
pub mod example_com {
    /// The informers of the `example.com` API group, by version.
    #[derive(::core::clone::Clone, ::core::fmt::Debug)]
    pub struct ExampleCom {
        factory: ::informer_runtime::__codegen::SharedInformerFactory,
    }
    impl ExampleCom {
        /// Access through `factory`.
        #[inline]
        pub fn new(
            factory: &::informer_runtime::__codegen::SharedInformerFactory,
        ) -> Self {
            Self {
                factory: ::core::clone::Clone::clone(factory),
            }
        }
        /// The informers of `example.com` version `v1`.
        #[inline]
        pub fn v1(&self) -> self::v1::V1 {
            self::v1::V1::new(&self.factory)
        }
        /// The informers of `example.com` version `v2`.
        #[inline]
        pub fn v2(&self) -> self::v2::V2 {
            self::v2::V2::new(&self.factory)
        }
    }
    /// Informers and listers of `example.com` version `v1`.
    pub mod v1 {
        /// The informers of `example.com/v1`.
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct V1 {
            factory: ::informer_runtime::__codegen::SharedInformerFactory,
        }
        impl V1 {
            /// Access through `factory`.
            #[inline]
            pub fn new(
                factory: &::informer_runtime::__codegen::SharedInformerFactory,
            ) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }
            #[cfg(feature = "policies")]
            /// The shared informer and lister of `ClusterPolicy` (clusterpolicies).
            #[inline]
            pub fn cluster_policies(&self) -> ClusterPolicyInformer {
                ClusterPolicyInformer::new(&self.factory)
            }
            /// The shared informer and lister of `Foo` (foos).
            #[inline]
            pub fn foos(&self) -> FooInformer {
                FooInformer::new(&self.factory)
            }
        }
        #[cfg(feature = "policies")]
        /// Access to the shared informer and lister of `ClusterPolicy` (example.com/v1/clusterpolicies).
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct ClusterPolicyInformer {
            factory: ::informer_runtime::__codegen::SharedInformerFactory,
        }
        #[cfg(feature = "policies")]
        impl ClusterPolicyInformer {
            /// Access through `factory` (cheap: the factory is shared).
            #[inline]
            pub fn new(
                factory: &::informer_runtime::__codegen::SharedInformerFactory,
            ) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }
            /// The factory's informer of `ClusterPolicy`: one per factory, created on first use and started by the factory's `start`.
            #[inline]
            pub fn informer(
                &self,
            ) -> ::informer_runtime::__codegen::SharedIndexInformer<
                ::sample::v1::ClusterPolicy,
            > {
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
            client: ::informer_runtime::__codegen::Client,
            resync_period: ::informer_runtime::__codegen::Duration,
            indexers: ::informer_runtime::__codegen::Indexers<
                ::sample::v1::ClusterPolicy,
            >,
        ) -> ::informer_runtime::__codegen::SharedIndexInformer<
            ::sample::v1::ClusterPolicy,
        > {
            new_filtered_cluster_policy_informer(
                client,
                resync_period,
                indexers,
                ::informer_runtime::__codegen::None,
            )
        }
        #[cfg(feature = "policies")]
        /// Like [`new_cluster_policy_informer`], with `tweak` changing every list and watch request (such as adding a label selector).
        #[inline]
        pub fn new_filtered_cluster_policy_informer(
            client: ::informer_runtime::__codegen::Client,
            resync_period: ::informer_runtime::__codegen::Duration,
            indexers: ::informer_runtime::__codegen::Indexers<
                ::sample::v1::ClusterPolicy,
            >,
            tweak: ::informer_runtime::__codegen::Option<
                ::informer_runtime::__codegen::TweakListOptions,
            >,
        ) -> ::informer_runtime::__codegen::SharedIndexInformer<
            ::sample::v1::ClusterPolicy,
        > {
            let api = ::informer_runtime::__codegen::Api::<
                ::sample::v1::ClusterPolicy,
            >::all(client);
            let lister_watcher = ::informer_runtime::__codegen::KubeListerWatcher::new(
                    api,
                )
                .shared_tweak_list_options(tweak);
            ::informer_runtime::__codegen::SharedIndexInformer::new(
                lister_watcher,
                ::informer_runtime::__codegen::InformerConfig {
                    resync_period,
                    indexers,
                    description: ::informer_runtime::__codegen::Some(
                        ::informer_runtime::__codegen::String::from("clusterpolicies"),
                    ),
                    ..::core::default::Default::default()
                },
            )
        }
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
                lister: ::informer_runtime::__codegen::Lister<
                    ::sample::v1::ClusterPolicy,
                >,
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
                index: &::informer_runtime::__codegen::Index<
                    ::sample::v1::ClusterPolicy,
                >,
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
        /// Access to the shared informer and lister of `Foo` (example.com/v1/foos).
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct FooInformer {
            factory: ::informer_runtime::__codegen::SharedInformerFactory,
        }
        impl FooInformer {
            /// Access through `factory` (cheap: the factory is shared).
            #[inline]
            pub fn new(
                factory: &::informer_runtime::__codegen::SharedInformerFactory,
            ) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }
            /// The factory's informer of `Foo`: one per factory, created on first use and started by the factory's `start`.
            #[inline]
            pub fn informer(
                &self,
            ) -> ::informer_runtime::__codegen::SharedIndexInformer<::sample::v1::Foo> {
                self.factory.unscoped_informer::<::sample::v1::Foo>()
            }
            /// A lister over the cache of the factory's `Foo` informer.
            #[inline]
            pub fn lister(&self) -> FooLister {
                FooLister::new(self.informer().lister())
            }
        }
        /// A new informer of `Foo` in `namespace` (`None`: all namespaces). The informer is not shared with any factory: prefer the factory's accessor to share one informer and its cache.
        #[inline]
        pub fn new_foo_informer(
            client: ::informer_runtime::__codegen::Client,
            namespace: ::informer_runtime::__codegen::Option<&str>,
            resync_period: ::informer_runtime::__codegen::Duration,
            indexers: ::informer_runtime::__codegen::Indexers<::sample::v1::Foo>,
        ) -> ::informer_runtime::__codegen::SharedIndexInformer<::sample::v1::Foo> {
            new_filtered_foo_informer(
                client,
                namespace,
                resync_period,
                indexers,
                ::informer_runtime::__codegen::None,
            )
        }
        /// Like [`new_foo_informer`], with `tweak` changing every list and watch request (such as adding a label selector).
        #[inline]
        pub fn new_filtered_foo_informer(
            client: ::informer_runtime::__codegen::Client,
            namespace: ::informer_runtime::__codegen::Option<&str>,
            resync_period: ::informer_runtime::__codegen::Duration,
            indexers: ::informer_runtime::__codegen::Indexers<::sample::v1::Foo>,
            tweak: ::informer_runtime::__codegen::Option<
                ::informer_runtime::__codegen::TweakListOptions,
            >,
        ) -> ::informer_runtime::__codegen::SharedIndexInformer<::sample::v1::Foo> {
            let api = <<::sample::v1::Foo as ::informer_runtime::__codegen::Resource>::Scope as ::informer_runtime::__codegen::ApiScope>::api::<
                ::sample::v1::Foo,
            >(client, namespace);
            let lister_watcher = ::informer_runtime::__codegen::KubeListerWatcher::new(
                    api,
                )
                .shared_tweak_list_options(tweak);
            ::informer_runtime::__codegen::SharedIndexInformer::new(
                lister_watcher,
                ::informer_runtime::__codegen::InformerConfig {
                    resync_period,
                    indexers,
                    description: ::informer_runtime::__codegen::Some(
                        ::informer_runtime::__codegen::String::from("foos"),
                    ),
                    ..::core::default::Default::default()
                },
            )
        }
        /// Lists and gets `Foo` objects (example.com/v1/foos) from an informer's cache.
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct FooLister {
            lister: ::informer_runtime::__codegen::Lister<::sample::v1::Foo>,
        }
        impl FooLister {
            /// A typed lister over `lister`.
            #[inline]
            pub fn new(
                lister: ::informer_runtime::__codegen::Lister<::sample::v1::Foo>,
            ) -> Self {
                Self { lister }
            }
            /// The `Foo` objects in the cache matching `selector`, in all namespaces.
            #[inline]
            pub fn list(
                &self,
                selector: &::informer_runtime::__codegen::Selector,
            ) -> ::informer_runtime::__codegen::Vec<
                ::informer_runtime::__codegen::Arc<::sample::v1::Foo>,
            > {
                self.lister.list(selector)
            }
            /// The `Foo` objects indexed under `value` by `index` (see `SharedIndexInformer::add_index`); fails if `index` is not registered on the informer.
            #[inline]
            pub fn by_index(
                &self,
                index: &::informer_runtime::__codegen::Index<::sample::v1::Foo>,
                value: &str,
            ) -> ::informer_runtime::__codegen::Result<
                ::informer_runtime::__codegen::Vec<
                    ::informer_runtime::__codegen::Arc<::sample::v1::Foo>,
                >,
                ::informer_runtime::__codegen::CacheError,
            > {
                self.lister.by_index(index, value)
            }
            /// The runtime lister this wraps, for generic code.
            #[inline]
            pub fn as_lister(
                &self,
            ) -> &::informer_runtime::__codegen::Lister<::sample::v1::Foo> {
                &self.lister
            }
        }
        impl FooLister {
            /// The `Foo` objects in `namespace`.
            #[inline]
            pub fn foos(&self, namespace: &str) -> FooNamespaceLister {
                FooNamespaceLister {
                    lister: self.lister.by_namespace(namespace),
                }
            }
        }
        /// Lists and gets the `Foo` objects of one namespace from a cache.
        #[derive(::core::fmt::Debug)]
        pub struct FooNamespaceLister {
            lister: ::informer_runtime::__codegen::NamespaceLister<::sample::v1::Foo>,
        }
        impl FooNamespaceLister {
            /// The namespace.
            #[inline]
            pub fn namespace(&self) -> &str {
                self.lister.namespace()
            }
            /// The `Foo` objects in the namespace matching `selector`.
            #[inline]
            pub fn list(
                &self,
                selector: &::informer_runtime::__codegen::Selector,
            ) -> ::informer_runtime::__codegen::Vec<
                ::informer_runtime::__codegen::Arc<::sample::v1::Foo>,
            > {
                self.lister.list(selector)
            }
            /// The `Foo` named `name` in the namespace, if cached.
            #[inline]
            pub fn get(
                &self,
                name: &str,
            ) -> ::informer_runtime::__codegen::Option<
                ::informer_runtime::__codegen::Arc<::sample::v1::Foo>,
            > {
                self.lister.get(name)
            }
            /// The `Foo` objects of the namespace indexed under `value` by `index`; fails if `index` is not registered on the informer.
            #[inline]
            pub fn by_index(
                &self,
                index: &::informer_runtime::__codegen::Index<::sample::v1::Foo>,
                value: &str,
            ) -> ::informer_runtime::__codegen::Result<
                ::informer_runtime::__codegen::Vec<
                    ::informer_runtime::__codegen::Arc<::sample::v1::Foo>,
                >,
                ::informer_runtime::__codegen::CacheError,
            > {
                self.lister.by_index(index, value)
            }
        }
    }
    /// Informers and listers of `example.com` version `v2`.
    pub mod v2 {
        /// The informers of `example.com/v2`.
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct V2 {
            factory: ::informer_runtime::__codegen::SharedInformerFactory,
        }
        impl V2 {
            /// Access through `factory`.
            #[inline]
            pub fn new(
                factory: &::informer_runtime::__codegen::SharedInformerFactory,
            ) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }
            /// The shared informer and lister of `Foo` (foos).
            #[inline]
            pub fn foos(&self) -> FooInformer {
                FooInformer::new(&self.factory)
            }
        }
        /// Access to the shared informer and lister of `Foo` (example.com/v2/foos).
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct FooInformer {
            factory: ::informer_runtime::__codegen::SharedInformerFactory,
        }
        impl FooInformer {
            /// Access through `factory` (cheap: the factory is shared).
            #[inline]
            pub fn new(
                factory: &::informer_runtime::__codegen::SharedInformerFactory,
            ) -> Self {
                Self {
                    factory: ::core::clone::Clone::clone(factory),
                }
            }
            /// The factory's informer of `Foo`: one per factory, created on first use and started by the factory's `start`.
            #[inline]
            pub fn informer(
                &self,
            ) -> ::informer_runtime::__codegen::SharedIndexInformer<::sample::v2::Foo> {
                self.factory.unscoped_informer::<::sample::v2::Foo>()
            }
            /// A lister over the cache of the factory's `Foo` informer.
            #[inline]
            pub fn lister(&self) -> FooLister {
                FooLister::new(self.informer().lister())
            }
        }
        /// A new informer of `Foo` in `namespace` (`None`: all namespaces). The informer is not shared with any factory: prefer the factory's accessor to share one informer and its cache.
        #[inline]
        pub fn new_foo_informer(
            client: ::informer_runtime::__codegen::Client,
            namespace: ::informer_runtime::__codegen::Option<&str>,
            resync_period: ::informer_runtime::__codegen::Duration,
            indexers: ::informer_runtime::__codegen::Indexers<::sample::v2::Foo>,
        ) -> ::informer_runtime::__codegen::SharedIndexInformer<::sample::v2::Foo> {
            new_filtered_foo_informer(
                client,
                namespace,
                resync_period,
                indexers,
                ::informer_runtime::__codegen::None,
            )
        }
        /// Like [`new_foo_informer`], with `tweak` changing every list and watch request (such as adding a label selector).
        #[inline]
        pub fn new_filtered_foo_informer(
            client: ::informer_runtime::__codegen::Client,
            namespace: ::informer_runtime::__codegen::Option<&str>,
            resync_period: ::informer_runtime::__codegen::Duration,
            indexers: ::informer_runtime::__codegen::Indexers<::sample::v2::Foo>,
            tweak: ::informer_runtime::__codegen::Option<
                ::informer_runtime::__codegen::TweakListOptions,
            >,
        ) -> ::informer_runtime::__codegen::SharedIndexInformer<::sample::v2::Foo> {
            let api = <<::sample::v2::Foo as ::informer_runtime::__codegen::Resource>::Scope as ::informer_runtime::__codegen::ApiScope>::api::<
                ::sample::v2::Foo,
            >(client, namespace);
            let lister_watcher = ::informer_runtime::__codegen::KubeListerWatcher::new(
                    api,
                )
                .shared_tweak_list_options(tweak);
            ::informer_runtime::__codegen::SharedIndexInformer::new(
                lister_watcher,
                ::informer_runtime::__codegen::InformerConfig {
                    resync_period,
                    indexers,
                    description: ::informer_runtime::__codegen::Some(
                        ::informer_runtime::__codegen::String::from("foos"),
                    ),
                    ..::core::default::Default::default()
                },
            )
        }
        /// Lists and gets `Foo` objects (example.com/v2/foos) from an informer's cache.
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        pub struct FooLister {
            lister: ::informer_runtime::__codegen::Lister<::sample::v2::Foo>,
        }
        impl FooLister {
            /// A typed lister over `lister`.
            #[inline]
            pub fn new(
                lister: ::informer_runtime::__codegen::Lister<::sample::v2::Foo>,
            ) -> Self {
                Self { lister }
            }
            /// The `Foo` objects in the cache matching `selector`, in all namespaces.
            #[inline]
            pub fn list(
                &self,
                selector: &::informer_runtime::__codegen::Selector,
            ) -> ::informer_runtime::__codegen::Vec<
                ::informer_runtime::__codegen::Arc<::sample::v2::Foo>,
            > {
                self.lister.list(selector)
            }
            /// The `Foo` objects indexed under `value` by `index` (see `SharedIndexInformer::add_index`); fails if `index` is not registered on the informer.
            #[inline]
            pub fn by_index(
                &self,
                index: &::informer_runtime::__codegen::Index<::sample::v2::Foo>,
                value: &str,
            ) -> ::informer_runtime::__codegen::Result<
                ::informer_runtime::__codegen::Vec<
                    ::informer_runtime::__codegen::Arc<::sample::v2::Foo>,
                >,
                ::informer_runtime::__codegen::CacheError,
            > {
                self.lister.by_index(index, value)
            }
            /// The runtime lister this wraps, for generic code.
            #[inline]
            pub fn as_lister(
                &self,
            ) -> &::informer_runtime::__codegen::Lister<::sample::v2::Foo> {
                &self.lister
            }
        }
        impl FooLister {
            /// The `Foo` objects in `namespace`.
            #[inline]
            pub fn foos(&self, namespace: &str) -> FooNamespaceLister {
                FooNamespaceLister {
                    lister: self.lister.by_namespace(namespace),
                }
            }
        }
        /// Lists and gets the `Foo` objects of one namespace from a cache.
        #[derive(::core::fmt::Debug)]
        pub struct FooNamespaceLister {
            lister: ::informer_runtime::__codegen::NamespaceLister<::sample::v2::Foo>,
        }
        impl FooNamespaceLister {
            /// The namespace.
            #[inline]
            pub fn namespace(&self) -> &str {
                self.lister.namespace()
            }
            /// The `Foo` objects in the namespace matching `selector`.
            #[inline]
            pub fn list(
                &self,
                selector: &::informer_runtime::__codegen::Selector,
            ) -> ::informer_runtime::__codegen::Vec<
                ::informer_runtime::__codegen::Arc<::sample::v2::Foo>,
            > {
                self.lister.list(selector)
            }
            /// The `Foo` named `name` in the namespace, if cached.
            #[inline]
            pub fn get(
                &self,
                name: &str,
            ) -> ::informer_runtime::__codegen::Option<
                ::informer_runtime::__codegen::Arc<::sample::v2::Foo>,
            > {
                self.lister.get(name)
            }
            /// The `Foo` objects of the namespace indexed under `value` by `index`; fails if `index` is not registered on the informer.
            #[inline]
            pub fn by_index(
                &self,
                index: &::informer_runtime::__codegen::Index<::sample::v2::Foo>,
                value: &str,
            ) -> ::informer_runtime::__codegen::Result<
                ::informer_runtime::__codegen::Vec<
                    ::informer_runtime::__codegen::Arc<::sample::v2::Foo>,
                >,
                ::informer_runtime::__codegen::CacheError,
            > {
                self.lister.by_index(index, value)
            }
        }
    }
}
