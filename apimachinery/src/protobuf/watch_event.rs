//! The frames of a protobuf watch stream: each a 4-byte big-endian length, then a meta/v1
//! `WatchEvent` (`type = 1`, `object = 2`, a `RawExtension` whose `raw = 1` is the object's
//! protobuf document).

use super::{
    Error,
    envelope::utf8,
    wire::{Reader, WireValue, Writer},
};

/// One event of a protobuf watch stream.
///
/// ```
/// use informer_apimachinery::protobuf::{self, WatchFrame};
/// use k8s_openapi::api::core::v1::Namespace;
/// use serde_json::json;
///
/// let document = protobuf::to_vec(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}))?;
/// let frame = WatchFrame { event_type: "ADDED", object: &document }.encode();
/// // 4 bytes of length, then the event
/// let event = WatchFrame::parse(&frame[4..])?;
/// assert_eq!(event.event_type, "ADDED");
/// let namespace: Namespace = protobuf::from_slice(event.object)?;
/// assert_eq!(namespace.metadata.name.as_deref(), Some("a"));
/// # Ok::<_, protobuf::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchFrame<'a> {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub event_type: &'a str,
    /// The object's protobuf document (a `Status` for `ERROR`).
    pub object: &'a [u8],
}

impl<'a> WatchFrame<'a> {
    /// Reads the `WatchEvent` message of a frame (the bytes after its length).
    ///
    /// # Errors
    /// [`Error::Malformed`] for a truncated message or one without a type.
    pub fn parse(message: &'a [u8]) -> Result<Self, Error> {
        let mut frame = Self {
            event_type: "",
            object: &[],
        };
        for field in Reader::new(message) {
            match field? {
                (1, WireValue::Bytes(event_type)) => frame.event_type = utf8(event_type)?,
                (2, WireValue::Bytes(raw_extension)) => {
                    for inner in Reader::new(raw_extension) {
                        if let (1, WireValue::Bytes(raw)) = inner? {
                            frame.object = raw;
                        }
                    }
                }
                _ => {}
            }
        }
        if frame.event_type.is_empty() {
            return Err(Error::Malformed("a watch event has no type".into()));
        }
        Ok(frame)
    }

    /// The frame as a watch stream carries it: its length (4 bytes, big endian), then the
    /// `WatchEvent` message.
    pub fn encode(&self) -> Vec<u8> {
        let mut raw_extension = Writer::default();
        raw_extension.bytes(1, self.object);
        let mut event = Writer::default();
        event.bytes(1, self.event_type.as_bytes());
        event.bytes(2, raw_extension.as_slice());
        let length = u32::try_from(event.as_slice().len()).unwrap_or(u32::MAX);
        [&length.to_be_bytes()[..], event.as_slice()].concat()
    }
}
