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
