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
pub mod core;
/// Informers and listers of the `example.com` API group.
pub mod example_com;
