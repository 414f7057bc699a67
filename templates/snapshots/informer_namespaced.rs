/// Access to the shared informer and lister of `Foo` (example.com/v1/foos).
#[derive(::core::clone::Clone, ::core::fmt::Debug)]
pub struct FooInformer {
    factory: ::informer_runtime::__codegen::SharedInformerFactory,
}
impl FooInformer {
    /// Access through `factory` (cheap: the factory is shared).
    #[inline]
    pub fn new(factory: &::informer_runtime::__codegen::SharedInformerFactory) -> Self {
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
    let lister_watcher = ::informer_runtime::__codegen::KubeListerWatcher::new(api)
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
