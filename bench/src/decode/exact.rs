//! informer-runtime's exact-capacity decoding (`source::exact_json::from_str`, the default
//! decoding of its lists and watch lines), which the crate keeps private: the array scan and the
//! size-hinting deserializer are compiled here from the crate's own files, so the decoding
//! tables time the very code the crate runs, on bare lines and on list pages.

#[path = "../../../informer-runtime/src/source/exact_json/deserializer.rs"]
mod deserializer;
#[path = "../../../informer-runtime/src/source/exact_json/scan.rs"]
mod scan;

use serde::de::DeserializeOwned;

use deserializer::{ExactDeserializer, Lengths};

/// `exact_json::from_str`: one scan for the array lengths, then serde_json through the
/// deserializer that hands each sequence its length.
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
