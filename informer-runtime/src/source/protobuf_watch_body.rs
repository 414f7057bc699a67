//! Decoding a protobuf watch response body: frames of a 4-byte big-endian length and a
//! `WatchEvent` message, decoded as they arrive.
//!
//! A frame that lies inside one chunk is decoded in place; only a frame split across chunks is
//! gathered, into a buffer reused from frame to frame.

use std::sync::Arc;

use bytes::{Buf, Bytes};
use futures::{Stream, StreamExt};
use kube::{
    Resource,
    core::{Status, WatchEvent, watch::Bookmark},
};
use serde::de::DeserializeOwned;

use crate::{
    protobuf::{self, WatchFrame},
    source::{BoxError, Error, protobuf_objects::ProtobufObjects},
};

/// A split frame longer than this gives its buffer back once decoded.
const KEPT_FRAME_CAPACITY: usize = 1 << 20;

/// The largest frame read; a longer one means the stream is not what it claims to be.
/// kube-apiserver's objects are limited to 1.5 MiB in etcd, and a frame carries one.
const MAX_FRAME: usize = 64 << 20;

/// The events of a protobuf watch body (`application/vnd.kubernetes.protobuf;stream=watch`),
/// given as a stream of its chunks. Errors as in the JSON decoder: an `ERROR` event is
/// [`WatchEvent::Error`]; a frame that does not decode is [`Error::Decode`] and the stream
/// goes on with the next frame; a frame longer than 64 MiB ends the stream with
/// [`Error::Decode`]; a body error ends it, dropping a frame it cut short. Objects are read by
/// `objects`.
pub(crate) fn decode_protobuf_watch_body<K, S, E>(
    body: S,
    objects: Arc<ProtobufObjects<K>>,
) -> impl Stream<Item = Result<WatchEvent<K>, Error>> + Send
where
    K: Resource + Clone + DeserializeOwned + Send + Sync + 'static,
    S: Stream<Item = Result<Bytes, E>> + Unpin + Send,
    E: Into<BoxError>,
{
    let frames = WatchFrames {
        body,
        chunk: Bytes::new(),
        split_frame: Vec::new(),
        ended: false,
        objects,
    };
    futures::stream::unfold(frames, |mut frames| async move {
        let event = frames.next_event().await?;
        Some((event, frames))
    })
}

struct WatchFrames<S, K> {
    body: S,
    objects: Arc<ProtobufObjects<K>>,
    /// The unread rest of the current chunk.
    chunk: Bytes,
    /// The start of a frame whose end is in a later chunk.
    split_frame: Vec<u8>,
    ended: bool,
}

/// The length of the frame at the start of `bytes`, once its 4 bytes are there.
fn frame_length(bytes: &[u8]) -> Option<usize> {
    let prefix: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    Some(u32::from_be_bytes(prefix) as usize)
}

impl<S, E, K> WatchFrames<S, K>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<BoxError>,
    K: Resource + Clone + DeserializeOwned + 'static,
{
    async fn next_event(&mut self) -> Option<Result<WatchEvent<K>, Error>> {
        loop {
            if let Some(event) = self.complete_frame() {
                return Some(event);
            }
            if self.ended {
                return None;
            }
            match self.body.next().await {
                Some(Ok(chunk)) => {
                    if self.split_frame.is_empty() && self.chunk.is_empty() {
                        self.chunk = chunk;
                    } else {
                        self.split_frame.extend_from_slice(&self.chunk);
                        self.chunk.clear();
                        self.split_frame.extend_from_slice(&chunk);
                    }
                }
                Some(Err(err)) => {
                    self.ended = true;
                    self.split_frame.clear();
                    self.chunk.clear();
                    return Some(Err(super::watch_body::body_error(err.into())));
                }
                None => self.ended = true,
            }
        }
    }

    /// The event of the next complete frame, if one is there.
    fn complete_frame(&mut self) -> Option<Result<WatchEvent<K>, Error>> {
        if self.split_frame.is_empty() {
            let length = frame_length(&self.chunk)?;
            if length > MAX_FRAME {
                return Some(self.too_long(length));
            }
            if self.chunk.len() < 4 + length {
                return None;
            }
            let event = decode_frame(&self.chunk[4..4 + length], &self.objects);
            self.chunk.advance(4 + length);
            return Some(event);
        }
        let length = frame_length(&self.split_frame)?;
        if length > MAX_FRAME {
            return Some(self.too_long(length));
        }
        if self.split_frame.len() < 4 + length {
            return None;
        }
        let event = decode_frame(&self.split_frame[4..4 + length], &self.objects);
        // the rest goes back to be read as a chunk
        self.chunk = Bytes::copy_from_slice(&self.split_frame[4 + length..]);
        self.split_frame.clear();
        if self.split_frame.capacity() > KEPT_FRAME_CAPACITY {
            self.split_frame = Vec::new();
        }
        Some(event)
    }

    fn too_long(&mut self, length: usize) -> Result<WatchEvent<K>, Error> {
        self.ended = true;
        self.chunk.clear();
        self.split_frame.clear();
        Err(Error::Decode(
            format!("a protobuf watch frame claims {length} bytes, more than the {MAX_FRAME} read: the stream is not a protobuf watch")
                .into(),
        ))
    }
}

/// Decodes one frame's `WatchEvent` message.
fn decode_frame<K>(message: &[u8], objects: &ProtobufObjects<K>) -> Result<WatchEvent<K>, Error>
where
    K: Resource + Clone + DeserializeOwned + 'static,
{
    let decode = |err: protobuf::Error| Error::Decode(Box::new(err));
    let frame = WatchFrame::parse(message).map_err(decode)?;
    Ok(match frame.event_type {
        "ADDED" => WatchEvent::Added(objects.object(frame.object).map_err(decode)?),
        "MODIFIED" => WatchEvent::Modified(objects.object(frame.object).map_err(decode)?),
        "DELETED" => WatchEvent::Deleted(objects.object(frame.object).map_err(decode)?),
        "BOOKMARK" => WatchEvent::Bookmark(protobuf::from_slice::<Bookmark>(frame.object).map_err(decode)?),
        "ERROR" => WatchEvent::Error(Box::new(
            protobuf::from_slice::<Status>(frame.object).map_err(decode)?,
        )),
        other => {
            return Err(Error::Decode(
                format!("a protobuf watch event has the unknown type {other:?}").into(),
            ));
        }
    })
}

#[cfg(test)]
mod tests;
