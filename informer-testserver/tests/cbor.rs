//! CBOR over plain HTTP, as kube-apiserver 1.37 speaks it with `CBORServingAndStorage`
//! (KEP-4222): answers, errors and 406s, watch streams as CBOR sequences, create, update and
//! apply bodies, and the 400s of malformed bodies.
//!
//! The answers are read with `ciborium` apart from the server's own checks: every string must be
//! a byte string, every data item enclosed in the self-described tag.

mod support;

use ciborium::Value as Cbor;
use informer_testserver::{ResourceType, TestServer};
use serde_json::{Map, Value, json};
use support::{RawResponse, get, open, request};

const CBOR: &str = "application/cbor";
const SELF_DESCRIBED: u64 = 55799;

/// The JSON form of a data item of an answer; panics on what kube-apiserver never writes (a
/// text string, a non-string key, a tag inside a plain object).
fn to_json(item: Cbor) -> Value {
    match item {
        Cbor::Null => Value::Null,
        Cbor::Bool(value) => Value::Bool(value),
        Cbor::Integer(value) => json!(i64::try_from(i128::from(value)).expect("int64")),
        Cbor::Float(value) => json!(value),
        Cbor::Bytes(bytes) => Value::String(String::from_utf8(bytes).expect("UTF-8")),
        Cbor::Array(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Cbor::Map(entries) => {
            let mut map = Map::new();
            let mut previous: Option<Vec<u8>> = None;
            for (key, value) in entries {
                let Cbor::Bytes(key) = key else {
                    panic!("a key that is not a byte string: {key:?}")
                };
                // bytewise order of the encoded keys: shorter first, then by bytes
                if let Some(previous) = &previous {
                    assert!(
                        (previous.len(), previous) < (key.len(), &key),
                        "keys out of order: {previous:?} before {key:?}"
                    );
                }
                previous = Some(key.clone());
                map.insert(String::from_utf8(key).expect("UTF-8 key"), to_json(value));
            }
            Value::Object(map)
        }
        other => panic!("unexpected data item {other:?}"),
    }
}

/// A whole answer: one self-described data item, as JSON.
fn answer_json(body: &[u8]) -> Value {
    assert_eq!(
        body.get(..3),
        Some(&[0xd9, 0xd9, 0xf7][..]),
        "self-described prefix"
    );
    let item: Cbor = ciborium::from_reader(body).expect("one CBOR data item");
    match item {
        Cbor::Tag(SELF_DESCRIBED, content) => to_json(*content),
        other => panic!("not self-described: {other:?}"),
    }
}

/// The CBOR answer of a response, checked for its status and content type.
fn cbor_answer(response: &RawResponse, status: u16) -> Value {
    assert_eq!(
        response.status,
        status,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    assert_eq!(
        response.headers.get("content-type").map(String::as_str),
        Some(CBOR)
    );
    answer_json(&response.body)
}

/// A JSON value as a CBOR body a Go client writes (apimachinery's encoder: byte strings).
fn body_of(value: &Value) -> Vec<u8> {
    fn item(value: &Value) -> Cbor {
        match value {
            Value::Null => Cbor::Null,
            Value::Bool(value) => Cbor::Bool(*value),
            Value::Number(number) => match number.as_i64() {
                Some(integer) => Cbor::Integer(integer.into()),
                None => Cbor::Float(number.as_f64().expect("number")),
            },
            Value::String(text) => Cbor::Bytes(text.as_bytes().to_vec()),
            Value::Array(items) => Cbor::Array(items.iter().map(item).collect()),
            Value::Object(map) => Cbor::Map(
                map.iter()
                    .map(|(key, value)| (Cbor::Bytes(key.as_bytes().to_vec()), item(value)))
                    .collect(),
            ),
        }
    }
    let mut out = Vec::new();
    ciborium::into_writer(&Cbor::Tag(SELF_DESCRIBED, Box::new(item(value))), &mut out).expect("encode");
    out
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn config_map(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "x"}},
        "data": {"mode": "fast", "size": "3"},
    })
}

fn widget_type() -> ResourceType {
    ResourceType::new("example.com", "v1", "Widget", "widgets", true)
}

fn widget(name: &str) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"size": 3, "ratio": 1.5, "big": 10_000_000_000_i64, "tags": ["a", "b"], "on": true, "none": null},
    })
}

async fn get_as(server: &TestServer, path: &str, accept: &str) -> RawResponse {
    request(server.addr(), "GET", path, &[("Accept", accept)], b"").await
}

async fn send(server: &TestServer, method: &str, path: &str, content_type: &str, body: &[u8]) -> RawResponse {
    request(
        server.addr(),
        method,
        path,
        &[("Accept", CBOR), ("Content-Type", content_type)],
        body,
    )
    .await
}

#[tokio::test]
async fn objects_and_lists_of_built_in_and_custom_kinds_answer_as_json_does() {
    let server = TestServer::start().await.expect("start");
    server.register(widget_type());
    server.create(config_map("settings")).expect("config map");
    server.create(widget("w1")).expect("widget");
    for path in [
        "/api/v1/namespaces/default/configmaps/settings",
        "/api/v1/namespaces/default/configmaps",
        "/apis/example.com/v1/namespaces/default/widgets/w1",
        "/apis/example.com/v1/namespaces/default/widgets",
    ] {
        let cbor = cbor_answer(&get_as(&server, path, CBOR).await, 200);
        let json = get(server.addr(), path).await.json();
        assert_eq!(cbor, json, "{path}");
    }
    // integers stay integers, floats floats
    let w1 = cbor_answer(
        &get_as(
            &server,
            "/apis/example.com/v1/namespaces/default/widgets/w1",
            CBOR,
        )
        .await,
        200,
    );
    assert_eq!(w1["spec"]["big"], json!(10_000_000_000_i64));
    assert!(w1["spec"]["ratio"].is_f64());
    // the first clause the server can serve wins
    let json_first = get_as(
        &server,
        "/api/v1/namespaces/default/configmaps",
        "application/json, application/cbor",
    )
    .await;
    assert_eq!(json_first.headers["content-type"], "application/json");
    let cbor_first = get_as(
        &server,
        "/api/v1/namespaces/default/configmaps",
        "application/cbor, application/json",
    )
    .await;
    assert_eq!(cbor_first.headers["content-type"], CBOR);
    server.shutdown().await;
}

#[tokio::test]
async fn errors_are_cbor_statuses() {
    let server = TestServer::start().await.expect("start");
    let response = get_as(&server, "/api/v1/namespaces/default/configmaps/missing", CBOR).await;
    let status = cbor_answer(&response, 404);
    assert_eq!(
        status,
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "configmaps \"missing\" not found",
            "reason": "NotFound",
            "details": {"name": "missing", "kind": "configmaps"},
            "code": 404,
        })
    );
    server.shutdown().await;
}

#[tokio::test]
async fn metadata_conversions_are_served_in_cbor_and_tables_are_not() {
    let server = TestServer::start().await.expect("start");
    server.create(config_map("settings")).expect("config map");
    let partial = "application/cbor;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    let object = cbor_answer(
        &get_as(&server, "/api/v1/namespaces/default/configmaps/settings", partial).await,
        200,
    );
    assert_eq!(object["kind"], "PartialObjectMetadata");
    assert_eq!(object["metadata"]["labels"]["app"], "x");
    assert!(object.get("data").is_none());
    let list = "application/cbor;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let listed = cbor_answer(
        &get_as(&server, "/api/v1/namespaces/default/configmaps", list).await,
        200,
    );
    assert_eq!(listed["kind"], "PartialObjectMetadataList");
    // a Table has JSON and YAML forms only: the clause is passed over
    let table = "application/cbor;as=Table;g=meta.k8s.io;v=v1";
    let refused = get_as(&server, "/api/v1/namespaces/default/configmaps", table).await;
    assert_eq!(refused.status, 406);
    let with_fallback = get_as(
        &server,
        "/api/v1/namespaces/default/configmaps",
        &format!("{table}, application/json"),
    )
    .await;
    assert_eq!(with_fallback.json()["kind"], "ConfigMapList");
    server.shutdown().await;
}

#[tokio::test]
async fn not_acceptable_lists_cbor_last() {
    let server = TestServer::start().await.expect("start");
    let response = get_as(&server, "/api/v1/namespaces/default/configmaps", "text/html").await;
    assert_eq!(response.status, 406);
    assert_eq!(
        response.json()["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
    );
    // A watch is negotiated as a list first (kube-apiserver's list handler), against
    // application/cbor: asking for application/cbor-seq alone is that 406.
    let watch = "/api/v1/namespaces/default/configmaps?watch=true";
    for accept in ["application/cbor-seq", "text/html"] {
        let response = get_as(&server, watch, accept).await;
        assert_eq!(response.status, 406, "{accept}");
        assert_eq!(
            response.json()["message"],
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor",
            "{accept}"
        );
    }
    // Then its watch handler's, listing the stream media types (CBOR's is a sequence), for a
    // media type without a stream form. The Status itself is YAML, as Accept asks.
    let response = get_as(&server, watch, "application/yaml").await;
    assert_eq!(response.status, 406);
    let text = String::from_utf8_lossy(&response.body);
    assert!(
        text.contains("only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq"),
        "{text}"
    );
    server.shutdown().await;
}

/// Splits `chunks` at other places and decodes the CBOR sequence they carry one data item at a
/// time, as a reader does that gets the bytes as they come.
fn decode_sequence(chunks: &[Vec<u8>], mut seed: u32) -> Vec<Value> {
    let bytes: Vec<u8> = chunks.concat();
    let mut buffer: Vec<u8> = Vec::new();
    let mut items = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let step = 1 + seed as usize % 7;
        let end = (at + step).min(bytes.len());
        buffer.extend_from_slice(&bytes[at..end]);
        at = end;
        // take every whole item the buffer holds
        loop {
            let mut reader: &[u8] = &buffer;
            match ciborium::from_reader::<Cbor, _>(&mut reader) {
                Ok(item) => {
                    let used = buffer.len() - reader.len();
                    assert_eq!(&buffer[..3], &[0xd9, 0xd9, 0xf7], "each item self-described");
                    buffer.drain(..used);
                    items.push(item);
                }
                Err(ciborium::de::Error::Io(_)) => break,
                Err(other) => panic!("not a CBOR sequence: {other:?}"),
            }
        }
    }
    assert!(buffer.is_empty(), "a partial item at the end");
    items
        .into_iter()
        .map(|item| {
            let Cbor::Tag(SELF_DESCRIBED, event) = item else {
                panic!("not self-described")
            };
            let Cbor::Map(entries) = *event else {
                panic!("not a map")
            };
            let keys: Vec<&Cbor> = entries.iter().map(|(k, _)| k).collect();
            assert_eq!(
                keys,
                [&Cbor::Bytes(b"type".to_vec()), &Cbor::Bytes(b"object".to_vec())]
            );
            let mut event = Map::new();
            for (key, value) in entries {
                let Cbor::Bytes(key) = key else { unreachable!() };
                let value = match value {
                    // the object is embedded with its own self-described tag
                    Cbor::Tag(SELF_DESCRIBED, object) => to_json(*object),
                    Cbor::Bytes(_) => to_json(value),
                    other => panic!("untagged object {other:?}"),
                };
                event.insert(String::from_utf8(key).expect("key"), value);
            }
            Value::Object(event)
        })
        .collect()
}

#[tokio::test]
async fn watches_are_cbor_sequences_of_watch_events() {
    let server = TestServer::start().await.expect("start");
    server.register(widget_type());
    server.create(widget("w1")).expect("widget");
    let mut stream = open(
        server.addr(),
        "GET",
        "/apis/example.com/v1/namespaces/default/widgets?watch=true&timeoutSeconds=2",
        &[("Accept", CBOR)],
        b"",
    )
    .await;
    assert_eq!(stream.status, 200);
    assert_eq!(stream.headers["content-type"], "application/cbor-seq");
    server.create(widget("w2")).expect("widget");
    server
        .delete("example.com/v1", "Widget", Some("default"), "w1")
        .expect("delete");
    let mut chunks = Vec::new();
    while let Some(chunk) = stream.chunk().await {
        chunks.push(chunk);
    }
    for seed in [1, 7, 12345] {
        let events = decode_sequence(&chunks, seed);
        let seen: Vec<(&str, &str)> = events
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().expect("type"),
                    e["object"]["metadata"]["name"].as_str().expect("name"),
                )
            })
            .collect();
        assert_eq!(seen, [("ADDED", "w1"), ("ADDED", "w2"), ("DELETED", "w1")]);
        assert_eq!(events[1]["object"]["spec"], widget("w2")["spec"]);
        assert_eq!(events[1]["object"]["kind"], "Widget");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn cbor_bodies_create_update_and_apply() {
    let server = TestServer::start().await.expect("start");
    server.register(widget_type());
    let created = send(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        CBOR,
        &body_of(&config_map("settings")),
    )
    .await;
    let created = cbor_answer(&created, 201);
    assert_eq!(created["data"]["mode"], "fast");
    let stored = server
        .get("v1", "ConfigMap", Some("default"), "settings")
        .expect("stored");
    assert_eq!(stored["data"], config_map("settings")["data"]);

    let mut changed = created.clone();
    changed["data"]["mode"] = json!("slow");
    let updated = send(
        &server,
        "PUT",
        "/api/v1/namespaces/default/configmaps/settings",
        CBOR,
        &body_of(&changed),
    )
    .await;
    assert_eq!(cbor_answer(&updated, 200)["data"]["mode"], "slow");

    let widget = cbor_answer(
        &send(
            &server,
            "POST",
            "/apis/example.com/v1/namespaces/default/widgets",
            CBOR,
            &body_of(&widget("w1")),
        )
        .await,
        201,
    );
    assert_eq!(widget["spec"], crate::widget("w1")["spec"]);

    let apply = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "applied", "namespace": "default"},
        "data": {"k": "v"},
    });
    let applied = send(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/applied?fieldManager=test",
        "application/apply-patch+cbor",
        &body_of(&apply),
    )
    .await;
    let applied = cbor_answer(&applied, 201);
    assert_eq!(applied["data"]["k"], "v");
    assert_eq!(applied["metadata"]["managedFields"][0]["manager"], "test");
    server.shutdown().await;
}

#[tokio::test]
async fn deletes_take_cbor_delete_options() {
    let server = TestServer::start().await.expect("start");
    server.create(config_map("settings")).expect("config map");
    let options = json!({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]});
    let response = send(
        &server,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/settings",
        CBOR,
        &body_of(&options),
    )
    .await;
    assert_eq!(cbor_answer(&response, 200)["metadata"]["name"], "settings");
    // a dry run: still there
    assert!(server.get("v1", "ConfigMap", Some("default"), "settings").is_ok());
    let response = send(
        &server,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/settings",
        CBOR,
        &hex("a2614101614102"),
    )
    .await;
    let status = cbor_answer(&response, 400);
    assert!(
        status["message"]
            .as_str()
            .expect("message")
            .starts_with("the object provided is unrecognized (must be of type DeleteOptions): unable to determine group/version/kind: cbor: found duplicate map key \"A\""),
        "{status}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn media_types_without_a_cbor_form_are_unsupported() {
    let server = TestServer::start().await.expect("start");
    server.create(config_map("settings")).expect("config map");
    let merge = send(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/settings",
        "application/merge-patch+cbor",
        &body_of(&json!({"data": {"a": "b"}})),
    )
    .await;
    let status = cbor_answer(&merge, 415);
    assert_eq!(
        status["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json, application/apply-patch+cbor; got \"application/merge-patch+cbor\""
    );
    // a CBOR document is no patch type
    let plain = send(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/settings",
        CBOR,
        &body_of(&json!({"data": {"a": "b"}})),
    )
    .await;
    assert_eq!(cbor_answer(&plain, 415)["reason"], "UnsupportedMediaType");
    let text = send(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "text/plain",
        b"x",
    )
    .await;
    assert_eq!(
        cbor_answer(&text, 415)["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor; got \"text/plain\""
    );
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_bodies_get_kube_apiservers_400s() {
    let server = TestServer::start().await.expect("start");
    let good = body_of(&config_map("settings"));
    // {'kind': 'ConfigMap', 'apiVersion': 'v1', 'data': {...}} with a defect
    let kind = "446b696e6449436f6e6669674d6170";
    let api_version = "4a61706956657273696f6e427631";
    let unrecognized = "the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind:";
    let cases: Vec<(Vec<u8>, String)> = vec![
        (
            good[..good.len() - 3].to_vec(),
            format!("{unrecognized} unexpected EOF ({{summary}})"),
        ),
        (
            // top-level duplicate: the kind cannot be read
            hex(&format!("d9d9f7a3{kind}{api_version}{kind}")),
            format!("{unrecognized} cbor: found duplicate map key \"kind\" at map element index 2 ({{summary}})"),
        ),
        (
            // data: {'a': 'x', 'a': 'y'}
            hex(&format!("d9d9f7a3{kind}{api_version}4464617461a24161417841614179")),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: cbor: found duplicate map key \"a\" at map element index 1".to_owned(),
        ),
        (
            // data: {'a': "\xff"} (a text string that is not UTF-8)
            hex(&format!("d9d9f7a3{kind}{api_version}4464617461a1416161ff")),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: cbor: invalid UTF-8 string".to_owned(),
        ),
        (
            // data: {1: 'x'}
            hex(&format!("d9d9f7a3{kind}{api_version}4464617461a1014178")),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: cbor: cannot unmarshal positive integer into Go value of type string".to_owned(),
        ),
        (
            // data: {'a': NaN}
            hex(&format!("d9d9f7a3{kind}{api_version}4464617461a14161f97e00")),
            format!("{unrecognized} cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN ({{summary}})"),
        ),
        (
            [good.clone(), vec![0x00]].concat(),
            format!(
                "{unrecognized} cbor: 1 bytes of extraneous data starting at index {} ({{summary}})",
                good.len()
            ),
        ),
    ];
    for (body, message) in cases {
        let response = send(
            &server,
            "POST",
            "/api/v1/namespaces/default/configmaps",
            CBOR,
            &body,
        )
        .await;
        let status = cbor_answer(&response, 400);
        assert_eq!(status["reason"], "BadRequest");
        // kube-apiserver's summary: the first 30 bytes in hex
        let summary: String = body[..30].iter().map(|b| format!("{b:02x}")).collect();
        let message = message.replace("{summary}", &format!("{summary} ..."));
        assert_eq!(status["message"], message.as_str());
    }
    // an apply patch's errors
    let response = send(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/x?fieldManager=test",
        "application/apply-patch+cbor",
        &hex("a2614101614102"),
    )
    .await;
    assert_eq!(
        cbor_answer(&response, 400)["message"],
        "error decoding patch: cbor: found duplicate map key \"A\" at map element index 1"
    );
    // nothing was stored, and the server still answers
    assert!(
        server
            .list("v1", "ConfigMap", Some("default"))
            .expect("list")
            .is_empty()
    );
    server.shutdown().await;
}
