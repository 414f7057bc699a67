//! Decoding JSON into vectors of exact capacity.
//!
//! serde fills a `Vec` by pushing, doubling its capacity as it grows, because JSON does not
//! say how long an array is: a pod's single container sits in room for four, its five
//! conditions in room for eight. A cache keeps every object for its lifetime, so that spare
//! room is memory held for nothing (about a tenth of a decoded pod). [`from_str`] first finds
//! the length of every array of the text in one pass over its bytes (skipping strings with
//! `memchr`), then decodes through a deserializer that gives each sequence its length as a size
//! hint: every vector is allocated once, at its exact size, and nothing is copied afterwards.

mod deserializer;
mod scan;

use serde::de::DeserializeOwned;

use deserializer::{ExactDeserializer, Lengths};

/// Decodes `text` as `serde_json::from_str` does, with every decoded `Vec` at its exact
/// capacity.
pub(crate) fn from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    let mut counts = Vec::new();
    scan::array_lengths(text.as_bytes(), &mut counts);
    let lengths = Lengths::new(&counts);
    let mut inner = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(ExactDeserializer {
        inner: &mut inner,
        lengths: &lengths,
    })?;
    inner.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests;
