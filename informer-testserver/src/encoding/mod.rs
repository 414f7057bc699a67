//! Encoding: the forms an answer takes, as `Accept` negotiates them.
//!
//! [`accept`] reads the `Accept` header; an object or list goes out as stored (JSON, [`cbor`] or
//! [`protobuf`]), as metadata only ([`partial_metadata`]) or as a [`table`].

pub(crate) mod accept;
pub(crate) mod cbor;
pub(crate) mod media_range;
pub(crate) mod partial_metadata;
pub(crate) mod protobuf;
pub(crate) mod table;
pub(crate) mod transform;
