//! One JSON document decoded on its own, by each of the parsers the decoding tables compare.

use serde::de::DeserializeOwned;

/// A way of decoding one whole JSON document (a watch line or a list page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bare {
    /// `serde_json::from_slice`.
    FromSlice,
    /// `std::str::from_utf8` then `serde_json::from_str`.
    FromStr,
    /// `simdutf8::basic::from_utf8` (SIMD, CPU detected at run time) then
    /// `serde_json::from_str`.
    SimdUtf8FromStr,
    /// `std::str::from_utf8` then informer-runtime's exact-capacity `from_str` (a scan for the
    /// array lengths first): what informer-runtime decodes with by default.
    Exact,
    /// `simd_json::serde::from_slice` on a fresh copy of the bytes (it rewrites its input),
    /// with fresh parser buffers.
    SimdJson,
    /// `simd_json::serde::from_slice_with_buffers` on a copy into a kept buffer, with kept
    /// parser buffers.
    SimdJsonKeptBuffers,
}

/// What [`Bare::SimdJsonKeptBuffers`] keeps from one document to the next.
pub(crate) struct Scratch {
    copy: Vec<u8>,
    buffers: simd_json::Buffers,
}

impl Scratch {
    pub(crate) fn new() -> Self {
        Self {
            copy: Vec::new(),
            buffers: simd_json::Buffers::default(),
        }
    }
}

impl Bare {
    /// Decodes `bytes` as a `T`, `None` if they are not one.
    pub(crate) fn decode<T: DeserializeOwned>(self, bytes: &[u8], scratch: &mut Scratch) -> Option<T> {
        match self {
            Self::FromSlice => serde_json::from_slice(bytes).ok(),
            Self::FromStr => serde_json::from_str(std::str::from_utf8(bytes).ok()?).ok(),
            Self::SimdUtf8FromStr => serde_json::from_str(simdutf8::basic::from_utf8(bytes).ok()?).ok(),
            Self::Exact => {
                informer_runtime::source::watch_body::decode_text(std::str::from_utf8(bytes).ok()?).ok()
            }
            Self::SimdJson => simd_json::serde::from_slice(&mut bytes.to_vec()).ok(),
            Self::SimdJsonKeptBuffers => {
                scratch.copy.clear();
                scratch.copy.extend_from_slice(bytes);
                simd_json::serde::from_slice_with_buffers(&mut scratch.copy, &mut scratch.buffers).ok()
            }
        }
    }

    /// The row name of this decoder.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::FromSlice => "serde_json::from_slice",
            Self::FromStr => "std from_utf8 + serde_json::from_str",
            Self::SimdUtf8FromStr => "simdutf8 + serde_json::from_str",
            Self::Exact => "from_utf8 + exact-capacity from_str (informer-runtime's default)",
            Self::SimdJson => {
                "simd-json from_slice, a copy of the bytes (informer-runtime's `simd-json` feature)"
            }
            Self::SimdJsonKeptBuffers => "simd-json from_slice_with_buffers, a copy into kept buffers",
        }
    }
}
