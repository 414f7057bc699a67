use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;

use super::*;
use crate::source::test_support::{body, describe};

fn frame(event_type: &str, object: &serde_json::Value) -> Vec<u8> {
    let document = protobuf::to_vec(object).expect("encoded");
    WatchFrame {
        event_type,
        object: &document,
    }
    .encode()
}

fn config_map(name: &str, rv: u32) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default", "resourceVersion": rv.to_string()}})
}

async fn names(parts: Vec<Vec<u8>>) -> Vec<String> {
    let objects = Arc::new(ProtobufObjects::new(&[]));
    let events: Vec<_> = decode_protobuf_watch_body::<ConfigMap, _, _>(body(parts), objects)
        .collect()
        .await;
    describe(&events)
}

#[tokio::test]
async fn frames_decode_however_the_body_is_cut() {
    let body = [
        frame("ADDED", &config_map("a", 1)),
        frame("ADDED", &config_map("b", 2)),
        frame("DELETED", &config_map("a", 3)),
    ]
    .concat();
    let expected = ["added a", "added b", "deleted a"];
    for first in 1..body.len() - 1 {
        for second in [first + 1, first + 7, body.len() - 1] {
            let second = second.min(body.len());
            let parts = vec![
                body[..first].to_vec(),
                body[first..second].to_vec(),
                body[second..].to_vec(),
            ];
            assert_eq!(names(parts).await, expected, "cut at {first} and {second}");
        }
    }
    let one_byte_chunks = body.iter().map(|b| vec![*b]).collect();
    assert_eq!(names(one_byte_chunks).await, expected);
}

#[tokio::test]
async fn bookmarks_and_errors_are_events() {
    let bookmark = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"resourceVersion": "12", "annotations": {"k8s.io/initial-events-end": "true"}}});
    let status = json!({"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": 410, "reason": "Expired",
                        "message": "too old", "metadata": {}});
    let parts = vec![frame("BOOKMARK", &bookmark), frame("ERROR", &status)];
    assert_eq!(names(parts).await, ["bookmark 12 true", "error event 410"]);
}

#[tokio::test]
async fn a_bad_frame_is_an_error_and_the_stream_goes_on() {
    let garbage = [&3_u32.to_be_bytes()[..], &[0xff, 0xff, 0xff]].concat();
    let unknown_type = WatchFrame {
        event_type: "SIDEWAYS",
        object: &[],
    }
    .encode();
    let parts = vec![garbage, unknown_type, frame("ADDED", &config_map("a", 1))];
    assert_eq!(names(parts).await, ["decode error", "decode error", "added a"]);
}

#[tokio::test]
async fn a_frame_cut_short_by_the_end_is_dropped_and_an_absurd_length_ends_the_stream() {
    let whole = frame("ADDED", &config_map("a", 1));
    let cut = whole[..whole.len() - 2].to_vec();
    assert_eq!(names(vec![whole.clone(), cut]).await, ["added a"]);
    let absurd = [&u32::MAX.to_be_bytes()[..], &whole].concat();
    assert_eq!(names(vec![absurd, whole]).await, ["decode error"]);
}
