//! The decoder of one resource kind, callable for a type only known generically (through
//! `dyn Any`), and what sees every type with a generated decoder.

use std::any::{Any, TypeId};

use crate::{Context, Decode, Error};

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

    /// Whether this decoder fills the type `type_id` names.
    pub(crate) fn fills(&self, type_id: TypeId) -> bool {
        (self.type_id)() == type_id
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
    /// was found for ([`kind_decoder`](crate::kind_decoder)).
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

/// Sees every type that has a generated decoder ([`visit_types`](crate::visit_types)).
#[doc(hidden)]
pub trait TypeVisitor {
    /// Sees `T`, whose message is at `message` in k8s-pb (`api::core::v1::Pod`).
    fn visit<T>(&mut self, message: &'static str)
    where
        T: Decode + k8s_openapi::serde::de::DeserializeOwned + PartialEq + std::fmt::Debug + 'static;
}
