//! Protobuf request bodies through `kube::Client`, as kubectl 1.32 and later sends them for
//! `kubectl create configmap|secret|namespace|deployment`: the object is stored as its JSON,
//! custom resources and malformed bodies are refused.

use informer_testserver::TestServer;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client};
use serde_json::Value;

/// A minimal protobuf encoder written from Kubernetes' `generated.proto` field numbers.
struct Message(Vec<u8>);

impl Message {
    fn new() -> Self {
        Self(Vec::new())
    }

    fn varint(&mut self, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(byte);
                return;
            }
            self.0.push(byte | 0x80);
        }
    }

    fn bytes(mut self, tag: u32, value: &[u8]) -> Self {
        self.varint(u64::from(tag) << 3 | 2);
        self.varint(value.len() as u64);
        self.0.extend_from_slice(value);
        self
    }

    fn entry(self, tag: u32, key: &str, value: &[u8]) -> Self {
        let entry = Message::new().bytes(1, key.as_bytes()).bytes(2, value);
        self.bytes(tag, &entry.0)
    }
}

/// `k8s\0` + `runtime.Unknown{typeMeta{apiVersion, kind}, raw}`.
fn body(api_version: &str, kind: &str, raw: &Message) -> Vec<u8> {
    let type_meta = Message::new()
        .bytes(1, api_version.as_bytes())
        .bytes(2, kind.as_bytes());
    let unknown = Message::new().bytes(1, &type_meta.0).bytes(2, &raw.0);
    [b"k8s\0".as_slice(), &unknown.0].concat()
}

async fn post(client: &Client, path: &str, body: Vec<u8>) -> kube::Result<Value> {
    let request = http::Request::post(path)
        .header(http::header::CONTENT_TYPE, "application/vnd.kubernetes.protobuf")
        .header(http::header::ACCEPT, "application/json")
        .body(body)
        .expect("request");
    client.request::<Value>(request).await
}

/// GETs `path` asking for protobuf first: the answer's content type and body.
async fn get_protobuf(client: &Client, path: &str) -> (String, Vec<u8>) {
    let request = http::Request::get(path)
        .header(
            http::header::ACCEPT,
            "application/vnd.kubernetes.protobuf,application/json",
        )
        .body(Vec::new())
        .expect("request");
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("an answer");
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("a body")
        .to_bytes()
        .to_vec();
    (content_type, body)
}

#[tokio::test]
async fn config_maps_and_secrets_are_created_from_protobuf() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");

    let meta = Message::new().bytes(1, b"settings");
    let config_map = Message::new()
        .bytes(1, &meta.0)
        .entry(2, "mode", b"fast")
        .entry(2, "level", b"debug");
    let created = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        body("v1", "ConfigMap", &config_map),
    )
    .await
    .expect("created");
    assert_eq!(created["metadata"]["name"], "settings");
    let read = Api::<ConfigMap>::default_namespaced(client.clone())
        .get("settings")
        .await
        .expect("read back as JSON");
    let data = read.data.expect("data");
    assert_eq!((data["mode"].as_str(), data["level"].as_str()), ("fast", "debug"));

    // Secret: metadata = 1, data = 2 (bytes), type = 3
    let secret = Message::new()
        .bytes(1, &Message::new().bytes(1, b"creds").0)
        .entry(2, "password", &[0xff, 0x00, b'x'])
        .bytes(3, b"Opaque");
    post(
        &client,
        "/api/v1/namespaces/default/secrets",
        body("v1", "Secret", &secret),
    )
    .await
    .expect("created");
    let read = Api::<Secret>::default_namespaced(client.clone())
        .get("creds")
        .await
        .expect("read back");
    assert_eq!(read.data.expect("data")["password"].0, [0xff, 0x00, b'x']);
    assert_eq!(read.type_.as_deref(), Some("Opaque"));

    // Asked for protobuf first, the server answers in protobuf: the object as sent.
    let (content_type, body) = get_protobuf(&client, "/api/v1/namespaces/default/configmaps/settings").await;
    assert_eq!(content_type, "application/vnd.kubernetes.protobuf");
    assert!(body.starts_with(b"k8s\0"), "{body:?}");
    for expected in [&b"settings"[..], b"mode", b"fast", b"ConfigMap"] {
        assert!(
            body.windows(expected.len()).any(|w| w == expected),
            "{expected:?} in {body:?}"
        );
    }
    let (content_type, _) = get_protobuf(&client, "/api/v1/namespaces/default/configmaps").await;
    assert_eq!(content_type, "application/vnd.kubernetes.protobuf", "lists too");
    server.shutdown().await;
}

#[tokio::test]
async fn custom_resources_and_malformed_bodies_are_refused() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let error = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        body("example.com/v1", "Widget", &Message::new()),
    )
    .await
    .expect_err("no protobuf for custom kinds");
    let kube::Error::Api(status) = error else {
        panic!("not an API error: {error:?}");
    };
    assert_eq!(status.code, 415);
    let error = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        b"k8s\0\x12\x09trunc".to_vec(),
    )
    .await
    .expect_err("truncated");
    let kube::Error::Api(status) = error else {
        panic!("not an API error: {error:?}");
    };
    assert_eq!(status.code, 400, "{}", status.message);
    server.shutdown().await;
}

#[tokio::test]
async fn watches_stream_protobuf_frames_when_asked_for_first() {
    let server = TestServer::start().await.expect("start");
    let client = server.client().expect("client");
    let request = http::Request::get("/api/v1/namespaces/default/configmaps?watch=true")
        .header(
            http::header::ACCEPT,
            "application/vnd.kubernetes.protobuf,application/json",
        )
        .body(Vec::new())
        .expect("request");
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("a watch");
    assert_eq!(
        response.headers()[http::header::CONTENT_TYPE],
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    server
        .create(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "watched", "namespace": "default"}}))
        .expect("created");
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    while bytes.len() < 4 || bytes.len() < 4 + u32::from_be_bytes(bytes[..4].try_into().expect("4")) as usize
    {
        let frame = http_body_util::BodyExt::frame(&mut body)
            .await
            .expect("a frame")
            .expect("readable");
        bytes.extend_from_slice(frame.data_ref().expect("data"));
    }
    let length = u32::from_be_bytes(bytes[..4].try_into().expect("4")) as usize;
    let event = &bytes[4..4 + length];
    // WatchEvent{type = 1: "ADDED", object = 2: RawExtension{raw = 1: "k8s\0" + Unknown}}
    assert_eq!(&event[..7], b"\x0a\x05ADDED");
    for expected in [&b"k8s\0"[..], b"ConfigMap", b"watched"] {
        assert!(
            event.windows(expected.len()).any(|w| w == expected),
            "{expected:?}"
        );
    }
    server.shutdown().await;
}

/// Sends `request` and returns the status code, content type and body as they came.
async fn raw(client: &Client, request: http::Request<Vec<u8>>) -> (u16, String, Vec<u8>) {
    use http_body_util::BodyExt as _;
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("a response");
    let code = response.status().as_u16();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response.into_body().collect().await.expect("a body").to_bytes();
    (code, content_type, body.to_vec())
}

/// client-go sends `DeleteOptions` in protobuf, typed in the request's group version.
#[tokio::test]
async fn deletes_take_protobuf_delete_options() {
    let server = TestServer::start().await.expect("server");
    let client = server.client().expect("client");
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for name in ["a", "b", "c"] {
        let object = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"batch": "1"}}});
        post(
            &client,
            "/api/v1/namespaces/default/configmaps",
            informer_apimachinery::protobuf::to_vec(&object).expect("encoded"),
        )
        .await
        .expect("created");
    }
    let options = serde_json::json!({"apiVersion": "v1", "kind": "DeleteOptions",
        "propagationPolicy": "Background", "preconditions": {"resourceVersion": "1"}});
    let delete = |path: &str, options: &Value| {
        http::Request::delete(path)
            .header(http::header::CONTENT_TYPE, "application/vnd.kubernetes.protobuf")
            .header(
                http::header::ACCEPT,
                "application/vnd.kubernetes.protobuf, application/json",
            )
            .body(informer_apimachinery::protobuf::to_vec(options).expect("encoded"))
            .expect("request")
    };
    // a stale precondition is honoured, so the options were read
    let (code, content_type, body) = raw(
        &client,
        delete("/api/v1/namespaces/default/configmaps/a", &options),
    )
    .await;
    assert_eq!(
        (code, content_type.as_str()),
        (409, "application/vnd.kubernetes.protobuf")
    );
    let status: kube::core::Status =
        informer_apimachinery::protobuf::from_slice(&body).expect("a protobuf Status");
    assert_eq!(status.reason, "Conflict");
    let plain =
        serde_json::json!({"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Foreground"});
    let (code, _, _) = raw(&client, delete("/api/v1/namespaces/default/configmaps/a", &plain)).await;
    assert_eq!(code, 200);
    let (code, _, _) = raw(
        &client,
        delete(
            "/api/v1/namespaces/default/configmaps?labelSelector=batch%3D1",
            &plain,
        ),
    )
    .await;
    assert_eq!(code, 200);
    assert!(
        config_maps
            .list(&Default::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );
}

/// Errors are `Status` documents in protobuf when protobuf was asked for, as kube-apiserver
/// negotiates them.
#[tokio::test]
async fn errors_answer_in_protobuf_when_asked() {
    let server = TestServer::start().await.expect("server");
    let client = server.client().expect("client");
    let get = http::Request::get("/api/v1/namespaces/default/configmaps/missing")
        .header(
            http::header::ACCEPT,
            "application/vnd.kubernetes.protobuf, application/json",
        )
        .body(Vec::new())
        .expect("request");
    let (code, content_type, body) = raw(&client, get).await;
    assert_eq!(
        (code, content_type.as_str()),
        (404, "application/vnd.kubernetes.protobuf")
    );
    let status: kube::core::Status =
        informer_apimachinery::protobuf::from_slice(&body).expect("a protobuf Status");
    assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
}

/// Fields Go names with an acronym and zero values of pointer fields survive a protobuf write
/// and a JSON read.
#[tokio::test]
async fn protobuf_writes_keep_acronym_fields_and_pointer_zeros() {
    let server = TestServer::start().await.expect("server");
    let client = server.client().expect("client");
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p",
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u", "controller": false}]},
        "spec": {"containers": [{"name": "c", "image": "i"}],
                 "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 0}],
                 "volumes": [{"name": "info", "downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]}});
    post(
        &client,
        "/api/v1/namespaces/default/pods",
        informer_apimachinery::protobuf::to_vec(&pod).expect("encoded"),
    )
    .await
    .expect("created");
    let stored: Value = client
        .request(
            http::Request::get("/api/v1/namespaces/default/pods/p")
                .body(Vec::new())
                .expect("request"),
        )
        .await
        .expect("read");
    assert_eq!(
        stored["spec"]["volumes"][0]["downwardAPI"]["items"][0]["path"],
        "l"
    );
    assert_eq!(stored["spec"]["tolerations"][0]["tolerationSeconds"], 0);
    assert_eq!(stored["metadata"]["ownerReferences"][0]["controller"], false);
}
