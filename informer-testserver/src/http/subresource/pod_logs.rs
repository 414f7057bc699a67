//! `pods/log` of a pod on a node of the simulated kubelet: the log the test registered
//! ([`KubeletHandle::set_logs`](crate::kubelet::KubeletHandle::set_logs)), shaped by
//! `container`, `tailLines`, `timestamps`, `limitBytes`, `sinceSeconds` and `previous`; with
//! `follow=true`, a chunked stream of what is appended, ending once the container's run has
//! ended (terminated, or restarted) or the pod is gone. Pods elsewhere are `connect.rs`'s.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::Value;

use super::call::{Call, only};
use super::connect::container_of;
use crate::http::response::{Body, full};
use crate::http::shared::Shared;
use crate::kubelet::KubeletHandle;
use crate::kubelet::logs::{LogOptions, cut, format_line, render};
use crate::registry::ResourceType;
use crate::status::ApiError;

/// The log of a pod on a simulated node; `None` for a pod the simulated kubelet does not run.
pub(crate) fn serve(
    shared: &Arc<Shared>,
    pods: &ResourceType,
    call: &Call<'_>,
) -> Result<Option<Response<Body>>, ApiError> {
    let Some(kubelet) = shared.kubelet.clone() else {
        return Ok(None);
    };
    only(call.method, &[Method::GET])?;
    let pod = {
        let state = shared.lock();
        let pod = state.get(pods, call.namespace, call.name)?;
        let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
        if !state.simulated_nodes.contains(node) {
            return Ok(None);
        }
        pod
    };
    let container = container_of(&pod, call.query.get("container"))?;
    let options = options(call)?;
    let previous = flag(call, "previous")?;
    let follow = flag(call, "follow")?;
    let status = container_status(&pod, &container);
    let pod_name = call.name;
    if previous {
        if status["lastState"]["terminated"].is_null() {
            return Err(ApiError::bad_request(format!(
                "previous terminated container \"{container}\" in pod \"{pod_name}\" not found"
            )));
        }
    } else if let Some(reason) = status["state"]["waiting"]["reason"]
        .as_str()
        .filter(|r| matches!(*r, "ContainerCreating" | "PodInitializing"))
        .or(status.is_null().then_some("ContainerCreating"))
    {
        return Err(ApiError::bad_request(format!(
            "container \"{container}\" in pod \"{pod_name}\" is waiting to start: {reason}"
        )));
    }
    let ns = call.namespace.unwrap_or_default().to_string();
    let (text, sent) = {
        let registrations = kubelet.lock();
        let lines = registrations
            .logs
            .lines(&ns, pod_name, &container, previous)
            .unwrap_or_default();
        (render(lines, &options), lines.len())
    };
    let ended = previous || !status["state"]["terminated"].is_null();
    if !follow || ended {
        return Ok(Some(text_response(full(text))));
    }
    let follower = Follower {
        shared: shared.clone(),
        kubelet: kubelet.clone(),
        pods: pods.clone(),
        namespace: ns,
        pod: pod_name.to_string(),
        uid: pod["metadata"]["uid"].as_str().unwrap_or_default().to_string(),
        container_id: status["containerID"].clone(),
        container,
        timestamps: options.timestamps,
        bytes_left: options.limit_bytes.map(|limit| limit.saturating_sub(text.len())),
        sent,
        changes: kubelet.subscribe(),
        done: false,
    };
    let first = futures::stream::iter((!text.is_empty()).then(|| Bytes::from(text)));
    let rest = futures::stream::unfold(follower, |mut follower| async move {
        let chunk = follower.next_chunk().await?;
        Some((chunk, follower))
    });
    let frames = first
        .chain(rest)
        .map(|chunk| Ok::<_, Infallible>(Frame::data(chunk)));
    Ok(Some(text_response(StreamBody::new(frames).boxed_unsync())))
}

fn text_response(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}

/// The container's status in the pod (`null` when the kubelet has not reported it).
fn container_status(pod: &Value, container: &str) -> Value {
    ["containerStatuses", "initContainerStatuses"]
        .iter()
        .filter_map(|field| pod["status"][field].as_array())
        .flatten()
        .find(|s| s["name"] == container)
        .cloned()
        .unwrap_or(Value::Null)
}

/// A `true`/`false` query parameter (absent: false).
fn flag(call: &Call<'_>, name: &str) -> Result<bool, ApiError> {
    match call.query.get(name).map(String::as_str) {
        None | Some("false" | "0" | "") => Ok(false),
        Some("true" | "1") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "failed to parse {name}={other:?}: not a boolean"
        ))),
    }
}

/// The shaping options of the request; kube-apiserver's checks on their values.
fn options(call: &Call<'_>) -> Result<LogOptions, ApiError> {
    let number = |name: &str| -> Result<Option<i64>, ApiError> {
        call.query
            .get(name)
            .map(|v| {
                v.parse::<i64>().map_err(|_| {
                    ApiError::bad_request(format!("failed to parse {name}={v:?}: not an integer"))
                })
            })
            .transpose()
    };
    let invalid = |field: &str, value: i64, why: &str| {
        ApiError::new(
            422,
            "Invalid",
            format!(
                "PodLogOptions \"{}\" is invalid: {field}: Invalid value: {value}: {why}",
                call.name
            ),
        )
    };
    let tail_lines = number("tailLines")?;
    if let Some(tail) = tail_lines.filter(|t| *t < 0) {
        return Err(invalid("tailLines", tail, "must be greater than or equal to 0"));
    }
    let limit_bytes = number("limitBytes")?;
    if let Some(limit) = limit_bytes.filter(|l| *l < 1) {
        return Err(invalid("limitBytes", limit, "must be greater than 0"));
    }
    let since_seconds = number("sinceSeconds")?;
    if let Some(since) = since_seconds.filter(|s| *s < 1) {
        return Err(invalid("sinceSeconds", since, "must be greater than 0"));
    }
    Ok(LogOptions {
        tail_lines: tail_lines.and_then(|t| usize::try_from(t).ok()),
        timestamps: flag(call, "timestamps")?,
        limit_bytes: limit_bytes.and_then(|l| usize::try_from(l).ok()),
        since_seconds,
    })
}

/// A `follow=true` stream after its first chunk.
struct Follower {
    shared: Arc<Shared>,
    kubelet: KubeletHandle,
    pods: ResourceType,
    namespace: String,
    pod: String,
    uid: String,
    /// The run followed: a restart ends the stream, as the run's end does.
    container_id: Value,
    container: String,
    timestamps: bool,
    bytes_left: Option<usize>,
    /// Lines of the log already sent.
    sent: usize,
    changes: tokio::sync::watch::Receiver<u64>,
    done: bool,
}

impl Follower {
    /// The next non-empty chunk, `None` once the container ended, the pod is gone or the
    /// byte limit is reached.
    async fn next_chunk(&mut self) -> Option<Bytes> {
        loop {
            if self.done || self.bytes_left == Some(0) {
                return None;
            }
            let ended = self.ended();
            let text: String = {
                let registrations = self.kubelet.lock();
                let lines = registrations
                    .logs
                    .lines(&self.namespace, &self.pod, &self.container, false)
                    .unwrap_or_default();
                let new = lines.get(self.sent..).unwrap_or_default();
                self.sent = lines.len();
                new.iter()
                    .map(|line| format_line(line, self.timestamps))
                    .collect()
            };
            let text = cut(text, self.bytes_left);
            if let Some(left) = self.bytes_left.as_mut() {
                *left -= text.len();
            }
            if ended {
                self.done = true;
            }
            if !text.is_empty() {
                return Some(Bytes::from(text));
            }
            if ended || self.changes.changed().await.is_err() {
                return None;
            }
        }
    }

    /// Whether the pod is gone (or replaced) or the container has terminated.
    fn ended(&mut self) -> bool {
        self.changes.mark_unchanged();
        let Ok(pod) = self
            .shared
            .lock()
            .get(&self.pods, Some(&self.namespace), &self.pod)
        else {
            return true;
        };
        let status = container_status(&pod, &self.container);
        pod["metadata"]["uid"] != self.uid.as_str()
            || !status["state"]["terminated"].is_null()
            || !status["state"]["running"].is_object()
            || status["containerID"] != self.container_id
    }
}
