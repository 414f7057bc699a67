//! Decoding a protobuf watch response body: frames of a 4-byte big-endian length and a
//! `WatchEvent` message, decoded as they arrive, cut as [`body_frames`](super::body_frames)
//! cuts every watch body.

use std::sync::Arc;

use bytes::Bytes;
use futures::Stream;
use kube::{
    Resource,
    core::{Status, WatchEvent, watch::Bookmark},
};
use serde::de::DeserializeOwned;

use crate::{
    protobuf::{self, WatchFrame},
    source::{
        BoxError, Error,
        body_frames::{FrameDecoder, LengthPrefixed, decode_frames},
        protobuf_objects::ProtobufObjects,
    },
};

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
    decode_frames(body, LengthPrefixed { max: MAX_FRAME }, ProtobufEvents(objects))
}

/// Decodes each frame's `WatchEvent` message into a watch event of `K`.
struct ProtobufEvents<K>(Arc<ProtobufObjects<K>>);

impl<K: Resource + Clone + DeserializeOwned + 'static> FrameDecoder for ProtobufEvents<K> {
    type Item = WatchEvent<K>;

    fn decode(&self, message: &[u8], _last: bool) -> Option<Result<WatchEvent<K>, Error>> {
        Some(decode_frame(message, &self.0))
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
