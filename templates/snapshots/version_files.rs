/// The informers of `example.com/v1`.
#[derive(::core::clone::Clone, ::core::fmt::Debug)]
pub struct V1 {
    factory: ::informer_runtime::__codegen::SharedInformerFactory,
}
impl V1 {
    /// Access through `factory`.
    #[inline]
    pub fn new(factory: &::informer_runtime::__codegen::SharedInformerFactory) -> Self {
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
mod cluster_policy;
#[cfg(feature = "policies")]
pub use self::cluster_policy::*;
mod foo;
pub use self::foo::*;
