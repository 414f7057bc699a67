/// The informers of the `example.com` API group, by version.
#[derive(::core::clone::Clone, ::core::fmt::Debug)]
pub struct ExampleCom {
    factory: ::informer_runtime::__codegen::SharedInformerFactory,
}
impl ExampleCom {
    /// Access through `factory`.
    #[inline]
    pub fn new(factory: &::informer_runtime::__codegen::SharedInformerFactory) -> Self {
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
pub mod v1;
/// Informers and listers of `example.com` version `v2`.
pub mod v2;
