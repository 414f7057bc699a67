/// Shared informers of every generated resource, reached by group, version and
/// resource (`factory.example().v1().foos()`) or by [`for_resource`](Self::for_resource).
///
/// Dereferences to the runtime factory for `start`, `wait_for_cache_sync` and `shutdown`.
#[derive(::core::clone::Clone, ::core::fmt::Debug)]
pub struct SharedInformerFactory {
    factory: ::informer_runtime::__codegen::SharedInformerFactory,
}
impl SharedInformerFactory {
    /// A factory over all namespaces without resyncs (use
    /// [`from_runtime`](Self::from_runtime) with the runtime's builder for options).
    pub fn new(client: ::informer_runtime::__codegen::Client) -> Self {
        Self::from_runtime(
            ::informer_runtime::__codegen::SharedInformerFactory::new(client),
        )
    }
    /// The typed face of `factory`; informers are shared with everything else using it.
    pub fn from_runtime(
        factory: ::informer_runtime::__codegen::SharedInformerFactory,
    ) -> Self {
        Self { factory }
    }
    /// The runtime factory.
    pub fn runtime(&self) -> &::informer_runtime::__codegen::SharedInformerFactory {
        &self.factory
    }
    /// The informers of the `core` API group.
    pub fn core(&self) -> self::core::Core {
        self::core::Core::new(&self.factory)
    }
    /// The informers of the `example.com` API group.
    pub fn example(&self) -> self::example::Example {
        self::example::Example::new(&self.factory)
    }
}
impl ::core::ops::Deref for SharedInformerFactory {
    type Target = ::informer_runtime::__codegen::SharedInformerFactory;
    fn deref(&self) -> &Self::Target {
        &self.factory
    }
}
impl ::core::convert::From<::informer_runtime::__codegen::SharedInformerFactory>
for SharedInformerFactory {
    fn from(factory: ::informer_runtime::__codegen::SharedInformerFactory) -> Self {
        Self::from_runtime(factory)
    }
}
/// Informers and listers of the `core` API group.
pub mod core;
/// Informers and listers of the `example.com` API group.
pub mod example;
