impl Informers {
    /// The `(group, version, plural)` of every resource with an informer here (the
    /// core group is `""`), sorted: each one [`for_resource`](Self::for_resource)
    /// resolves.
    pub const RESOURCES: &'static [(&'static str, &'static str, &'static str)] = &[
        ("", "v1", "pods"),
        #[cfg(feature = "policies")]
        ("example.com", "v1", "clusterpolicies"),
        ("example.com", "v1", "foos"),
        ("example.com", "v2", "foos"),
    ];
    /// The informer of the resource `gvr` names, as a generic informer: the same
    /// informer (and cache) as the typed accessor returns.
    ///
    /// Compiles the informer of every resource here into the crate that calls it.
    ///
    /// # Errors
    ///
    /// `FactoryError::NoInformerFor` when no informer is generated for `gvr`.
    #[inline]
    pub fn for_resource(
        &self,
        gvr: &::informer_runtime::__codegen::GroupVersionResource,
    ) -> ::informer_runtime::__codegen::Result<
        ::informer_runtime::__codegen::GenericInformer,
        ::informer_runtime::__codegen::FactoryError,
    > {
        const INFORMERS: &[::informer_runtime::__codegen::GenericInformerEntry] = &[
            (
                "",
                "v1",
                "pods",
                ::informer_runtime::__codegen::SharedInformerFactory::generic_informer::<
                    ::k8s::Pod,
                >,
            ),
            #[cfg(feature = "policies")]
            (
                "example.com",
                "v1",
                "clusterpolicies",
                ::informer_runtime::__codegen::SharedInformerFactory::generic_informer::<
                    ::sample::v1::ClusterPolicy,
                >,
            ),
            (
                "example.com",
                "v1",
                "foos",
                ::informer_runtime::__codegen::SharedInformerFactory::generic_informer::<
                    ::sample::v1::Foo,
                >,
            ),
            (
                "example.com",
                "v2",
                "foos",
                ::informer_runtime::__codegen::SharedInformerFactory::generic_informer::<
                    ::sample::v2::Foo,
                >,
            ),
        ];
        ::informer_runtime::__codegen::generic_informer_from(
            &self.factory,
            INFORMERS,
            gvr,
        )
    }
    /// The metadata-only informer of the resource `gvr` names (its cache holds
    /// `PartialObjectMeta` of the resource's type), as a generic informer: the same
    /// informer as the factory's `metadata_informer` of that type.
    ///
    /// Compiles the metadata-only informer of every resource here into the crate that
    /// calls it.
    ///
    /// # Errors
    ///
    /// `FactoryError::NoInformerFor` when no informer is generated for `gvr`.
    #[inline]
    pub fn for_resource_metadata(
        &self,
        gvr: &::informer_runtime::__codegen::GroupVersionResource,
    ) -> ::informer_runtime::__codegen::Result<
        ::informer_runtime::__codegen::GenericInformer,
        ::informer_runtime::__codegen::FactoryError,
    > {
        const INFORMERS: &[::informer_runtime::__codegen::GenericInformerEntry] = &[
            (
                "",
                "v1",
                "pods",
                ::informer_runtime::__codegen::SharedInformerFactory::generic_informer::<
                    ::informer_runtime::__codegen::PartialObjectMeta<::k8s::Pod>,
                >,
            ),
            #[cfg(feature = "policies")]
            (
                "example.com",
                "v1",
                "clusterpolicies",
                ::informer_runtime::__codegen::SharedInformerFactory::generic_informer::<
                    ::informer_runtime::__codegen::PartialObjectMeta<
                        ::sample::v1::ClusterPolicy,
                    >,
                >,
            ),
            (
                "example.com",
                "v1",
                "foos",
                ::informer_runtime::__codegen::SharedInformerFactory::generic_informer::<
                    ::informer_runtime::__codegen::PartialObjectMeta<::sample::v1::Foo>,
                >,
            ),
            (
                "example.com",
                "v2",
                "foos",
                ::informer_runtime::__codegen::SharedInformerFactory::generic_informer::<
                    ::informer_runtime::__codegen::PartialObjectMeta<::sample::v2::Foo>,
                >,
            ),
        ];
        ::informer_runtime::__codegen::generic_informer_from(
            &self.factory,
            INFORMERS,
            gvr,
        )
    }
}
