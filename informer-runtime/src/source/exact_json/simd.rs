//! Decoding with simd-json (the `simd-json` feature): SIMD structural scanning and UTF-8
//! validation, with the CPU's instruction set (AVX2, SSE4.2, or none) chosen at run time.
//!
//! simd-json parses the whole text into a tape first, which records every array's length; its
//! serde deserializer hands that length to each sequence as its size hint, so vectors come out
//! at their exact capacity without the scan that [`super::from_str`] runs. It rewrites the text
//! it parses (unescaping strings in place), so the bytes are copied once first.
//!
//! While it decodes, it holds about nine times the text (the copy, its padded buffers, the
//! structural indexes and the tape), where serde_json streams with nothing held: texts above
//! [`MAX_BYTES`] are left to serde_json.

use serde::de::DeserializeOwned;

/// The deepest nesting accepted, serde_json's recursion limit: decoding recurses once per level,
/// so a deeper text is an error rather than a risk to the stack.
const MAX_DEPTH: usize = 128;

/// The largest text decoded with simd-json: a page of 500 pods is a few MB, so pages go through
/// simd-json with at most about 70 MB held for the time of the decode; an unpaginated list of a
/// whole cluster (hundreds of MB, gigabytes with simd-json) is decoded by serde_json.
pub(crate) const MAX_BYTES: usize = 8 << 20;

/// Decodes `json` as `serde_json::from_slice` does, with every decoded `Vec` at its exact
/// capacity. The text is validated as UTF-8 and as one JSON value, with nothing after it.
pub(crate) fn from_slice<T: DeserializeOwned>(json: &[u8]) -> Result<T, simd_json::Error> {
    let mut text = json.to_vec();
    let mut buffers = simd_json::Buffers::with_max_depth(text.len(), MAX_DEPTH);
    simd_json::serde::from_slice_with_buffers(&mut text, &mut buffers)
}

#[cfg(test)]
mod tests;
