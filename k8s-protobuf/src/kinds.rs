//! The decoders of the built-in resource kinds, found by the Rust type they fill: how code that
//! is generic over a resource type (an informer of any `K`) finds the decoder of its `K`
//! without a trait bound every custom resource would have to meet.

use std::any::{Any, TypeId};

use crate::{KindDecoder, TypeVisitor, generated};

/// The decoder of the resource type `K`, if `K` is a k8s-openapi resource type of an API group
/// this crate was built with (its Cargo features).
///
/// ```
/// use k8s_protobuf::{Context, kind_decoder};
/// use k8s_openapi::api::core::v1::Pod;
///
/// let decoder = kind_decoder::<Pod>().expect("the core group is built");
/// assert_eq!((decoder.api_version(), decoder.kind()), ("v1", "Pod"));
/// let mut pod = None;
/// assert!(decoder.decode::<Pod>(&[], Context::new(), &mut pod)?);
/// assert_eq!(pod, Some(Pod::default()));
/// assert!(kind_decoder::<String>().is_none());
/// # Ok::<_, k8s_protobuf::Error>(())
/// ```
pub fn kind_decoder<K: Any>() -> Option<&'static KindDecoder> {
    let wanted = TypeId::of::<K>();
    generated::KINDS
        .iter()
        .flat_map(|group| group.iter())
        .find(|decoder| decoder.fills(wanted))
}

/// Every kind decoder of the API groups this crate was built with.
pub fn kind_decoders() -> impl Iterator<Item = &'static KindDecoder> {
    generated::KINDS.iter().flat_map(|group| group.iter())
}

/// Shows `visitor` every type that has a generated decoder in the API groups built: for tests
/// that hold every decoder against another.
#[doc(hidden)]
pub fn visit_types(visitor: &mut impl TypeVisitor) {
    generated::visit_types(visitor);
}
