//! The decoders of the built-in resource kinds, found by the Rust type they fill: how code that
//! is generic over a resource type (an informer of any `K`) finds the decoder of its `K`
//! without a trait bound every custom resource would have to meet.

use std::any::{Any, TypeId};

use crate::{Context, Decode, Error, generated};

/// The decoder of one resource kind.
#[derive(Debug)]
pub struct KindDecoder {
    api_version: &'static str,
    kind: &'static str,
    type_id: fn() -> TypeId,
    decode: fn(&[u8], Context<'_>, &mut dyn Any) -> Result<bool, Error>,
    push: fn(&[u8], Context<'_>, &mut dyn Any) -> Result<bool, Error>,
}

impl KindDecoder {
    /// The decoder of `T`, whose objects are of `api_version` and `kind`.
    pub(crate) const fn of<T: Decode + Any>(api_version: &'static str, kind: &'static str) -> Self {
        Self {
            api_version,
            kind,
            type_id: TypeId::of::<T>,
            decode: decode_into::<T>,
            push: push_onto::<T>,
        }
    }

    /// The API version of the kind (`apps/v1`).
    pub fn api_version(&self) -> &'static str {
        self.api_version
    }

    /// The kind (`Deployment`).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Decodes `message` into `out`, which is set to the object. `K` is the type this decoder
    /// was found for ([`kind_decoder`]).
    ///
    /// # Errors
    /// When `message` does not decode; `Ok(false)`, and `out` untouched, when `K` is not this
    /// decoder's type.
    #[inline]
    pub fn decode<K: Any>(
        &self,
        message: &[u8],
        cx: Context<'_>,
        out: &mut Option<K>,
    ) -> Result<bool, Error> {
        (self.decode)(message, cx, out)
    }

    /// Decodes `message` onto the end of `list`, in place (a list's items).
    ///
    /// # Errors
    /// When `message` does not decode (the list keeps the object as far as it was read);
    /// `Ok(false)`, and `list` untouched, when `K` is not this decoder's type.
    #[inline]
    #[allow(
        clippy::ptr_arg,
        reason = "the list grows: the decoder pushes onto it, through `dyn Any`"
    )]
    pub fn push<K: Any>(&self, message: &[u8], cx: Context<'_>, list: &mut Vec<K>) -> Result<bool, Error> {
        (self.push)(message, cx, list)
    }
}

fn push_onto<T: Decode + Any>(message: &[u8], cx: Context<'_>, out: &mut dyn Any) -> Result<bool, Error> {
    let Some(list) = out.downcast_mut::<Vec<T>>() else {
        return Ok(false);
    };
    let at = list.len();
    list.push(T::empty());
    list[at].merge(message, cx)?;
    Ok(true)
}

fn decode_into<T: Decode + Any>(message: &[u8], cx: Context<'_>, out: &mut dyn Any) -> Result<bool, Error> {
    let Some(slot) = out.downcast_mut::<Option<T>>() else {
        return Ok(false);
    };
    slot.insert(T::empty()).merge(message, cx)?;
    Ok(true)
}

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
        .find(|decoder| (decoder.type_id)() == wanted)
}

/// Every kind decoder of the API groups this crate was built with.
pub fn kind_decoders() -> impl Iterator<Item = &'static KindDecoder> {
    generated::KINDS.iter().flat_map(|group| group.iter())
}

/// Sees every type that has a generated decoder ([`visit_types`]).
#[doc(hidden)]
pub trait TypeVisitor {
    /// Sees `T`, whose message is at `message` in k8s-pb (`api::core::v1::Pod`).
    fn visit<T>(&mut self, message: &'static str)
    where
        T: Decode + k8s_openapi::serde::de::DeserializeOwned + PartialEq + std::fmt::Debug + 'static;
}

/// Shows `visitor` every type that has a generated decoder in the API groups built: for tests
/// that hold every decoder against another.
#[doc(hidden)]
pub fn visit_types(visitor: &mut impl TypeVisitor) {
    generated::visit_types(visitor);
}
