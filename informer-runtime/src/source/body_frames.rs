//! A watch response body cut into frames as its chunks arrive, one way for both of its forms:
//! JSON lines ([`Lines`]) and protobuf's length-prefixed frames ([`LengthPrefixed`]). A frame
//! that lies inside one chunk is decoded in place; only a frame split across chunks is
//! gathered, into a buffer reused from frame to frame, and each chunk is scanned once.

use std::ops::Range;

use bytes::{Buf, Bytes};
use futures::{Stream, StreamExt};

use super::{BoxError, Error};

/// A split frame longer than this gives its buffer back once decoded.
const KEPT_FRAME_CAPACITY: usize = 1 << 20;

/// How a body is cut into frames.
pub(crate) trait Framing {
    /// The frame at the start of `bytes`: where its payload is and where the next frame
    /// starts; `None` until more bytes come.
    ///
    /// # Errors
    ///
    /// A frame that cannot be read (it claims more bytes than a frame may have): the body
    /// ends there.
    fn frame(&mut self, bytes: &[u8]) -> Result<Option<Frame>, Error>;

    /// The frame that `started` (the bytes of it so far) begins, once `more` ends it: where
    /// its payload is and where it ends, in the bytes of `started` followed by `more`; `None`
    /// when `more` does not end it either.
    ///
    /// # Errors
    ///
    /// As [`frame`](Self::frame).
    fn end_in(&mut self, started: &[u8], more: &[u8]) -> Result<Option<Frame>, Error>;

    /// Whether the bytes a body ends with, without their frame's end, are a frame (a last
    /// JSON line without its newline is; a length-prefixed frame cut short is not).
    fn reads_an_unended_last_frame(&self) -> bool;
}

/// Where a frame is in the bytes it was found in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    /// The frame's payload (without its newline or length prefix).
    pub(crate) payload: Range<usize>,
    /// Where the next frame starts.
    pub(crate) next: usize,
}

/// Turns a frame's payload into an item.
pub(crate) trait FrameDecoder {
    /// What a frame becomes.
    type Item;

    /// The item of `payload`; `None` to pass over it (a blank line). `last` says that the
    /// payload is the body's unended rest.
    fn decode(&self, payload: &[u8], last: bool) -> Option<Result<Self::Item, Error>>;
}

/// JSON lines: a frame ends with `\n`, and a body's last line may lack it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Lines;

impl Framing for Lines {
    fn frame(&mut self, bytes: &[u8]) -> Result<Option<Frame>, Error> {
        Ok(memchr::memchr(b'\n', bytes).map(|end| Frame {
            payload: 0..end,
            next: end + 1,
        }))
    }

    fn end_in(&mut self, started: &[u8], more: &[u8]) -> Result<Option<Frame>, Error> {
        Ok(memchr::memchr(b'\n', more).map(|end| Frame {
            payload: 0..started.len() + end,
            next: started.len() + end + 1,
        }))
    }

    fn reads_an_unended_last_frame(&self) -> bool {
        true
    }
}

/// Kubernetes' protobuf watch frames: a 4-byte big-endian length, then that many bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LengthPrefixed {
    /// The longest frame read; a longer one means the body is not what it claims to be.
    pub(crate) max: usize,
}

impl LengthPrefixed {
    /// The length the frame starting `prefix` claims, once its 4 bytes are there.
    fn claimed(&self, prefix: &[u8]) -> Result<Option<usize>, Error> {
        let Some(prefix) = prefix.get(..4) else {
            return Ok(None);
        };
        let mut length = [0; 4];
        length.copy_from_slice(prefix);
        let length = u32::from_be_bytes(length) as usize;
        if length > self.max {
            return Err(Error::Decode(
                format!(
                    "a protobuf watch frame claims {length} bytes, more than the {} read: the stream is not a protobuf watch",
                    self.max
                )
                .into(),
            ));
        }
        Ok(Some(length))
    }
}

impl Framing for LengthPrefixed {
    fn frame(&mut self, bytes: &[u8]) -> Result<Option<Frame>, Error> {
        let Some(length) = self.claimed(bytes)? else {
            return Ok(None);
        };
        let next = 4 + length;
        Ok((bytes.len() >= next).then_some(Frame {
            payload: 4..next,
            next,
        }))
    }

    fn end_in(&mut self, started: &[u8], more: &[u8]) -> Result<Option<Frame>, Error> {
        let missing_prefix = 4usize.saturating_sub(started.len()).min(more.len());
        let mut prefix = [0; 4];
        let known = started.len().min(4);
        prefix[..known].copy_from_slice(&started[..known]);
        prefix[known..known + missing_prefix].copy_from_slice(&more[..missing_prefix]);
        let Some(length) = self.claimed(&prefix[..known + missing_prefix])? else {
            return Ok(None);
        };
        let next = 4 + length;
        let needed = next.saturating_sub(started.len());
        Ok((more.len() >= needed).then_some(Frame {
            payload: 4..next,
            next,
        }))
    }

    fn reads_an_unended_last_frame(&self) -> bool {
        false
    }
}

/// The items of a body given as a stream of its chunks, framed by `framing` and decoded by
/// `decoder`. A body error ends the stream with it (dropping a frame it cut short): an
/// [`Error`] as it is, anything else as [`Error::Transport`]; so does a frame that cannot be
/// read.
///
/// The framing does not depend on what the frames decode into: it is compiled once per body
/// and framing, and only the call of `decoder` once per item type.
pub(crate) fn decode_frames<S, E, F, D>(
    body: S,
    framing: F,
    decoder: D,
) -> impl Stream<Item = Result<D::Item, Error>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Unpin + Send,
    E: Into<BoxError>,
    F: Framing + Send,
    D: FrameDecoder + Send + Sync,
    D::Item: Send,
{
    let frames = Frames {
        body,
        framing,
        chunk: Bytes::new(),
        split: Vec::new(),
        ended: false,
    };
    futures::stream::unfold((frames, decoder), |(mut frames, decoder)| async move {
        let mut item = None;
        let next = {
            let mut decode = |payload: &[u8], last: bool| {
                item = decoder.decode(payload, last);
                item.is_some()
            };
            frames.next_item(&mut decode).await
        };
        let item = match next {
            Ok(true) => item?,
            Ok(false) => return None,
            Err(error) => Err(error),
        };
        Some((item, (frames, decoder)))
    })
}

/// Where a body's frames are cut, and what is left of the chunk and the frame split across
/// chunks.
struct Frames<S, F> {
    body: S,
    framing: F,
    /// What is left of the last chunk.
    chunk: Bytes,
    /// A frame split across chunks, gathered.
    split: Vec<u8>,
    ended: bool,
}

/// What is done with each frame: decoded, `true` if that gave an item (or an error).
type Decode<'a> = dyn FnMut(&[u8], bool) -> bool + Send + 'a;

impl<S, E, F> Frames<S, F>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<BoxError>,
    F: Framing,
{
    /// Decodes frames until one gives an item: `Ok(true)`; `Ok(false)` once the body ended,
    /// `Err` when it failed or a frame could not be cut.
    async fn next_item(&mut self, decode: &mut Decode<'_>) -> Result<bool, Error> {
        loop {
            if self.split.is_empty() {
                match self.framing.frame(&self.chunk) {
                    Ok(Some(frame)) => {
                        let decoded = decode(&self.chunk[frame.payload], false);
                        self.chunk.advance(frame.next);
                        if decoded {
                            return Ok(true);
                        }
                        continue;
                    }
                    Ok(None) => {
                        self.split.extend_from_slice(&self.chunk);
                        self.chunk.clear();
                    }
                    Err(error) => return Err(self.end_with(error)),
                }
            }
            if self.ended {
                return self.last_item(decode);
            }
            match self.body.next().await {
                Some(Ok(chunk)) if self.split.is_empty() => self.chunk = chunk,
                Some(Ok(chunk)) => match self.framing.end_in(&self.split, &chunk) {
                    Ok(Some(frame)) => {
                        let end = frame.next - self.split.len();
                        self.split.extend_from_slice(&chunk[..end]);
                        self.chunk = chunk.slice(end..);
                        if self.split_item(frame.payload, decode) {
                            return Ok(true);
                        }
                    }
                    Ok(None) => self.split.extend_from_slice(&chunk),
                    Err(error) => return Err(self.end_with(error)),
                },
                Some(Err(error)) => return Err(self.end_with(body_error(error.into()))),
                None => self.ended = true,
            }
        }
    }

    /// Decodes the frame gathered in `split`, which is complete, with its payload where the
    /// framing found it.
    fn split_item(&mut self, payload: Range<usize>, decode: &mut Decode<'_>) -> bool {
        let decoded = decode(&self.split[payload], false);
        self.clear_split();
        decoded
    }

    /// Decodes the bytes the body ended with, if they are a frame.
    fn last_item(&mut self, decode: &mut Decode<'_>) -> Result<bool, Error> {
        let decoded =
            !self.split.is_empty() && self.framing.reads_an_unended_last_frame() && decode(&self.split, true);
        self.clear_split();
        Ok(decoded)
    }

    fn clear_split(&mut self) {
        self.split.clear();
        if self.split.capacity() > KEPT_FRAME_CAPACITY {
            self.split = Vec::new();
        }
    }

    /// Ends the stream with `error`, dropping what is left.
    fn end_with(&mut self, error: Error) -> Error {
        self.ended = true;
        self.chunk.clear();
        self.split.clear();
        error
    }
}

/// A body error as the stream reports it: a lister-watcher's own error keeps its class.
fn body_error(err: BoxError) -> Error {
    match err.downcast::<Error>() {
        Ok(err) => *err,
        Err(err) => Error::Transport(err),
    }
}

#[cfg(test)]
mod tests;
