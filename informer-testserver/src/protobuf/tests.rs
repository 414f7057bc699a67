//! Decoding of hand-encoded protobuf bodies (an encoder written from the `generated.proto`
//! field numbers, independent of the generated table).

use serde_json::json;

use super::*;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn bytes_field(tag: u32, value: &[u8], out: &mut Vec<u8>) {
    varint(u64::from(tag) << 3 | 2, out);
    varint(value.len() as u64, out);
    out.extend_from_slice(value);
}

fn varint_field(tag: u32, value: u64, out: &mut Vec<u8>) {
    varint(u64::from(tag) << 3, out);
    varint(value, out);
}

fn map_entry(tag: u32, key: &str, value: &[u8], out: &mut Vec<u8>) {
    let mut entry = Vec::new();
    bytes_field(1, key.as_bytes(), &mut entry);
    bytes_field(2, value, &mut entry);
    bytes_field(tag, &entry, out);
}

/// `k8s\0` + Unknown{typeMeta{apiVersion, kind}, raw}.
pub(crate) fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::new();
    bytes_field(1, api_version.as_bytes(), &mut type_meta);
    bytes_field(2, kind.as_bytes(), &mut type_meta);
    let mut unknown = b"k8s\0".to_vec();
    bytes_field(1, &type_meta, &mut unknown);
    bytes_field(2, raw, &mut unknown);
    unknown
}

#[test]
fn a_config_map_as_kubectl_sends_it() {
    // ObjectMeta: name = 1, namespace = 3, labels = 11
    let mut meta = Vec::new();
    bytes_field(1, b"settings", &mut meta);
    bytes_field(3, b"default", &mut meta);
    map_entry(11, "app", b"web", &mut meta);
    // ConfigMap: metadata = 1, data = 2, binaryData = 3, immutable = 4
    let mut cm = Vec::new();
    bytes_field(1, &meta, &mut cm);
    map_entry(2, "a", b"1", &mut cm);
    map_entry(2, "b", b"2", &mut cm);
    map_entry(3, "bin", &[0, 1, 2], &mut cm);
    varint_field(4, 1, &mut cm);
    let object = decode_object(&envelope("v1", "ConfigMap", &cm)).expect("decoded");
    assert_eq!(
        object,
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default", "labels": {"app": "web"}},
            "data": {"a": "1", "b": "2"},
            "binaryData": {"bin": "AAEC"},
            "immutable": true,
        })
    );
}

#[test]
fn special_messages_and_inline_messages_get_their_json_forms() {
    // Pod.spec (2) .containers (2) { name = 1, ports = 6 { containerPort = 3 },
    // resources = 8 { limits = 1 map<string, Quantity{string = 1}> } }, .volumes (1) { name = 1,
    // volumeSource = 2 { emptyDir = 2 { } } }
    let mut quantity = Vec::new();
    bytes_field(1, b"500m", &mut quantity);
    let mut resources = Vec::new();
    map_entry(1, "cpu", &quantity, &mut resources);
    let mut port = Vec::new();
    varint_field(3, 8080, &mut port);
    let mut container = Vec::new();
    bytes_field(1, b"web", &mut container);
    bytes_field(6, &port, &mut container);
    bytes_field(8, &resources, &mut container);
    let mut source = Vec::new();
    bytes_field(2, &[], &mut source);
    let mut volume = Vec::new();
    bytes_field(1, b"scratch", &mut volume);
    bytes_field(2, &source, &mut volume);
    let mut spec = Vec::new();
    bytes_field(1, &volume, &mut spec);
    bytes_field(2, &container, &mut spec);
    // metadata.creationTimestamp (8) = Time { seconds = 1 }
    let mut time = Vec::new();
    varint_field(1, 1_700_000_000, &mut time);
    let mut meta = Vec::new();
    bytes_field(1, b"p", &mut meta);
    bytes_field(8, &time, &mut meta);
    let mut pod = Vec::new();
    bytes_field(1, &meta, &mut pod);
    bytes_field(2, &spec, &mut pod);
    let object = decode_object(&envelope("v1", "Pod", &pod)).expect("decoded");
    assert_eq!(object["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z");
    let container = &object["spec"]["containers"][0];
    assert_eq!(container["ports"], json!([{"containerPort": 8080}]));
    assert_eq!(container["resources"]["limits"]["cpu"], "500m");
    assert_eq!(
        object["spec"]["volumes"],
        json!([{"name": "scratch", "emptyDir": {}}])
    );
}

#[test]
fn bad_bodies_are_errors() {
    assert!(matches!(decode_object(b"not protobuf"), Err(Error::Malformed(_))));
    assert!(matches!(
        decode_object(&envelope("example.com/v1", "Widget", &[])),
        Err(Error::UnknownKind(_))
    ));
    let mut truncated = envelope("v1", "ConfigMap", &[0x0a, 0x05, b'a']);
    truncated.truncate(truncated.len() - 1);
    assert!(decode_object(&truncated).is_err());
}

/// What is encoded decodes to the same JSON.
#[test]
fn answers_decode_to_what_was_encoded() {
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"},
                     "creationTimestamp": "2023-11-14T22:13:20Z", "resourceVersion": "7"},
        "spec": {
            "containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                            "resources": {"limits": {"cpu": "500m"}},
                            "readinessProbe": {"httpGet": {"path": "/", "port": "http"}}}],
            "volumes": [{"name": "scratch", "emptyDir": {}}],
            "replicas": 0,
        },
        "status": {"phase": "Running"},
    });
    let mut expected = pod.clone();
    // not a field of a pod: dropped by the table
    expected["spec"].as_object_mut().expect("spec").remove("replicas");
    let bytes = encode_answer(&pod).expect("a built-in kind");
    assert_eq!(decode_object(&bytes).expect("decoded"), expected);

    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                        "data": {"pw": "aHVudGVyMg=="}, "type": "Opaque"});
    assert_eq!(
        decode_object(&encode_answer(&secret).expect("encoded")).expect("decoded"),
        secret
    );

    let list = json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "9"},
                      "items": [{"metadata": {"name": "a"}, "data": {"k": "v"}}]});
    let bytes = encode_answer(&list).expect("lists of built-in kinds");
    assert_eq!(decode_object(&bytes).expect("decoded"), list);
    assert!(encode_answer(&json!({"apiVersion": "example.com/v1", "kind": "Widget"})).is_none());
}

/// A watch frame: length, then a `WatchEvent` whose object is the protobuf document.
#[test]
fn watch_events_are_length_prefixed_watch_event_messages() {
    let line = serde_json::to_vec(&json!({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}}))
        .expect("json");
    let frame = watch_frame(&line).expect("a frame");
    let length = u32::from_be_bytes(frame[..4].try_into().expect("four bytes")) as usize;
    assert_eq!(length, frame.len() - 4);
    let fields: Vec<_> = wire::Reader::new(&frame[4..])
        .collect::<Result<_, _>>()
        .expect("a message");
    assert_eq!(fields[0], (1, wire::WireValue::Bytes(b"ADDED")));
    let wire::WireValue::Bytes(raw_extension) = fields[1].1 else {
        panic!("object is a message");
    };
    let raw: Vec<_> = wire::Reader::new(raw_extension)
        .collect::<Result<_, _>>()
        .expect("RawExtension");
    let wire::WireValue::Bytes(document) = raw[0].1 else {
        panic!("raw is bytes");
    };
    assert_eq!(decode_object(document).expect("decoded")["metadata"]["name"], "a");
    let status = serde_json::to_vec(&json!({"type": "ERROR", "object": {"apiVersion": "v1", "kind": "Status", "code": 410, "reason": "Expired"}}))
        .expect("json");
    assert!(watch_frame(&status).is_some(), "errors are framed too");
}
