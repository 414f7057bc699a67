use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::source::{
    body_frames::decode_frames,
    test_support::{body_in_chunks_of, describe},
};

/// A head of `major` with `argument`, in its shortest form.
fn head_bytes(out: &mut Vec<u8>, major: u8, argument: u64) {
    let major = major << 5;
    match argument {
        0..=23 => out.push(major | argument as u8),
        24..=0xff => out.extend([major | 24, argument as u8]),
        0x100..=0xffff => {
            out.push(major | 25);
            out.extend((argument as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(major | 26);
            out.extend((argument as u32).to_be_bytes());
        }
        _ => {
            out.push(major | 27);
            out.extend(argument.to_be_bytes());
        }
    }
}

/// `value` written as kube-apiserver writes it: strings (keys included) as byte strings.
fn write(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(0xf6),
        Value::Bool(false) => out.push(0xf4),
        Value::Bool(true) => out.push(0xf5),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(n), _) => head_bytes(out, 0, n),
            (None, Some(n)) => head_bytes(out, 1, !(n as u64)),
            _ => {
                out.push(0xfb);
                out.extend(n.as_f64().unwrap_or_default().to_be_bytes());
            }
        },
        Value::String(text) => {
            head_bytes(out, 2, text.len() as u64);
            out.extend(text.as_bytes());
        }
        Value::Array(items) => {
            head_bytes(out, 4, items.len() as u64);
            items.iter().for_each(|item| write(out, item));
        }
        Value::Object(map) => {
            head_bytes(out, 5, map.len() as u64);
            for (key, value) in map {
                head_bytes(out, 2, key.len() as u64);
                out.extend(key.as_bytes());
                write(out, value);
            }
        }
    }
}

/// `value` as one self-described data item.
fn item(value: &Value) -> Vec<u8> {
    let mut out = vec![0xd9, 0xd9, 0xf7];
    write(&mut out, value);
    out
}

/// A watch event as kube-apiserver writes it: the object with its own self-described tag.
fn event(event_type: &str, object: &Value) -> Vec<u8> {
    let mut out = vec![0xd9, 0xd9, 0xf7, 0xa2];
    write(&mut out, &json!("type"));
    write(&mut out, &json!(event_type));
    write(&mut out, &json!("object"));
    out.extend(item(object));
    out
}

fn config_map(name: &str, rv: u32) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": rv.to_string(),
                     "creationTimestamp": "2026-01-02T03:04:05Z", "labels": {"app": "web"}},
        "data": {"a": "1", "b": "two"},
        "immutable": false,
        "somethingNew": {"nested": [1, -2, 3.5, null, "x"]},
    })
}

#[test]
fn items_are_cut_by_their_heads() {
    let bytes = item(&config_map("a", 1));
    let whole = Joined(&bytes, &[]);
    assert_eq!(item_end(whole, 0, usize::MAX).ok().flatten(), Some(bytes.len()));
    assert_eq!(
        item_end(bytes.as_slice(), 0, usize::MAX).ok().flatten(),
        Some(bytes.len())
    );
    // an array claiming as many items as a length can say is cut short, not a sentinel
    let huge = [0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00];
    assert!(item_end(&huge[..], 0, usize::MAX).is_err());
    for cut in 0..bytes.len() {
        assert!(
            matches!(item_end(Joined(&bytes[..cut], &[]), 0, usize::MAX), Ok(None)),
            "cut at {cut}"
        );
        // a frame started in one chunk and ended in the next
        assert_eq!(
            item_end(Joined(&bytes[..cut], &bytes[cut..]), 0, usize::MAX)
                .ok()
                .flatten(),
            Some(bytes.len()),
            "split at {cut}"
        );
    }
    // indefinite lengths: [_ 1, {_ "a": 2}, (_ h'61' h'62')]
    let indefinite = [
        0x9f, 0x01, 0xbf, 0x41, 0x61, 0x02, 0xff, 0x5f, 0x41, 0x61, 0x41, 0x62, 0xff, 0xff, 0x00,
    ];
    assert_eq!(
        item_end(Joined(&indefinite, &[]), 0, usize::MAX).ok().flatten(),
        Some(14)
    );
    // too long, reserved heads, a stray break, and an indefinite integer
    assert!(matches!(
        item_end(whole, 0, 10),
        Err(CborError::TooLong { max: 10 })
    ));
    for malformed in [&[0x1c][..], &[0xff], &[0x1f], &[0x82, 0x01, 0xff]] {
        assert!(
            matches!(
                item_end(Joined(malformed, &[]), 0, usize::MAX),
                Err(CborError::Malformed { .. })
            ),
            "{malformed:x?}"
        );
    }
    let deep = vec![0x81; MAX_DEPTH + 2];
    assert!(matches!(
        item_end(Joined(&deep, &[]), 0, usize::MAX),
        Err(CborError::TooDeep)
    ));
}

#[test]
fn objects_decode_as_from_json_with_byte_strings_for_strings() {
    let value = config_map("a", 7);
    let from_json: ConfigMap = serde_json::from_value(value.clone()).expect("json");
    let from_cbor: ConfigMap = from_slice(&item(&value)).expect("cbor");
    assert_eq!(
        from_cbor, from_json,
        "unknown fields passed over as JSON passes them"
    );
    // missing fields are None
    let bare: ConfigMap = from_slice(&item(&json!({"metadata": {"name": "b"}}))).expect("cbor");
    assert_eq!((bare.data, bare.immutable), (None, None));
    // null is None, text strings are strings too
    let mut text = vec![0xa2, 0x64];
    text.extend(b"data");
    text.push(0xf6);
    text.push(0x68);
    text.extend(b"metadata");
    text.extend([0xa1, 0x64]);
    text.extend(b"name");
    text.extend([0x61, b'c']);
    let named: ConfigMap = from_slice(&text).expect("text strings");
    assert_eq!(named.metadata.name.as_deref(), Some("c"));
    assert_eq!(named.data, None);
}

#[test]
fn values_that_do_not_fit_and_trailing_bytes_are_errors() {
    let mut bytes = item(&json!({"data": {"a": 1}}));
    assert!(matches!(
        from_slice::<ConfigMap>(&bytes),
        Err(CborError::Value(_))
    ));
    bytes = item(&json!({}));
    bytes.push(0x00);
    assert!(matches!(
        from_slice::<ConfigMap>(&bytes),
        Err(CborError::Trailing(1))
    ));
    assert!(matches!(
        from_slice::<ConfigMap>(&bytes[..3]),
        Err(CborError::Truncated)
    ));
    // a byte string that is not UTF-8 where a string is wanted
    let bad = [0xa1, 0x44, b'k', b'i', b'n', b'd', 0x41, 0xff];
    assert!(matches!(from_slice::<ConfigMap>(&bad), Err(CborError::Value(_))));
}

#[test]
fn lists_decode_with_their_kind_or_as_a_v1_list() {
    let body = item(
        &json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "9"},
                             "items": [config_map("a", 1), config_map("b", 2)]}),
    );
    let list: ObjectList<ConfigMap> = CborObjects::default().list(&body).expect("list");
    assert_eq!(list.types.kind, "ConfigMapList");
    assert_eq!(list.metadata.resource_version.as_deref(), Some("9"));
    assert_eq!((list.items.len(), list.items.capacity()), (2, 2));
    let bare: ObjectList<ConfigMap> = CborObjects::default()
        .list(&item(&json!({"items": null})))
        .expect("list");
    assert_eq!((bare.types.kind.as_str(), bare.items.len()), ("List", 0));
}

async fn decode_body(body: &[u8], size: usize) -> Vec<Result<WatchEvent<ConfigMap>, Error>> {
    decode_frames(
        body_in_chunks_of(body, size),
        Items::new(1 << 20),
        CborObjects::default().events(),
    )
    .collect()
    .await
}

#[tokio::test]
async fn watch_sequences_decode_in_any_chunking() {
    let mut body = event("ADDED", &config_map("a", 1));
    body.extend(event("MODIFIED", &config_map("a", 2)));
    body.extend(event(
        "BOOKMARK",
        &json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": "3",
                 "annotations": {"k8s.io/initial-events-end": "true"}}}),
    ));
    body.extend(event("DELETED", &config_map("a", 4)));
    body.extend(event(
        "ERROR",
        &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410}),
    ));
    let expected = [
        "added a",
        "modified a",
        "bookmark 3 true",
        "deleted a",
        "error event 410",
    ];
    for size in [1, 2, 3, 7, 64, 100, 1000, body.len()] {
        assert_eq!(
            describe(&decode_body(&body, size).await),
            expected,
            "chunks of {size}"
        );
    }
}

#[tokio::test]
async fn truncated_and_malformed_sequences_are_errors() {
    let whole = event("ADDED", &config_map("a", 1));
    let mut body = whole.clone();
    body.extend(&whole[..whole.len() / 2]);
    assert_eq!(
        describe(&decode_body(&body, 10).await),
        ["added a", "decode error"],
        "cut short"
    );

    // a well-formed item that is not an event: an error, and the next one still decodes
    let mut body = item(&json!({"hello": "world"}));
    body.extend(&whole);
    assert_eq!(
        describe(&decode_body(&body, 5).await),
        ["decode error", "added a"]
    );

    // a Status instead of an event
    let body = item(&json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403}));
    assert_eq!(describe(&decode_body(&body, 5).await), ["status 403"]);

    // an unknown event type, an object of the wrong shape
    let mut body = event("SHRUG", &config_map("a", 1));
    body.extend(event("ADDED", &json!({"data": []})));
    body.extend(&whole);
    assert_eq!(
        describe(&decode_body(&body, 9).await),
        ["decode error", "decode error", "added a"]
    );

    // a malformed head ends the body: where the next item starts is unknown
    let mut body = whole.clone();
    body.push(0x1c);
    body.extend(&whole);
    assert_eq!(
        describe(&decode_body(&body, 4).await),
        ["added a", "decode error"]
    );
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), size in 1usize..50) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        let events = runtime.block_on(decode_body(&bytes, size));
        let _ = describe(&events);
        let _ = from_slice::<ConfigMap>(&bytes);
        let _ = CborObjects::default().list::<ConfigMap>(&bytes);
        let _ = skipping().list::<Pod>(&bytes);
    }

    #[test]
    fn damaged_events_never_panic(at in 0usize..400, byte in any::<u8>(), cut in 0usize..400) {
        let mut body = event("MODIFIED", &config_map("a", 1));
        let at = at % body.len();
        body[at] = byte;
        body.truncate(cut.max(1).min(body.len()));
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        let _ = describe(&runtime.block_on(decode_body(&body, 13)));
    }

    #[test]
    fn damaged_objects_with_fields_to_skip_never_panic(at in 0usize..2000, byte in any::<u8>(), cut in 0usize..2000) {
        let mut body = item(&json!({"items": [applied_pod("a")]}));
        let at = at % body.len();
        body[at] = byte;
        body.truncate(cut.max(1).min(body.len()));
        let _ = skipping().list::<Pod>(&body);
        let mut events = event("MODIFIED", &applied_pod("a"));
        let at = at % events.len();
        events[at] = byte;
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        let decoded: Vec<_> = runtime.block_on(
            decode_frames(body_in_chunks_of(&events, 17), Items::new(1 << 20), skipping().events::<Pod>()).collect::<Vec<_>>(),
        );
        let _ = decoded.len();
    }
}

#[test]
fn dynamic_objects_decode_as_from_json() {
    use kube::core::DynamicObject;

    let value = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                       "metadata": {"name": "w", "namespace": "default", "resourceVersion": "5"},
                       "spec": {"size": 3, "ratio": 0.5, "tags": ["a"], "nested": {"x": null}}});
    let from_json: DynamicObject = serde_json::from_value(value.clone()).expect("json");
    let from_cbor: DynamicObject = from_slice(&item(&value)).expect("cbor");
    assert_eq!(
        from_cbor, from_json,
        "flattened fields are buffered and read as JSON reads them"
    );
    let mut body = event("ADDED", &value);
    body.extend(event("DELETED", &value));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let events: Vec<Result<WatchEvent<DynamicObject>, Error>> = runtime.block_on(
        decode_frames(
            body_in_chunks_of(&body, 11),
            Items::new(1 << 20),
            CborObjects::default().events(),
        )
        .collect(),
    );
    assert!(
        matches!(&events[..], [Ok(WatchEvent::Added(a)), Ok(WatchEvent::Deleted(d))] if *a == from_json && *d == from_json),
        "{events:?}"
    );
}

#[test]
fn a_scan_split_across_chunks_goes_on_where_it_stopped() {
    let mut body = event("ADDED", &config_map("a", 1));
    body.extend(event("MODIFIED", &config_map("a", 2)));
    let first = event("ADDED", &config_map("a", 1)).len();
    let mut items = Items::new(1 << 20);
    // the first chunk ends inside the first item: the scan stops there
    assert_eq!(items.frame(&body[..5]).ok().flatten(), None);
    let mut started = body[..5].to_vec();
    let mut at = 5;
    // more chunks, each read from where the last ended, until the item's end is in one
    let end = loop {
        let more = &body[at..(at + 3).min(body.len())];
        if let Some(frame) = items.end_in(&started, more).ok().flatten() {
            assert_eq!(frame.payload, 0..frame.next, "an item is its own payload");
            break frame.next;
        }
        started.extend_from_slice(more);
        at += more.len();
    };
    assert_eq!(end, first);
    // the next frame starts afresh
    assert_eq!(
        items.frame(&body[first..]).ok().flatten().map(|f| f.next),
        Some(body.len() - first)
    );
}

/// A pod as kube-apiserver writes one that was applied: managed fields, the last applied
/// configuration among its annotations, and arrays after them.
fn applied_pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": "default",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"big\": true}", "team": "a"},
            "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:metadata": {"f:labels": {}}}}],
            "finalizers": ["a/b", "c/d"],
        },
        "spec": {"containers": [{"name": "c", "image": "i", "args": ["x", "y", "z"]}]},
    })
}

/// `applied_pod` as the skipping reader should give it.
fn trimmed_pod(name: &str) -> Pod {
    let mut pod: Pod = serde_json::from_value(applied_pod(name)).expect("a pod");
    pod.metadata.managed_fields = None;
    pod.metadata.annotations = Some([("team".to_owned(), "a".to_owned())].into());
    pod
}

/// A reader skipping what is usually skipped: managed fields and the last applied configuration.
fn skipping() -> CborObjects {
    CborObjects::new(&[
        FieldPath::managed_fields(),
        FieldPath::last_applied_configuration(),
    ])
}

// The CBOR counterpart of `skipped_fields_are_left_out_of_lists_and_watch_events` (JSON).
#[test]
fn skipped_fields_are_passed_over_in_lists_and_watch_events() {
    let objects = skipping();
    let body = item(
        &json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "7"},
                            "items": [applied_pod("a"), applied_pod("b")]}),
    );
    let list: ObjectList<Pod> = objects.list(&body).expect("a list");
    assert_eq!(list.items, [trimmed_pod("a"), trimmed_pod("b")]);
    assert_eq!(list.metadata.resource_version.as_deref(), Some("7"));

    let body = [
        event("MODIFIED", &applied_pod("a")),
        event(
            "BOOKMARK",
            &json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}}),
        ),
    ]
    .concat();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let events: Vec<_> = runtime.block_on(
        decode_frames(
            body_in_chunks_of(&body, 7),
            Items::new(1 << 20),
            objects.events::<Pod>(),
        )
        .collect::<Vec<_>>(),
    );
    assert!(
        matches!(&events[..], [Ok(WatchEvent::Modified(pod)), Ok(WatchEvent::Bookmark(_))] if *pod == trimmed_pod("a")),
        "{events:?}"
    );
    // nothing skipped: the same bytes read whole
    let whole: ObjectList<Pod> = CborObjects::new(&[])
        .list(&item(&json!({"items": [applied_pod("a")]})))
        .expect("a list");
    assert_eq!(
        whole.items[0],
        serde_json::from_value::<Pod>(applied_pod("a")).expect("a pod")
    );
}

#[test]
fn a_skipped_field_that_is_malformed_is_still_an_error() {
    let objects = CborObjects::new(&[FieldPath::managed_fields()]);
    let mut body = item(&json!({"items": [applied_pod("a")]}));
    // cut inside the skipped managed fields: the list is truncated, not read without them
    let at = body
        .windows(b"managedFields".len())
        .position(|w| w == b"managedFields")
        .expect("managed fields")
        + 20;
    body.truncate(at);
    assert!(objects.list::<Pod>(&body).is_err());
}
