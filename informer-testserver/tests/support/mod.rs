//! Helpers shared by the HTTP-level tests: a raw HTTP/1.1 client over TCP and object builders.

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::net::SocketAddr;

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A pod with a name and labels.
pub fn pod(name: &str, labels: &[(&str, &str)]) -> Pod {
    let labels: BTreeMap<&str, &str> = labels.iter().copied().collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }))
    .expect("valid pod")
}

/// A response read by [`request`].
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

/// An open response whose body is read chunk by chunk (watches).
pub struct RawStream {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    reader: BufReader<TcpStream>,
}

impl RawStream {
    /// The next chunk of a chunked body, `None` at its end.
    pub async fn chunk(&mut self) -> Option<Vec<u8>> {
        let mut size = String::new();
        self.reader.read_line(&mut size).await.expect("chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("hex chunk size");
        if size == 0 {
            return None;
        }
        let mut data = vec![0; size + 2];
        self.reader.read_exact(&mut data).await.expect("chunk data");
        data.truncate(size);
        Some(data)
    }
}

/// Sends one request and returns the response head; the body is left to read.
pub async fn open(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> RawStream {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).await.expect("write head");
    stream.write_all(body).await.expect("write body");
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).await.expect("status line");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status code");
    let mut headers = BTreeMap::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await.expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    RawStream {
        status,
        headers,
        reader,
    }
}

/// Sends one request and reads the whole response.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> RawResponse {
    let mut stream = open(addr, method, path, headers, body).await;
    let mut body = Vec::new();
    if stream
        .headers
        .get("transfer-encoding")
        .is_some_and(|t| t == "chunked")
    {
        while let Some(chunk) = stream.chunk().await {
            body.extend(chunk);
        }
    } else {
        let len: usize = stream
            .headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        body.resize(len, 0);
        stream.reader.read_exact(&mut body).await.expect("body");
    }
    RawResponse {
        status: stream.status,
        headers: stream.headers,
        body,
    }
}

/// GET with JSON accepted.
pub async fn get(addr: SocketAddr, path: &str) -> RawResponse {
    request(addr, "GET", path, &[("Accept", "application/json")], b"").await
}

/// POST of a JSON document.
pub async fn post(addr: SocketAddr, path: &str, body: &Value) -> RawResponse {
    request(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .await
}

/// Field names of a JSON object, sorted.
pub fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().expect("object").keys().cloned().collect();
    keys.sort();
    keys
}

/// The `Status` of an API error (panics on any other error).
pub fn api_error(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("not an API error: {other:?}"),
    }
}

/// A client that gives 429s and 503s back instead of retrying them (kube's default client
/// retries them).
pub fn client_without_retries(server: &informer_testserver::TestServer) -> kube::Client {
    let mut config = kube::Config::new(server.url().parse().expect("url"));
    config.default_retry = false;
    kube::Client::try_from(config).expect("client")
}
