//! Decoding JSON into vectors of exact capacity.
//!
//! serde fills a `Vec` by pushing, doubling its capacity as it grows, because JSON does not
//! say how long an array is: a pod's single container sits in room for four, its five
//! conditions in room for eight. A cache keeps every object for its lifetime, so that spare
//! room is memory held for nothing (about a tenth of a decoded pod). [`from_str`] first finds
//! the length of every array of the text in one pass over its bytes (skipping strings with
//! `memchr`), then decodes through a deserializer that gives each sequence its length as a size
//! hint: every vector is allocated once, at its exact size, and nothing is copied afterwards.
//!
//! [`decode_slice`] decodes a response body or watch line from its bytes: by default one UTF-8
//! check and [`from_str`]; with the `simd-json` feature, texts up to 8 MiB (watch lines and
//! list pages) with simd-json (`simd` module), whose tape knows every array's length already.

mod deserializer;
mod scan;
#[cfg(feature = "simd-json")]
mod simd;
use serde::de::DeserializeOwned;

use deserializer::{ExactDeserializer, Lengths};

use crate::source::skip::Skip;

/// Why a JSON text could not be decoded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DecodeError {
    /// The bytes are not UTF-8.
    #[error("failed to decode JSON: the text is not UTF-8: {0}")]
    Utf8(#[from] std::str::Utf8Error),
    /// serde_json rejected the text, or it is not the type decoded.
    #[error("failed to decode JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// simd-json rejected the text (invalid UTF-8 included), or it is not the type decoded.
    #[cfg(feature = "simd-json")]
    #[error("failed to decode JSON: {0}")]
    Simd(#[from] simd_json::Error),
}

/// Decodes `text` as `serde_json::from_str` does, with every decoded `Vec` at its exact
/// capacity.
#[cfg(any(test, feature = "unstable-watch-body"))]
pub(crate) fn from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    from_str_skipping(text, None)
}

/// [`from_str`], passing over what `skip` names (its values are parsed, not built).
pub(crate) fn from_str_skipping<T: DeserializeOwned>(
    text: &str,
    skip: Option<&Skip>,
) -> serde_json::Result<T> {
    let mut counts = Vec::new();
    scan::array_lengths(text.as_bytes(), &mut counts);
    let lengths = Lengths::new(&counts);
    let mut inner = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(ExactDeserializer {
        inner: &mut inner,
        lengths: &lengths,
        skip,
    })?;
    inner.end()?;
    Ok(value)
}

/// Decodes the JSON text `json` (a list response body, a watch line) into a `T`, with every
/// decoded `Vec` at its exact capacity: by one UTF-8 check and [`from_str`] (serde_json's
/// fastest path: decoding from bytes checks every string on its own), or with the `simd-json`
/// feature, for texts of at most 8 MiB, with simd-json (about 13% less CPU, nine times the
/// text held while decoding).
#[cfg(test)]
pub(crate) fn decode_slice<T: DeserializeOwned>(json: &[u8]) -> Result<T, DecodeError> {
    decode_slice_skipping(json, None)
}

/// [`decode_slice`], passing over what `skip` names (with serde_json, whose deserializer this
/// crate wraps, even with the `simd-json` feature).
pub(crate) fn decode_slice_skipping<T: DeserializeOwned>(
    json: &[u8],
    skip: Option<&Skip>,
) -> Result<T, DecodeError> {
    #[cfg(feature = "simd-json")]
    if skip.is_none() && json.len() <= simd::MAX_BYTES {
        return Ok(simd::from_slice(json)?);
    }
    Ok(from_str_skipping(std::str::from_utf8(json)?, skip)?)
}

#[cfg(test)]
mod tests;
