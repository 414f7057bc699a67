//! `pods/exec` and `pods/attach` of a pod on a node of the simulated kubelet, over
//! kube-apiserver's WebSocket streaming protocol: subprotocol `v5.channel.k8s.io` or
//! `v4.channel.k8s.io` (the first of the client's list), every binary message prefixed with its
//! channel (0 stdin, 1 stdout, 2 stderr, 3 the closing `Status` as JSON; in v5, 255 closes a
//! channel: `[255, 0]` ends stdin).
//!
//! exec runs the test's handler
//! ([`KubeletHandle::on_exec`](crate::kubelet::KubeletHandle::on_exec)) on the command, with
//! what the client wrote to stdin before ending it (when it asked for stdin; under v4, until it
//! closes the connection), then sends its stdout, its stderr and a `Status`: `Success`, or
//! `Failure` with reason `NonZeroExitCode` and a cause `ExitCode` holding the code. attach
//! sends the registered output and `Success`. Then the server closes the connection.
//!
//! Pods elsewhere, pods with nothing registered and upgrades to anything but WebSocket (SPDY)
//! are `connect.rs`'s: kube-apiserver's errors for a kubelet it cannot reach.

use futures::{SinkExt, StreamExt};
use http::header::{CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL, UPGRADE};
use http::{HeaderValue, Method, Response, StatusCode};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::call::{Call, only};
use super::connect::container_of;
use crate::http::request::ResourceRequest;
use crate::http::response::{Body, full};
use crate::kubelet::{ExecOutput, ExecRequest};
use crate::registry::ResourceType;
use crate::status::ApiError;

/// The subprotocols served, newest first.
const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const CLOSE: u8 = 255;

/// What a session does once the connection is upgraded.
enum Work {
    Exec {
        handler: crate::kubelet::ExecHandler,
        request: ExecRequest,
        stdin: bool,
    },
    Attach(Vec<u8>),
}

/// Answers `exec` or `attach` (`subresource`) of a pod on a simulated node with something
/// registered; `None` for what `connect.rs` answers.
pub(crate) fn serve(
    request: &ResourceRequest<'_>,
    pods: &ResourceType,
    subresource: &str,
    call: &Call<'_>,
) -> Result<Option<Response<Body>>, ApiError> {
    let Some(kubelet) = request.shared.kubelet.clone() else {
        return Ok(None);
    };
    only(call.method, &[Method::GET, Method::POST])?;
    let pod = {
        let state = request.shared.lock();
        let pod = state.get(pods, call.namespace, call.name)?;
        let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
        if !state.simulated_nodes.contains(node) {
            return Ok(None);
        }
        pod
    };
    let container = container_of(&pod, call.query.get("container"))?;
    let websocket = request
        .headers
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let registered = match subresource {
        "exec" => kubelet.exec_handler(&pod).is_some(),
        _ => kubelet.attach_output(&pod).is_some(),
    };
    if !registered || (call.upgrade && !websocket) {
        return Ok(None);
    }
    if !call.upgrade {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    let flags = Flags::of(request.raw_query)?;
    if !running(&pod, &container) {
        return Err(ApiError::bad_request(format!(
            "unable to upgrade connection: container not found (\"{container}\")"
        )));
    }
    let work = match subresource {
        "exec" => {
            if flags.command.is_empty() {
                return Err(ApiError::bad_request(
                    "you must specify at least one command for the container",
                ));
            }
            let Some(handler) = kubelet.exec_handler(&pod) else {
                return Ok(None);
            };
            Work::Exec {
                handler,
                stdin: flags.stdin,
                request: ExecRequest {
                    namespace: call.namespace.unwrap_or_default().to_string(),
                    pod: call.name.to_string(),
                    container,
                    command: flags.command,
                    stdin: Vec::new(),
                },
            }
        }
        _ => Work::Attach(kubelet.attach_output(&pod).unwrap_or_default()),
    };
    let key = request
        .headers
        .get(SEC_WEBSOCKET_KEY)
        .ok_or_else(|| ApiError::bad_request("failed to upgrade: the request has no Sec-WebSocket-Key"))?;
    let offered: Vec<String> = request
        .headers
        .get_all(SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|p| p.trim().to_string())
        .collect();
    let Some(protocol) = offered.iter().find_map(|p| PROTOCOLS.iter().find(|s| **s == p)) else {
        return Err(ApiError::bad_request(format!(
            "failed to upgrade: none of the subprotocols {offered:?} is supported (one of {PROTOCOLS:?} is)"
        )));
    };
    let on_upgrade = request
        .on_upgrade
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .ok_or_else(|| ApiError::bad_request("Upgrade request required"))?;
    let v5 = *protocol == PROTOCOLS[0];
    tokio::spawn(session(on_upgrade, v5, flags.stdout, flags.stderr, work));
    let mut response = Response::new(full(""));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static(protocol));
    if let Ok(accept) = HeaderValue::from_str(&derive_accept_key(key.as_bytes())) {
        headers.insert(SEC_WEBSOCKET_ACCEPT, accept);
    }
    Ok(Some(response))
}

/// Whether the container runs (exec and attach reach running containers only).
fn running(pod: &Value, container: &str) -> bool {
    ["containerStatuses", "initContainerStatuses"]
        .iter()
        .filter_map(|field| pod["status"][field].as_array())
        .flatten()
        .any(|s| s["name"] == container && s["state"]["running"].is_object())
}

/// The streams and the command a request asks for.
struct Flags {
    stdin: bool,
    stdout: bool,
    stderr: bool,
    command: Vec<String>,
}

impl Flags {
    fn of(raw_query: &str) -> Result<Self, ApiError> {
        let mut flags = Self {
            stdin: false,
            stdout: false,
            stderr: false,
            command: Vec::new(),
        };
        for (key, value) in form_urlencoded::parse(raw_query.as_bytes()) {
            let on = matches!(value.as_ref(), "true" | "1");
            match key.as_ref() {
                "stdin" => flags.stdin = on,
                "stdout" => flags.stdout = on,
                "stderr" => flags.stderr = on,
                "command" => flags.command.push(value.into_owned()),
                _ => {}
            }
        }
        if !(flags.stdin || flags.stdout || flags.stderr) {
            return Err(ApiError::bad_request(
                "you must specify at least 1 of stdin, stdout, stderr",
            ));
        }
        Ok(flags)
    }
}

/// One session on the upgraded connection. A client gone early ends it.
async fn session(on_upgrade: OnUpgrade, v5: bool, stdout: bool, stderr: bool, work: Work) {
    let Ok(upgraded) = on_upgrade.await else {
        return;
    };
    let mut socket = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
    let (output, status) = match work {
        Work::Exec {
            handler,
            mut request,
            stdin,
        } => {
            if stdin {
                request.stdin = read_stdin(&mut socket, v5).await;
            }
            let output = handler(&request);
            let status = exec_status(&request.command, output.code);
            (output, status)
        }
        Work::Attach(out) => (ExecOutput::stdout(out), exec_status(&[], 0)),
    };
    let mut messages = Vec::new();
    if stdout && !output.stdout.is_empty() {
        messages.push(framed(STDOUT, &output.stdout));
    }
    if stderr && !output.stderr.is_empty() {
        messages.push(framed(STDERR, &output.stderr));
    }
    messages.push(framed(ERROR, status.to_string().as_bytes()));
    for message in messages {
        if socket.send(message).await.is_err() {
            return;
        }
    }
    let _ = socket.close(None).await;
    // Read until the client's close answers ours.
    while let Some(Ok(_)) = socket.next().await {}
}

/// What the client writes to stdin until it ends it: `[255, 0]` under v5, the connection's
/// close under either.
async fn read_stdin<S>(socket: &mut WebSocketStream<S>, v5: bool) -> Vec<u8>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut stdin = Vec::new();
    while let Some(Ok(message)) = socket.next().await {
        match message {
            Message::Binary(data) => match data.first() {
                Some(&STDIN) => stdin.extend_from_slice(&data[1..]),
                Some(&CLOSE) if v5 && data.get(1) == Some(&STDIN) => break,
                _ => {}
            },
            Message::Close(_) => break,
            _ => {}
        }
    }
    stdin
}

fn framed(channel: u8, data: &[u8]) -> Message {
    let mut bytes = Vec::with_capacity(data.len() + 1);
    bytes.push(channel);
    bytes.extend_from_slice(data);
    Message::binary(bytes)
}

/// The `Status` on the error channel: `Success`, or kube-apiserver's `NonZeroExitCode`.
fn exec_status(command: &[String], code: i32) -> Value {
    if code == 0 {
        return json!({"metadata": {}, "status": "Success"});
    }
    json!({
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "command terminated with non-zero exit code: error executing command [{}], exit code {code}",
            command.join(" ")
        ),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_keeps_its_order_and_a_stream_is_required() {
        let flags = Flags::of("command=sh&command=-c&command=echo%20hi&stdout=true").expect("valid");
        assert_eq!(flags.command, ["sh", "-c", "echo hi"]);
        assert!(flags.stdout && !flags.stdin && !flags.stderr);
        let err = Flags::of("command=ls").err().expect("no stream");
        assert_eq!(
            err.message,
            "you must specify at least 1 of stdin, stdout, stderr"
        );
    }

    #[test]
    fn a_non_zero_exit_is_kube_apiservers_failure() {
        assert_eq!(exec_status(&["true".into()], 0)["status"], "Success");
        let failed = exec_status(&["sh".into(), "-c".into(), "exit 3".into()], 3);
        assert_eq!(failed["reason"], "NonZeroExitCode");
        assert_eq!(
            failed["details"]["causes"][0],
            json!({"reason": "ExitCode", "message": "3"})
        );
        assert_eq!(
            failed["message"],
            "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3"
        );
        assert_eq!(framed(STDOUT, b"x"), Message::binary(vec![1, b'x']));
    }
}
