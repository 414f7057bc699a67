//! Both framings over every way of cutting a body into chunks.

use futures::stream;

use super::*;
use crate::source::test_support::body;

/// Frames as text; a blank line passes over; `last` marks the body's unended rest.
struct Text;

impl FrameDecoder for Text {
    type Item = String;

    fn decode(&self, payload: &[u8], last: bool) -> Option<Result<String, Error>> {
        let text = String::from_utf8_lossy(payload).into_owned();
        if text.trim().is_empty() {
            return None;
        }
        Some(Ok(if last { format!("{text} (last)") } else { text }))
    }
}

async fn decode<F: Framing + Send>(framing: F, parts: Vec<Vec<u8>>) -> Vec<String> {
    decode_frames(body(parts), framing, Text)
        .map(|item| item.unwrap_or_else(|error| format!("error: {error}")))
        .collect()
        .await
}

/// `body` cut at every position, and byte by byte.
fn cuts(body: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut all: Vec<Vec<Vec<u8>>> = (0..=body.len())
        .map(|at| vec![body[..at].to_vec(), body[at..].to_vec()])
        .collect();
    all.push(body.iter().map(|byte| vec![*byte]).collect());
    all
}

fn prefixed(payloads: &[&str]) -> Vec<u8> {
    payloads
        .iter()
        .flat_map(|payload| {
            let mut frame = u32::try_from(payload.len())
                .expect("short")
                .to_be_bytes()
                .to_vec();
            frame.extend_from_slice(payload.as_bytes());
            frame
        })
        .collect()
}

const MAX: usize = 1 << 10;

#[tokio::test]
async fn lines_come_out_whole_however_the_body_is_cut() {
    let body = b"first\n\nsecond line\nthird\n";
    for parts in cuts(body) {
        assert_eq!(
            decode(Lines, parts.clone()).await,
            ["first", "second line", "third"],
            "{parts:?}"
        );
    }
}

#[tokio::test]
async fn a_last_line_without_its_newline_is_read_as_the_last() {
    for parts in cuts(b"first\nrest") {
        assert_eq!(decode(Lines, parts).await, ["first", "rest (last)"]);
    }
}

#[tokio::test]
async fn length_prefixed_frames_come_out_whole_however_the_body_is_cut() {
    let body = prefixed(&["first", "", "second frame", "x"]);
    for parts in cuts(&body) {
        assert_eq!(
            decode(LengthPrefixed { max: MAX }, parts.clone()).await,
            ["first", "second frame", "x"],
            "{parts:?}"
        );
    }
}

#[tokio::test]
async fn a_length_prefixed_frame_cut_short_at_the_end_is_dropped() {
    let mut body = prefixed(&["first", "second"]);
    body.truncate(body.len() - 2);
    for parts in cuts(&body) {
        assert_eq!(decode(LengthPrefixed { max: MAX }, parts).await, ["first"]);
    }
}

#[tokio::test]
async fn a_frame_longer_than_the_maximum_ends_the_body_however_it_is_cut() {
    let mut body = prefixed(&["first"]);
    body.extend_from_slice(&u32::try_from(MAX + 1).expect("small").to_be_bytes());
    body.extend_from_slice(&prefixed(&["never read"]));
    for parts in cuts(&body) {
        let items = decode(LengthPrefixed { max: MAX }, parts).await;
        assert_eq!(items.len(), 2, "{items:?}");
        assert_eq!(items[0], "first");
        assert!(items[1].contains("claims 1025 bytes"), "{items:?}");
    }
}

#[tokio::test]
async fn a_body_error_ends_the_stream_dropping_the_frame_it_cut() {
    let body = stream::iter(vec![
        Ok(Bytes::from_static(b"whole\nhalf")),
        Err(std::io::Error::other("reset")),
        Ok(Bytes::from_static(b" line\n")),
    ]);
    let items: Vec<_> = decode_frames(body, Lines, Text).collect().await;
    assert!(matches!(&items[..], [Ok(whole), Err(Error::Transport(_))] if whole == "whole"));
}

#[tokio::test]
async fn a_long_split_frame_does_not_keep_its_buffer() {
    let long = "x".repeat(2 * KEPT_FRAME_CAPACITY);
    let text = format!("{long}\nnext\n").into_bytes();
    let mut frames = Frames {
        body: body([&text[..100], &text[100..]]),
        framing: Lines,
        chunk: Bytes::new(),
        split: Vec::new(),
        ended: false,
    };
    let mut lengths = Vec::new();
    let mut decode = |payload: &[u8], _: bool| {
        lengths.push(payload.len());
        true
    };
    assert!(frames.next_item(&mut decode).await.expect("a frame"));
    assert_eq!(frames.split.capacity(), 0);
    assert!(frames.next_item(&mut decode).await.expect("a frame"));
    assert!(!frames.next_item(&mut decode).await.expect("the end"));
    assert_eq!(lengths, [2 * KEPT_FRAME_CAPACITY, "next".len()]);
}
